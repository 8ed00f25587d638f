"""The chat screen's edit, retry and queue behaviour (a mixin of ChatScreen).

Rules (README "Editing, retrying, typing while the model works"):

- Up on an empty prompt, idle, before any history browsing: the last message you sent comes
  back for editing, with a hint line. Enter forks the session just before that message and sends
  the edited text in the fork (the original session is untouched); Esc cancels. Alt+Up / Alt+Down
  move to an earlier / later message of the session (the bubble is highlighted), which is how a
  fork from any earlier message is made. Up again from the first line leaves editing and walks
  the prompt history as before.
- Retry (F5 or /retry) forks right after your last message (before its answer) and has it
  answered again there (edit_retry.retry_plan; a message with attachments is sent again instead).
- While a turn runs, Enter queues the message (shown above the prompt); Up on an empty prompt
  takes the last queued message back for editing, Delete on an empty prompt removes it. The
  queue goes as one message when the turn ends well; after an interrupt or a failure it comes
  back to the prompt instead (tui/message_queue.py says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from myrm_tui.tui.edit_retry import EditTarget, edit_target, retry_plan
from myrm_tui.tui.formatting import pretty_key, short_id
from myrm_tui.tui.message_queue import MessageQueue
from myrm_tui.tui.slash_commands import parse_command
from myrm_tui.tui.widgets.edit_hint import EditHint
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from myrm_tui.tui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from textual import events

    from myrm_tui.tui.screens.chat import ChatScreen

EDIT_ACTIONS = frozenset({"edit_last", "edit_earlier", "edit_later", "cancel_queued"})
NOTHING_TO_RETRY = "Nothing to retry yet: send a message first."


class EditQueueMixin:
    """State lives on the screen; every method here expects to run on a ChatScreen."""

    _edit: EditTarget | None = None
    _send_on_mount: str | None = None  # set by the screen that forked into this one
    _queue: MessageQueue | None = None

    @property
    def queue(self: ChatScreen) -> MessageQueue:  # type: ignore[misc]
        if self._queue is None:
            self._queue = MessageQueue()
        return self._queue

    @property
    def editing(self) -> EditTarget | None:
        return self._edit

    def _on_mount(self: ChatScreen, event: events.Mount) -> None:  # type: ignore[misc]
        """Textual calls this besides ChatScreen.on_mount: a fork made by an edit or a retry
        sends its text as soon as the new screen is up."""
        text, self._send_on_mount = self._send_on_mount, None
        if text:
            self.call_after_refresh(self._send_forked, text)

    def _send_forked(self: ChatScreen, text: str) -> None:  # type: ignore[misc]
        self.prompt.prompt_history.add(text)
        self.send_message(text, draft=None)

    # keys -----------------------------------------------------------------------------------

    def check_edit_action(self: ChatScreen, action: str) -> bool | None:  # type: ignore[misc]
        """None for actions that are not ours; else whether the key is ours right now (False lets
        the prompt have it: Up, Esc and Delete keep their usual meaning everywhere else)."""
        if (
            action == "interrupt"
            and self._edit is not None
            and not self.turn_running
            and self.compact_worker is None
            and not self.prompt.popup_open
        ):
            return True  # Esc cancels the edit (ChatScreen.action_interrupt); an open popup first closes
        if action not in EDIT_ACTIONS:
            return None
        prompt = self.prompt
        if self.focused is not prompt or prompt.popup_open:
            return False
        if action in ("edit_earlier", "edit_later"):
            return self._edit is not None and not self.turn_running
        if action == "cancel_queued":
            return prompt.text == "" and len(self.queue) > 0
        # edit_last: on an empty prompt (queue recall, or the last sent message), or in edit
        # mode on the first line (leave editing, go on into the history)
        if self._edit is not None:
            return prompt.cursor_location[0] == 0
        if prompt.text != "" or prompt.prompt_history.browsing:
            return False
        if len(self.queue):
            return True
        return not self.turn_running and not self.compacting and self.chat.session is not None

    def action_edit_last(self: ChatScreen) -> None:  # type: ignore[misc]
        if self._edit is not None:
            edited = self._edit.text
            self._end_edit(clear=True)
            self.prompt.action_history_previous()
            if self.prompt.text == edited:  # the history's newest entry is usually that same message
                self.prompt.action_history_previous()
            return
        if len(self.queue):
            self._recall_queued()
            return
        self._start_edit(0)

    def action_edit_earlier(self: ChatScreen) -> None:  # type: ignore[misc]
        if self._edit is not None:
            self._start_edit(self._edit.count - self._edit.position + 1)

    def action_edit_later(self: ChatScreen) -> None:  # type: ignore[misc]
        if self._edit is not None:
            self._start_edit(self._edit.count - self._edit.position - 1)

    def action_cancel_edit(self: ChatScreen) -> None:  # type: ignore[misc]
        """Esc while editing (the chat.interrupt key: nothing runs then)."""
        self._end_edit(clear=True)

    def action_cancel_queued(self: ChatScreen) -> None:  # type: ignore[misc]
        removed = self.queue.pop_last()
        self._show_queue()
        if removed is not None:
            self.notify("Removed the last queued message.", timeout=2)

    def _key(self: ChatScreen, binding_id: str) -> str:  # type: ignore[misc]
        return pretty_key(self.raw_key_for(binding_id))

    # editing --------------------------------------------------------------------------------

    def _start_edit(self: ChatScreen, from_end: int) -> None:  # type: ignore[misc]
        target = edit_target(self.chat.history(), from_end) if from_end >= 0 else None
        if target is None:
            if self._edit is None:  # nothing sent in this session: Up is the history's
                self.prompt.action_history_previous()
            return
        self._edit = target
        self.prompt.load_text(target.text)
        self.prompt.move_cursor(self.prompt.document.end)
        where = (
            "your last message" if target.position == target.count else f"message {target.position} of {target.count}"
        )
        into = "a fork" if target.fork_at is not None else "a new session"
        self.query_one("#edit-hint", EditHint).show(
            f"✎ editing {where} · Enter sends it in {into} · {self._key('chat.interrupt')} cancels · "
            f"{self._key('chat.edit_earlier')}/{self._key('chat.edit_later')} earlier/later"
        )
        self._highlight(target)

    def _highlight(self: ChatScreen, target: EditTarget | None) -> None:  # type: ignore[misc]
        """Mark the bubble being edited (when it is mounted: older turns may be windowed out)."""
        bubbles = self.mounted_turns()
        for bubble in self.transcript.query(UserMessage):
            bubble.remove_class("-editing")
        if target is None:
            return
        index = len(bubbles) - 1 - (target.count - target.position)
        if 0 <= index < len(bubbles):
            bubbles[index].add_class("-editing")
            bubbles[index].scroll_visible(animate=False)

    def _end_edit(self: ChatScreen, clear: bool) -> None:  # type: ignore[misc]
        if self._edit is None:
            return
        self._edit = None
        self.query_one("#edit-hint", EditHint).hide()
        self._highlight(None)
        if clear:
            self.prompt.clear()

    def _fork_and_send(self: ChatScreen, fork_at: int | None, text: str, what: str) -> None:  # type: ignore[misc]
        """Fork this session after message `fork_at` (None: a new session), switch to it, and
        send `text` there. The parent is never written to."""
        session = self.chat.session
        if session is None:
            return
        try:
            child_id = (
                None
                if fork_at is None
                else self.chat.store.fork(session.id, at_message=fork_at, title=f"{session.title} ({what})".strip()).id
            )
        except Exception as exc:  # noqa: BLE001 - StoreError: shown, nothing changed
            self.notify(f"Fork failed: {exc}", severity="error")
            return
        title = session.title or short_id(session.id)
        notice = (
            f"{what.capitalize()}: forked from “{title}” ({short_id(session.id)}); the original is "
            "unchanged in /sessions."
            if child_id
            else f"{what.capitalize()}: a new session (the first message changed); “{title}” is unchanged."
        )
        self.myrm.open_session(child_id, notice)
        screen = self.app.screen
        if isinstance(screen, EditQueueMixin):
            screen._send_on_mount = text

    def submit_hook(self: ChatScreen, text: str) -> bool:  # type: ignore[misc]
        """Enter with `text`: True when editing or queueing took it (the caller stops)."""
        target = self._edit
        if target is not None:
            if self._busy():
                return True
            self._end_edit(clear=False)
            self.prompt.clear()
            self._fork_and_send(target.fork_at, text, "edit")
            return True
        if self.turn_running and parse_command(text, self.custom_slash()) is None:
            text = self._unstale(text)
            self.queue.add(text)
            self.prompt.prompt_history.add(text)
            self.prompt.take_submitted(text)
            self._show_queue()
            return True
        return False

    def _unstale(self: ChatScreen, text: str) -> str:  # type: ignore[misc]
        """Enter, more keys, Enter, typed faster than the screen handles messages (a paste, tmux
        send-keys): the second Submitted was posted before the first message was taken out of
        the editor, so it carries that message in front. Drop it (else it is sent twice)."""
        current = self.prompt.text
        entries = self.prompt.prompt_history.entries
        if not entries or current.startswith(text):
            return text  # still in the editor as submitted: not stale
        taken = entries[-1]
        if len(text) > len(taken) and text.startswith(taken) and current.startswith(text[len(taken) :]):
            return text[len(taken) :]
        return text

    def action_retry(self: ChatScreen) -> None:  # type: ignore[misc]
        if self._busy():
            return
        plan = retry_plan(self.chat.history())
        if plan is None:
            self.notify(NOTHING_TO_RETRY, severity="warning")
            return
        self._end_edit(clear=True)
        self._fork_and_send(plan.fork_at, plan.text, "retry")

    # queue ----------------------------------------------------------------------------------

    def _recall_queued(self: ChatScreen) -> None:  # type: ignore[misc]
        text = self.queue.pop_last()
        self._show_queue()
        if text is not None:
            self.prompt.load_text(text)
            self.prompt.move_cursor(self.prompt.document.end)

    def _show_queue(self: ChatScreen) -> None:  # type: ignore[misc]
        self.query_one("#queued", QueuedMessages).show(
            self.queue.items, self._key("chat.edit_last"), self._key("chat.cancel_queued")
        )

    def after_turn(self: ChatScreen, worker_state: Any, failed: bool) -> None:  # type: ignore[misc]
        """A turn ended: send what was queued (it ended well) or give it back to the prompt."""
        from textual.worker import WorkerState

        if not len(self.queue):
            return
        text = self.queue.take_all()
        self._show_queue()
        if worker_state == WorkerState.SUCCESS and not failed:
            self.call_later(self._send_queued, text)
            return
        self._give_back(text)

    def _send_queued(self: ChatScreen, text: str) -> None:  # type: ignore[misc]
        self.send_message(text, draft=None)
        if not self.turn_running:  # refused (an attachment, no model): the text must not vanish
            self._give_back(text)

    def _give_back(self: ChatScreen, text: str) -> None:  # type: ignore[misc]
        """Queued text back into the prompt, after whatever is being typed."""
        current = self.prompt.text
        self.prompt.load_text(f"{current}\n{text}" if current.strip() else text)
        self.prompt.move_cursor(self.prompt.document.end)
