"""Code that runs code: shells (`bash -c`, a heredoc into `sh`), `source`, python, perl, node,
awk… and the inline code they are handed, judged for recursive deletes, decoded code being run,
shell commands passed to system()/subprocess and writes to protected files.

Each check takes the walk's `check_text` (command_danger) to judge the command lines it finds,
so the walk and these checks recurse into each other without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from myrm_tui.agent import command_rules as rules
from myrm_tui.agent.command_scope import Scope, stdin_text
from myrm_tui.shell_lex import Command, Word

# The walk's check of one command line (command_danger._check_text): a reason, or None.
CheckText = Callable[[str, Scope], str | None]

PYTHON = re.compile(r"^(?:python|python[23](?:\.\d+)?|pypy3?)$")
# Interpreter -> options that take inline code.
CODE_FLAGS = {
    "perl": ("e", "E"),
    "ruby": ("e",),
    "node": ("e", "p"),
    "nodejs": ("e", "p"),
    "deno": ("e",),
    "php": ("r",),
    "lua": ("e",),
    "Rscript": ("e",),
    "bun": ("e",),
}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


def shell_reason(command: Command, args: list[Word], scope: Scope, check_text: CheckText) -> str | None:
    index = 0
    inline = from_stdin = False
    while index < len(args):
        text = args[index].text
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if text == "--":
            index += 1
            break
        if re.fullmatch(r"[-+][a-zA-Z]+", text):
            inline = inline or "c" in text
            from_stdin = from_stdin or "s" in text
            index += 1
            continue
        if text.startswith("--"):
            index += 1
            continue
        break
    rest = args[index:]
    if inline:
        if not rest:
            return None
        if rest[0].substitutions:
            return "runs shell code produced by another command"
        return check_text(rest[0].text, scope)
    if rest and rest[0].text not in ("-", "/dev/stdin") and not from_stdin:
        if rest[0].process_subst:
            return "runs a shell script produced by another command"
        return None  # a script file: not visible from here
    piped, fed = stdin_text(command)
    if piped is not None:
        return check_text(piped, scope)
    if fed:
        return "pipes text into a shell (what runs cannot be checked)"
    return None


def source_reason(command: Command, args: list[Word]) -> str | None:
    if not args:
        return None
    if args[0].process_subst:
        return "runs a shell script produced by another command"
    if args[0].text in ("/dev/stdin", "-", "/proc/self/fd/0") and stdin_text(command)[1]:
        return "pipes text into a shell (what runs cannot be checked)"
    return None


def python_reason(command: Command, args: list[Word], scope: Scope, check_text: CheckText) -> str | None:
    index = 0
    while index < len(args):
        text = args[index].text
        if not text.startswith("-") or text == "-" or text == "--":
            index += text == "--"
            break
        if text.startswith("--"):
            index += 1
            continue
        for position in range(1, len(text)):
            letter = text[position]
            if letter == "m":
                return None  # a module: not visible from here
            if letter == "c":
                tail = text[position + 1 :]
                if tail:
                    return code_reason(tail, scope, check_text)
                code = args[index + 1] if index + 1 < len(args) else None
                if code is None:
                    return None
                if code.substitutions:
                    return "runs python code produced by another command"
                return code_reason(code.text, scope, check_text)
            if letter in "WXQ":
                index += 0 if text[position + 1 :] else 1
                break
        index += 1
    rest = args[index:]
    if rest and rest[0].text != "-":
        if rest[0].process_subst:
            return "runs a python script produced by another command"
        return None
    piped, fed = stdin_text(command)
    if piped is not None:
        return code_reason(piped, scope, check_text)
    if fed:
        return "pipes text into python (what runs cannot be checked)"
    return None


def inline_code_reason(
    command: Command, name: str, args: list[Word], scope: Scope, check_text: CheckText
) -> str | None:
    flags = CODE_FLAGS[name]
    texts = [w.text for w in args]
    for index, text in enumerate(texts):
        if text in ("--eval", "--print"):
            text = "-e"
        if not (re.fullmatch(r"-[a-zA-Z]+", text) and any(f in text for f in flags)):
            continue
        if index + 1 < len(args) and args[index + 1].substitutions:
            return f"runs {name} code produced by another command"
        reason = code_reason(texts[index + 1] if index + 1 < len(texts) else "", scope, check_text)
        if reason:
            return reason
        in_place = any(re.fullmatch(r"-[a-zA-Z]*i.*", t) for t in texts[: index + 1])
        if name == "perl" and in_place:
            return rules.writer_reason("sed", ["-i", *texts[index + 2 :]])
        return None
    piped, fed = stdin_text(command)
    if not [t for t in texts if not t.startswith("-")] and fed:
        if piped is not None:
            return code_reason(piped, scope, check_text)
        return f"pipes text into {name} (what runs cannot be checked)"
    return None


def awk_program(texts: list[str]) -> Iterator[str]:
    index = 0
    while index < len(texts):
        text = texts[index]
        if text in ("-f", "--file"):
            return
        if text in ("-v", "-F", "--assign", "--field-separator"):
            index += 2
            continue
        if text.startswith("-") and text != "-":
            index += 1
            continue
        yield text
        return


def code_reason(code: str | None, scope: Scope, check_text: CheckText) -> str | None:
    """Inline interpreter code: recursive-delete calls, decoded code being run, shell commands
    it passes to system()/subprocess, writes to protected files."""
    if not code:
        return None
    merged = re.sub(r"""(['"])\s*\+\s*\1""", "", code)  # "r" + "m -rf x" -> "rm -rf x"
    literals = rules.string_literals(merged) + re.findall(r"`([^`]*)`", merged)  # ruby/perl backticks
    bare = rules.without_literals(merged)
    if rules.RECURSIVE_DELETE_API.search(bare):
        return "recursive delete"
    if any(rules.RECURSIVE_DELETE_API.search(lit) for lit in literals) and rules.DYNAMIC_LOOKUP.search(bare):
        return "recursive delete"
    if rules.RUNS_CODE.search(bare) and rules.DECODES.search(merged):
        return "runs decoded code"
    if rules.PROCESS_CALL.search(bare):
        for literal in [*literals, " ".join(literals)]:
            reason = check_text(literal, scope)
            if reason:
                return reason
    if rules.WRITES.search(merged):
        for literal in literals:
            what = rules.sensitive_target(literal)
            if what:
                return f"writes to {what}"
    return None
