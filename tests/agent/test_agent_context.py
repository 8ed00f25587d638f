"""The agent and the context engine together: overflow recovery, manual compaction, reports."""

from __future__ import annotations

import pytest

from myrm_tui.agent.events import Notice, TurnError, TurnFinished
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent


async def test_provider_overflow_compacts_once_and_retries(store, workspace, script):
    model = script({"text": "fits now", "error": "context_window", "error_times": 1})
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "hello")
    assert not log.of(TurnError)
    assert any("too long" in n.text for n in log.of(Notice))
    assert log.events[-1] == TurnFinished("stop", 1)
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    assert len(reports) == 2 and reports[1]["ladder"]["action"] == "forced"
    assert store.messages(agent.session_id)[-1].message["content"] == "fits now"


async def test_provider_overflow_twice_is_a_readable_error_and_nothing_is_lost(store, workspace, script):
    model = script({"text": "never", "error": "context_window"})
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "hello")
    [error] = log.of(TurnError)
    assert error.error_class == "ContextWindowExceededError" and error.hint
    assert store.messages(agent.session_id)[0].message == {"role": "user", "content": "hello"}


async def test_every_model_call_stores_the_engine_report(store, workspace, script):
    model = script({"tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*"}}]}, {"text": "done"})
    agent = make_agent(store, workspace, model)
    await drive(agent, "list files")
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    assert len(reports) == 2
    for report in reports:
        assert {"tokens", "budget", "ladder", "stages", "breakers", "event", "cache_break"} <= set(report)
        assert report["budget"]["prompt_limit"] > report["tokens"] > 0
    # The second call extends the first: nothing in between broke the prompt prefix.
    assert reports[1]["cache_break"] is None


async def test_compact_now_summarizes_old_turns_and_keeps_them_recoverable(store, workspace, script):
    (workspace / "big.txt").write_text("\n".join(f"row {i} of the big file" for i in range(3000)))
    turns = [
        {"tool_calls": [{"id": f"r{i}", "name": "bash", "arguments": {"command": f"cat big.txt # {i}"}}]}
        for i in range(6)
    ] + [{"text": "read them all"}]
    model = script(*turns, context_window=32_000)
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "read the file six times")
    await drive(agent, "thanks; now what?")
    event = await agent.compact_now()
    assert event is not None and event["saved"] > 0 and event["trigger"] == "manual"
    assert event["tier"] == "summarize" and event["ops"]["remove"] > 0
    prompt = agent.engine.assemble(agent.turn_input())
    summaries = [m["content"] for m in prompt.messages if "[summary S" in str(m.get("content"))]
    assert summaries, "the old turns stand as summary nodes"
    assert not [m for m in prompt.messages if m["role"] == "tool"], "every old tool output left with its turn"
    handle = summaries[0].split("[summary ", 1)[1].split(" ", 1)[0]
    node = store.get_summary(agent.session_id, handle)
    while node["children"]:  # a condensed node expands to its children, a leaf to the messages
        node = store.get_summary(agent.session_id, node["children"][0])
    assert "row 1 of the big file" in ctx_expand(store, agent.session_id, node["handle"], query="row 1 of")


@pytest.mark.slow
async def test_fork_with_summary_starts_small_and_keeps_anchor_and_last_turns(store, workspace, script):
    turns = [{"text": f"answer {i} " + "words " * 300} for i in range(8)]
    model = script(*turns)
    agent = make_agent(store, workspace, model)
    for i in range(8):
        await drive(agent, f"question {i} about src/app_{i}.py")
    parent_tokens = sum(r.tokens for r in store.messages(agent.session_id))
    child = agent.fork_with_summary(keep_user_turns=2)
    rows = store.messages(child.id)
    assert rows[0].message["content"] == "question 0 about src/app_0.py"  # the anchor, shared
    assert rows[0].session_id == agent.session_id  # by reference, not copied
    assert "[summary parent" in rows[1].message["content"] and "src/app_3.py" in rows[1].message["content"]
    assert [r.message["content"] for r in rows if r.role == "user"][-2:] == [
        "question 6 about src/app_6.py",
        "question 7 about src/app_7.py",
    ]
    assert sum(r.tokens for r in rows) < parent_tokens / 2
    assert len(store.messages(agent.session_id)) == 16  # the parent is untouched


@pytest.mark.slow
async def test_a_tripped_stage_breaker_is_told_to_the_user_once(store, workspace, script, monkeypatch):
    """A stage switched off for the session changes what the engine does (here: big outputs go in
    unfiltered); the user hears it once, as a warning, not only in the stored report."""
    from myrm_tui.context import arrival_filter

    def boom(*args, **kwargs):
        raise RuntimeError("filter bug")

    monkeypatch.setattr(arrival_filter, "filter_output", boom)
    calls = [
        {"tool_calls": [{"id": f"s{i}", "name": "bash", "arguments": {"command": "seq 1 20000"}}]} for i in range(5)
    ]
    model = script(*calls, {"text": "done"}, context_window=200_000)
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "count five times")
    trips = [n for n in log.of(Notice) if "smart_filter" in n.text]
    assert len(trips) == 1, [n.text for n in log.of(Notice)]
    assert trips[0].level == "warning" and "off for this session" in trips[0].text and "filter bug" in trips[0].text
    assert log.events[-1] == TurnFinished("stop", 6)


async def test_a_lite_model_too_small_to_summarize_is_told_once(store, workspace, script, tmp_path):
    """The user set a lite model to save cost; when it cannot take a summary call, the main model
    summarizes instead, and the user hears why (once per session), not only the stored report."""
    small = script({"text": "never asked"}, context_window=3_000)
    model = script({"text": "one"}, {"text": "two"})
    agent = make_agent(store, workspace, model, lite_model=small)
    first = await drive(agent, "hello")
    second = await drive(agent, "again")
    said = [n.text for n in first.of(Notice) if n.text.startswith("summaries:")]
    assert len(said) == 1 and small in said[0] and "too small" in said[0] and "main model" in said[0]
    assert not [n for n in second.of(Notice) if n.text.startswith("summaries:")]
    fine = make_agent(store, workspace, script({"text": "ok"}), lite_model=script({"text": "x"}))
    assert not [n for n in (await drive(fine, "hi")).of(Notice) if n.text.startswith("summaries:")]
