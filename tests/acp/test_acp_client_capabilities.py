"""What an editor lends `myrm acp`, driven end to end: a real `myrm acp` process, the SDK's client
side as the editor, the scripted model at the LLM boundary.

- fs: the model's file_read sees the editor's unsaved buffer, file_edit's diff and guard use it,
  and the edit is written through the editor's `fs/write_text_file`; a path the fence refuses
  (a link out of the workspace) never reaches the editor.
- MCP servers the editor passes in session/new (stdio and http) are announced and their tools
  are callable, through the same approval as a configured server.
- A compaction the engine runs during a turn reaches the editor as a finished `think` tool call.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    ClientCapabilities,
    FileEditToolCallContent,
    FileSystemCapabilities,
    HttpMcpServer,
    McpServerStdio,
    ReadTextFileResponse,
    ToolCallProgress,
    ToolCallStart,
    WriteTextFileResponse,
)

from tests.acp.test_acp_agent import STEP_TIMEOUT_S, RecordingClient, _env, _script
from tests.acp.test_acp_agent import workspace as workspace  # the fixture
from tests.mcp.mcp_helpers import SERVER, start_http_server

EDITOR_FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


class EditorClient(RecordingClient):
    """An editor with buffers: a read answers the buffer when one is open (unsaved text), else
    the disk; a write replaces the buffer and saves it, as Zed does. `swaps`: a path that a
    command swaps for a link to another file while the editor reads it (the editor follows it)."""

    def __init__(
        self, choice: str, buffers: dict[str, str] | None = None, swaps: dict[str, Path] | None = None
    ) -> None:
        super().__init__(choice)
        self.buffers = dict(buffers or {})
        self.swaps = dict(swaps or {})
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.swaps:
            Path(path).unlink()
            Path(path).symlink_to(self.swaps[path])
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    def finished(self) -> dict[str, ToolCallProgress]:
        return {p.tool_call_id: p for p in self.of(ToolCallProgress) if p.status in ("completed", "failed")}

    def result_text(self, call_id: str) -> str:
        return "".join(c.content.text for c in self.finished()[call_id].content or [] if hasattr(c, "content"))


@asynccontextmanager
async def _editor_session(
    client: RecordingClient,
    workspace: Path,
    model: str,
    tmp_path: Path,
    capabilities: ClientCapabilities | None = None,
    mcp_servers: list[Any] | None = None,
):
    (tmp_path / "user-config").mkdir(exist_ok=True)
    async with spawn_agent_process(
        client,  # type: ignore[arg-type]  # an editor's side with only the methods these tests use
        sys.executable,
        "-m",
        "myrm_tui",
        "acp",
        "--model",
        model,
        env=_env(tmp_path / "user-config"),
        cwd=workspace,
    ) as (conn, _process):
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities or ClientCapabilities()
            ),
            STEP_TIMEOUT_S,
        )
        new = conn.new_session(cwd=str(workspace), mcp_servers=mcp_servers or [])
        session_id = (await asyncio.wait_for(new, STEP_TIMEOUT_S)).session_id
        yield conn, session_id


async def _prompt(conn: Any, session_id: str, text: str) -> str:
    reply = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(text)]), STEP_TIMEOUT_S)
    return str(reply.stop_reason)


@pytest.mark.slow
async def test_reads_see_the_unsaved_buffer_and_the_edit_goes_through_the_editor(workspace: Path, tmp_path: Path):
    notes = workspace / "notes.txt"
    notes.write_text("hello world\n", encoding="utf-8")
    secret = tmp_path / "secret.txt"  # outside the workspace
    secret.write_text("not for the model\n", encoding="utf-8")
    (workspace / "link.txt").symlink_to(secret)
    model = _script(
        tmp_path,
        {
            "tool_calls": [
                {"id": "r0", "name": "file_read", "arguments": {"path": "link.txt"}},
                {"id": "r1", "name": "file_read", "arguments": {"path": "notes.txt"}},
                {"id": "r2", "name": "file_read", "arguments": {"path": "swapped.txt"}},
            ]
        },
        {
            "tool_calls": [
                {"id": "e1", "name": "file_edit", "arguments": {"path": "notes.txt", "old": "unsaved", "new": "saved"}}
            ]
        },
        {"text": "Edited the buffer."},
    )
    swapped = workspace / "swapped.txt"
    swapped.write_text("an ordinary file\n", encoding="utf-8")
    client = EditorClient("allow_once", {str(notes): "hello unsaved world\n"}, {str(swapped): secret})
    async with _editor_session(client, workspace, model, tmp_path, EDITOR_FS) as (conn, session_id):
        assert await _prompt(conn, session_id, "fix the greeting") == "end_turn"
    # the read showed the editor's buffer, not the disk
    assert "hello unsaved world" in client.result_text("r1")
    # the link out of the workspace was refused by the fence; the editor was never asked for it
    assert client.finished()["r0"].status == "failed" and "not for the model" not in client.result_text("r0")
    assert client.reads and set(client.reads) == {str(notes), str(swapped)}
    # a file swapped for a link while the editor read it: the editor's answer is dropped
    assert client.finished()["r2"].status == "failed" and "replaced while the editor read it" in client.result_text(
        "r2"
    )
    assert "not for the model" not in client.result_text("r2")
    # the approval's diff is the buffer's change (the guard accepted what the model read)
    ((asked, _options),) = client.asked
    (diff,) = [c for c in asked.content or [] if isinstance(c, FileEditToolCallContent)]
    assert "hello unsaved world" in (diff.old_text or "") and "hello saved world" in diff.new_text
    # written through the editor (which saved it), once
    assert client.writes == [(str(notes), "hello saved world\n")]
    assert client.finished()["e1"].status == "completed"
    assert notes.read_text(encoding="utf-8") == "hello saved world\n"


@pytest.mark.slow
async def test_mcp_servers_the_editor_passes_are_announced_and_callable(workspace: Path, tmp_path: Path):
    http = start_http_server(tmp_path / "http-server.log")
    try:
        model = _script(
            tmp_path,
            {
                "tool_calls": [
                    {"id": "m1", "name": "mcp__probe__echo", "arguments": {"text": "over stdio"}},
                    {"id": "m2", "name": "mcp__web__echo", "arguments": {"text": "over http"}},
                ]
            },
            {"text": "Both answered."},
        )
        servers = [
            McpServerStdio(name="probe", command=sys.executable, args=[str(SERVER), "stdio"], env=[]),
            HttpMcpServer(type="http", name="web", url=http.url, headers=[]),
        ]
        client = EditorClient("allow_once")
        async with _editor_session(client, workspace, model, tmp_path, mcp_servers=servers) as (conn, session_id):
            assert await _prompt(conn, session_id, "call both servers") == "end_turn"
    finally:
        http.stop()
    text = client.agent_text()
    assert "MCP server 'probe' from the editor" in text and "MCP server 'web' from the editor" in text
    # the same approval as a configured server's tools: asked (default policy), then run
    assert sorted(call.tool_call_id for call, _ in client.asked) == ["m1", "m2"]
    finished = client.finished()
    assert finished["m1"].status == "completed" and "over stdio" in client.result_text("m1")
    assert finished["m2"].status == "completed" and "over http" in client.result_text("m2")


@pytest.mark.slow
async def test_a_compaction_during_a_turn_reaches_the_editor(workspace: Path, tmp_path: Path):
    for name in ("alpha", "beta"):
        (workspace / f"{name}.txt").write_text(
            "".join(f"{name} filler line {i:04d} with a few words\n" for i in range(400)), encoding="utf-8"
        )
    reads = [{"id": f"r{n}", "name": "file_read", "arguments": {"path": f"{n}.txt"}} for n in ("alpha", "beta")]
    model = _script(
        tmp_path,
        {"tool_calls": reads},
        {"text": "Read both."},
        # the provider says the prompt is too long: the engine compacts (masks the old reads) and retries
        {"text": "Fits now.", "error": "context_window", "error_times": 1},
    )
    script = Path(model.removeprefix("scripted/"))
    script.write_text(script.read_text(encoding="utf-8")[:-1] + ', "context_window": 32000}', encoding="utf-8")
    client = EditorClient("allow_once")
    async with _editor_session(client, workspace, model, tmp_path) as (conn, session_id):
        assert await _prompt(conn, session_id, "read both files") == "end_turn"
        assert not [s for s in client.of(ToolCallStart) if s.tool_call_id.startswith("myrm-compaction-")]
        assert await _prompt(conn, session_id, "and now?") == "end_turn"
    (compaction,) = [s for s in client.of(ToolCallStart) if s.tool_call_id.startswith("myrm-compaction-")]
    assert compaction.kind == "think" and compaction.status == "completed"
    assert compaction.title.startswith("Context compacted: ") and "→" in compaction.title
    assert "emergency" in compaction.content[0].content.text
    assert client.agent_text().endswith("Fits now.")
