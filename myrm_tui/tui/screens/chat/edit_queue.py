"""The chat screen's edit, retry and queue behaviour (a collaborator the screen owns and forwards keys to).

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
  back to the prompt instead (tui/prompt/message_queue.py says why).
"""

from __future__ import annotations

from typing import Any

from textual.worker import WorkerState

from myrm_tui.tui.formatting import pretty_key, short_id
from myrm_tui.tui.prompt.message_queue import MessageQueue
from myrm_tui.tui.prompt.slash_commands import parse_command
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.transcript.edit_retry import EditTarget, edit_target, retry_plan
from myrm_tui.tui.widgets.blocks.user_message import UserMessage

EDIT_ACTIONS = frozenset({"edit_last", "edit_earlier", "edit_later", "cancel_queued"})
NOTHING_TO_RETRY = "Nothing to retry yet: send a message first."


class EditQueue:
    """The edit target and the queue of one chat screen; the screen's key actions call in here."""

    def __init__(self, screen: ChatParts) -> None:
        self.screen = screen
        self.queue = MessageQueue()
        self._edit: EditTarget | None = None
        self.send_on_mount: str | None = None  # set by the screen that forked into this one

    @property
    def editing(self) -> EditTarget | None:
        return self._edit

    def mounted(self) -> None:
        """The screen is up: a fork made by an edit or a retry sends its text now."""
        text, self.send_on_mount = self.send_on_mount, None
        if text:
            self.screen.call_after_refresh(self._send_forked, text)

    def _send_forked(self, text: str) -> None:
        self.screen.prompt.prompt_history.add(text)
        self.screen.send_message(text, draft=None)

    # keys -----------------------------------------------------------------------------------

    def check_action(self, action: str) -> bool | None:
        """None for actions that are not ours; else whether the key is ours right now (False lets
        the prompt have it: Up, Esc and Delete keep their usual meaning everywhere else)."""
        if (
            action == "interrupt"
            and self._edit is not None
            and not self.screen.turn_running
            and not self.screen.compacting
            and not self.screen.prompt.popup_open
        ):
            return True  # Esc cancels the edit (ChatScreen.action_interrupt); an open popup first closes
        if action not in EDIT_ACTIONS:
            return None
        prompt = self.screen.prompt
        if self.screen.focused is not prompt or prompt.popup_open:
            return False
        if action in ("edit_earlier", "edit_later"):
            return self._edit is not None and not self.screen.turn_running
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
        return not self.screen.turn_running and not self.screen.compacting and self.screen.chat.session is not None

    def edit_last(self) -> None:
        if self._edit is not None:
            edited = self._edit.text
            self._end_edit(clear=True)
            self.screen.prompt.action_history_previous()
            if self.screen.prompt.text == edited:  # the history's newest entry is usually that same message
                self.screen.prompt.action_history_previous()
            return
        if len(self.queue):
            self._recall_queued()
            return
        self._start_edit(0)

    def edit_earlier(self) -> None:
        if self._edit is not None:
            self._start_edit(self._edit.count - self._edit.position + 1)

    def edit_later(self) -> None:
        if self._edit is not None:
            self._start_edit(self._edit.count - self._edit.position - 1)

    def cancel_edit(self) -> None:
        """Esc while editing (the chat.interrupt key: nothing runs then)."""
        self._end_edit(clear=True)

    def cancel_queued(self) -> None:
        removed = self.queue.pop_last()
        self.show_queue()
        if removed is not None:
            self.screen.notify("Removed the last queued message.", timeout=2)

    def _key(self, binding_id: str) -> str:
        return pretty_key(self.screen.raw_key_for(binding_id))

    # editing --------------------------------------------------------------------------------

    def _start_edit(self, from_end: int) -> None:
        target = edit_target(self.screen.chat.history(), from_end) if from_end >= 0 else None
        if target is None:
            if self._edit is None:  # nothing sent in this session: Up is the history's
                self.screen.prompt.action_history_previous()
            return
        self._edit = target
        self.screen.prompt.load_text(target.text)
        self.screen.prompt.move_cursor(self.screen.prompt.document.end)
        where = (
            "your last message" if target.position == target.count else f"message {target.position} of {target.count}"
        )
        into = "a fork" if target.fork_at is not None else "a new session"
        self.screen.edit_hint.show(
            f"✎ editing {where} · Enter sends it in {into} · {self._key('chat.interrupt')} cancels · "
            f"{self._key('chat.edit_earlier')}/{self._key('chat.edit_later')} earlier/later"
        )
        self._highlight(target)

    def _highlight(self, target: EditTarget | None) -> None:
        """Mark the bubble being edited (when it is mounted: older turns may be windowed out)."""
        bubbles = self.screen.transcript.mounted_turns()
        for bubble in self.screen.transcript.query(UserMessage):
            bubble.remove_class("-editing")
        if target is None:
            return
        index = len(bubbles) - 1 - (target.count - target.position)
        if 0 <= index < len(bubbles):
            bubbles[index].add_class("-editing")
            bubbles[index].scroll_visible(animate=False)

    def _end_edit(self, clear: bool) -> None:
        if self._edit is None:
            return
        self._edit = None
        self.screen.edit_hint.hide()
        self._highlight(None)
        if clear:
            self.screen.prompt.clear()

    def _fork_and_send(self, fork_at: int | None, text: str, what: str) -> None:
        """Fork this session after message `fork_at` (None: a new session), switch to it, and
        send `text` there. The parent is never written to."""
        session = self.screen.chat.session
        if session is None:
            return
        try:
            child_id = (
                None
                if fork_at is None
                else self.screen.chat.store.fork(
                    session.id, at_message=fork_at, title=f"{session.title} ({what})".strip()
                ).id
            )
        except Exception as exc:  # noqa: BLE001 - StoreError: shown, nothing changed
            self.screen.notify(f"Fork failed: {exc}", severity="error")
            return
        title = session.title or short_id(session.id)
        notice = (
            f"{what.capitalize()}: forked from “{title}” ({short_id(session.id)}); the original is "
            "unchanged in /sessions."
            if child_id
            else f"{what.capitalize()}: a new session (the first message changed); “{title}” is unchanged."
        )
        self.screen.myrm.open_session(child_id, notice)
        edits = getattr(self.screen.app.screen, "edits", None)  # the new session's chat screen
        if isinstance(edits, EditQueue):
            edits.send_on_mount = text

    def submit_hook(self, text: str) -> bool:
        """Enter with `text`: True when editing or queueing took it (the caller stops)."""
        target = self._edit
        if target is not None:
            if self.screen.busy():
                return True
            self._end_edit(clear=False)
            self.screen.prompt.clear()
            self._fork_and_send(target.fork_at, text, "edit")
            return True
        if self.screen.turn_running and parse_command(text, self.screen.custom_slash()) is None:
            text = self._unstale(text)
            self.queue.add(text)
            self.screen.prompt.prompt_history.add(text)
            self.screen.prompt.take_submitted(text)
            self.show_queue()
            return True
        return False

    def _unstale(self, text: str) -> str:
        """Enter, more keys, Enter, typed faster than the screen handles messages (a paste, tmux
        send-keys): the second Submitted was posted before the first message was taken out of
        the editor, so it carries that message in front. Drop it (else it is sent twice)."""
        current = self.screen.prompt.text
        entries = self.screen.prompt.prompt_history.entries
        if not entries or current.startswith(text):
            return text  # still in the editor as submitted: not stale
        taken = entries[-1]
        if len(text) > len(taken) and text.startswith(taken) and current.startswith(text[len(taken) :]):
            return text[len(taken) :]
        return text

    def retry(self) -> None:
        if self.screen.busy():
            return
        plan = retry_plan(self.screen.chat.history())
        if plan is None:
            self.screen.notify(NOTHING_TO_RETRY, severity="warning")
            return
        self._end_edit(clear=True)
        self._fork_and_send(plan.fork_at, plan.text, "retry")

    # queue ----------------------------------------------------------------------------------

    def _recall_queued(self) -> None:
        text = self.queue.pop_last()
        self.show_queue()
        if text is not None:
            self.screen.prompt.load_text(text)
            self.screen.prompt.move_cursor(self.screen.prompt.document.end)

    def show_queue(self) -> None:
        self.screen.queued.show(self.queue.items, self._key("chat.edit_last"), self._key("chat.cancel_queued"))

    def after_turn(self, worker_state: Any, failed: bool) -> None:
        """A turn ended: send what was queued (it ended well) or give it back to the prompt."""
        if not len(self.queue):
            return
        text = self.queue.take_all()
        self.show_queue()
        if worker_state == WorkerState.SUCCESS and not failed:
            self.screen.call_later(self._send_queued, text)
            return
        self._give_back(text)

    def _send_queued(self, text: str) -> None:
        self.screen.send_message(text, draft=None)
        if not self.screen.turn_running:  # refused (an attachment, no model): the text must not vanish
            self._give_back(text)

    def _give_back(self, text: str) -> None:
        """Queued text back into the prompt, after whatever is being typed."""
        current = self.screen.prompt.text
        self.screen.prompt.load_text(f"{current}\n{text}" if current.strip() else text)
        self.screen.prompt.move_cursor(self.screen.prompt.document.end)
