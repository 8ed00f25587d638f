"""What the seatbelt knows about a command line without running it: the variables set earlier
on the line, a command name made concrete, what `$(echo ...)` prints, what is fed to stdin.

Why apart from the walk (seatbelt): these answers never recurse into another command
line, so they are plain functions of the words and the scope that the walk and the interpreter
checks (interpreters) share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from myrm_tui.shell_lex import Command, Word, expand_braces, expand_static, printf_escapes, split_commands


@dataclass
class Scope:
    depth: int = 0
    variables: dict[str, str] = field(default_factory=lambda: {"IFS": " "})


def remember(assignments: list[Word], scope: Scope) -> None:
    """Track `NAME=value` statements so a later `$NAME -rf x` is judged by its value."""
    for word in assignments:
        name, _, value = word.text.partition("=")
        name = name.rstrip("+")
        if "[" in name:
            continue
        known = expand_static(value, scope.variables, lambda body: static_output(body, scope))
        if known is None:
            scope.variables.pop(name, None)
        else:
            scope.variables[name] = known


def resolve_name(words: list[Word], scope: Scope) -> list[Word] | str:
    """The words with the command name made concrete, or a reason when it cannot be."""
    first = words[0]
    text = first.text
    if first.dynamic:
        known = expand_static(text, scope.variables, lambda body: static_output(body, scope))
        if known is None:
            if first.substitutions:
                return "runs a command whose name is computed at run time"
            return words  # `$EDITOR file`: an unknown variable, judged by its arguments alone
        parts = known.split()
        if not parts:
            return words[1:] or [Word(raw=":", text=":")]
        return [Word(raw=p, text=p) for p in parts] + words[1:]
    if first.raw == text and "{" in text and "," in text:
        parts = [p for p in expand_braces(text) if p]
        return [Word(raw=p, text=p) for p in parts] + words[1:]
    # `[` (and `/usr/bin/[`) is the `test` command, not a pattern: a glob needs more than it.
    if first.raw == text and text.rsplit("/", 1)[-1] not in ("[", "[[") and re.search(r"[*?\[]", text):
        return "runs a command named by a wildcard pattern"
    return words


def static_output(body: str, scope: Scope) -> str | None:
    """What `$(body)` prints when that is knowable without running it (echo/printf of fixed
    text), else None."""
    commands = split_commands(body)
    if len(commands) != 1 or commands[0].redirects or commands[0].piped_from is not None:
        return None
    words = commands[0].words
    if not words or any(w.dynamic for w in words):
        return None
    name, args = words[0].text, [w.text for w in words[1:]]
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return printf_escapes(text) if escapes else text
    if name == "printf" and args:
        fmt, rest = args[0], args[1:]
        if "%" in fmt:
            return printf_escapes(
                fmt.replace("%s", "{}").format(*rest) if fmt.count("%s") == len(rest) else "".join(rest)
            )
        return printf_escapes(fmt)
    return None


def option_value(texts: list[str], options: tuple[str, ...]) -> str | None:
    for index, text in enumerate(texts):
        if text in options and index + 1 < len(texts):
            return texts[index + 1]
        for option in options:
            if option.startswith("--") and text.startswith(option + "="):
                return text[len(option) + 1 :]
    return None


def stdin_text(command: Command) -> tuple[str | None, bool]:
    """(text fed to stdin when it is knowable, whether stdin is fed at all)."""
    for redirect in command.redirects:
        if redirect.op in ("<<", "<<-", "<<<"):
            return redirect.body or "", True
        if redirect.op == "<" and redirect.target is not None:
            return None, redirect.target.process_subst
    source = command.piped_from
    if source is None:
        return None, False
    if source.piped_from is None and source.words and not any(w.dynamic for w in source.words):
        name, args = source.words[0].text, [w.text for w in source.words[1:]]
        if name in ("echo", "printf"):
            static = static_output(" ".join([name, *(_requote(a) for a in args)]), Scope())
            return static, True
        if name == "cat" and not args:
            return stdin_text(source)
    return None, True


def _requote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
