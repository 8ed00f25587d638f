"""The no-LLM floor: copied facts, marked fallback, always strictly smaller than its source."""

from __future__ import annotations

import pytest

from myrm_tui.context.summary.auditor import audit
from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.prompts import transcript
from myrm_tui.context.summary.schema import FileChange, body_text
from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens
from tests.context.summary.summary_helpers import assistant, call, session_chunk, tool, user


def source_tokens(messages):
    return sum(count_message_tokens(m) for m in messages)


def test_extract_of_a_session_chunk():
    chunk = session_chunk()
    ids = list(range(100, 111))
    summary = extractive_summary(chunk, ids=ids, source_tokens=source_tokens(chunk))
    assert summary.fallback is True
    assert summary.active_task == chunk[-1]["content"], "the latest ask, verbatim"
    assert summary.user_goal.startswith("The upload endpoint returns HTTP 500")
    assert summary.files_modified == [FileChange("src/api/upload.py", "edit")]
    assert any(e.startswith("Error: 1 failed") and "msg:104" in e for e in summary.errors_and_fixes)
    assert any("pytest tests/test_upload.py -q" in a for a in summary.completed_actions)
    # The first ask was answered ("Fixed: …", msg:109): resolved, not pending.
    assert summary.pending_user_asks == []
    assert (
        summary.resolved_questions[0].startswith("The upload endpoint") and "msg:109" in summary.resolved_questions[0]
    )
    result = audit(summary, source_text=transcript(chunk, ids), source_tokens=source_tokens(chunk))
    assert result.summary_tokens < source_tokens(chunk)
    assert not any("user_goal" in p or "active_task" in p for p in result.problems)


def test_previous_goal_wins_over_the_first_ask_of_the_chunk():
    chunk = session_chunk()[4:]
    summary = extractive_summary(chunk, source_tokens=source_tokens(chunk), previous_goal="Harden the upload API")
    assert summary.user_goal == "Harden the upload API"


@pytest.mark.parametrize("n_calls", [1, 3, 10, 60])
def test_always_strictly_smaller_than_the_source(n_calls):
    messages = [user("please " + "refactor the module " * 3)]
    for i in range(n_calls):
        messages.append(assistant("", call(f"c{i}", "file_edit", path=f"pkg/mod_{i}/very_long_file_name_{i}.py")))
        messages.append(tool(f"c{i}", "ok"))
    src = source_tokens(messages)
    summary = extractive_summary(messages, ids=list(range(len(messages))), source_tokens=src)
    assert count_text_tokens(body_text(summary)) < src


def test_a_tiny_source_gets_a_minimal_summary_that_is_still_smaller():
    messages = [user("hi")]
    summary = extractive_summary(messages, source_tokens=source_tokens(messages))
    assert summary.fallback
    assert count_text_tokens(body_text(summary)) < source_tokens(messages)
