"""The grammar of a permission rule (`Bash(git status:*)`, `Edit(src/**)`, `mcp__git`): parse and check.

Why in settings: the loader checks every `[permissions]` rule when it reads a config file (a bad
rule is reported with its file and line, the others apply), and settings sit below the agent. What
a rule matches, the rules store and the suggestions stay in agent/permissions/rules.py, whose
docstring has the whole grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Rule tool name -> the tools it covers. Edit covers every tool that changes a file (a user who
# allows edits under src/ means whole-file writes there too); Write only file_write.
RULE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("bash",),
    "Edit": ("file_edit", "file_write"),
    "Write": ("file_write",),
    "WebFetch": ("web_fetch",),
}
# Longer rules are typos or pasted scripts, not a prefix anyone means to vouch for.
MAX_RULE_CHARS = 500
_RULE = re.compile(r"^([A-Za-z]+)(?:\((.*)\))?$", re.DOTALL)
# MCP tools are named `mcp__<server>__<tool>` to the model (mcp/names.py); a rule is written the
# same way (as Claude Code writes it), for a whole server or one tool. Bare words, no pattern.
MCP_PREFIX = "mcp__"
MCP_RULE = re.compile(r"^mcp__[A-Za-z0-9_-]+$")
# A WebFetch rule's host: DNS labels (letters, digits, hyphens), an optional leading `*.`.
_DOMAIN_RULE = re.compile(
    r"^domain:(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)$"
)


class RuleError(ValueError):
    """A rule that cannot be read; the message says what is wrong and how to write it."""


@dataclass(frozen=True)
class Rule:
    tool: str  # Bash, Edit, Write
    pattern: str | None  # None: the whole tool
    source: str = ""  # where the rule was written, for messages

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def __str__(self) -> str:
        return self.text

    @property
    def words(self) -> tuple[str, ...]:
        """A Bash rule's command words (without the `:*`)."""
        return _bash_words(self.pattern or "")

    @property
    def prefix(self) -> bool:
        return bool(self.pattern and self.pattern.endswith(":*"))

    def covers(self, tool_name: str) -> bool:
        if self.tool.startswith(MCP_PREFIX):
            # `mcp__git` covers every tool of the server git; `mcp__git__log` that one tool. The
            # `__` boundary keeps `mcp__git` from covering a server named `git2`.
            return tool_name == self.tool or tool_name.startswith(self.tool + "__")
        return tool_name in RULE_TOOLS[self.tool]


def parse_rule(text: str, source: str = "") -> Rule:
    """One rule from its text; RuleError with a readable sentence when it is not one."""
    if not isinstance(text, str):
        raise RuleError(f'a rule is a string such as "Bash(git status:*)", not {text!r}')
    raw = text.strip()
    if not raw:
        raise RuleError("a rule cannot be empty")
    if len(raw) > MAX_RULE_CHARS:
        raise RuleError(f"a rule is at most {MAX_RULE_CHARS} characters")
    if raw.startswith(MCP_PREFIX):
        if not MCP_RULE.match(raw):
            raise RuleError(
                f"{raw!r}: an MCP rule is mcp__<server> (every tool of that server) or "
                "mcp__<server>__<tool>, as the tools are named to the model"
            )
        return Rule(raw, None, source)
    match = _RULE.match(raw)
    if match is None:
        raise RuleError(
            f'{raw!r} is not a rule; write Tool or Tool(pattern), e.g. "Bash(git status:*)" or "Edit(src/**)"'
        )
    tool, pattern = match.group(1), match.group(2)
    if tool not in RULE_TOOLS:
        known = {name.lower(): name for name in RULE_TOOLS}
        hint = f" (did you mean {known[tool.lower()]}?)" if tool.lower() in known else ""
        raise RuleError(f"{raw!r} names no known tool{hint}; rules cover {', '.join(RULE_TOOLS)}")
    if pattern is None:
        return Rule(tool, None, source)
    pattern = pattern.strip()
    if not pattern:
        raise RuleError(f"{raw!r} has an empty pattern; write {tool} alone to cover every call")
    if tool == "Bash":
        _check_bash_pattern(raw, pattern)
    elif tool == "WebFetch":
        pattern = pattern.lower().rstrip(".")
        if not _DOMAIN_RULE.match(pattern):
            raise RuleError(
                f"{raw!r}: a WebFetch rule names a host, e.g. WebFetch(domain:docs.python.org) "
                "or WebFetch(domain:*.python.org) for its subdomains"
            )
    else:
        _check_path_pattern(raw, pattern)
    return Rule(tool, pattern, source)


def _bash_words(pattern: str) -> tuple[str, ...]:
    from myrm_tui.shell_lex import split_commands  # see _check_bash_pattern

    body = pattern.removesuffix(":*")
    commands = split_commands(body)
    return tuple(commands[0].argv) if commands else ()


def _check_bash_pattern(raw: str, pattern: str) -> None:
    body = pattern.removesuffix(":*")
    if ":*" in body or "*" in body:
        raise RuleError(
            f"{raw!r}: a Bash rule is a command, optionally followed by :* for any arguments; "
            "`*` elsewhere is not supported"
        )
    # Imported here: the settings loader imports this module before `myrm` paints, and the shell
    # lexer (~20 ms) is needed only when a config holds Bash rules.
    from myrm_tui.shell_lex import split_commands

    commands = split_commands(body)
    if len(commands) != 1 or not commands[0].words:
        raise RuleError(f"{raw!r}: a Bash rule names one simple command (no ;, &&, |, or redirections)")
    command = commands[0]
    if command.assignments or command.redirects or any(w.dynamic or w.substitutions for w in command.words):
        raise RuleError(f"{raw!r}: a Bash rule is plain words, without $, `...`, assignments or redirections")


def _check_path_pattern(raw: str, pattern: str) -> None:
    if "\x00" in pattern:
        raise RuleError(f"{raw!r}: a path cannot hold a NUL character")
    parts = pattern.split("/")
    if ".." in parts:
        raise RuleError(
            f"{raw!r}: `..` is not allowed in a path rule; write the path from the workspace root, or an absolute one"
        )
    if any(part not in ("**",) and "**" in part for part in parts):
        raise RuleError(f"{raw!r}: `**` stands alone between slashes (src/**/test_*.py)")
