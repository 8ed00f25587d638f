"""What became of a tool call, read from its stored result (one reader for every consumer).

Why a stored field: a tool's output is untrusted text, and its first words say nothing reliable
about the outcome (a bash command that exits 1 prints whatever it likes; a file may begin with
"denied"). The agent therefore stores the outcome beside the content under `STATUS_KEY`; the
engine's normalize stage drops the key, so providers never see it. Rows written before the key
existed fall back to the agent's own result prefixes, and say "unknown" when nothing fits
rather than guess "ok" for an unrecognised failure.
"""

from __future__ import annotations

import re
from typing import Any

# The key on a stored `role: tool` message that holds the outcome. Prefixed so it can never
# collide with a provider field.
STATUS_KEY = "myrm_status"
OK, ERROR, TIMEOUT, DENIED, INTERRUPTED, UNKNOWN = "ok", "error", "timeout", "denied", "interrupted", "unknown"
STATUSES = frozenset({OK, ERROR, TIMEOUT, DENIED, INTERRUPTED})
# Outcomes after which the call's effect cannot be assumed: not "done".
NOT_RUN = frozenset({DENIED, INTERRUPTED})

# The agent's and the store's own result wordings (agent.py, approvals.py, store/constants.py),
# for rows stored before STATUS_KEY: the status is read from how *we* phrased the result.
_LEGACY_PREFIXES = (
    ("interrupted", INTERRUPTED),
    ("[interrupted", INTERRUPTED),
    ("denied by user", DENIED),
    ("refused:", DENIED),
    ("not run:", DENIED),
    ("error", ERROR),
    ("[error", ERROR),
    ("timeout", TIMEOUT),
)
_EXIT_CODE = re.compile(r"\[exit code (-?\d+)\]\s*$")
_TIMED_OUT = re.compile(r"\[timed out after [^\]]*\]\s*$")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def stored_status(message: dict[str, Any]) -> str:
    """The outcome of the call a stored tool message answers: ok, error, timeout, denied,
    interrupted, or unknown (an old row whose wording we do not recognise as a failure is ok)."""
    for key in (STATUS_KEY, "status"):
        value = message.get(key)
        if isinstance(value, str) and value in STATUSES:
            return value
    text = _text(message.get("content")).lstrip()
    head = text[:40].lower()
    for prefix, status in _LEGACY_PREFIXES:
        if head.startswith(prefix):
            return status
    tail = text[-200:]
    if _TIMED_OUT.search(tail):
        return TIMEOUT
    code = _EXIT_CODE.search(tail)
    if code is not None:
        return OK if code.group(1) == "0" else ERROR
    return OK


def with_status(message: dict[str, Any], status: str) -> dict[str, Any]:
    """`message` (a tool result) carrying its outcome."""
    return {**message, STATUS_KEY: status if status in STATUSES else UNKNOWN}
