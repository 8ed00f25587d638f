"""The rules "Always allow" offers for a call: narrow enough to be honest, never a whole interpreter.

A suggestion must allow this very call next time (it is judged before it is offered) and stop
at a command's first words (`git status`, `npm run build`), the file's folder, or the host.
"""

from __future__ import annotations

import os
import re
import shlex

from myrm_tui.agent.permissions.bash_lines import plain_commands
from myrm_tui.agent.permissions.ruleset import RuleCall, rule_set
from myrm_tui.settings.sections.permission_syntax import MCP_PREFIX, MCP_RULE

# The rule word used when "Always allow" is offered for a tool call.
SUGGESTED_RULE_TOOL = {"bash": "Bash", "file_edit": "Edit", "file_write": "Write", "web_fetch": "WebFetch"}
# Words a suggested prefix may hold: "git status", "npm run build"; more is a whole command line.
MAX_SUGGESTED_WORDS = 3

_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_:-]*$")
# Programs that run whatever their arguments say: always-allowing one by its bare name would allow
# everything, so no such rule is suggested (a user may still write one by hand).
RUNS_ANYTHING = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "eval",
        "exec",
        "source",
        ".",
        "env",
        "sudo",
        "doas",
        "su",
        "xargs",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "command",
        "builtin",
        "time",
        "watch",
        "ssh",
        "python",
        "python3",
        "python2",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "perl",
        "ruby",
        "php",
        "lua",
        "Rscript",
        "awk",
        "gawk",
        "mawk",
        "find",
        "parallel",
        "flock",
        "script",
        "strace",
        "ltrace",
        "gdb",
        "chroot",
        "unshare",
        "setsid",
        "busybox",
        "npx",
    }
)


def suggest_rules(call: RuleCall) -> tuple[str, ...]:
    """The rules "Always allow" would store for this call, or () when none would be honest: the
    stored rules must allow this very call next time and nothing as broad as a whole interpreter."""
    if call.tool.startswith(MCP_PREFIX) and MCP_RULE.match(call.tool):
        return (call.tool,)  # one tool of one server: the narrowest honest rule
    tool_word = SUGGESTED_RULE_TOOL.get(call.tool)
    if tool_word is None:
        return ()
    if call.tool == "bash":
        texts = _bash_suggestions(call.command or "")
    elif call.tool == "web_fetch":
        texts = (f"WebFetch(domain:{call.host})",) if call.host else ()
    else:
        texts = _path_suggestion(tool_word, call)
    if not texts:
        return ()
    candidate = rule_set(allow=[(t, "") for t in texts])
    if candidate.problems or not candidate.judge(call).allowed:
        return ()
    return texts


def _bash_suggestions(command: str) -> tuple[str, ...]:
    parts = plain_commands(command)
    if parts is None:
        return ()
    out: list[str] = []
    for argv in parts:
        prefix = _prefix_of(argv)
        if prefix is None:
            return ()
        text = f"Bash({shlex.join(prefix)}:*)"
        if text not in out:
            out.append(text)
    return tuple(out)


def _prefix_of(argv: list[str]) -> list[str] | None:
    if not argv or not argv[0] or "\n" in " ".join(argv):
        return None
    words = [argv[0]]
    for word in argv[1:]:
        if len(words) >= MAX_SUGGESTED_WORDS or not _SUBCOMMAND.match(word):
            break
        words.append(word)
    if len(words) == 1 and os.path.basename(argv[0]) in RUNS_ANYTHING:
        return None
    return words


def _path_suggestion(tool_word: str, call: RuleCall) -> tuple[str, ...]:
    if call.path is None or call.workspace is None:
        return ()
    try:
        relative = call.path.relative_to(call.workspace)
    except ValueError:
        return ()  # outside the workspace: no standing rule is offered for that
    text = relative.as_posix()
    if any(ch in text for ch in "*?()\n") or not text or text == ".":
        return ()
    parent = relative.parent.as_posix()
    return (f"{tool_word}({text})",) if parent == "." else (f"{tool_word}({parent}/**)",)
