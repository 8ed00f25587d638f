"""The client against a real server (the SDK-built server in mcp_test_server.py), over stdio and
over streamable HTTP on 127.0.0.1: tools, results of every kind, failures that must stay
readable (raise, hang, crash, a start that never answers), restart, and no process left behind."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.mcp.connection import CRASHED, DISABLED, FAILED, READY
from myrm_tui.mcp.manager import McpManager
from myrm_tui.mcp.tool import McpTool
from myrm_tui.settings.sections.mcp_servers import McpServerConfig
from myrm_tui.settings.settings import Settings
from tests.mcp.mcp_helpers import HttpServer, connection_of, http_config, server_pids, stdio_config, wait_gone

TOOLS = ["add_tool", "big", "boom", "crash", "echo", "env_probe", "hang", "image", "report_link", "weather"]


def manager_for(
    *configs: McpServerConfig,
    workspace: Path,
    startup: float = 60.0,
    tool: float = 30.0,
    env: dict[str, str] | None = None,
) -> McpManager:
    return McpManager(
        {c.name: c for c in configs}, workspace=workspace, startup_timeout=startup, tool_timeout=tool, env=env
    )


def context(workspace: Path, store=None, session_id: str | None = None) -> ToolContext:
    return ToolContext(
        workspace=workspace,
        settings=Settings(),
        vault=getattr(store, "vault", None),
        store=store,
        session_id=session_id,
    )


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    return request.param


@pytest.fixture
def server_config(transport, request) -> McpServerConfig:
    if transport == "stdio":
        return stdio_config("t")
    http: HttpServer = request.getfixturevalue("http_server")
    return http_config(http.url, "t")


async def test_tools_are_listed_sorted_and_named_for_the_prompt(server_config, workspace):
    manager = manager_for(server_config, workspace=workspace)
    try:
        await manager.start()
        await manager.wait_started()
        (status,) = manager.statuses()
        assert status.state == READY, status.last_error
        assert list(status.tools) == TOOLS and status.server_info == "myrm-test-server 1.0"
        tools = manager.tools()
        assert [t.name for t in tools] == [f"mcp__t__{n}" for n in TOOLS] + ["mcp_read_resource"]
        echo = next(t for t in tools if t.name == "mcp__t__echo")
        assert isinstance(echo, McpTool)
        schema = echo.schema()["function"]["parameters"]
        assert schema["properties"]["text"]["type"] == "string" and schema["required"] == ["text"]
        assert echo.kind == "exec" and echo.permission_names == ("mcp__t", "mcp__t__echo")
        assert [t.schema() for t in manager.tools()] == [t.schema() for t in tools], "same tools, same bytes"
    finally:
        await manager.aclose()


@pytest.mark.slow
async def test_results_of_every_kind(server_config, workspace, store):
    session = store.create_session("scripted/x")
    manager = manager_for(server_config, workspace=workspace, tool=5.0)
    ctx = context(workspace, store, session.id)
    try:
        await manager.wait_started()
        tools = {t.name: t for t in manager.tools()}
        assert (await tools["mcp__t__echo"].run({"text": "héllo\n"}, ctx)).content == "héllo\n"

        failed = await tools["mcp__t__boom"].run({}, ctx)
        assert failed.status == "error" and failed.content.startswith("error: the MCP tool boom failed")

        weather = await tools["mcp__t__weather"].run({"city": "Oslo"}, ctx)
        assert '"celsius": 21' in weather.content and weather.content.count("Oslo") == 1, "said once"

        image = await tools["mcp__t__image"].run({}, ctx)
        handle = image.content.split("stored as ")[1].rstrip("]")
        data = store.vault.read_bytes(handle)
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and image.content.startswith("[image image/png")

        link = await tools["mcp__t__report_link"].run({}, ctx)
        assert 'mcp_read_resource(server="t", uri="test://report")' in link.content
        read = await tools["mcp_read_resource"].run({"server": "t", "uri": "test://report"}, ctx)
        assert read.content == "the report says: all green"

        with pytest.raises(ToolError, match=r"did not answer hang within 5 s"):
            await tools["mcp__t__hang"].run({}, ctx)
        again = await tools["mcp__t__echo"].run({"text": "still here"}, ctx)
        assert again.content == "still here", "a hung call must not take the server down"
    finally:
        await manager.aclose()


async def test_a_one_megabyte_result_arrives_whole(server_config, workspace):
    manager = manager_for(server_config, workspace=workspace)
    try:
        await manager.wait_started()
        big = next(t for t in manager.tools() if t.name == "mcp__t__big")
        result = await big.run({}, context(workspace))
        assert len(result.content) >= 1_000_000 and "ZEBRA-NEEDLE-4242" in result.content
    finally:
        await manager.aclose()


async def test_a_tool_list_change_is_seen_without_a_restart(server_config, workspace):
    manager = manager_for(server_config, workspace=workspace)
    changes = []
    manager.subscribe(lambda: changes.append(1))
    try:
        await manager.wait_started()
        add = next(t for t in manager.tools() if t.name == "mcp__t__add_tool")
        await add.run({}, context(workspace))
        for _ in range(200):
            if "late_tool" in connection_of(manager, "t").status().tools:
                break
            await asyncio.sleep(0.05)
        assert "mcp__t__late_tool" in [t.name for t in manager.tools()]
        assert changes, "the /mcp screen is told"
    finally:
        await manager.aclose()


async def test_a_crashed_stdio_server_is_a_clear_error_and_restarts(workspace, logs):
    manager = manager_for(stdio_config("t"), workspace=workspace)
    try:
        await manager.wait_started()
        crash = next(t for t in manager.tools() if t.name == "mcp__t__crash")
        assert isinstance(crash, McpTool)
        with pytest.raises(
            ToolError,
            match=r"closed the connection during crash; its last stderr line: "
            r"test server: crashing on request",
        ):
            await crash.run({}, context(workspace))
        status = connection_of(manager, "t").status()
        assert status.state == CRASHED and "crashing on request" in status.last_error
        assert manager.tools() == (), "a crashed server offers nothing"
        echo_of_old = crash.server  # a tool object kept from before the crash
        with pytest.raises(Exception, match="is not running"):
            await echo_of_old.call_tool("echo", {"text": "x"})
        restarted = await manager.restart("t")
        assert restarted.state == READY and "echo" in restarted.tools
    finally:
        await manager.aclose()


@pytest.mark.slow
async def test_a_killed_http_server_fails_the_call_readably(http_server, workspace):
    manager = manager_for(http_config(http_server.url, "h"), workspace=workspace, tool=10.0)
    try:
        await manager.wait_started()
        echo = next(t for t in manager.tools() if t.name == "mcp__h__echo")
        http_server.stop()
        with pytest.raises(ToolError, match=r"MCP server 'h' (closed the connection|failed) during echo"):
            await echo.run({"text": "x"}, context(workspace))
    finally:
        await manager.aclose()


async def test_start_failures_say_why(workspace, monkeypatch):
    monkeypatch.delenv("MYRM_TEST_UNSET", raising=False)
    manager = manager_for(
        McpServerConfig("missing", "stdio", command="/nonexistent/mcp-server"),
        stdio_config("silent", "--hang-at-start", startup_timeout=2.0),
        McpServerConfig("novar", "http", url="http://127.0.0.1:9/${MYRM_TEST_UNSET}"),
        McpServerConfig("refused", "http", url="http://127.0.0.1:9/mcp"),
        McpServerConfig("off", "stdio", command="never-run", enabled=False),
        workspace=workspace,
        startup=60.0,
    )
    try:
        await manager.wait_started()
        by_name = {s.name: s for s in manager.statuses()}
        assert by_name["missing"].state == FAILED
        assert by_name["missing"].last_error == "command not found: /nonexistent/mcp-server"
        assert by_name["silent"].state == FAILED and by_name["silent"].last_error.startswith("did not start within 2 s")
        assert (
            by_name["novar"].state == FAILED and "${MYRM_TEST_UNSET} in url is not set" in by_name["novar"].last_error
        )
        assert by_name["refused"].state == FAILED and "ConnectError" in by_name["refused"].last_error
        assert by_name["off"].state == DISABLED
        assert manager.tools() == ()
    finally:
        await manager.aclose()


async def test_stderr_goes_to_the_servers_log_file(workspace, logs, capfd):
    manager = manager_for(stdio_config("t"), workspace=workspace)
    try:
        await manager.wait_started()
    finally:
        await manager.aclose()
    text = (logs / "mcp-t.log").read_text()
    assert "test server: starting (stdio)" in text
    assert (logs / "mcp-t.log").stat().st_mode & 0o077 == 0, "owner-only: a server may log secrets"
    out, err = capfd.readouterr()
    assert "test server" not in out + err


async def test_provider_keys_are_not_inherited_but_named_variables_are(workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-servers")
    monkeypatch.setenv("GIVEN_TOKEN", "for-this-server")
    config = McpServerConfig(
        "t", "stdio", command=sys.executable, args=stdio_config().args, env=(("PASSED", "${GIVEN_TOKEN}"),)
    )
    manager = manager_for(config, workspace=workspace)
    try:
        await manager.wait_started()
        probe = next(t for t in manager.tools() if t.name == "mcp__t__env_probe")
        ctx = context(workspace)
        assert (await probe.run({"name": "OPENAI_API_KEY"}, ctx)).content == "unset"
        assert (await probe.run({"name": "GIVEN_TOKEN"}, ctx)).content == "unset"
        assert (await probe.run({"name": "PASSED"}, ctx)).content == "set"
    finally:
        await manager.aclose()


async def test_no_server_process_outlives_the_manager(workspace, logs):
    manager = manager_for(stdio_config("a"), stdio_config("b"), workspace=workspace, tool=2.0)
    await manager.wait_started()
    hang = next(t for t in manager.tools() if t.name == "mcp__a__hang")
    call = asyncio.create_task(hang.run({}, context(workspace)))  # a call still running at shutdown
    await asyncio.sleep(0.3)
    pids = server_pids(logs / "mcp-a.log") + server_pids(logs / "mcp-b.log")
    assert len(pids) == 2
    await manager.aclose()
    assert all(wait_gone(pid) for pid in pids)
    with pytest.raises(ToolError):
        await call


async def test_reconfigure_keeps_unchanged_servers_running(workspace, logs):
    manager = manager_for(stdio_config("a"), workspace=workspace)
    try:
        await manager.wait_started()
        first = connection_of(manager, "a")
        await manager.configure({"a": stdio_config("a"), "b": stdio_config("b")})
        await manager.wait_started()
        assert manager.connection("a") is first and first.state == READY
        assert connection_of(manager, "b").state == READY
        old_pid = server_pids(logs / "mcp-b.log")[-1]
        await manager.configure({"a": stdio_config("a")})
        assert manager.names() == ["a"] and wait_gone(old_pid)
    finally:
        await manager.aclose()


async def test_waiting_while_the_launch_is_still_importing_waits_for_the_servers(workspace):
    """The app launches in the background; a first message sent meanwhile must still get the tools."""
    manager = manager_for(stdio_config("t"), workspace=workspace)
    try:
        launch = asyncio.ensure_future(manager.start())
        await asyncio.sleep(0)
        assert manager.starting() == ["t"]
        await manager.wait_started()
        assert connection_of(manager, "t").state == READY and manager.starting() == []
        await launch
    finally:
        await manager.aclose()


async def test_closing_during_a_start_that_hangs_leaves_no_process(workspace, logs):
    manager = manager_for(stdio_config("slow", "--hang-at-start"), workspace=workspace, startup=600.0)
    await manager.start()
    for _ in range(600):
        if server_pids(logs / "mcp-slow.log"):
            break
        await asyncio.sleep(0.05)
    (pid,) = server_pids(logs / "mcp-slow.log")
    await manager.aclose()  # must not wait out the 600 s start deadline
    assert connection_of(manager, "slow").state == "stopped"
    assert wait_gone(pid)


async def test_a_changed_tool_timeout_applies_to_the_next_call(workspace):
    manager = manager_for(stdio_config("t"), stdio_config("own", tool_timeout=30.0), workspace=workspace, tool=600.0)
    try:
        await manager.wait_started()
        manager.set_timeouts(60.0, 1.0)  # the settings screen changed mcp_tool_timeout
        hang = next(t for t in manager.tools() if t.name == "mcp__t__hang")
        with pytest.raises(ToolError, match=r"did not answer hang within 1 s"):
            await hang.run({}, context(workspace))
        assert connection_of(manager, "own").tool_timeout == 30.0, "a server's own tool_timeout_sec still wins"
    finally:
        await manager.aclose()
