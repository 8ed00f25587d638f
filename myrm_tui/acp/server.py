"""The ACP agent: the client's requests as myrm sessions and turns.

One `myrm acp` process serves one workspace: the one holding the folder of the first
session/new or session/load, whose settings, trust decision, store and approval policy are
settled then, as `myrm run` settles them (cli_commands/acp.py); a later session in another
workspace is refused (start another process for it). Sessions are the store's own, so
`session/load` resumes a session made in the TUI or by `myrm run`, and the TUI or `myrm sessions`
see what the editor did. Each session is claimed for this process (one writer per session,
store/busy_fork.py), like `--session` in a run.

A turn runs in its own task: `session/cancel` cancels that task, which is how the TUI and `myrm
run` interrupt too (the agent answers every open call and keeps what was said); an approval is
asked in a task beside the turn, so a cancel also ends the question.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    StopReason,
)

from myrm_tui import __version__
from myrm_tui.acp.client_files import client_files
from myrm_tui.acp.client_mcp import ClientMcpServer, ClientServers, client_servers
from myrm_tui.acp.compaction_updates import CompactionFeed
from myrm_tui.acp.context_health import ContextHealth
from myrm_tui.acp.history import history_updates
from myrm_tui.acp.permission import ask_client, granted_update
from myrm_tui.acp.prompt_text import PromptBlock, prompt_text
from myrm_tui.acp.updates import updates_for
from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest, StepStarted, TurnFinished
from myrm_tui.llm.events import UsageEvent
from myrm_tui.llm.local.client import LocalWorkers
from myrm_tui.sinks import RUN_ECHO, scrub, session_title
from myrm_tui.store.workspace import find_workspace_root

if TYPE_CHECKING:
    from acp.interfaces import Agent as AcpAgent
    from acp.interfaces import Client

    from myrm_tui.agent.session_runtime import SessionRuntime
    from myrm_tui.mcp.manager import McpManager
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store.store import Store

TITLE_CHARS = 60  # a session title is the first prompt's start, as `myrm run` names its sessions

# How a myrm turn ended (agent TurnFinished.reason) as ACP's stop reason; a failed turn has said
# why in an agent message, and ACP has no "error" stop reason, so it ends as end_turn.
STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_limit": "max_turn_requests",
    "length": "max_tokens",
    "interrupted": "cancelled",
    "error": "end_turn",
}


@dataclass(frozen=True)
class Workspace:
    """What the command settled for the workspace: its root, its settings and the open store."""

    root: Path
    settings: Settings
    store: Store
    # The settings a session runs with, given its stored model (settings.model_choice's rule).
    settings_for_session: Callable[[str | None], Settings]
    # The session's MCP servers: the configured ones and those the editor passed (client_mcp.py).
    mcp_for: Callable[[Settings, Mapping[str, McpServerConfig]], McpManager | None]


# The folder an editor names → the workspace holding it, or why sessions cannot start there.
WorkspaceOpener = Callable[[Path], "Workspace | str"]


@dataclass
class OpenSession:
    id: str
    runtime: SessionRuntime
    mcp: McpManager | None
    titled: bool
    compactions: CompactionFeed
    health: ContextHealth  # the ring's figures as usage_update (context_health.py)
    notes: list[str] = field(default_factory=list)  # said at the start of the next turn (client MCP servers)
    turn: asyncio.Task[StopReason] | None = None
    # The idle step after the last turn (`Agent.maintain`: a summary prepared in the background,
    # the compaction the next request would run, the next event's scans), as the TUI runs it.
    idle: asyncio.Task[None] | None = None
    cancel_requested: bool = False
    asks: set[asyncio.Task[None]] = field(default_factory=set)


class MyrmAcpAgent:
    """Implements the agent side of the SDK's protocol (acp.interfaces.Agent)."""

    def __init__(self, opener: WorkspaceOpener) -> None:
        self.opener = opener
        self.opened: Workspace | None = None
        self.client: Client | None = None
        self.client_capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, OpenSession] = {}
        # The embedded model's worker, shared by this server's sessions; stopped in `close`.
        self.local_workers = LocalWorkers()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- lifecycle
    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **kwargs: Any
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities  # its fs methods are used when offered (client_files.py)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Text and embedded text resources (an editor's @-mentioned file); no images or audio yet.
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                # Servers the editor passes: stdio (always) and http; SSE is deprecated (client_mcp.py).
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="myrm", title="myrm", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """No auth methods are offered: provider keys come from myrm's own config and environment."""
        return None

    async def new_session(
        self, cwd: str, mcp_servers: list[ClientMcpServer] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        self._check(cwd)
        settings = self.workspace.settings
        extra = client_servers(mcp_servers, settings.mcp_servers)
        record = self.workspace.store.create_session(model=settings.model, title="")
        self._open(record.id, settings, extra, titled=False)
        return NewSessionResponse(session_id=record.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[ClientMcpServer] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        self._check(cwd)
        store = self.workspace.store
        if session_id not in self.sessions:
            from myrm_tui.store.busy_fork import open_for_writing
            from myrm_tui.store.store import StoreError

            try:
                record = store.get_session(session_id)
                if record.id != session_id:  # a prefix is a CLI convenience; the protocol names ids
                    raise StoreError(f"no session {session_id!r} in this workspace")
                writable = open_for_writing(store, record, fork=False, fork_if_busy=False)
            except StoreError as exc:
                raise RequestError.invalid_params({"message": str(exc)}) from exc
            if writable.session_id is None:
                raise RequestError.invalid_request({"message": writable.notice() or "the session is busy"})
            settings = self.workspace.settings_for_session(record.model)
            self._open(record.id, settings, client_servers(mcp_servers, settings.mcp_servers), titled=True)
        client = self._client()
        for update in history_updates(store.messages(session_id), self.workspace.root):
            await client.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    # -- turns
    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.turn is not None and not session.turn.done():
            raise RequestError.invalid_request({"message": "a turn is already running in this session"})
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"message": "the prompt has no text"})
        if not session.titled:
            self.workspace.store.rename_session(session_id, session_title(text, TITLE_CHARS))
            session.titled = True
        session.cancel_requested = False
        session.turn = asyncio.create_task(self._drive(session, text))
        try:
            reason = await session.turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # this request itself is being cancelled
                raise
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="cancelled" if session.cancel_requested else reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None or session.turn.done():
            return
        session.cancel_requested = True
        for ask in list(session.asks):
            ask.cancel()
        session.turn.cancel()

    async def close(self) -> None:
        """Stop every running turn (each stores its interruption), then the agents' background
        commands and MCP servers, then close the store: nothing outlives the process."""
        for session in self.sessions.values():
            await _stop_idle(session, settle=True)
            if session.turn is not None and not session.turn.done():
                session.turn.cancel()
                await asyncio.gather(session.turn, return_exceptions=True)
            await session.runtime.aclose()
            if session.mcp is not None:
                await session.mcp.aclose()
        self.sessions.clear()
        await asyncio.to_thread(self.local_workers.close)
        if self.opened is not None:
            self.opened.store.close()

    async def _drive(self, session: OpenSession, text: str) -> StopReason:
        client = self._client()
        reason: StopReason = "end_turn"
        failed = False
        for open_session in list(self.sessions.values()):  # background work yields to a message
            await _stop_idle(open_session)
        for note in session.notes:  # announced where the user reads the session, once
            await client.session_update(session_id=session.id, update=update_agent_message_text(f"_note: {note}_\n\n"))
        session.notes.clear()
        try:
            async with aclosing(session.runtime.send(text)) as events:
                async for event in events:
                    if isinstance(event, ApprovalRequest):
                        ask = asyncio.create_task(self._ask(session, event))
                        session.asks.add(ask)
                        ask.add_done_callback(session.asks.discard)
                        continue
                    if isinstance(event, TurnFinished):
                        reason = STOP_REASONS.get(event.reason, "end_turn")
                        failed = event.reason == "error"
                    if isinstance(event, (StepStarted, TurnFinished)):  # the prompt was just compacted, if it was
                        for compacted in session.compactions.updates():
                            await client.session_update(session_id=session.id, update=compacted)
                    if isinstance(event, StepStarted):
                        agent = session.runtime.current
                        window = agent.build.model.context_window if agent is not None else 0
                        await client.session_update(
                            session_id=session.id, update=session.health.before_call(event, window)
                        )
                    if isinstance(event, UsageEvent) and (usage := session.health.after_call(event)) is not None:
                        await client.session_update(session_id=session.id, update=usage)
                    for update in updates_for(event, self.workspace.root):
                        await client.session_update(session_id=session.id, update=update)
        finally:
            for ask in list(session.asks):
                ask.cancel()
        if not failed and not session.cancel_requested:  # as the TUI: no idle step after a failure
            session.idle = asyncio.create_task(_idle_step(session))
        return reason

    async def _ask(self, session: OpenSession, request: ApprovalRequest) -> None:
        """Ask the client and answer the waiting call; anything but a chosen allow is a no."""
        answer = ApprovalAnswer(False, reason="the editor did not answer")
        try:
            answer = await ask_client(self._client(), session.id, request, self.workspace.root)
            if answer.allow:
                await self._client().session_update(
                    session_id=session.id, update=granted_update(request, self.workspace.root)
                )
        except Exception:  # noqa: BLE001 - a failed question is a denial, never a yes
            answer = ApprovalAnswer(False, reason="the editor could not be asked")
        finally:
            if request.decision is not None and not request.decision.done():
                request.decision.set_result(answer)

    # -- helpers
    @property
    def workspace(self) -> Workspace:
        if self.opened is None:
            raise RequestError.invalid_request({"message": "no session yet: send session/new or session/load first"})
        return self.opened

    def _check(self, cwd: str) -> None:
        """Open the workspace holding `cwd` on the first session; refuse another one later."""
        folder = Path(cwd)
        if not folder.is_absolute():
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, not {cwd!r}"})
        if self.opened is None:
            opened = self.opener(folder)
            if isinstance(opened, str):
                raise RequestError.invalid_request({"message": opened})
            self.opened = opened
        elif find_workspace_root(folder) != self.opened.root:
            raise RequestError.invalid_params(
                {
                    "message": f"this myrm acp process serves {self.opened.root}; "
                    f"start another one for {find_workspace_root(folder)}"
                }
            )

    def _open(self, session_id: str, settings: Settings, extra: ClientServers, *, titled: bool) -> OpenSession:
        from myrm_tui.agent.session_runtime import SessionRuntime
        from myrm_tui.llm.stream import StreamWithLocalWorkers

        mcp = self.workspace.mcp_for(settings, extra.servers)
        runtime = SessionRuntime(
            store=self.workspace.store,
            session_id=session_id,
            workspace=self.workspace.root,
            headless=False,  # the client answers approvals (permission.py)
            mcp=mcp,
            editor=client_files(self.client_capabilities, self._client(), session_id),
            stream_fn=StreamWithLocalWorkers(self.local_workers),
        )
        runtime.agent_for(settings)
        notes = [scrub(RUN_ECHO, note) for note in extra.notes]
        for note in notes:
            print(f"note: {note}", file=sys.stderr)  # the agent's log (stdout is the protocol's)
        feed = CompactionFeed(self.workspace.store, session_id)
        health = ContextHealth(self.workspace.store, session_id)
        session = OpenSession(session_id, runtime, mcp, titled, feed, health, notes)
        self.sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> OpenSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no open session {session_id!r}; use session/load"})
        return session

    def _client(self) -> Client:
        if self.client is None:
            raise RequestError.internal_error({"message": "no client connection"})
        return self.client


