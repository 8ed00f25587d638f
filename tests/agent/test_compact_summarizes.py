"""The compact command summarizes, and model summaries are written wherever a model can write them.

Everything runs through the real agent, store, engine and summary client; the models are the
scripted provider behind litellm (a summarizer script answers every summary request with its
first turn: a summary request carries no assistant message).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import Notice, TurnFinished
from myrm_tui.context.compaction.prepared_summaries import PrepareProgress
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, settings_for

# Plain prose, no identifiers: the auditor's retention check has nothing to miss, so a fixed
# answer is a fair stand-in for a model that read the chunk. A chunk may end on a question whose
# answer comes after it; the summary keeps that open question as its active task, as a model
# asked to does (the auditor rejects a summary that drops an open request).
ANSWER_WORDS = (
    "Sure. Water the tomatoes early in the morning, mulch the beds against the heat, and keep "
    "the basil away from the mint so neither crowds the other. "
) * 4
SUMMARY = {
    "user_goal": "plan a vegetable garden for the summer",
    "active_task": "the latest question: how to look after the garden this week",
    "completed_actions": ["answered questions about watering, mulching and planting"],
    "key_findings": ["tomatoes want water early in the morning"],
    "decisions": ["keep the basil away from the mint"],
    "next_steps": ["ask about the autumn beds"],
    "narrative": "Garden planning conversation, summarized by the model.",
}


def seed_chat(store, session_id: str, turns: int, model: str) -> None:
    """A chat-only session (no tool calls), stored as the agent would have stored it."""
    for n in range(1, turns + 1):
        for message in (
            {"role": "user", "content": f"Question {n}: how should I look after the garden this week?"},
            {"role": "assistant", "content": f"Week {n}. {ANSWER_WORDS}"},
        ):
            store.append_message(session_id, message, count_message_tokens(message, model))


def summarizer_script(tmp_path, name: str, *, window: int = 128_000, **turn) -> tuple[str, object]:
    """A scripted summarizer model; every request it gets is recorded in `<name>.jsonl`."""
    record = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.json"
    path.write_text(
        json.dumps({"turns": [turn or {"text": json.dumps(SUMMARY)}], "context_window": window, "record": record.name})
    )
    return f"scripted/{path}", record


def requests_of(record, kind: str = "") -> list[list[dict]]:
    """The requests a scripted model got; `kind` "leaf" or "fold" keeps only those summary calls."""
    asked = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    opening = {"leaf": "You compress part of", "fold": "You fold several"}.get(kind, "")
    return [r for r in asked if str(r[0].get("content", "")).startswith(opening)]


def chat_agent(
    store,
    workspace,
    tmp_path,
    *,
    main_turn: dict | None = None,
    lite: str = "",
    turns: int = 40,
    window: int = 32_000,
    **values,
) -> tuple[Agent, object]:
    main, main_record = summarizer_script(tmp_path, "main", window=window, **(main_turn or {"text": "ok"}))
    session = store.create_session(model=main).id
    seed_chat(store, session, turns, main)
    agent = Agent(
        store=store, session_id=session, settings=settings_for(main, lite_model=lite, **values), workspace=workspace
    )
    return agent, main_record


def summary_texts(agent) -> list[str]:
    prompt = agent.engine.assemble(agent.turn_input())
    return [str(m["content"]) for m in prompt.messages if "[summary S" in str(m.get("content"))]


async def test_compact_on_a_40_turn_chat_writes_model_summaries_with_the_focus_and_frees_tokens(
    store, workspace, tmp_path
):
    lite, lite_record = summarizer_script(tmp_path, "lite")
    agent, main_record = chat_agent(store, workspace, tmp_path, lite=lite)
    before = agent.engine.assemble(agent.turn_input()).tokens
    steps: list[PrepareProgress] = []
    event = await agent.compact_now("watering schedule", progress=steps.append)

    assert event is not None and event["tier"] == "summarize" and event["trigger"] == "manual"
    assert event["tokens_after"] < before / 2, (before, event)
    nodes = [n for n in store.summaries(agent.session_id) if n["status"] == "active"]
    assert nodes and all(not n["fallback"] for n in nodes)
    leaves = [n for n in store.summaries(agent.session_id) if n["depth"] == 0]
    assert leaves and {n["model"] for n in leaves} == {lite}
    asked = requests_of(lite_record, "leaf")
    assert len(asked) == len(leaves) and not requests_of(main_record), "the lite model wrote every leaf"
    assert all("FOCUS" in r[0]["content"] and '"watering schedule"' in r[0]["content"] for r in asked)
    assert [s.done for s in steps if s.what == "leaf"] == list(range(len(leaves)))
    texts = summary_texts(agent)
    assert texts and any("summarized by the model" in t for t in texts)
    rows = store.messages(agent.session_id)
    prompt = agent.engine.assemble(agent.turn_input())
    assert prompt.messages[1]["content"] == rows[0].message["content"], "the human anchor stays verbatim"
    assert [m["content"] for m in prompt.messages[-2:]] == [r.message["content"] for r in rows[-2:]], (
        "the latest exchange stays verbatim"
    )
    assert not any(m["content"] == rows[10].message["content"] for m in prompt.messages)


async def test_a_failing_lite_model_hands_the_chunk_to_the_main_model(store, workspace, tmp_path):
    lite, lite_record = summarizer_script(tmp_path, "lite", error="auth")
    agent, main_record = chat_agent(store, workspace, tmp_path, lite=lite, main_turn={"text": json.dumps(SUMMARY)})
    event = await agent.compact_now()
    assert event is not None and event["saved"] > 0
    leaves = [n for n in store.summaries(agent.session_id) if n["depth"] == 0]
    assert leaves and all(not n["fallback"] and n["model"] == agent.model_name for n in leaves)
    assert requests_of(lite_record) and requests_of(main_record)
    records = [e.data for e in store.events(agent.session_id, "summary")]
    assert all(r["chain"] == [lite, agent.model_name] for r in records)


async def test_with_no_model_able_to_summarize_compact_still_frees_tokens_with_extractive_summaries(
    store, workspace, tmp_path
):
    lite, _ = summarizer_script(tmp_path, "lite", error="server")
    agent, main_record = chat_agent(store, workspace, tmp_path, lite=lite, main_turn={"text": "not a summary"})
    before = agent.engine.assemble(agent.turn_input()).tokens
    # The system prompt and the tool schemas are not the history compaction works on: the claim is
    # about the rest (they grow with every tool myrm ships, which is not this test's business).
    fixed = agent.turn_input().fixed_tokens()
    event = await agent.compact_now()
    assert event is not None and event["tokens_after"] - fixed < (before - fixed) / 2, (before, fixed, event)
    nodes = [n for n in store.summaries(agent.session_id) if n["status"] == "active"]
    assert nodes and all(n["fallback"] for n in nodes)
    assert requests_of(main_record), "the main model was asked before the extractive body was used"


async def test_cancelling_compact_changes_no_prompt_byte_and_the_written_summary_is_used_later(
    store, workspace, tmp_path
):
    lite, lite_record = summarizer_script(tmp_path, "lite", window=10_000)  # ~6.7k-token chunks: several
    agent, _ = chat_agent(store, workspace, tmp_path, lite=lite, turns=80)
    first = agent.engine.assemble(agent.turn_input())
    task: asyncio.Task | None = None

    def progress(step) -> None:
        if step.what == "leaf" and step.done == 1:
            assert task is not None
            task.cancel()  # the user pressed Esc while the second summary was being written

    task = asyncio.ensure_future(agent.compact_now(progress=progress))
    try:
        await task
        raise AssertionError("the compaction was not cancelled")
    except asyncio.CancelledError:
        pass
    assert not [e for e in store.events(agent.session_id, "compaction") if e.data.get("state") == "done"]
    assert agent.engine.assemble(agent.turn_input()).messages == first.messages, "the prompt is unchanged"
    prepared = store.summaries(agent.session_id, status="prepared")
    assert len(prepared) == 1 and not prepared[0]["fallback"]
    asked = len(requests_of(lite_record, "leaf"))

    event = await agent.compact_now()  # the agent is usable again, and the summary is not paid twice
    assert event is not None
    assert store.get_summary(agent.session_id, prepared[0]["handle"])["status"] in ("active", "folded")
    leaves = [n for n in store.summaries(agent.session_id) if n["depth"] == 0]
    assert len(leaves) >= 2 and len(requests_of(lite_record, "leaf")) - asked == len(leaves) - 1


@pytest.mark.slow
async def test_a_long_turn_prepares_model_summaries_between_steps_and_removal_uses_them(
    store, workspace, tmp_path, script
):
    (workspace / "notes.txt").write_text("\n".join(ANSWER_WORDS for _ in range(6)))
    summary = {
        **SUMMARY,
        "user_goal": "read notes.txt many times",
        "active_task": "read notes.txt",
        "completed_actions": ["read notes.txt with file_read"],
    }
    lite, _ = summarizer_script(tmp_path, "lite", text=json.dumps(summary))
    steps = [
        {"tool_calls": [{"id": f"c{i}", "name": "file_read", "arguments": {"path": "notes.txt"}}]} for i in range(40)
    ]
    model = script(*steps, {"text": "read it forty times"}, context_window=16_000)
    session = store.create_session(model=model).id
    agent = Agent(
        store=store,
        session_id=session,
        settings=settings_for(model, lite_model=lite, max_steps=40),
        workspace=workspace,
    )
    log = await drive(agent, "read notes.txt forty times")
    # (The scripted model picks its turn by the assistant messages it sees; once history is
    # removed it repeats calls, so the turn ends at max_steps.)
    assert isinstance(log.events[-1], TurnFinished) and log.events[-1].steps == 40
    events = store.events(session)
    prepares = [e for e in events if e.kind == "summary" and e.data["kind"] == "prepare"]
    removals = [
        e
        for e in events
        if e.kind == event_kinds.COMPACTION and e.data.get("state") == "done" and e.data.get("ops", {}).get("remove")
    ]
    assert prepares and removals, "the turn crossed the full threshold and then removed history"
    assert prepares[0].id < removals[0].id, "a summary was ready before the first removal"
    used = [n for n in store.summaries(session) if n["depth"] == 0 and n["status"] != "prepared"]
    assert any(n["model"] == lite and not n["fallback"] for n in used), "removal used the model's summary"


@pytest.mark.parametrize("wait", [True, False])
async def test_summary_wait_writes_the_summaries_an_emergency_is_about_to_remove(store, workspace, tmp_path, wait):
    """A resumed session already past the budget: its first request removes history before any
    idle moment or step boundary could prepare a summary. With `summary_wait` the user waits
    for the model's summaries; without it the removal uses extractive ones at once."""
    lite, _ = summarizer_script(tmp_path, "lite", window=10_000)  # several chunks to write
    agent, _ = chat_agent(store, workspace, tmp_path, lite=lite, turns=75, window=16_000, summary_wait=wait)
    log = await drive(agent, "one more question about the garden")
    assert isinstance(log.events[-1], TurnFinished) and log.events[-1].reason == "stop"
    waits = [n for n in log.of(Notice) if "summary_wait" in n.text]
    removed = [n for n in store.summaries(agent.session_id) if n["depth"] == 0 and n["status"] != "prepared"]
    assert removed, "the first request removed history"
    if wait:
        assert waits and "summaries" in waits[0].text
        records = [e.data for e in store.events(agent.session_id, "summary")]
        assert sum(r["kind"] == "before_removal" for r in records) >= 2, records
        assert {r["kind"] for r in records} <= {"before_removal", "fold"} and not any(r["fallback"] for r in records)
        assert all(not n["fallback"] and n["model"] == lite for n in removed), (
            "every removed run stands as a model-written summary"
        )
        folds = [n for n in store.summaries(agent.session_id) if n["children"] and n["status"] == "active"]
        assert all(n["model"] == lite for n in folds), "the fold the removal made was written by the model too"
    else:
        assert not waits and not store.events(agent.session_id, "summary")
        assert all(n["fallback"] for n in removed)


