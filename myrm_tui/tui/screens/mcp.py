"""The /mcp screen: every configured MCP server, its state, its tools and its last error; restart.

Why a screen and not a status-bar badge: a server that failed has a reason worth reading (the
command that was not found, the deadline it missed, its last stderr line) and a log file to open;
restarting it is the one action a user needs. The manager tells the screen when anything changes,
so a server finishing its start while the screen is open shows up at once. Every text here comes
from a config file or a server, so it is drawn through terminal_text.for_terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.mcp.connection import CRASHED, DISABLED, FAILED, READY, STARTING, ServerStatus
from myrm_tui.mcp.names import unique_names
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css

GLYPHS = {READY: "●", STARTING: "…", FAILED: "✗", CRASHED: "✗", DISABLED: "○"}
NO_SERVERS = (
    "No MCP servers are configured. Add `[mcp_servers.NAME]` with `command` (or `url`) to your "
    "config.toml, or put an `.mcp.json` in the workspace (trusted workspaces only); docs/mcp.md "
    "shows both."
)


def server_row(status: ServerStatus) -> str:
    tools = f"{len(status.tools)} tool{'s' if len(status.tools) != 1 else ''}" if status.state == READY else ""
    return for_terminal(f"{GLYPHS.get(status.state, '·')} {status.name}  {status.state}  {tools}".rstrip())


def server_detail(status: ServerStatus) -> str:
    """What the user looks for first (state, tools, the error) before the long paths."""
    started = f" (started in {status.start_seconds:.2f} s)" if status.state == READY and status.start_seconds else ""
    lines = [status.name, "", f"state      {status.state}{started}"]
    if status.tools:
        names = unique_names((status.name, tool) for tool in status.tools)
        lines.append(f"tools ({len(status.tools)})  " + ", ".join(names[(status.name, t)] for t in status.tools))
    if status.last_error:
        lines.append(f"last error {status.last_error}")
    lines += [
        "",
        f"transport  {status.transport}",
        f"runs       {status.summary}" if status.transport == "stdio" else f"url        {status.summary}",
        f"from       {status.scope}: {status.source or '?'}",
    ]
    if status.server_info:
        lines.append(f"server     {status.server_info}")
    if status.log_path is not None:
        lines.append(f"stderr log {status.log_path}")
    return for_terminal("\n".join(lines))


class McpScreen(Screen[None]):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="mcp.close"),
        Binding("r", "restart", "Restart server", id="mcp.restart"),
    ]

    def __init__(self, manager: Any) -> None:
        super().__init__()
        self.manager = manager
        self._unsubscribe: Callable[[], None] | None = None
        self._statuses: list[ServerStatus] = []

    def compose(self) -> ComposeResult:
        yield Static(Content("MCP servers"), id="mcp-title")
        with Horizontal(id="mcp-body"):
            yield OptionList(id="mcp-servers")
            with VerticalScroll(id="mcp-detail"):
                yield Static(Content(""), id="mcp-detail-text")
        yield Static(Content("↑↓ choose · r restart the server · Esc close"), id="mcp-hint")

    def on_mount(self) -> None:
        self._unsubscribe = self.manager.subscribe(lambda: self.call_later(self.refresh_servers))
        self.refresh_servers()
        self.query_one(OptionList).focus()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def refresh_servers(self) -> None:
        found = self.query("#mcp-servers")
        if not found:  # a change reported while the screen is being built or torn down
            return
        self._statuses = self.manager.statuses()
        servers = found.first(OptionList)
        highlighted = servers.highlighted or 0
        servers.set_options([Option(server_row(s), id=s.name) for s in self._statuses])
        if self._statuses:
            servers.highlighted = min(highlighted, len(self._statuses) - 1)
        self._show_detail()

    def _selected(self) -> ServerStatus | None:
        index = self.query_one("#mcp-servers", OptionList).highlighted
        if index is None or not 0 <= index < len(self._statuses):
            return None
        return self._statuses[index]

    def _show_detail(self) -> None:
        status = self._selected()
        text = server_detail(status) if status is not None else NO_SERVERS
        self.query_one("#mcp-detail-text", Static).update(Content(text))

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_detail()

    def action_restart(self) -> None:
        status = self._selected()
        if status is None:
            return
        if status.state == DISABLED:
            self.notify(f"{status.name} is disabled in its config (enabled = false).", severity="warning")
            return
        self.notify(f"Restarting {status.name}…", timeout=3)
        self.run_worker(self._restart(status.name), group="mcp-restart", exit_on_error=False)

    async def _restart(self, name: str) -> None:
        status = await self.manager.restart(name)
        if status.state == READY:
            self.notify(f"{name} is ready ({len(status.tools)} tools); the next message offers them.", timeout=5)
        else:
            self.notify(f"{name} did not start: {status.last_error}", severity="error", timeout=10)

    def action_close(self) -> None:
        self.dismiss(None)
