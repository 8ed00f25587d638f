"""/undo and /rewind on the chat screen: build the plan, show the preview, apply, report.

Kept out of screen.py (the command table's /undo and /rewind handlers call in here) so the flow
reads in one place.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.undo import rewind as undo
from myrm_tui.agent.user_input.user_content import text_of_parts
from myrm_tui.store.errors import StoreError, VaultError
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.screens.rewind import BOTH, CONVERSATION, FILES, RewindChoice, RewindScreen, RewindTarget
from myrm_tui.tui.screens.undo import FORCE, UndoScreen
from myrm_tui.tui.widgets.blocks.note import Note

NOTHING_TO_UNDO = (
    "No file changes to undo in this session (file_write and file_edit are recorded; "
    "bash changes only in a git workspace)."
)
# Characters of the user's message quoted in the dialog title.
TITLE_QUOTE_CHARS = 50


def _quote(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_QUOTE_CHARS else line[: TITLE_QUOTE_CHARS - 1] + "…"


def _user_text(screen: ChatParts, message_id: int) -> str:
    record = next((r for r in screen.chat.history() if r.id == message_id), None)
    return text_of_parts(record.message.get("content") or "") if record is not None else ""


def _apply(screen: ChatParts, plan: undo.UndoPlan, choice: str | None) -> bool:
    """True when the files were restored."""
    chat = screen.chat
    if choice is None or chat.session_id is None:
        return False
    try:
        lines = undo.apply(plan, chat.store, chat.session_id, chat.workspace, force=choice == FORCE)
    except undo.UndoConflict as exc:
        screen.transcript.mount(Note(f"Undo refused: {exc}", "warning"))
        return False
    except (OSError, StoreError, VaultError) as exc:
        screen.notify(f"Undo failed: {exc}", severity="error")
        return False
    screen.transcript.mount(Note("Undone: " + "; ".join(lines)))
    return True


def start_undo(screen: ChatParts) -> None:
    if screen.busy():
        return
    chat = screen.chat
    if chat.session_id is None:
        screen.notify(NOTHING_TO_UNDO, severity="warning")
        return
    plan = undo.plan_last(chat.store, chat.session_id, chat.workspace)
    if plan.empty:
        screen.notify(NOTHING_TO_UNDO, severity="warning")
        return
    title = f"Undo the file changes of “{_quote(_user_text(screen, plan.turns[-1]))}”"

    def decided(choice: str | None) -> None:
        _apply(screen, plan, choice)

    screen.app.push_screen(UndoScreen(title, plan), decided)


def rewind_targets(screen: ChatParts) -> list[RewindTarget]:
    chat = screen.chat
    if chat.session_id is None:
        return []
    changes = undo.open_changes(chat.store, chat.session_id)
    targets = []
    for record in chat.history():
        if record.message.get("role") != "user":
            continue
        changed = len({c.path for c in changes if c.turn >= record.id})
        targets.append(RewindTarget(record.id, text_of_parts(record.message.get("content") or ""), changed))
    return targets


def start_rewind(screen: ChatParts) -> None:
    if screen.busy():
        return
    if screen.chat.session_id is None or not screen.chat.history():
        screen.notify("Nothing to rewind yet: send a message first.", severity="warning")
        return
    screen.app.push_screen(RewindScreen(rewind_targets(screen)), lambda choice: _rewind(screen, choice))


def _rewind(screen: ChatParts, choice: RewindChoice | None) -> None:
    chat = screen.chat
    if choice is None or chat.session_id is None:
        return
    if choice.mode in (FILES, BOTH):
        plan = undo.plan_rewind(chat.store, chat.session_id, chat.workspace, choice.target.message_id)
        if not plan.empty:
            title = f"Rewind files to before “{_quote(choice.target.text)}”"

            def decided(answer: str | None) -> None:
                if _apply(screen, plan, answer) and choice.mode == BOTH:
                    _fork_before(screen, choice.target)

            screen.app.push_screen(UndoScreen(title, plan), decided)
            return
        screen.transcript.mount(Note("No recorded file changes since that message; files are left as they are."))
    if choice.mode in (CONVERSATION, BOTH):
        _fork_before(screen, choice.target)


def _fork_before(screen: ChatParts, target: RewindTarget) -> None:
    """The conversation part: a fork that ends just before `target` (a new empty session when it
    was the first message), opened in the chat with that message back in the prompt."""
    chat = screen.chat
    session = chat.session
    ids = [r.id for r in chat.history()]
    index = ids.index(target.message_id)
    app = screen.myrm
    if index == 0:
        app.open_session(None, "Rewound to the start: a new session; the previous one is in /sessions.")
    else:
        assert session is not None, "a rewind target is a message of the open session"
        try:
            child = chat.store.fork(session.id, at_message=ids[index - 1], title=f"{session.title} (rewind)".strip())
        except StoreError as exc:
            screen.notify(f"Rewind failed: {exc}", severity="error")
            return
        app.open_session(
            child.id, f"Rewound to before “{_quote(target.text)}” in a fork; the original session is in /sessions."
        )
    app.call_after_refresh(_put_back, app, target.text)


def _put_back(app: Any, text: str) -> None:
    """The rewound message returns as the draft, to edit and send again."""
    prompt = getattr(app.screen, "prompt", None)
    if prompt is not None and not prompt.text:
        prompt.load_text(text)
