"""The no-vault branch of the spill (a seed mechanism the audit found unpinned, docs/seed-audit.md),
as a property over any output and cap, and through the ingest of a stored row.

Why a property: "head-truncated with a notice" must hold for every output a tool can produce
(one giant line, many short ones, blank runs), not for the one `seq` the agent test runs.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from myrm_tui.context.rows.ingest import ingest_message, spill_text
from tests.hypothesis_profiles import examples

NO_VAULT_NOTE = "no vault available for the rest"

_lines = st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=300), min_size=1, max_size=60)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None)
@given(
    lines=_lines,
    repeat=st.integers(min_value=1, max_value=300),
    cap_share=st.floats(min_value=0.01, max_value=0.95),
    tool=st.sampled_from(["", "bash", "grep"]),
)
def test_without_a_vault_any_big_output_becomes_a_bounded_excerpt_headed_by_a_notice(lines, repeat, cap_share, tool):
    content = "\n".join(lines * repeat)
    cap = max(600, int(len(content) * cap_share))
    assume(len(content) > cap)
    text, handle = spill_text(content, tool=tool, arguments={}, cap_chars=cap, vault=None)
    assert handle is None
    notice, _, body = text.partition("\n")
    assert notice.startswith(f"[output {len(content):,} chars") and NO_VAULT_NOTE in notice
    assert "vault://" not in notice
    assert len(text) <= cap, "the excerpt and its notice fit the cap the tool asked for"
    assert body, "something of the output is kept"


def test_a_big_tool_message_stored_without_a_vault_keeps_its_head_and_says_so():
    content = "\n".join(f"line {i}" for i in range(20_000))
    message = {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": content}
    row = ingest_message(message, None, cap_chars=5_000, calls={"c1": ("bash", {"command": "seq"})})
    first, *rest = row["content"].split("\n")
    assert NO_VAULT_NOTE in first and len(row["content"]) <= 5_000
    assert rest[:3] == ["line 0", "line 1", "line 2"]
    assert {k: v for k, v in row.items() if k != "content"} == {k: v for k, v in message.items() if k != "content"}