async def test_compact_on_a_span_too_short_to_gain_changes_nothing_and_asks_no_model(store, workspace, tmp_path):
    """Two short exchanges: the span before the latest one is a few dozen tokens, less than a
    summary node costs (its header and footer), so the command would grow the prompt and spend
    a model call on it. It refuses with the figures, and nothing is written or sent."""
    from myrm_tui.context.prompt import NothingWorthCompacting

    lite, lite_record = summarizer_script(tmp_path, "lite")
    agent, main_record = chat_agent(store, workspace, tmp_path, lite=lite, turns=0)
    for n, text in enumerate(("hello", "how are you", "and the garden?")):
        agent.store.append_message(agent.session_id, {"role": "user", "content": text}, 3)
        if n < 2:
            agent.store.append_message(agent.session_id, {"role": "assistant", "content": "Fine."}, 3)
    before = agent.engine.assemble(agent.turn_input())
    least = agent.engine.config.min_manual_compact_tokens
    with pytest.raises(NothingWorthCompacting) as raised:
        await agent.compact_now()
    assert 0 < raised.value.span < least and f"starts at {least:,}" in str(raised.value)
    assert not store.events(agent.session_id, event_kinds.COMPACTION) and not store.summaries(agent.session_id)
    assert not requests_of(lite_record) and not requests_of(main_record)
    assert agent.engine.assemble(agent.turn_input()).messages == before.messages
    # A span over the least one is compacted as before (the 40-turn test above), and this one too
    # once the least span is lowered: the refusal is the floor's, not a missing span.
    agent.engine.config = dataclasses.replace(agent.engine.config, min_manual_compact_tokens=raised.value.span)
    assert (await agent.compact_now()) is not None
