"""The destructive-command seatbelt: which command lines always ask, even in yolo.

Why it still exists next to the sandbox: the sandbox is off on machines without bubblewrap, and
even inside it the workspace itself is writable (`rm -rf .` there is still a disaster). So this
is the second line: it judges the programs a line actually runs, never its characters.
`grep -rn 'rm -r' .` runs grep and passes; `r''m -rf x`, `$(echo rm) -r x`, `bash -c "rm -r x"`,
`find . -delete` and `python -c "shutil.rmtree('x')"` all ask.

How: `shell_lex` splits the line into simple commands (words after quote removal, redirections,
pipeline stages, substitution bodies). Each command is unwrapped (sudo, env, nohup, timeout,
xargs, find -exec…), its name resolved (`$X` set earlier on the line, `$(echo rm)`, brace
expansion), and checked by the rule for that program (`seatbelt_rules`). Code that runs code is
followed: `bash -c`, `eval`, substitutions, heredocs into a shell, inline interpreter code.
What cannot be seen (a name computed by an unknown command, text piped into a shell) asks too.

What it cannot see: scripts and programs the line runs by file (`bash x.sh`, `make`, `npm test`),
which is why it is a seatbelt and the sandbox is the wall.

This module is the walk; what is known without running anything is command_scope, code that
runs code (shells, python, perl…) is interpreters, per-program rules are seatbelt_rules.
"""

from __future__ import annotations

import os
import re

from myrm_tui.agent.permissions import seatbelt_rules as rules
from myrm_tui.agent.permissions.command_scope import Scope, option_value, remember, resolve_name
from myrm_tui.agent.permissions.interpreters import (
    AWKS,
    CODE_FLAGS,
    EDITORS,
    PYTHON,
    alias_reason,
    awk_program,
    code_reason,
    editor_reason,
    inline_code_reason,
    make_reason,
    python_reason,
    sed_reason,
    shell_reason,
    source_reason,
    trap_reason,
)
from myrm_tui.shell_lex import Command, Word, split_commands

# Nested shells and substitutions followed before giving up (and asking): real commands nest two
# or three levels; more is either generated or an attempt to hide something.
MAX_DEPTH = 8
# Longer lines are still checked; this only bounds the work on a pathological megabyte of text.
MAX_CHECKED_CHARS = 200_000

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish"})
_ROOT = frozenset({"sudo", "doas", "pkexec", "su", "run0", "sudoedit"})


def destructive_reason(command: str) -> str | None:
    """A short phrase saying why `command` is dangerous ("recursive delete"), or None."""
    if not command or not command.strip():
        return None
    try:
        return _check_text(command[:MAX_CHECKED_CHARS], Scope())
    except RecursionError:
        return "nests commands too deeply to check"


# -- walking a command line ---------------------------------------------------------------------


def _check_text(text: str, scope: Scope) -> str | None:
    if scope.depth > MAX_DEPTH:
        return "nests commands too deeply to check"
    inner = Scope(scope.depth + 1, dict(scope.variables))
    commands = split_commands(text)
    bomb = _fork_bomb(commands, text)
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
            remember(command.assignments, inner)
            continue
        reason = _check_command(command, command.words, inner)
        if reason:
            return reason
    return None


# An endless shell loop whose body starts a command in the background and does not wait for it:
# `while true; do cmd & done` starts processes as fast as it can fork.
_ENDLESS_LOOP = re.compile(
    r"\b(?:while\s+(?:true|:|\[\s*1\s*\]|\(\(\s*1\s*\)\))|until\s+false|for\s*\(\(\s*;\s*;\s*\)\))"
    r"\s*;?\s*do\b(?P<body>[\s\S]*?)\bdone\b"
)
_BACKGROUND = re.compile(r"(?<![&|>])&(?![&>])")


def _fork_bomb(commands: list[Command], text: str = "") -> str | None:
    for loop in _ENDLESS_LOOP.finditer(text):
        body = loop.group("body")
        if _BACKGROUND.search(body) and not re.search(r"\bwait\b", body):
            return "fork bomb (starts background processes in an endless loop)"
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


