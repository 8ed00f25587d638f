"""Fork with summary starts from the model-written summaries the session already has.

The path the user runs: a chat compacted with `/compact` (`Agent.compact_now`, the lite model
writes the summary nodes), then `/fork` → "with summary" (`Agent.fork_with_summary`, what the
TUI's fork dialog calls), then a first turn in the fork. The models are the scripted provider
behind litellm; each records the requests it got, so the test sees both what the fork's first
request carried and that nobody asked the summarizer again.
"""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.fork import FORK_SUMMARY, SYNTHETIC_KEY
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, settings_for

# Text only the summarizer's answer contains: the chat's own words never say it.
MODEL_NARRATIVE = "The orchard conversation as the lite model summarized it."
MODEL_SUMMARY = {
    "user_goal": "plan an orchard",
    "active_task": "the latest question: how to look after the trees this week",
    "completed_actions": ["answered questions about pruning and watering"],
    "key_findings": ["apple trees are pruned in late winter"],
    "decisions": ["plant the pears on the south slope"],
    "next_steps": ["ask about grafting"],
    "narrative": MODEL_NARRATIVE,
}
REPLY = "Prune the apples in late winter, water deeply once a week and mulch against the heat. " * 4


def scripted(tmp_path, name: str, turn: dict) -> tuple[str, Path]:
    record = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [turn], "context_window": 32_000, "record": record.name}))
    return f"scripted/{path}", record


def summary_requests(record) -> list[list[dict]]:
    lines = record.read_text().splitlines() if record.exists() else []
    return [r for r in map(json.loads, lines) if str(r[0].get("content", "")).startswith("You compress part of")]


async def test_a_fork_of_a_compacted_session_starts_from_the_model_summary_with_no_new_call(store, workspace, tmp_path):
    lite, lite_record = scripted(tmp_path, "lite", {"text": json.dumps(MODEL_SUMMARY)})
    main, main_record = scripted(tmp_path, "main", {"text": "ok"})
    session = store.create_session(model=main).id
    for n in range(1, 31):
        for message in (
            {"role": "user", "content": f"Question {n}: how should I look after the trees this week?"},
            {"role": "assistant", "content": f"Week {n}. {REPLY}"},
        ):
            store.append_message(session, message, count_message_tokens(message, main))
    agent = Agent(store=store, session_id=session, settings=settings_for(main, lite_model=lite), workspace=workspace)
    event = await agent.compact_now()
    assert event is not None and event["ops"].get("remove", 0) > 0
    written = len(summary_requests(lite_record))
    model_leaves = [n for n in store.summaries(session) if n["model"] == lite]
    assert written and model_leaves, "the premise: the lite model wrote the session's summary nodes"

    child = agent.fork_with_summary()

    [summary_row] = [r for r in store.messages(child.id) if r.message.get(SYNTHETIC_KEY) == FORK_SUMMARY]
    assert MODEL_NARRATIVE in summary_row.message["content"]
    assert "plant the pears on the south slope" in summary_row.message["content"]
    [fork_event] = store.events(child.id, event_kinds.FORK)
    assert fork_event.data["reused_summaries"], fork_event.data
    assert set(fork_event.data["reused_summaries"]) <= {n["handle"] for n in model_leaves}

    fork_agent = Agent(
        store=store, session_id=child.id, settings=settings_for(main, lite_model=lite), workspace=workspace
    )
    await drive(fork_agent, "and the plums?")
    first_request = json.loads(main_record.read_text().splitlines()[-1])
    assert any(MODEL_NARRATIVE in str(m.get("content")) for m in first_request)
    assert len(summary_requests(lite_record)) == written, "the fork asked the summarizer nothing"
    assert not summary_requests(main_record)


async def test_rows_no_model_node_covers_are_summarized_extractively(store, workspace, tmp_path):
    """The turns after the compaction are in no node: the fork extracts them, and only them."""
    lite, _ = scripted(tmp_path, "lite", {"text": json.dumps(MODEL_SUMMARY)})
    main, _ = scripted(tmp_path, "main", {"text": "ok"})
    session = store.create_session(model=main).id
    for n in range(1, 21):
        for message in (
            {"role": "user", "content": f"Question {n}: how should I look after the trees this week?"},
            {"role": "assistant", "content": f"Week {n}. {REPLY}"},
        ):
            store.append_message(session, message, count_message_tokens(message, main))
    agent = Agent(store=store, session_id=session, settings=settings_for(main, lite_model=lite), workspace=workspace)
    await agent.compact_now()
    later = ("Should the quince go near the fence?", "Yes, the quince likes the shelter of the fence.")
    for text in later:
        message = {"role": "user" if text.endswith("?") else "assistant", "content": text}
        store.append_message(session, message, count_message_tokens(message, main))
    for n in range(2):
        for message in ({"role": "user", "content": f"last {n}"}, {"role": "assistant", "content": f"reply {n}"}):
            store.append_message(session, message, count_message_tokens(message, main))

    child = agent.fork_with_summary()

    [summary_row] = [r for r in store.messages(child.id) if r.message.get(SYNTHETIC_KEY) == FORK_SUMMARY]
    text = summary_row.message["content"]
    assert MODEL_NARRATIVE in text
    assert "quince" in text, "the uncovered turns are in the summary, extracted"
    [fork_event] = store.events(child.id, event_kinds.FORK)
    assert fork_event.data["reused_summaries"] and fork_event.data["extractive_messages"] >= 2
