"""The deterministic footer: files with their op, tools, errors with handles, what to expand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.summary.footer import build_footer, footer_from_records
from myrm_tui.context.summary.outcomes import call_statuses, span_facts
from tests.context.summary.summary_helpers import rows_of, session_chunk


def test_footer_of_a_session_chunk():
    rows = rows_of(session_chunk())
    footer = footer_from_records(rows)
    assert footer.files == {"src/api/upload.py": "edit"}, "an edit beats the earlier read"
    assert footer.tools == {"bash": 2, "file_read": 1, "file_edit": 1}
    assert footer.commands == {"pytest tests/test_upload.py -q": 2}
    assert [(e.first_line, e.handle) for e in footer.errors] == [("Error: 1 failed", "msg:104")]
    assert footer.first_handle == "msg:100" and footer.last_handle == "msg:110"
    assert footer.handles == ("msg:100", "msg:104", "msg:110")
    text = footer.render()
    assert "Files: src/api/upload.py (edit)" in text
    assert "bash ×2" in text and "Errors: Error: 1 failed (msg:104)" in text
    assert "Expand: msg:100 … msg:110; notable: msg:100, msg:104, msg:110" in text


def test_footer_without_ids_has_no_store_handles():
    footer = build_footer(session_chunk())
    assert footer.first_handle == "" and "Expand" not in footer.render()
    assert footer.errors[0].handle == "#4"


def test_mismatched_ids_are_a_clear_error():
    with pytest.raises(ValueError, match="one id per message"):
        build_footer(session_chunk(), [1, 2])


# -- the footer's call outcomes come from `call_statuses`, not the whole span's facts -------------
_IDS = st.sampled_from(["c1", "c2", "c3", ""])
_CALL = st.fixed_dictionaries(
    {
        "id": _IDS,
        "function": st.fixed_dictionaries({"name": st.sampled_from(["bash", "file_edit"]), "arguments": st.just("{}")}),
    }
)
_MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "content": st.sampled_from(["fix it", "", "and the tests?"])}),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.just(""), "tool_calls": st.lists(_CALL, max_size=3)}
    ),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.sampled_from(["done", ""])}),
    st.fixed_dictionaries(
        {
            "role": st.just("tool"),
            "tool_call_id": _IDS,
            "content": st.sampled_from(
                ["ok", "Error: boom", "exit code 2", "[denied by the user]", "timed out after 30s"]
            ),
        }
    ),
)


@given(st.lists(_MESSAGE, max_size=12))
@settings(max_examples=300, deadline=None)
def test_call_statuses_equal_the_span_facts_call_status(messages):
    """Ids reused, results before their call or missing, several results for one id: the footer's
    lighter reading gives every call the outcome `span_facts` gives it (the footer and the leaf's
    findings then agree on what ran)."""
    assert call_statuses(messages) == span_facts(messages).call_status()
