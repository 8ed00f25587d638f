"""The ACP server runs the idle step after each turn, as the TUI does, and a new prompt stops it.

Why: `Agent.maintain` is where a summary is prepared in the background, where the compaction the
next request would run moves out of it, and where the next event's scans are done; the ACP
server never called it, so an editor's sessions paid all of that inside their requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import RequestError, text_block

from myrm_tui.acp.server import MyrmAcpAgent, Workspace
from myrm_tui.agent.agent import Agent
from tests.agent.agent_helpers import settings_for


class _Editor:
    """The client side: takes the session updates, asks nothing."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


def _server(workspace, store, model: str) -> MyrmAcpAgent:
    settings = settings_for(model)
    opened = Workspace(
        root=workspace,
        settings=settings,
        store=store,
        settings_for_session=lambda _model: settings,
        mcp_for=lambda _settings, _servers: None,
    )
    server = MyrmAcpAgent(lambda _folder: opened)
    server.on_connect(_Editor())  # type: ignore[arg-type]  # the two methods a turn without approvals uses
    return server


async def test_each_turn_is_followed_by_the_idle_step(workspace, store, script, monkeypatch):
    ran: list[str] = []
    maintain = Agent.maintain

    async def recorded(self: Agent) -> Any:
        ran.append(self.session_id)
        return await maintain(self)

    monkeypatch.setattr(Agent, "maintain", recorded)
    server = _server(workspace, store, script({"text": "one"}, {"text": "two"}))
    session_id = (await server.new_session(cwd=str(workspace))).session_id
    try:
        for n, text in enumerate(["hi", "again"], start=1):
            assert (await server.prompt([text_block(text)], session_id)).stop_reason == "end_turn"
            idle = server.sessions[session_id].idle
            assert idle is not None
            await asyncio.wait_for(idle, 30)
            assert ran == [session_id] * n
    finally:
        await server.close()


async def test_a_new_prompt_stops_the_idle_step(workspace, store, script, monkeypatch):
    started = asyncio.Event()

    async def endless(self: Agent) -> Any:
        started.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(Agent, "maintain", endless)
    server = _server(workspace, store, script({"text": "one"}, {"text": "two"}))
    session_id = (await server.new_session(cwd=str(workspace))).session_id
    try:
        await server.prompt([text_block("hi")], session_id)
        first = server.sessions[session_id].idle
        assert first is not None
        await asyncio.wait_for(started.wait(), 30)
        reply = await asyncio.wait_for(server.prompt([text_block("again")], session_id), 60)
        assert reply.stop_reason == "end_turn"
        assert first.cancelled()
        second = server.sessions[session_id].idle
        assert second is not None and not second.done()
    finally:
        await server.close()
    assert second.cancelled()  # closing the server stops it too


async def test_a_prompt_in_another_session_stops_the_idle_step_too(workspace, store, script, monkeypatch):
    async def endless(self: Agent) -> Any:
        await asyncio.Event().wait()

    monkeypatch.setattr(Agent, "maintain", endless)
    server = _server(workspace, store, script({"text": "one"}, {"text": "two"}))
    first = (await server.new_session(cwd=str(workspace))).session_id
    second = (await server.new_session(cwd=str(workspace))).session_id
    try:
        await server.prompt([text_block("hi")], first)
        idle = server.sessions[first].idle
        assert idle is not None and not idle.done()
        await asyncio.wait_for(server.prompt([text_block("hello")], second), 60)
        assert idle.cancelled()  # its summary calls and scans would slow the other session's turn
    finally:
        await server.close()


async def test_no_idle_step_after_a_failed_turn(workspace, store, script):
    server = _server(workspace, store, script({"error": "auth"}))
    session_id = (await server.new_session(cwd=str(workspace))).session_id
    try:
        await server.prompt([text_block("hi")], session_id)
        assert server.sessions[session_id].idle is None  # as the TUI: no summary call right after an error
    finally:
        await server.close()


async def test_two_prompts_at_once_start_one_turn(workspace, store, script):
    server = _server(workspace, store, script({"text": "one"}, {"text": "two"}))
    session_id = (await server.new_session(cwd=str(workspace))).session_id
    try:
        await server.prompt([text_block("hi")], session_id)  # an idle step now runs
        results = await asyncio.gather(
            server.prompt([text_block("a")], session_id),
            server.prompt([text_block("b")], session_id),
            return_exceptions=True,
        )
        refused = [r for r in results if isinstance(r, RequestError)]
        assert len(refused) == 1 and sum(1 for r in results if not isinstance(r, BaseException)) == 1
    finally:
        await server.close()
