"""The floor's pointer: what stands for an anchor message when even the summaries in one line
leave no room for it (a tight window, a large fixed prefix; docs/context-engine.md, "Progress").

Why no words of the message in it: the pointer exists for windows where every token counts, and
quoting the user here would make it a new place their text is copied to (a redaction sink, see
`myrm_tui/sinks.py`); the handle gives the message back whole with one `ctx_expand` call.
"""

from __future__ import annotations

from myrm_tui.context.rows.views import msg_handle


def anchor_pointer(message_id: int, tokens: int, role: str = "user") -> str:
    handle = msg_handle(message_id)
    what = "first message of this session" if role == "user" else f"stored {role} message"
    return f'[{what} ({handle}, {tokens:,} tokens) left out to fit the model window · read it: ctx_expand("{handle}")]'
