"""A search never lists the recall tools' own traffic: the call that carries the query and the
results that list or copy what was found. Driven through `Agent.turn` with a scripted model, as
a live session runs it: the agent stores the assistant's `ctx_search` call before it runs it,
so without the filter the call itself (its arguments are the query, word for word) came back as
hit [1], and a second search also listed the first one's result."""

from __future__ import annotations

import json
from pathlib import Path

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ToolFinished
from myrm_tui.settings.settings import Settings

FACT = "The staging relay listens on heron-relay-17.internal, per the runbook."


def _script(tmp_path: Path, name: str, *turns: dict) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"scripted/{path}"


async def _drive(agent: Agent, text: str) -> list[ToolFinished]:
    done = []
    async for event in agent.turn(text):
        if isinstance(event, ToolFinished):
            done.append(event)
    return done


async def test_search_lists_the_fact_not_its_own_call_nor_an_earlier_search(store, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = _script(tmp_path, "first", {"text": "Noted."})
    session = store.create_session(model=first).id
    await _drive(
        Agent(store=store, session_id=session, settings=Settings().with_values(model=first), workspace=workspace), FACT
    )
    [fact] = [m for m in store.messages(session) if m.role == "user"]

    search = {"tool_calls": [{"id": "s1", "name": "ctx_search", "arguments": {"query": "heron-relay-17"}}]}
    again = {"tool_calls": [{"id": "s2", "name": "ctx_search", "arguments": {"query": "heron-relay-17"}}]}
    model = _script(tmp_path, "second", {"text": "unused"}, search, again, {"text": "It is heron-relay-17.internal."})
    agent = Agent(store=store, session_id=session, settings=Settings().with_values(model=model), workspace=workspace)
    done = {e.call_id: e.content for e in await _drive(agent, "which host was the staging relay?")}

    for call_id in ("s1", "s2"):
        hits = [line for line in done[call_id].splitlines() if line.startswith("[")]
        assert hits, done[call_id]
        assert hits[0].startswith(f"[1] msg:{fact.id} · user"), done[call_id]
        assert all(" · assistant" not in h and "ctx_search" not in h for h in hits), hits
    # The first search's result holds the query too: the second search does not list it.
    assert "1 hit," in done["s2"], done["s2"]
