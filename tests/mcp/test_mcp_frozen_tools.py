"""The tool list stays a cached prefix when an MCP server changes its tools mid-session.

The path the user runs: `SessionRuntime.send` (the door of the TUI and `myrm run`) with the
in-tests MCP server over stdio, and a real OpenAI-compatible server on loopback that captures
every request body, so the test reads the tools array exactly as it was sent. Between two
messages the server adds a tool and removes one (on its own: the test calls its `add_tool`);
the next request must list what the session offered before byte for byte, the newcomer last,
and the removed tool as a stub that runs nothing and says so.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.events import ApprovalRequest, ToolFinished
from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.mcp.manager import McpManager
from myrm_tui.settings.settings import Settings
from tests.faults.fake_openai_server import FakeOpenAI, Reply, answer, running_fake_openai
from tests.mcp.mcp_helpers import stdio_config

MODEL = "openai/frozen-tools"
REMOVED = "mcp__t__echo"
ADDED = "mcp__t__late_tool"


@pytest.fixture
def server():
    with running_fake_openai() as fake:
        yield fake


@pytest.fixture
async def manager(workspace):
    manager = McpManager({"t": stdio_config("t")}, workspace=workspace, startup_timeout=60.0, tool_timeout=30.0)
    yield manager
    await manager.aclose()


def calls_echo() -> Reply:
    """A streamed answer that calls the removed tool with well-formed arguments."""

    def chunk(delta: dict, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "choices": [choice]})

    call = {"index": 0, "id": "e1", "type": "function", "function": {"name": REMOVED, "arguments": '{"text": "hi"}'}}
    return Reply(
        events=(
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [call]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        )
    )


def tools_text(server: FakeOpenAI, index: int) -> tuple[list[dict], str]:
    tools = json.loads(server.requests[index]["body"])["tools"]
    return tools, json.dumps(tools, separators=(",", ":"), ensure_ascii=False)


def stable_prefix(before: str, after: str) -> int:
    """Characters at the start of `before` that `after` repeats exactly (what a cache reuses)."""
    n = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        n += 1
    return n


async def send(runtime: SessionRuntime, text: str, settings: Settings) -> list:
    events = []
    async for event in runtime.send(text, settings):
        assert not isinstance(event, ApprovalRequest), "a stub runs nothing, so nothing is asked"
        events.append(event)
    return events


async def test_a_sync_that_adds_and_removes_keeps_what_was_offered_as_a_byte_identical_prefix(
    store, workspace, manager, server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-the-loopback-server")
    values = Settings().with_values(model=MODEL, api_base=server.api_base).values
    settings = Settings(values, models={MODEL: {"context_window": 128_000}})
    runtime = SessionRuntime(
        store=store, session_id=store.create_session(model=MODEL).id, workspace=workspace, mcp=manager
    )
    await send(runtime, "hello", settings)
    before, before_text = tools_text(server, -1)
    names = [t["function"]["name"] for t in before]
    assert REMOVED in names and ADDED not in names and names.index(REMOVED) < len(names) - 2

    (connection,) = manager.connections()
    await connection.call_tool("add_tool", {"remove": "echo"})
    for _ in range(200):
        offered = {t.name for t in manager.tools()}
        if ADDED in offered and REMOVED not in offered:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the server's tool change never reached the manager")

    server.plan = [calls_echo(), answer("the echo tool is gone")]
    events = await send(runtime, "echo hi", settings)
    after, after_text = tools_text(server, -2)

    prefix = stable_prefix(before_text, after_text)
    assert prefix >= len(before_text) - 1, f"prefix-stable bytes {prefix} of {len(before_text)}"
    assert after[: len(before)] == before, "every tool offered before keeps its place and its bytes"
    assert [t["function"]["name"] for t in after][len(before) :] == [ADDED], "the newcomer is last"
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.name == REMOVED and finished.status == "error"
    assert "not available any more" in finished.content and "Nothing ran" in finished.content
    rebuilds = runtime.rebuilds

    await send(runtime, "and now?", settings)
    _, third_text = tools_text(server, -1)
    assert third_text == after_text and runtime.rebuilds == rebuilds, "frozen across messages: no rebuild churn"

    resumed = SessionRuntime(store=store, session_id=runtime.session_id, workspace=workspace, mcp=manager)
    await send(resumed, "back again", settings)
    _, resumed_text = tools_text(server, -1)
    assert resumed_text == after_text, "a resumed session keeps its order (stored in its mcp_tools event)"
