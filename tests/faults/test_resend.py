"""Resending after a failed turn stores the ask once, and no attempt makes the
next one harder.

Each test is the failure first: on the code before the fix, a resend after an auth error stored
the user message a second time, and each ContextExhausted attempt needed more tokens than the
last (the copies piled up in a window that could not hold them). Real store, real agent, the
scripted model through litellm.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import CUT_OFF_NOTE, Agent
from myrm_tui.agent.events import AssistantMessageStored, TurnError, TurnFinished, UserMessageStored
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store

# A window the real fixed prefix (~2.45k tokens: system prompt and tool schemas) fits with room for
# a short message only: the prompt limit is 6,000 − 3,000 (reserve, half the window) − 256
# (margin) = 2,744 tokens. Grows with the tool list: when a tool is added, this moves with it.
SMALL_WINDOW = 6_000
# About 400 tokens: under the 35 % single-item cap (no excerpt), over the room the window leaves.
TOO_BIG_FOR_THE_WINDOW = "please look at this: " + " ".join(f"word{i}" for i in range(200))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def store(workspace: Path):
    opened = Store.open(workspace)
    yield opened
    opened.close()


def scripted(tmp_path: Path, *turns: dict[str, Any], name: str = "script") -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"scripted/{path}"


def agent_for(
    store: Store,
    workspace: Path,
    model: str,
    session_id: str | None = None,
    models: dict[str, dict[str, Any]] | None = None,
    **values: Any,
) -> Agent:
    session_id = session_id or store.create_session(model=model).id
    settings = Settings(Settings().with_values(model=model, llm_max_attempts=1, **values).values, models=models or {})
    return Agent(store=store, session_id=session_id, settings=settings, workspace=workspace)


async def send(agent: Agent, text: str) -> list[Any]:
    return [event async for event in agent.turn(text)]


def stored(store: Store, session_id: str) -> list[dict[str, Any]]:
    return [row.message for row in store.messages(session_id)]


def needed_tokens(events: list[Any]) -> int:
    [error] = [e for e in events if isinstance(e, TurnError)]
    assert error.error_class == "ContextExhausted", error
    needs = re.search(r"needs ([\d,]+) prompt tokens", error.message)
    assert needs is not None, error.message
    return int(needs.group(1).replace(",", ""))


async def test_resend_after_an_auth_error_reuses_the_stored_ask(store, workspace, tmp_path):
    model = scripted(tmp_path, {"text": "hello back", "error": "auth", "error_times": 1})
    agent = agent_for(store, workspace, model)
    first = await send(agent, "hello?")
    assert first[-1] == TurnFinished("error", 1)
    [kept] = [e for e in first if isinstance(e, UserMessageStored)]
    assert not kept.reused

    second = await send(agent, "hello?")
    [again] = [e for e in second if isinstance(e, UserMessageStored)]
    assert again.message_id == kept.message_id and again.reused
    assert [e.text for e in second if isinstance(e, AssistantMessageStored)] == ["hello back"]
    assert stored(store, agent.session_id) == [
        {"role": "user", "content": "hello?"},
        {"role": "assistant", "content": "hello back"},
    ]


async def test_failed_attempts_in_a_small_window_do_not_make_the_next_one_harder(store, workspace, tmp_path):
    model = scripted(tmp_path, {"text": "never sent"})
    agent = agent_for(store, workspace, model, models={model: {"context_window": SMALL_WINDOW}})
    needs = [needed_tokens(await send(agent, TOO_BIG_FOR_THE_WINDOW)) for _ in range(4)]
    assert len(set(needs)) == 1, f"each attempt needed more: {needs}"
    assert stored(store, agent.session_id) == [{"role": "user", "content": TOO_BIG_FOR_THE_WINDOW}]

    # A shorter message is the way out, and it works at once: the too-large ask is history now,
    # and history can always shrink (here to a one-line summary that names it).
    events = await send(agent, "short version: look at word1")
    assert events[-1] == TurnFinished("stop", 1)
    roles = [m["role"] for m in stored(store, agent.session_id)]
    assert roles == ["user", "user", "assistant"]


async def test_a_cut_off_partial_answer_is_an_answer_so_the_resend_is_a_new_ask(store, workspace, tmp_path):
    model = scripted(
        tmp_path,
        {"text": "first half and then the second half", "error": "drop_mid_stream", "error_times": 1},
        {"text": "complete answer"},
    )
    agent = agent_for(store, workspace, model)
    failed = await send(agent, "talk")
    assert any(isinstance(e, TurnError) for e in failed)
    await send(agent, "talk")
    messages = stored(store, agent.session_id)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["content"].endswith(CUT_OFF_NOTE.format(why="the provider call failed"))
    assert messages[2] == {"role": "user", "content": "talk"} and messages[3]["content"] == "complete answer"


async def test_different_text_after_a_failure_is_a_new_ask_and_the_old_one_stays(store, workspace, tmp_path):
    model = scripted(tmp_path, {"text": "ok", "error": "auth", "error_times": 1})
    agent = agent_for(store, workspace, model)
    await send(agent, "first wording")
    await send(agent, "second wording")
    assert [m.get("content") for m in stored(store, agent.session_id)] == ["first wording", "second wording", "ok"]


async def test_resend_after_a_restart_reuses_the_ask_stored_by_the_dead_process(workspace, tmp_path):
    model = scripted(tmp_path, {"text": "back again", "error": "auth", "error_times": 1})
    store = Store.open(workspace)
    session_id = agent_for(store, workspace, model).session_id
    await send(agent_for(store, workspace, model, session_id), "are you there?")
    store.close()  # the process ends; its in-memory engine state is gone

    store = Store.open(workspace)
    try:
        events = await send(agent_for(store, workspace, model, session_id), "are you there?")
        assert [e.reused for e in events if isinstance(e, UserMessageStored)] == [True]
        assert [m["role"] for m in stored(store, session_id)] == ["user", "assistant"]
    finally:
        store.close()
