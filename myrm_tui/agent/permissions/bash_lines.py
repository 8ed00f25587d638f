"""Bash lines against command rules: which argv an allow rule must cover, which a deny rule sees.

Allow is strict (every simple command must match, and nothing a prefix cannot vouch for may
happen: substitutions, assignments, writing redirections); deny is thorough (it looks inside
`$(...)`, `bash -c`, `eval` and behind wrappers). The rules (rules.py) explain why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from myrm_tui.settings.sections.permission_syntax import Rule
from myrm_tui.shell_lex import Command, Word, nested_substitutions, split_commands

# The walk into `$(...)`, `bash -c` and `eval` for deny rules stops here (real lines nest two or
# three levels; the seatbelt (seatbelt.py) asks about deeper nesting anyway).
MAX_DENY_DEPTH = 8

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
# Wrappers whose real command follows their options (deny rules look behind them).
_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nohup",
        "timeout",
        "nice",
        "ionice",
        "stdbuf",
        "command",
        "builtin",
        "exec",
        "time",
        "xargs",
        "setsid",
        "chroot",
        "flock",
        "unbuffer",
    }
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish"})
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


def plain_commands(command: str) -> list[list[str]] | None:
    """The argv of every simple command of `command`, or None when the line does something a
    command-prefix rule cannot vouch for (see the module doc)."""
    commands = split_commands(command)
    if not commands:
        return None
    out = []
    for item in commands:
        if not _is_plain(item):
            return None
        out.append(item.argv)
    return out


def _is_plain(command: Command) -> bool:
    if not command.words or command.assignments or command.function:
        return False
    if command.words[0].dynamic:
        return False  # a name known only at run time
    for word in command.words:
        if word.substitutions or word.process_subst:
            return False
    for redirect in command.redirects:
        target = redirect.target
        if target is not None and (target.substitutions or target.process_subst):
            return False
        if redirect.body and ("$(" in redirect.body or "`" in redirect.body) and not _quoted_delimiter(target):
            return False  # an unquoted heredoc runs the substitutions in its body
        if _writes_a_file(redirect.op, target):
            return False
    return True


def _writes_a_file(op: str, target: Word | None) -> bool:
    """`> out`, `>> log`, `&> f`; not `2>&1`, `>/dev/null`."""
    if op == ">&" and target is not None and (target.text.isdigit() or target.text == "-"):
        return False
    if op not in _WRITE_REDIRECTS and op != ">&":
        return False
    return target is None or target.text not in _HARMLESS_TARGETS


def _quoted_delimiter(target: Word | None) -> bool:
    return target is not None and target.raw != target.text


def argv_matches(rule: Rule, argv: Sequence[str]) -> bool:
    words = rule.words
    if not words:
        return False
    if rule.prefix:
        return tuple(argv[: len(words)]) == words
    return tuple(argv) == words


# ---------------------------------------------------------------- bash: deny


def reachable_commands(command: str) -> Iterator[list[str]]:
    """Every argv the line visibly runs: its simple commands, the bodies of `$(...)`, `bash -c`
    strings and `eval` arguments, and the commands behind wrappers (`sudo rm` yields `sudo rm`
    and `rm`)."""
    yield from _reachable(command, 0)


def _reachable(text: str, depth: int) -> Iterator[list[str]]:
    if depth > MAX_DENY_DEPTH:
        return
    for item in split_commands(text):
        words = [*item.words, *item.assignments, *(r.target for r in item.redirects if r.target is not None)]
        for word in words:
            for body in word.substitutions:
                yield from _reachable(body, depth + 1)
        argv = item.argv
        for redirect in item.redirects:
            if redirect.body is None:
                continue
            if argv and os.path.basename(argv[0]) in _SHELLS:
                yield from _reachable(redirect.body, depth + 1)  # a heredoc fed to a shell
            elif not _quoted_delimiter(redirect.target):
                for body in nested_substitutions(redirect.body):
                    yield from _reachable(body, depth + 1)
        for variant in _unwrapped(argv):
            yield variant
            name = os.path.basename(variant[0])
            if name in _SHELLS:
                code = _option_value(variant[1:], "-c")
                if code is not None:
                    yield from _reachable(code, depth + 1)
            elif name == "eval" and len(variant) > 1:
                yield from _reachable(" ".join(variant[1:]), depth + 1)


def _option_value(args: Sequence[str], flag: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == flag or (arg.startswith("-") and not arg.startswith("--") and flag[1] in arg[1:]):
            return args[index + 1] if index + 1 < len(args) else None
    return None


def _unwrapped(argv: list[str]) -> Iterator[list[str]]:
    """The argv, then what each wrapper in front of it runs."""
    current = argv
    for _ in range(MAX_DENY_DEPTH):
        if not current:
            return
        yield current
        name = os.path.basename(current[0])
        if name not in _WRAPPERS:
            return
        rest = current[1:]
        while rest and (rest[0].startswith("-") or "=" in rest[0] or (name == "timeout" and _DURATION.match(rest[0]))):
            rest = rest[1:]
        current = rest


def deny_matches(rule: Rule, argv: Sequence[str]) -> bool:
    named = [os.path.basename(argv[0]), *argv[1:]] if argv else []
    return argv_matches(rule, argv) or argv_matches(rule, named)
