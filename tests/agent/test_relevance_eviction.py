"""Relevance-first eviction through the live agent: on a model without prompt caching the old
turn the current question is about survives an emergency, an unrelated newer one goes; on a
caching model removal stays oldest first (the cached prefix is cut once)."""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.context.rows.views import REMOVED
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, settings_for

WINDOW = 64_000
TOPICS = {
    "tokenizer": "The tokenizer reads the grammar file and splits tabs from spaces before parsing. ",
    "weather": "Sunny in the morning, some rain later, mild wind from the west over the hills. ",
    "load": "Load average was low all day; the disk was mostly idle and memory stayed free. ",
}
QUESTION = "why does the tokenizer choke on tabs in the grammar?"


def _reply(topic: str, tokens: int, model: str) -> str:
    """One topic's sentence repeated to about `tokens` tokens (counted once, not per repeat)."""
    sentence = TOPICS[topic]
    per = count_message_tokens({"role": "assistant", "content": sentence * 10}, model) / 10
    return sentence * (int(tokens / per) + 1)


def _agent(store, workspace: Path, script, *, caching: bool) -> tuple[Agent, str]:
    """Three old exchanges of equal size (one per topic), the sizes chosen so that the forced
    emergency (down to 35 % of B) must remove exactly two of the three long answers."""
    model = script(context_window=WINDOW)
    values = settings_for(model, approval="yolo").values
    settings = Settings(values, models={} if caching else {model: {"supports_prompt_caching": False}})
    session = store.create_session(model=model)
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
    inp = agent.turn_input()
    budget, fixed = inp.budget().prompt_limit, inp.fixed_tokens()
    size = int((0.6 * budget - fixed) / 3)
    assert fixed + size < 0.33 * budget < fixed + 2 * size  # one answer fits under the target, two do not
    # One chunk per answer: streaming 40k characters in the default small chunks takes a minute.
    turns = [{"text": _reply(topic, size, model), "chunk_size": 1_000_000} for topic in TOPICS]
    # The question's first call: the provider refuses the prompt, the agent compacts hard once.
    turns.append({"text": "tabs are not whitespace in that grammar", "error": "context_window", "error_times": 1})
    Path(model.split("/", 1)[1]).write_text(json.dumps({"context_window": WINDOW, "turns": turns}))
    return agent, model


async def _removed_topics(store, workspace, script, *, caching: bool) -> set[str]:
    agent, _ = _agent(store, workspace, script, caching=caching)
    for prompt in ("tell me about the tokenizer", "and the weather?", "and the load?"):
        await drive(agent, prompt)
    await drive(agent, QUESTION)
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    assert any((r.get("event") or {}).get("tier") == "emergency" for r in reports), "the overflow compacted"
    removed = {row.id for row in agent.engine.rows if (v := agent.engine.views.get(row.id)) and v.kind == REMOVED}
    return {
        topic
        for row in agent.engine.rows
        if row.id in removed and row.role == "assistant"
        for topic, text in TOPICS.items()
        if text in str(row.message.get("content"))
    }


async def test_a_non_caching_model_keeps_the_old_turn_the_question_is_about(store, workspace, script):
    assert await _removed_topics(store, workspace, script, caching=False) == {"weather", "load"}


async def test_a_caching_model_still_removes_the_oldest_turns_first(store, workspace, script):
    assert await _removed_topics(store, workspace, script, caching=True) == {"tokenizer", "weather"}