async def _idle_step(session: OpenSession) -> None:
    """The idle step after a turn, while the editor's user reads the answer; a new prompt or
    the server's close cancels it (the engine's lock makes a turn wait for a unit in progress)."""
    agent = session.runtime.current
    if agent is None:
        return
    try:
        await agent.maintain()
    except Exception as exc:  # noqa: BLE001 - background work: the session goes on, the log says why
        print(scrub(RUN_ECHO, f"note: the idle step after the turn failed: {exc}"), file=sys.stderr)


async def _stop_idle(session: OpenSession, *, settle: bool = False) -> None:
    """Cancel the session's idle step; `settle`: also wait for the engine work it left running
    in a worker thread (an event or a scan cannot be stopped), before the store closes."""
    if session.idle is not None and not session.idle.done():
        session.idle.cancel()
        await asyncio.gather(session.idle, return_exceptions=True)
    session.idle = None
    if settle:
        await session.runtime.engine.settled()


async def serve(opener: WorkspaceOpener) -> None:
    """Serve the protocol on stdin/stdout until the client closes it."""
    from acp import run_agent

    from myrm_tui.acp.stdio_guard import protocol_streams

    reader, writer = await protocol_streams()
    agent = MyrmAcpAgent(opener)
    try:
        # The SDK's Agent Protocol lists every optional method; its router answers method_not_found
        # for the ones this class leaves out (session/list, modes, config options, fork, resume).
        # run_agent names the streams from the client's side: it writes to input_stream.
        await run_agent(cast("AcpAgent", agent), writer, reader)
    finally:
        await agent.close()
