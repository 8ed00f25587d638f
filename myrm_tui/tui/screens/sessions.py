"""The sessions screen: every session of the workspace as a fork tree; resume, rename, delete
(with confirmation; the store refuses a session that still has forks) and export to Markdown.

Rows are built in a thread (a message count per session is a query each) and rendered by an
OptionList, which draws only the visible rows however many sessions there are.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.store import StoreError
from myrm_tui.store.records import SessionRecord
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.formatting import one_line, short_id
from myrm_tui.tui.screens.dialogs import ConfirmScreen, Dialog, InputScreen

_TITLE_CHARS = 40


@dataclass(frozen=True)
class SessionRow:
    session: SessionRecord
    depth: int
    messages: int


def age(seconds: float) -> str:
    """"just now", "5 min ago", "3 h ago", "2 d ago"."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86_400)} d ago"


def session_tree(sessions: list[SessionRecord]) -> list[tuple[SessionRecord, int]]:
    """Roots most recent first, each followed by its forks (oldest first), depth-indented."""
    ids = {s.id for s in sessions}
    children: dict[str, list[SessionRecord]] = {}
    roots = []
    for session in sessions:
        if session.parent_id and session.parent_id in ids:
            children.setdefault(session.parent_id, []).append(session)
        else:
            roots.append(session)
    out: list[tuple[SessionRecord, int]] = []

    def visit(session: SessionRecord, depth: int) -> None:
        out.append((session, depth))
        for child in sorted(children.get(session.id, ()), key=lambda s: (s.created_at, s.id)):
            visit(child, depth + 1)

    for root in roots:  # list_sessions is already most recently updated first
        visit(root, 0)
    return out


def export_markdown(store: Any, session_id: str, path: Path) -> Path:
    """Write the session as Markdown through the CLI's export (redacted, atomic), so both
    exports are the same file."""
    from myrm_tui.cli_commands.export import export_to_file

    written, _exported = export_to_file(store, session_id, path, "md")
    return written


def default_export_path(workspace: Path, session_id: str) -> Path:
    return Path(workspace) / f"myrm-session-{short_id(session_id)}.md"


class SessionsScreen(Dialog[str | None]):
    """Dismisses with the id of the session to resume, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="sessions.close"),
        Binding("r", "rename", "Rename", id="sessions.rename"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete"),
        Binding("e", "export", "Export Markdown", id="sessions.export"),
    ]

    def __init__(self, store: Any, workspace: Path, current: str | None) -> None:
        super().__init__(classes="dialog wide")
        self.store = store
        self.workspace = Path(workspace)
        self.current = current
        self.rows: list[SessionRow] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content("Sessions"), classes="title")
            yield OptionList(id="session-list")
            yield Static(Content("Enter resume · r rename · d delete · e export Markdown · Esc close"),
                         classes="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.reload()

    @work(thread=True, exclusive=True, group="sessions-load")
    def reload(self) -> None:
        rows = [SessionRow(s, depth, len(self.store.messages(s.id)))
                for s, depth in session_tree(self.store.list_sessions())]
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[SessionRow]) -> None:
        self.rows = rows
        now = time.time()
        options = []
        for row in rows:
            s = row.session
            marker = "● " if s.id == self.current else "  "
            indent = "   " * row.depth + ("└ " if row.depth else "")
            text = (f"{marker}{indent}{one_line(s.title or 'untitled', _TITLE_CHARS)}  ·  {s.model or '?'}  ·  "
                    f"{age(now - s.updated_at)}  ·  {row.messages} msgs  ·  {short_id(s.id)}")
            options.append(Option(Content(for_terminal(text)), id=s.id))  # titles come from prompts: data
        listing = self.query_one(OptionList)
        highlighted = listing.highlighted
        listing.set_options(options)
        if not options:
            listing.set_options([Option("no sessions yet in this workspace", disabled=True)])
        elif highlighted is not None:
            listing.highlighted = min(highlighted, len(options) - 1)
        else:
            listing.highlighted = 0

    def selected(self) -> SessionRow | None:
        index = self.query_one(OptionList).highlighted
        if index is None or index >= len(self.rows):
            return None
        return self.rows[index]

    @on(OptionList.OptionSelected)
    def _resume(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_rename(self) -> None:
        row = self.selected()
        if row is None:
            return

        def renamed(title: str | None) -> None:
            if title is None:
                return
            try:
                self.store.rename_session(row.session.id, title.strip())
            except StoreError as exc:
                self.notify(str(exc), severity="error")
                return
            self.reload()

        self.app.push_screen(InputScreen("Rename session", for_terminal(row.session.title)), renamed)

    def action_delete(self) -> None:
        row = self.selected()
        if row is None:
            return
        if row.session.id == self.current:
            self.notify("This is the open session; resume another one before deleting it.",
                        severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.store.delete_session(row.session.id)
            except StoreError as exc:
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.notify(f"Deleted session {short_id(row.session.id)}.")
            self.reload()

        title = row.session.title or "untitled"
        self.app.push_screen(ConfirmScreen("Delete session?", f"“{title}” ({row.messages} messages) will be "
                                           "deleted for good. Its vault files stay.", "Delete", danger=True),
                             confirmed)

    def action_export(self) -> None:
        row = self.selected()
        if row is None:
            return
        try:
            path = export_markdown(self.store, row.session.id,
                                   default_export_path(self.workspace, row.session.id))
        except (OSError, StoreError) as exc:
            self.notify(f"Export failed: {exc}", severity="error")
            return
        self.notify(f"Exported to {path}")
