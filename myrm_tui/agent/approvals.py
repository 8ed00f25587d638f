"""Which tool calls need a human yes, from the `approval` policy and the command itself.

Policies: ask (bash and file changes ask), auto-edit (file changes run, bash asks), yolo
(nothing asks), deny (bash and file changes are refused without asking). A short list of
destructive command shapes always asks, even in yolo; in deny they are refused like the rest.
Reads never ask: they change nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

POLICIES = ("ask", "auto-edit", "yolo", "deny")


class Verdict(Enum):
    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    destructive: bool = False
    reason: str = ""  # why it asks or is refused, shown to the user


# (pattern, what it does). Matched anywhere in the command line, case-sensitive like the shell.
# Deliberately short and loud: this is a seatbelt against common disasters, not a sandbox.
DESTRUCTIVE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), label) for p, label in (
        (r"\brm\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b", "recursive delete"),
        (r"\bgit\s+push\b[^;&|]*\s(?:--force\b|--force-with-lease\b|-f\b|\+\S)", "force push"),
        (r"\bgit\s+reset\b[^;&|]*--hard\b", "git reset --hard"),
        (r"\bgit\s+clean\b[^;&|]*\s-[a-zA-Z]*f", "git clean -f"),
        (r"\bmkfs(?:\.\w+)?\b", "make a filesystem"),
        (r"\bdd\b[^;&|]*\bof=", "dd writing to a device or file"),
        (r"\b(?:chmod|chown)\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*R|--recursive)\b", "recursive permission change"),
        (r"(?:^|[;&|(]\s*|\s)(?:sudo|doas)\b", "runs as root"),
        (r"\b(?:curl|wget)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b", "pipes a download into a shell"),
        (r">\s*/dev/(?:sd|hd|vd|nvme|xvd|disk|mmcblk)", "writes to a block device"),
        (r"\b(?:shutdown|reboot|poweroff|halt)\b", "shuts the machine down"),
        (r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:", "fork bomb"),
    )
)


def destructive_reason(command: str) -> str | None:
    for pattern, label in DESTRUCTIVE_PATTERNS:
        if pattern.search(command):
            return label
    return None


def decide(policy: str, tool_kind: str, command: str | None = None) -> Decision:
    """The verdict for one call. `tool_kind` is read, write or exec (see tools.base.Tool.kind)."""
    if policy not in POLICIES:
        # An unknown policy must fail safe: ask for everything that changes something.
        policy = "ask"
    if tool_kind == "read":
        return Decision(Verdict.ALLOW)
    danger = destructive_reason(command) if (tool_kind == "exec" and command) else None
    if policy == "deny":
        return Decision(Verdict.REFUSE, destructive=danger is not None,
                        reason="approval policy is deny")
    if danger:
        return Decision(Verdict.ASK, destructive=True, reason=f"destructive: {danger}")
    if policy == "yolo":
        return Decision(Verdict.ALLOW)
    if policy == "auto-edit" and tool_kind == "write":
        return Decision(Verdict.ALLOW)
    return Decision(Verdict.ASK, reason=f"approval policy is {policy}")
