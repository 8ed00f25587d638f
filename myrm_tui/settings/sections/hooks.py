"""The `[hooks]` table of the user config: commands myrm runs at fixed points of a session.

Shape (one list per event; an entry is a command string or an inline table):

    [hooks]
    session_start = ["./notify.sh start"]
    post_tool = [{ command = "./log-tool.sh", tools = ["bash", "file_*"], timeout = 10 }]

Why only the user's file: a hook runs code on every turn, so a repository's `.myrm/config.toml`
defining one would run its author's code the moment the user chats in it; the workspace gate
ignores the table with a problem saying so (settings/config_files/workspace_gate.py), trusted or not. The
loader's part (file, line, gate) is settings/config_files/hooks_table.py; this module is the value and its grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HOOKS_TABLE = "hooks"
SESSION_START = "session_start"
POST_TOOL = "post_tool"
PRE_COMPACT = "pre_compact"
SESSION_END = "session_end"
HOOK_EVENTS = (SESSION_START, POST_TOOL, PRE_COMPACT, SESSION_END)
# Long enough for a notifier or a log append over a slow disk; short enough that a hung hook
# holds a turn (post_tool, pre_compact) for seconds, not minutes. `timeout = N` per entry raises it.
DEFAULT_HOOK_TIMEOUT_S = 30.0
_ENTRY_KEYS = ("command", "timeout", "tools")


@dataclass(frozen=True)
class HookSpec:
    """One configured hook. `tools`: post_tool only, fnmatch patterns of tool names; () = every tool."""

    event: str
    command: str
    timeout_s: float = DEFAULT_HOOK_TIMEOUT_S
    tools: tuple[str, ...] = ()
    source: str = ""  # the file and line it came from, for messages


def parse_entry(event: str, entry: Any, where: str) -> tuple[HookSpec | None, str]:
    if isinstance(entry, str):
        entry = {"command": entry}
    if not isinstance(entry, dict):
        return None, f"an entry must be a command string or a table with `command`, not {entry!r}"
    unknown = sorted(set(entry) - set(_ENTRY_KEYS))
    if unknown:
        return None, f"unknown key(s) {', '.join(unknown)}; use {', '.join(_ENTRY_KEYS)}"
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, "`command` must be a non-empty string"
    timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return None, f"`timeout` must be a positive number of seconds, not {timeout!r}"
    tools = entry.get("tools", [])
    if tools and event != POST_TOOL:
        return None, "`tools` only applies to post_tool"
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        return None, '`tools` must be a list of tool names or patterns such as ["bash", "file_*"]'
    return HookSpec(event, command.strip(), float(timeout), tuple(tools), where), ""
