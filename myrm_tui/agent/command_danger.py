"""The destructive-command seatbelt: which command lines always ask, even in yolo.

Why it still exists next to the sandbox: the sandbox is off on machines without bubblewrap, and
even inside it the workspace itself is writable (`rm -rf .` there is still a disaster). So this
is the second line: it judges the programs a line actually runs, never its characters.
`grep -rn 'rm -r' .` runs grep and passes; `r''m -rf x`, `$(echo rm) -r x`, `bash -c "rm -r x"`,
`find . -delete` and `python -c "shutil.rmtree('x')"` all ask.

How: `shell_lex` splits the line into simple commands (words after quote removal, redirections,
pipeline stages, substitution bodies). Each command is unwrapped (sudo, env, nohup, timeout,
xargs, find -exec…), its name resolved (`$X` set earlier on the line, `$(echo rm)`, brace
expansion), and checked by the rule for that program (`command_rules`). Code that runs code is
followed: `bash -c`, `eval`, substitutions, heredocs into a shell, inline interpreter code.
What cannot be seen (a name computed by an unknown command, text piped into a shell) asks too.

What it cannot see: scripts and programs the line runs by file (`bash x.sh`, `make`, `npm test`),
which is why it is a seatbelt and the sandbox is the wall.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from myrm_tui.agent import command_rules as rules
from myrm_tui.shell_lex import (
    Command,
    Word,
    expand_braces,
    expand_static,
    printf_escapes,
    split_commands,
)

# Nested shells and substitutions followed before giving up (and asking): real commands nest two
# or three levels; more is either generated or an attempt to hide something.
MAX_DEPTH = 8
# Longer lines are still checked; this only bounds the work on a pathological megabyte of text.
MAX_CHECKED_CHARS = 200_000

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish"})
_PYTHON = re.compile(r"^(?:python|python[23](?:\.\d+)?|pypy3?)$")
# Interpreter -> options that take inline code.
_CODE_FLAGS = {
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
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_ROOT = frozenset({"sudo", "doas", "pkexec", "su", "run0", "sudoedit"})


@dataclass
class _Scope:
    depth: int = 0
    variables: dict[str, str] = field(default_factory=lambda: {"IFS": " "})


def destructive_reason(command: str) -> str | None:
    """A short phrase saying why `command` is dangerous ("recursive delete"), or None."""
    if not command or not command.strip():
        return None
    try:
        return _check_text(command[:MAX_CHECKED_CHARS], _Scope())
    except RecursionError:
        return "nests commands too deeply to check"


# -- walking a command line ---------------------------------------------------------------------


def _check_text(text: str, scope: _Scope) -> str | None:
    if scope.depth > MAX_DEPTH:
        return "nests commands too deeply to check"
    inner = _Scope(scope.depth + 1, dict(scope.variables))
    commands = split_commands(text)
    bomb = _fork_bomb(commands)
    if bomb:
        return bomb
    for command in commands:
        for word in [
            *command.words,
            *command.assignments,
            *(r.target for r in command.redirects if r.target is not None),
        ]:
            for body in word.substitutions:
                reason = _check_text(body, inner)
                if reason:
                    return reason
        reason = _redirect_reason(command)
        if reason:
            return reason
        if not command.words:
            _remember(command.assignments, inner)
            continue
        reason = _check_command(command, command.words, inner)
        if reason:
            return reason
    return None


def _remember(assignments: list[Word], scope: _Scope) -> None:
    """Track `NAME=value` statements so a later `$NAME -rf x` is judged by its value."""
    for word in assignments:
        name, _, value = word.text.partition("=")
        name = name.rstrip("+")
        if "[" in name:
            continue
        known = expand_static(value, scope.variables, lambda body: _static_output(body, scope))
        if known is None:
            scope.variables.pop(name, None)
        else:
            scope.variables[name] = known


def _fork_bomb(commands: list[Command]) -> str | None:
    for command in commands:
        calls_itself = bool(command.function and command.argv and command.argv[0] == command.function)
        if calls_itself and (command.background or command.piped_from is not None):
            return "fork bomb (a function that starts itself repeatedly)"
    return None


def _redirect_reason(command: Command) -> str | None:
    for redirect in command.redirects:
        if redirect.op in (">", ">>", ">|", "&>", "&>>", "<>", ">&") and redirect.target is not None:
            target = redirect.target.text
            if redirect.op == ">&" and (target.isdigit() or target == "-"):
                continue
            what = rules.sensitive_target(target)
            if what:
                return f"writes to {what}"
    return None


# -- one simple command -------------------------------------------------------------------------


def _check_command(command: Command, words: list[Word], scope: _Scope) -> str | None:
    checked = _resolve_name(words, scope)
    if isinstance(checked, str):
        return checked
    checked = _unwrap(checked, scope)
    if isinstance(checked, str):
        return checked
    words = checked
    if not words:
        return None
    name = os.path.basename(words[0].text)
    args = words[1:]
    texts = [w.text for w in args]

    if name in SHELLS:
        return _shell(command, args, scope)
    if name in ("eval",):
        if any(w.substitutions for w in args):
            return "evaluates code produced by another command"
        return _check_text(" ".join(texts), scope)
    if name in (".", "source"):
        return _source(command, args)
    if _PYTHON.match(name):
        return _python(command, args, scope)
    if name in _CODE_FLAGS:
        return _inline_code(command, name, args, scope)
    if name in _AWKS:
        program = next((t for t in _awk_program(texts)), None)
        return _code_reason(program, scope) if program else None
    if name in ("find",):
        return _find(args, scope)
    if name in ("xargs", "parallel"):
        return _xargs(name, args, scope)
    if name == "watch":
        return _watch(args, scope)
    if name == "ssh":
        return _ssh(args, scope)
    if name in ("flock", "script"):
        code = _option_value(texts, ("-c", "--command"))
        if code is not None:
            return _check_text(code, scope)
        if name == "flock" and len(args) > 1:
            return _check_command(command, args[1:], scope)
        return None
    reason = rules.program_reason(name, texts)
    if reason:
        return reason
    return rules.writer_reason(name, texts)


def _resolve_name(words: list[Word], scope: _Scope) -> list[Word] | str:
    """The words with the command name made concrete, or a reason when it cannot be."""
    first = words[0]
    text = first.text
    if first.dynamic:
        known = expand_static(text, scope.variables, lambda body: _static_output(body, scope))
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


def _static_output(body: str, scope: _Scope) -> str | None:
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


# Wrappers that run the rest of their arguments as a command: name -> options taking a value.
_WRAPPERS: dict[str, frozenset[str]] = {
    "nohup": frozenset(),
    "setsid": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "chrt": frozenset(),
    "taskset": frozenset({"-c", "--cpu-list"}),
    "busybox": frozenset(),
    "unbuffer": frozenset(),
    "catchsegv": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "doas": frozenset(),
    "firejail": frozenset(),
    "torsocks": frozenset(),
    "proxychains": frozenset(),
    "proxychains4": frozenset(),
    "npx": frozenset({"-p", "--package"}),
    "bunx": frozenset({"-p", "--package"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
}
# Wrappers whose first operand is a value, not the command (`timeout 5 rm`, `chrt 10 rm`).
_TAKES_OPERAND = frozenset({"timeout", "chrt"})


def _unwrap(words: list[Word], scope: _Scope) -> list[Word] | str:
    for _ in range(MAX_DEPTH * 2):
        if not words:
            return words
        name = os.path.basename(words[0].text)
        if name in _ROOT:
            return f"runs as root ({name})"
        if name == "systemd-run":
            return "runs a command as a system service, outside myrm's control"
        if name not in _WRAPPERS:
            return words
        if name == "command" and len(words) > 1 and words[1].text in ("-v", "-V"):
            return []  # `command -v rm` only looks the name up
        if name == "env":
            split = _option_value([w.text for w in words[1:]], ("-S", "--split-string"))
            if split is not None:
                return _check_text(split, scope) or []
        takes = _WRAPPERS[name]
        index = 1
        while index < len(words):
            text = words[index].text
            if text == "--":
                index += 1
                break
            if name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", text):
                index += 1
                continue
            if not text.startswith("-") or text == "-":
                break
            index += 2 if text in takes else 1
        if name in _TAKES_OPERAND and index < len(words):
            index += 1
        if name == "taskset" and index < len(words) and not any(w.text in ("-c", "--cpu-list") for w in words):
            index += 1  # the mask
        words = words[index:]
    return "wraps a command too many times to check"


def _option_value(texts: list[str], options: tuple[str, ...]) -> str | None:
    for index, text in enumerate(texts):
        if text in options and index + 1 < len(texts):
            return texts[index + 1]
        for option in options:
            if option.startswith("--") and text.startswith(option + "="):
                return text[len(option) + 1 :]
    return None


# -- code that runs code ------------------------------------------------------------------------


def _stdin_text(command: Command) -> tuple[str | None, bool]:
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
            static = _static_output(" ".join([name, *(_requote(a) for a in args)]), _Scope())
            return static, True
        if name == "cat" and not args:
            return _stdin_text(source)
    return None, True


def _requote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _shell(command: Command, args: list[Word], scope: _Scope) -> str | None:
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
        return _check_text(rest[0].text, scope)
    if rest and rest[0].text not in ("-", "/dev/stdin") and not from_stdin:
        if rest[0].process_subst:
            return "runs a shell script produced by another command"
        return None  # a script file: not visible from here
    piped, fed = _stdin_text(command)
    if piped is not None:
        return _check_text(piped, scope)
    if fed:
        return "pipes text into a shell (what runs cannot be checked)"
    return None


def _source(command: Command, args: list[Word]) -> str | None:
    if not args:
        return None
    if args[0].process_subst:
        return "runs a shell script produced by another command"
    if args[0].text in ("/dev/stdin", "-", "/proc/self/fd/0") and _stdin_text(command)[1]:
        return "pipes text into a shell (what runs cannot be checked)"
    return None


def _python(command: Command, args: list[Word], scope: _Scope) -> str | None:
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
                    return _code_reason(tail, scope)
                code = args[index + 1] if index + 1 < len(args) else None
                if code is None:
                    return None
                if code.substitutions:
                    return "runs python code produced by another command"
                return _code_reason(code.text, scope)
            if letter in "WXQ":
                index += 0 if text[position + 1 :] else 1
                break
        index += 1
    rest = args[index:]
    if rest and rest[0].text != "-":
        if rest[0].process_subst:
            return "runs a python script produced by another command"
        return None
    piped, fed = _stdin_text(command)
    if piped is not None:
        return _code_reason(piped, scope)
    if fed:
        return "pipes text into python (what runs cannot be checked)"
    return None


def _inline_code(command: Command, name: str, args: list[Word], scope: _Scope) -> str | None:
    flags = _CODE_FLAGS[name]
    texts = [w.text for w in args]
    for index, text in enumerate(texts):
        if text in ("--eval", "--print"):
            text = "-e"
        if not (re.fullmatch(r"-[a-zA-Z]+", text) and any(f in text for f in flags)):
            continue
        if index + 1 < len(args) and args[index + 1].substitutions:
            return f"runs {name} code produced by another command"
        reason = _code_reason(texts[index + 1] if index + 1 < len(texts) else "", scope)
        if reason:
            return reason
        in_place = any(re.fullmatch(r"-[a-zA-Z]*i.*", t) for t in texts[: index + 1])
        if name == "perl" and in_place:
            return rules.writer_reason("sed", ["-i", *texts[index + 2 :]])
        return None
    piped, fed = _stdin_text(command)
    if not [t for t in texts if not t.startswith("-")] and fed:
        if piped is not None:
            return _code_reason(piped, scope)
        return f"pipes text into {name} (what runs cannot be checked)"
    return None


def _awk_program(texts: list[str]):
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


def _code_reason(code: str | None, scope: _Scope) -> str | None:
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
            reason = _check_text(literal, scope)
            if reason:
                return reason
    if rules.WRITES.search(merged):
        for literal in literals:
            what = rules.sensitive_target(literal)
            if what:
                return f"writes to {what}"
    return None


# -- programs that run other programs -----------------------------------------------------------


def _find(args: list[Word], scope: _Scope) -> str | None:
    texts = [w.text for w in args]
    if "-delete" in texts:
        return "find -delete (deletes every match)"
    for index, text in enumerate(texts):
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(texts) and texts[end] not in (";", "+"):
                end += 1
            inner = args[index + 1 : end]
            if inner and os.path.basename(inner[0].text) in rules.DELETERS:
                return f"find runs {os.path.basename(inner[0].text)} on every match"
            if inner:
                reason = _check_command(Command(words=inner), inner, scope)
                if reason:
                    return reason
    return None


_XARGS_VALUE_OPTIONS = frozenset(
    {
        "-I",
        "-i",
        "-n",
        "-P",
        "-d",
        "-E",
        "-L",
        "-s",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "-j",
        "--jobs",
        "-S",
    }
)


def _xargs(name: str, args: list[Word], scope: _Scope) -> str | None:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in _XARGS_VALUE_OPTIONS else 1
    inner = args[index:]
    if name == "parallel":
        inner = [w for w in inner if w.text not in (":::", "::::")]
    if not inner:
        return None
    program = os.path.basename(inner[0].text)
    if program in rules.DELETERS:
        return f"{name} runs {program} on everything it reads"
    return _check_command(Command(words=inner), inner, scope)


def _watch(args: list[Word], scope: _Scope) -> str | None:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in ("-n", "--interval", "-d", "-q") else 1
    return _check_text(" ".join(w.text for w in args[index:]), scope) if index < len(args) else None


_SSH_VALUE_OPTIONS = frozenset("bcDEeFIiJLlmOopQRSWw")


def _ssh(args: list[Word], scope: _Scope) -> str | None:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in _SSH_VALUE_OPTIONS else 1
    remote = [w.text for w in args[index + 1 :]]
    return _check_text(" ".join(remote), scope) if remote else None
