"""MCP tools inside the agent: real Agent, real store, the scripted model through litellm, the
in-tests server over stdio. What the issue asks for: results, errors and a 1 MB result in the
store, the prompt and the index; a fingerprint that covers the sorted MCP tools and changes once,
visibly, when a server's tools change; approvals that ask by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalRequest, Notice, ToolFinished
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.mcp.frozen_order import is_unavailable
from myrm_tui.mcp.manager import McpManager
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from tests.mcp.mcp_helpers import drive, stdio_config

NEEDLE = "ZEBRA-NEEDLE-4242"


@pytest.fixture
async def manager(workspace):
    manager = McpManager({"t": stdio_config("t")}, workspace=workspace, startup_timeout=60.0, tool_timeout=30.0)
    yield manager
    await manager.aclose()


def make_agent(store, workspace: Path, manager, model: str, **values) -> Agent:
    session = store.create_session(model=model)
    settings = Settings().with_values(model=model, **values)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, mcp=manager)


def recorded_requests(path: Path) -> list[list[dict]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
async def test_results_errors_and_a_big_result_reach_store_prompt_and_index(
    store, workspace, manager, script, tmp_path
):
    record = tmp_path / "requests.jsonl"
    model = script(
        {
            "text": "calling",
            "tool_calls": [
                {"name": "mcp__t__echo", "arguments": {"text": "hello from mcp"}},
                {"name": "mcp__t__boom", "arguments": {}},
                {"name": "mcp__t__big", "arguments": {}},
                {"name": "mcp__t__image", "arguments": {}},
            ],
        },
        {"text": "all done"},
        record=str(record),
    )
    agent = make_agent(store, workspace, manager, model, approval="yolo")
    events = await drive(agent, "use the server")
    finished = {e.name: e for e in events if isinstance(e, ToolFinished)}
    assert finished["mcp__t__echo"].ok and finished["mcp__t__echo"].content == "hello from mcp"
    assert finished["mcp__t__boom"].status == "error"

    # the store: every result as a tool message; the big one as an excerpt with a handle
    tool_rows = {m.message["name"]: m.message for m in store.messages(agent.session_id) if m.role == "tool"}
    assert tool_rows["mcp__t__boom"]["content"].startswith("error: the MCP tool boom failed")
    big_row = tool_rows["mcp__t__big"]["content"]
    handle = finished["mcp__t__big"].vault_handle
    assert handle and handle in big_row and len(big_row) <= agent.settings.tool_output_cap
    assert len(store.vault.read_text(handle)) >= 1_000_000 and NEEDLE in store.vault.read_text(handle)
    assert "stored as vault://" in tool_rows["mcp__t__image"]["content"]

    # the index: the line the prompt does not show is found, pointing at the vault artifact
    hits = store.search(agent.session_id, NEEDLE)
    assert any(hit.handle == handle for hit in hits)

    # the prompt: the second model call saw the results, the excerpt and never the whole megabyte
    second = recorded_requests(record)[1]
    tool_messages = [m for m in second if m.get("role") == "tool"]
    assert len(tool_messages) == 4
    sent = json.dumps(tool_messages)
    assert "hello from mcp" in sent and "Error executing tool boom" in sent and handle in sent
    assert len(sent) < 100_000


async def test_the_tool_list_is_sorted_at_the_end_and_in_the_fingerprint(store, workspace, manager, script):
    model = script({"text": "x"})
    await manager.wait_started()
    settings = Settings().with_values(model=model)
    plain = build_agent(settings, workspace)
    tools = manager.tools()
    with_mcp = build_agent(settings, workspace, mcp_tools=tools)
    shuffled = build_agent(settings, workspace, mcp_tools=tuple(reversed(tools)))
    names = list(with_mcp.tools.names)
    assert names[: len(plain.tools.names)] == list(plain.tools.names), "built-in tools keep their place"
    assert names[len(plain.tools.names) :] == sorted(t.name for t in tools)
    assert with_mcp.fingerprint != plain.fingerprint
    # The manager's list is the sorted one, the same bytes every time; a build keeps the order it
    # is given, since a session lays its tools out in its own frozen order (mcp/frozen_order.py).
    assert [t.schema() for t in manager.tools()] == [t.schema() for t in tools]
    assert list(shuffled.tools.names)[len(plain.tools.names) :] == [t.name for t in reversed(tools)]


async def test_a_tool_change_is_noted_once_and_the_fingerprint_moves_once(store, workspace, manager, script):
    model = script(
        {"tool_calls": [{"name": "mcp__t__add_tool", "arguments": {}}]},
        {"text": "added"},
        {"text": "second turn"},
        {"text": "third turn"},
    )
    agent = make_agent(store, workspace, manager, model, approval="yolo")
    first = await drive(agent, "add a tool")
    assert not [e for e in first if isinstance(e, Notice) and "MCP tools changed" in e.text]
    before = agent.fingerprint
    assert "mcp__t__late_tool" not in agent.build.tools.names, "no change inside a turn"
    second = await drive(agent, "again")
    notes = [e.text for e in second if isinstance(e, Notice) and "MCP tools changed" in e.text]
    assert notes == [
        ("MCP tools changed: added mcp__t__late_tool. The tool list in the prompt changes once, from this turn on.")
    ]
    assert "mcp__t__late_tool" in agent.build.tools.names and agent.fingerprint != before
    after = agent.fingerprint
    third = await drive(agent, "and again")
    assert not [e for e in third if isinstance(e, Notice) and "MCP tools" in e.text]
    assert agent.fingerprint == after
    recorded = store.events(agent.session_id, event_kinds.MCP_TOOLS)
    assert len(recorded) == 2  # the baseline, then the one change
    stored_notes = [e.data["text"] for e in store.events(agent.session_id, event_kinds.NOTE)]
    assert stored_notes.count(notes[0]) == 1


async def test_mcp_tools_ask_by_default_and_a_no_is_respected(store, workspace, manager, script):
    model = script({"tool_calls": [{"name": "mcp__t__echo", "arguments": {"text": "hi"}}]}, {"text": "ok"})
    agent = make_agent(store, workspace, manager, model, approval="auto-edit")
    events = await drive(agent, "echo", approve=False)
    (request,) = [e for e in events if isinstance(e, ApprovalRequest)]
    assert request.tool == "mcp__t__echo" and request.summary == 'MCP t: echo {"text": "hi"}'
    assert "not sandboxed" in request.sandbox, "the bash sandbox's limits do not apply to a server"
    (done,) = [e for e in events if isinstance(e, ToolFinished)]
    assert done.status == "denied"


async def test_read_only_hints_relax_asking_only_when_the_user_allows_it(store, workspace, manager, script):
    calls = [
        {"name": "mcp__t__echo", "arguments": {"text": "hi"}},
        {"name": "mcp__t__weather", "arguments": {"city": "Oslo"}},
    ]
    for trusted, asked in ((False, ["mcp__t__echo", "mcp__t__weather"]), (True, ["mcp__t__weather"])):
        model = script({"tool_calls": calls}, {"text": "ok"})
        agent = make_agent(store, workspace, manager, model, approval="ask", mcp_trust_read_only=trusted)
        events = await drive(agent, "go", approve=True)
        assert [e.tool for e in events if isinstance(e, ApprovalRequest)] == asked


async def test_headless_ask_refuses_with_the_flag_that_allows_it(store, workspace, manager, script):
    model = script({"tool_calls": [{"name": "mcp__t__echo", "arguments": {"text": "hi"}}]}, {"text": "ok"})
    session = store.create_session(model=model)
    agent = Agent(
        store=store,
        session_id=session.id,
        settings=Settings().with_values(model=model),
        workspace=workspace,
        mcp=manager,
        headless=True,
    )
    events = await drive(agent, "echo")
    (done,) = [e for e in events if isinstance(e, ToolFinished)]
    assert done.status == "denied"
    assert any("--approve yolo allows it" in e.text for e in events if isinstance(e, Notice))


async def test_a_crashed_server_is_said_once_and_its_tools_stay_as_stubs_that_run_nothing(
    store, workspace, manager, script
):
    model = script(
        {"tool_calls": [{"name": "mcp__t__crash", "arguments": {}}]},
        {"text": "it crashed"},
        {"text": "next"},
        {"text": "and next"},
    )
    agent = make_agent(store, workspace, manager, model, approval="yolo")
    first = await drive(agent, "crash it")
    (done,) = [e for e in first if isinstance(e, ToolFinished)]
    assert done.status == "error" and "closed the connection during crash" in done.content
    second = await drive(agent, "go on")
    texts = [e.text for e in second if isinstance(e, Notice)]
    assert any(t.startswith("MCP server t crashed:") for t in texts)
    assert any(t.startswith("MCP tools changed: removed mcp__t__add_tool") for t in texts)
    # Its tools keep their place and bytes (the cached prefix holds) but can no longer run.
    offered = [t for t in agent.build.tools if t.name.startswith("mcp__")]
    assert offered and all(is_unavailable(t) for t in offered)
    third = await drive(agent, "more")
    assert not [e for e in third if isinstance(e, Notice) and "MCP" in e.text]


async def test_server_and_tool_rules_allow_and_deny_mcp_calls_and_always_allow_offers_the_tool(
    store, workspace, manager, script
):
    from myrm_tui.settings.settings import PermissionLists, RuleEntry

    calls = [
        {"name": "mcp__t__echo", "arguments": {"text": "hi"}},
        {"name": "mcp__t__weather", "arguments": {"city": "Oslo"}},
    ]
    model = script({"tool_calls": calls}, {"text": "ok"})
    session = store.create_session(model=model)
    rules = PermissionLists(
        allow=(RuleEntry("mcp__t", "user config.toml:2"),), deny=(RuleEntry("mcp__t__weather", "user config.toml:3"),)
    )
    settings = Settings(permissions=rules).with_values(model=model, approval="ask")
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, mcp=manager)
    events = await drive(agent, "go", approve=False)
    assert not [e for e in events if isinstance(e, ApprovalRequest)], "the server rule answers for echo"
    statuses = {e.name: e.status for e in events if isinstance(e, ToolFinished)}
    assert statuses == {"mcp__t__echo": "ok", "mcp__t__weather": "denied"}, "deny wins over the server rule"

    plain = script({"tool_calls": [calls[0]]}, {"text": "ok"})
    asked = await drive(make_agent(store, workspace, manager, plain, approval="ask"), "go", approve=False)
    (request,) = [e for e in asked if isinstance(e, ApprovalRequest)]
    assert request.offered_rules == ("mcp__t__echo",), "always-allow offers the one tool, not the whole server"
