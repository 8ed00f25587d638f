"""Resending after a failed turn: the stored user message is reused, never stored twice.

Why: the agent stores the user's message before it assembles the prompt (nothing typed is ever
lost), so a turn that then fails (provider down, bad key, prompt too large) leaves it in the
session. Sending the same text again must not add a second copy: two identical asks confuse
the model, and in a tight window each copy made the next attempt need more room than the last
(a session stuck for good).

"Nothing answered it" means the message is still the newest row of the session. Anything stored
after it is an answer, including an assistant message cut off by an error or an interrupt
(stored with its "[answer cut off: …]" note, because the user saw that text): the model then
sees its own partial answer followed by the new ask, which is the true order of events, and the
resend is stored as a new message.
"""

from __future__ import annotations

from typing import Any


def reusable_user_message(last: Any, content: str | list[dict[str, Any]]) -> Any:
    """`last` (the session's newest stored message) when it is the same ask, unanswered.
    `content` is the message content as the agent would store it (text, or list content whose
    images are already vault handles, so the same attachment compares equal)."""
    if last is None or last.role != "user":
        return None
    return last if last.message.get("content") == content else None