def _check_command(command: Command, words: list[Word], scope: Scope) -> str | None:
    checked = resolve_name(words, scope)
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
        return shell_reason(command, args, scope, _check_text)
    if name in ("eval",):
        if any(w.substitutions for w in args):
            return "evaluates code produced by another command"
        return _check_text(" ".join(texts), scope)
    if name in (".", "source"):
        return source_reason(command, args)
    if PYTHON.match(name):
        return python_reason(command, args, scope, _check_text)
    if name in CODE_FLAGS:
        return inline_code_reason(command, name, args, scope, _check_text)
    if name in AWKS:
        program = next((t for t in awk_program(texts)), None)
        return code_reason(program, scope, _check_text) if program else None
    if name == "trap":
        return trap_reason(args, scope, _check_text)
    if name == "alias":
        return alias_reason(args, scope, _check_text)
    if name in ("sed", "gsed"):
        reason = sed_reason(texts, scope, _check_text)
        if reason:
            return reason
    if name in EDITORS:
        return editor_reason(texts, scope, _check_text)
    if name in ("make", "gmake", "remake"):
        return make_reason(command, texts, scope, _check_text)
    if name in _CONTAINER_CLIS:
        reason = _container_command(args, scope)
        if reason:
            return reason
    if name in ("find",):
        return _find(args, scope)
    if name in ("xargs", "parallel"):
        return _xargs(name, args, scope)
    if name == "watch":
        return _watch(args, scope)
    if name == "ssh":
        return _ssh(args, scope)
    if name in ("flock", "script"):
        code = option_value(texts, ("-c", "--command"))
        if code is not None:
            return _check_text(code, scope)
        if name == "flock" and len(args) > 1:
            return _check_command(command, args[1:], scope)
        return None
    reason = rules.program_reason(name, texts)
    if reason:
        return reason
    return rules.writer_reason(name, texts)


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


def _unwrap(words: list[Word], scope: Scope) -> list[Word] | str:
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
            split = option_value([w.text for w in words[1:]], ("-S", "--split-string"))
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


# -- programs that run other programs -----------------------------------------------------------


def _find(args: list[Word], scope: Scope) -> str | None:
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


def _xargs(name: str, args: list[Word], scope: Scope) -> str | None:
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


_CONTAINER_CLIS = frozenset({"docker", "podman", "nerdctl"})
# Options of `docker run/create/exec` that take a value as the next word (`--opt=value` is one word).
_CONTAINER_VALUE_OPTIONS = frozenset(
    {
        "-a",
        "--attach",
        "-c",
        "--cpu-shares",
        "--cidfile",
        "--cpus",
        "--cpuset-cpus",
        "--device",
        "--dns",
        "-e",
        "--env",
        "--env-file",
        "--entrypoint",
        "--expose",
        "--gpus",
        "--group-add",
        "-h",
        "--hostname",
        "--ip",
        "--ipc",
        "-l",
        "--label",
        "--label-file",
        "--log-driver",
        "--log-opt",
        "-m",
        "--memory",
        "--mount",
        "--name",
        "--network",
        "--net",
        "--pid",
        "--platform",
        "-p",
        "--publish",
        "--pull",
        "--restart",
        "--runtime",
        "--security-opt",
        "--shm-size",
        "--stop-signal",
        "--tmpfs",
        "-u",
        "--user",
        "--ulimit",
        "--userns",
        "--uts",
        "-v",
        "--volume",
        "--volumes-from",
        "-w",
        "--workdir",
        "--add-host",
        "--cap-add",
        "--cap-drop",
        "--health-cmd",
        "--init-path",
        "--detach-keys",
        "--stop-timeout",
    }
)


def _container_command(args: list[Word], scope: Scope) -> str | None:
    """The command a `docker run IMAGE CMD…` (or `exec CONTAINER CMD…`) runs in the container, judged
    like any other: with the workspace mounted, `rm -rf` there deletes it just the same."""
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in _CONTAINER_VALUE_OPTIONS else 1
    if index >= len(args) or args[index].text not in ("run", "create", "exec"):
        return None
    index += 1
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in _CONTAINER_VALUE_OPTIONS else 1
    inner = args[index + 1 :]  # after the image (or the container for exec)
    return _check_command(Command(words=inner), inner, scope) if inner else None


def _watch(args: list[Word], scope: Scope) -> str | None:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        index += 2 if args[index].text in ("-n", "--interval", "-d", "-q") else 1
    return _check_text(" ".join(w.text for w in args[index:]), scope) if index < len(args) else None


_SSH_VALUE_OPTIONS = frozenset("bcDEeFIiJLlmOopQRSWw")


def _ssh(args: list[Word], scope: Scope) -> str | None:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in _SSH_VALUE_OPTIONS else 1
    remote = [w.text for w in args[index + 1 :]]
    return _check_text(" ".join(remote), scope) if remote else None
