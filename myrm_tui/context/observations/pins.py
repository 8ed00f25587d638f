"""Security pins: the user's own constraints and permissions, never evicted, masked or summarized.

Why a class of its own: the anchors (first and latest user message) cover the session's opening
request, but a rule the user states mid-session ("never push to main", "you may only edit
src/") would otherwise leave the prompt with the turn around it, and a summary is a lossy recall
cue, not the rule. Comis's engine document keeps "security-pinned items" unconditionally; this
module decides which stored rows are such items.

What qualifies, and why only that: a stored user-role row written by the human, whose text
states a constraint or permission at the start of a sentence (`Never …`, `Do not …`,
`Constraint: …`, `You may only …`, `without asking …`), or that the user pins explicitly with a
leading `pin:` / `#pin`. Never a tool output, an assistant message or a synthetic user-role row
(a summary, a fork summary, a reread, anything in an untrusted wrapper): pinning is a trust
decision, and workspace content (a README a tool read, a file's comment) must not be able to
make itself permanent in the prompt. The patterns are anchored to sentence starts so that a
passing "do not guess it" inside a longer sentence is not taken for a rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from myrm_tui.context.rows.views import UNTRUSTED_OPEN
from myrm_tui.messages import content_text
from myrm_tui.store.records import MessageRecord

# The key a synthetic user-role row carries (a fork's summary, agent/fork.py writes it); such a
# row is the engine's words, not the user's.
SYNTHETIC_KEYS = ("myrm_synthetic", "synthetic")
# Wrappers of text that entered as data, never as the user's instruction.
UNTRUSTED_MARKERS = (UNTRUSTED_OPEN, 'untrusted="true"')
# An explicit pin: the user's message starts with it.
_EXPLICIT = re.compile(r"^\s*(?:#pin\b|pin:)", re.IGNORECASE)
# A constraint or permission stated at the start of a sentence or line (after optional "please").
_RULE = re.compile(
    r"(?:^|[.!?]\s+|\n\s*[-*]?\s*)(?:please\s+)?"
    r"(?:constraint:|rule:|security:|never\b|do\s+not\b|don't\b|must\s+not\b|"
    r"you\s+(?:must\s+not|may\s+not|may\s+only|must\s+only|are\s+not\s+allowed|are\s+only\s+allowed|"
    r"can\s+only|cannot|can't|have\s+no\s+permission|have\s+permission)\b|"
    r"only\s+(?:edit|touch|modify|write|run|use|read)\b|"
    r"(?:it\s+is\s+)?(?:not\s+allowed|forbidden|prohibited)\b)",
    re.IGNORECASE,
)
# How much of a message the check reads: a rule is stated in words, not in a pasted 100 kB log
# (a long paste is still the user's, but scanning it per sync would cost per row).
PIN_SCAN_CHARS = 4_000


def is_security_pin(message: dict[str, Any]) -> bool:
    """Whether a stored message is a security pin (see the module docstring)."""
    if message.get("role") != "user" or any(message.get(key) for key in SYNTHETIC_KEYS):
        return False
    text = content_text(message.get("content"))[:PIN_SCAN_CHARS]
    if not text.strip() or any(marker in text for marker in UNTRUSTED_MARKERS):
        return False
    return bool(_EXPLICIT.match(text) or _RULE.search(text))


def security_pins(rows: Sequence[MessageRecord], indices: Iterable[int]) -> list[int]:
    """The row indices among `indices` whose rows are security pins, in order."""
    return [i for i in indices if is_security_pin(rows[i].message)]
