"""The sessions screen: every session of the workspace as a fork tree; resume, rename, delete
(with confirmation; the store refuses a session that still has forks) and export to Markdown.
A search box filters by title, first message and model (tui/session_search.py); each row is one
line, cut with an ellipsis (sessions.tcss), so a long title never pushes the list into two-line rows.

Rows are built in a thread (a message count per session is a query each) and rendered by an
OptionList, which draws only the visible rows however many sessions there are.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.store import StoreError
from myrm_tui.store.records import SessionRecord
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import one_line, short_id
from myrm_tui.tui.prompt.user_prompts import first_prompt
from myrm_tui.tui.screens.dialogs import ConfirmScreen, Dialog, InputScreen
from myrm_tui.tui.session_search import matches, search_fields

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

_TITLE_CHARS = 40


@dataclass(frozen=True)
class SessionRow:
    session: SessionRecord
    depth: int
    messages: int
    first_message: str = ""

    @property
    def fields(self) -> str:
        s = self.session
        return search_fields(s.title, self.first_message, s.model or "", s.id)


def age(seconds: float) -> str:
    """ "just now", "5 min ago", "3 h ago", "2 d ago"."""
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


def export_markdown(store: Store, session_id: str, path: Path) -> Path:
    """Write the session as Markdown through the CLI's export (redacted, atomic), so both
    exports are the same file."""
    from myrm_tui.transcripts.export import export_to_file

    written, _exported = export_to_file(store, session_id, path, "md")
    return written


def default_export_path(workspace: Path, session_id: str) -> Path:
    """The config dir's exports folder, never the workspace (tui/transcript/export_target.py says why);
    `workspace` stays in the signature for callers that pass it."""
    from myrm_tui.tui.transcript.export_target import default_export_path as default_path

    return default_path(session_id)


class SessionsScreen(Dialog[str | None]):
    """Dismisses with the id of the session to resume, or None."""

    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="sessions.close"),
        Binding("slash", "search", "Search", id="sessions.search"),
        Binding("r", "rename", "Rename", id="sessions.rename"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete"),
        Binding("e", "export", "Export Markdown", id="sessions.export"),
    ]

    def __init__(self, store: Store, workspace: Path, current: str | None) -> None:
        super().__init__(classes="dialog wide")
        self.store = store
        self.workspace = Path(workspace)
        self.current = current
        self.all_rows: list[SessionRow] = []
        self.rows: list[SessionRow] = []  # the rows shown (the search applied), in list order

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content("Sessions"), classes="title")
            yield Input(placeholder="search title, first message, model", id="session-search")
            yield OptionList(id="session-list")
            yield Static(
                Content("Enter resume · / search · r rename · d delete · e export Markdown · Esc close"), classes="hint"
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.reload()

    @work(thread=True, exclusive=True, group="sessions-load")
    def reload(self) -> None:
        rows = []
        for s, depth in session_tree(self.store.list_sessions()):
            records = self.store.messages(s.id)
            rows.append(SessionRow(s, depth, len(records), first_prompt(records)))
        self.app.call_from_thread(self._loaded, rows)

    def _loaded(self, rows: list[SessionRow]) -> None:
        self.all_rows = rows
        self._filter()

    @on(Input.Changed, "#session-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter(from_top=True)

    def _filter(self, from_top: bool = False) -> None:
        query = self.query_one("#session-search", Input).value
        self._show([row for row in self.all_rows if matches(query, row.fields)], bool(query.strip()), from_top)

    def _show(self, rows: list[SessionRow], searching: bool = False, from_top: bool = False) -> None:
        self.rows = rows
        now = time.time()
        options = []
        for row in rows:
            s = row.session
            marker = "● " if s.id == self.current else "  "
            indent = "   " * row.depth + ("└ " if row.depth else "")
            text = (
                f"{marker}{indent}{one_line(s.title or 'untitled', _TITLE_CHARS)}  ·  {s.model or '?'}  ·  "
                f"{age(now - s.updated_at)}  ·  {row.messages} msgs  ·  {short_id(s.id)}"
            )
            options.append(Option(Content(for_terminal(text)), id=s.id))  # titles come from prompts: data
        listing = self.query_one(OptionList)
        highlighted = listing.highlighted
        listing.set_options(options)
        if not options:
            empty = "no session matches the search" if searching else "no sessions yet in this workspace"
            listing.set_options([Option(empty, disabled=True)])
        elif highlighted is not None and not from_top:
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
        """Esc in a non-empty search clears it first; otherwise it closes."""
        search = self.query_one("#session-search", Input)
        if search.has_focus and search.value:
            search.value = ""
            return
        self.dismiss(None)

    def action_search(self) -> None:
        self.query_one("#session-search", Input).focus()

    @on(Input.Submitted, "#session-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search resumes the highlighted match (the first one, unless moved)."""
        event.stop()
        row = self.selected()
        if row is not None:
            self.dismiss(row.session.id)

    def on_key(self, event: Any) -> None:
        """Down (or Up) from the search moves to the list, where r/d/e act on a row."""
        if event.key in ("down", "up") and self.query_one("#session-search", Input).has_focus and self.rows:
            event.stop()
            self.query_one(OptionList).focus()

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
            self.notify("This is the open session; resume another one before deleting it.", severity="warning")
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
        self.app.push_screen(
            ConfirmScreen(
                "Delete session?",
                f"“{title}” ({row.messages} messages) will be deleted for good. Its vault files stay.",
                "Delete",
                danger=True,
            ),
            confirmed,
        )

    def action_export(self) -> None:
        row = self.selected()
        if row is None:
            return
        try:
            path = export_markdown(self.store, row.session.id, default_export_path(self.workspace, row.session.id))
        except (OSError, StoreError) as exc:
            self.notify(f"Export failed: {exc}", severity="error")
            return
        self.notify(f"Exported to {path}")
