"""A turn's writes to the session log: messages, tool results, events.

In one place because of the rule the whole turn loop keeps: every fact is committed to the
store before the event that reports it is yielded, and whatever the user already saw (text cut
off by an error or an interrupt) is stored too, marked as partial.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from myrm_tui.agent.events import TurnError
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.agent.turn.state import CUT_OFF_NOTE, INTERRUPTED_RESULT, TurnState
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import event_kinds
from myrm_tui.store.changed_files import with_changed_files
from myrm_tui.store.errors import VaultError
from myrm_tui.store.records import MessageRecord
from myrm_tui.store.store import Store
from myrm_tui.store.tool_status import INTERRUPTED, with_status

_log = logging.getLogger(__name__)


class TurnRecord:
    def __init__(self, store: Store, session_id: str, model_name: str) -> None:
        self.store = store
        self.session_id = session_id
        self.model_name = model_name  # tokens are counted with the model's own tokenizer

    def append(self, message: dict[str, Any], artifacts: dict[str, str | None] | None = None) -> MessageRecord:
        """Store `message`; `artifacts` (vault handle → its text, or None to read the vault)
        are indexed in the same transaction, so what left the prompt stays searchable."""
        tokens = count_message_tokens(message, self.model_name)
        try:
            return self.store.append_message(self.session_id, message, tokens, artifacts=artifacts)
        except (VaultError, OSError):
            if not artifacts:
                raise
            # The vault lost or changed the file under us: the message itself must still be
            # stored (search is a convenience; the handle says where the text should be).
            _log.warning("could not index %s for search", ", ".join(artifacts), exc_info=True)
            return self.store.append_message(self.session_id, message, tokens)

    def event(self, kind: str, data: dict[str, Any]) -> None:
        self.store.append_event(self.session_id, kind, data)

    def tool_result(
        self,
        call_id: str,
        name: str,
        content: str,
        status: str,
        artifacts: dict[str, str | None] | None = None,
        *,
        changed_files: Sequence[str] = (),
    ) -> MessageRecord:
        # The outcome is stored beside the content (store/tool_status.py): the fork summary, the
        # transcript and the health screen read it instead of guessing from untrusted output.
        # So are the files a bash call changed (store/changed_files.py): the reread reads them.
        message = with_status({"role": "tool", "tool_call_id": call_id, "name": name, "content": content}, status)
        return self.append(with_changed_files(message, changed_files), artifacts)

    def turn_error(self, error_class: str, message: str, hint: str, state: TurnState) -> TurnError:
        self.event(
            event_kinds.ERROR, {"error_class": error_class, "message": message, "hint": hint, "step": state.steps}
        )
        return TurnError(error_class, message, hint)

    def keep_partial_text(self, state: TurnState, why: str) -> None:
        """Text the user already saw is stored, marked as cut off: nothing shown is lost."""
        if state.partial_text.strip():
            self.append({"role": "assistant", "content": state.partial_text + CUT_OFF_NOTE.format(why=why)})
        state.partial_text = ""

    def interrupted(self, state: TurnState, output_cap: int, vault: Any) -> None:
        """Leave the store valid after an interrupt: the partial text kept, every open call
        answered (the running one with the output it had produced), and an INTERRUPTED event."""
        self.keep_partial_text(state, "interrupted by user")
        repaired = []
        output = "".join(state.tool_output)
        for call_id, name in state.open_calls:
            content = INTERRUPTED_RESULT
            artifacts: dict[str, str | None] = {}
            running = state.tool_task is not None and not state.tool_task.done()
            if running and output and call_id == state.open_calls[0][0]:
                preview, handle = spill_if_large(output, output_cap, vault)
                content = f"{INTERRUPTED_RESULT}\n[output before the interrupt]\n{preview}"
                if handle:
                    artifacts[handle] = output
            self.tool_result(call_id, name, content, INTERRUPTED, artifacts)
            repaired.append(call_id)
        state.open_calls = []
        self.event(event_kinds.INTERRUPTED, {"reason": "user", "repaired_call_ids": repaired, "step": state.steps})
