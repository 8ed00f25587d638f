"""Depth-aware instructions, incremental merge, focus, terse and retry turns."""

from __future__ import annotations

from myrm_tui.context.summary.prompts import (
    TERSE_MESSAGE_CHARS,
    build_prompt,
    condense_messages,
    retry_turns,
    system_prompt,
    transcript,
)
from myrm_tui.context.summary.schema import StructuredSummary
from tests.context.summary.summary_helpers import assistant, call, session_chunk, tool, user


def test_leaf_prompt_is_extractive_json_only_and_keeps_identifiers():
    messages = build_prompt(session_chunk(), depth=0, ids=list(range(100, 111)))
    assert [m["role"] for m in messages] == ["system", "user"]
    system, body = messages[0]["content"], messages[1]["content"]
    assert "extractive" in system and "Copy identifiers exactly" in system
    assert "user's language" in system and "JSON object only" in system
    for key in ("user_goal", "active_task", "files_modified", "blocked_items", "next_steps", "active_state"):
        assert f'"{key}"' in system
    assert "word for word" in system, "active_task is the verbatim latest ask"
    assert "[msg:100 user]" in body and "[msg:104 tool result of c2]" in body
    assert "→ call bash (c2): " in body and "pytest tests/test_upload.py -q" in body
    assert body.rstrip().endswith("no code fence.")


def test_each_depth_has_its_style():
    assert "timeline" in system_prompt(1) and "[SUPERSEDED]" in system_prompt(1)
    assert "trajectory" in system_prompt(2) and "key decisions" in system_prompt(2)
    assert "ONE dense" in system_prompt(3) and system_prompt(7) == system_prompt(3)


def test_merge_prompt_carries_the_existing_summary_and_the_update_rules():
    previous = StructuredSummary(
        user_goal="Fix uploads",
        active_task="fix empty files",
        blocked_items=["CI runner offline"],
        next_steps=["run pytest"],
    )
    messages = build_prompt(session_chunk()[4:], depth=0, previous=previous)
    system, body = messages[0]["content"], messages[1]["content"]
    assert "UPDATING an existing summary" in system
    assert "remove blocked_items that are resolved" in system and "next_steps that are done" in system
    assert "EXISTING SUMMARY (update it):" in body and '"CI runner offline"' in body
    assert body.index("EXISTING SUMMARY") < body.index("NEWER HISTORY:")


def test_focus_topic_and_terse_mode():
    system = system_prompt(0, focus="the database migration", terse=True)
    assert 'about 60-70% of the summary on "the database migration"' in system
    assert "as terse as possible" in system
    big = [
        user("x" * 10_000),
        assistant("", call("c", "file_write", path="a.txt", content="y" * 5_000)),
        tool("c", "ok"),
    ]
    normal = build_prompt(big, depth=0)[1]["content"]
    terse = build_prompt(big, depth=0, terse=True)[1]["content"]
    assert "x" * 10_000 in normal
    assert "x" * 10_000 not in terse and "chars cut" in terse
    assert len(terse) < TERSE_MESSAGE_CHARS + 2_500


def test_retry_turns_show_the_rejected_answer_and_the_feedback():
    turns = retry_turns('{"user_goal": ""}', "- user_goal is empty")
    assert turns[0] == {"role": "assistant", "content": '{"user_goal": ""}'}
    assert turns[1]["role"] == "user" and turns[1]["content"].startswith("- user_goal is empty")


def test_condense_messages_join_children_in_order():
    (message,) = condense_messages(["first child", "second child"])
    assert message["role"] == "user" and message["content"] == "first child\n\n---\n\nsecond child"
    assert transcript([message]).startswith("[#1 user]\nfirst child")
