"""Code that runs code: shells (`bash -c`, a heredoc into `sh`), `source`, python, perl, node,
awk… and the inline code they are handed, judged for recursive deletes, decoded code being run,
shell commands passed to system()/subprocess and writes to protected files.

Each check takes the walk's `check_text` (seatbelt) to judge the command lines it finds,
so the walk and these checks recurse into each other without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from myrm_tui.agent.permissions import seatbelt_rules as rules
from myrm_tui.agent.permissions.command_scope import Scope, stdin_text
from myrm_tui.shell_lex import Command, Word

# The walk's check of one command line (seatbelt._check_text): a reason, or None.
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
    bomb = fork_loop_reason(code)
    if bomb:
        return bomb
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


# -- programs whose arguments or input hold shell commands --------------------------------------
# (`trap CODE SIG`, `alias x='…'`, sed's `e` command, vim's `-c '!…'`, a makefile read from stdin)

FORK_IN_LOOP = re.compile(
    r"\b(?:while|until|loop|for\s*\(\s*;\s*;\s*\))\b[\s\S]*\bfork\b|\bfork\b[\s\S]*\b(?:while|until)\b"
)


def fork_loop_reason(code: str) -> str | None:
    """Inline code that forks in an endless loop (`perl -e 'fork while 1'`, a python `while True:
    os.fork()`): a fork bomb, whatever the language."""
    return "fork bomb (forks in a loop)" if FORK_IN_LOOP.search(code) else None


def trap_reason(args: list[Word], scope: Scope, check_text: CheckText) -> str | None:
    """`trap CODE SIGNAL…`: CODE runs later (at EXIT, on a signal) as shell code."""
    texts = [w.text for w in args]
    if not texts or texts[0] in ("-p", "-l", "--", "-"):
        texts = texts[1:] if texts[:1] == ["--"] else []
    if not texts:
        return None
    if args[-len(texts)].substitutions:
        return "sets a trap whose code is produced by another command"
    return check_text(texts[0], scope)


def alias_reason(args: list[Word], scope: Scope, check_text: CheckText) -> str | None:
    """`alias x='rm -rf'`: what the alias expands to is judged as the command it will be."""
    for word in args:
        name, sep, value = word.text.partition("=")
        if not sep or not name:
            continue
        if word.substitutions:
            return "defines an alias produced by another command"
        reason = check_text(value + " __alias_operand__", scope)
        if reason:
            return reason
    return None


_SED_VALUE_OPTIONS = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})


def sed_scripts(texts: list[str]) -> list[str]:
    """The scripts a sed command line runs: every -e/--expression, else its first operand."""
    scripts, operands, index, has_file = [], [], 0, False
    while index < len(texts):
        text = texts[index]
        if text in ("-e", "--expression") and index + 1 < len(texts):
            scripts.append(texts[index + 1])
            index += 2
            continue
        if text.startswith("--expression="):
            scripts.append(text.split("=", 1)[1])
        elif text in ("-f", "--file") or text.startswith("--file="):
            has_file = True
            index += 2 if text in ("-f", "--file") else 1
            continue
        elif re.fullmatch(r"-[a-zA-Z]*e", text) and index + 1 < len(texts):
            scripts.append(texts[index + 1])  # -ne 'script'
            index += 2
            continue
        elif text in _SED_VALUE_OPTIONS:
            index += 2
            continue
        elif not text.startswith("-") or text == "-":
            operands.append(text)
        index += 1
    if not scripts and not has_file and operands:
        scripts.append(operands[0])
    return scripts


def sed_reason(texts: list[str], scope: Scope, check_text: CheckText) -> str | None:
    """GNU sed's `e COMMAND` runs COMMAND, `e` alone and the `s///e` flag run the pattern space
    (text from the input: not checkable), `w FILE` writes a file."""
    for script in sed_scripts(texts):
        for kind, value in _sed_commands(script):
            if kind == "e":
                if not value.strip():
                    return "sed runs its input as shell commands (e)"
                reason = check_text(value, scope)
                if reason:
                    return reason
            elif kind == "s-e":
                return "sed runs its input as shell commands (s///e)"
            elif kind == "w":
                what = rules.sensitive_target(value.strip())
                if what:
                    return f"writes to {what}"
    return None


def _sed_commands(script: str) -> Iterator[tuple[str, str]]:
    """(command letter, its argument) for the commands of a sed script that matter here: `e`, an
    `s` with the `e` flag ("s-e"), and `w` (also the `s` flag `w FILE`)."""
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;{}!":
            i += 1
        i = _skip_sed_address(script, i)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return
        letter = script[i]
        i += 1
        if letter in "aicerRwWbtT:":
            end = script.find("\n", i)
            end = n if end < 0 else end
            value = script[i:end]
            if letter in "btT:":
                semi = value.find(";")
                end = i + semi if semi >= 0 else end
            elif letter == "e":
                yield "e", value
            elif letter in "wW":
                yield "w", value
            i = end
        elif letter in "sy" and i < n:
            delimiter = script[i]
            i += 1
            for _ in range(2):
                while i < n and script[i] != delimiter:
                    i += 2 if script[i] == "\\" else 1
                i += 1
            flags_start = i
            while i < n and script[i] not in ";\n}":
                i += 1
            flags = script[flags_start:i]
            if letter == "s" and "w" in flags:
                yield "w", flags[flags.index("w") + 1 :]
            elif letter == "s" and "e" in flags:
                yield "s-e", ""


def _skip_sed_address(script: str, i: int) -> int:
    n = len(script)
    for _ in range(2):
        if i < n and script[i] in "/\\":
            delimiter = "/" if script[i] == "/" else (script[i + 1] if i + 1 < n else "/")
            i += 1 if script[i] == "/" else 2
            while i < n and script[i] != delimiter:
                i += 2 if script[i] == "\\" else 1
            i += 1
            while i < n and script[i] in "IM":
                i += 1
        else:
            while i < n and (script[i].isdigit() or script[i] in "$~+"):
                i += 1
        if i < n and script[i] == ",":
            i += 1
            continue
        break
    return i


EDITORS = frozenset({"vi", "vim", "nvim", "ex", "view", "gvim", "vimdiff", "rvim", "evim"})
_VIM_SHELL = re.compile(r"(?:^|[|\s:])!(.*)$|\bsystem(?:list)?\s*\(|\bterminal\b|\bterm(?:open)?\b")


def editor_reason(texts: list[str], scope: Scope, check_text: CheckText) -> str | None:
    """vim's `-c CMD`, `--cmd CMD` and `+CMD` run ex commands: `!cmd` and `system()` start a shell."""
    commands = []
    for index, text in enumerate(texts):
        if text in ("-c", "--cmd") and index + 1 < len(texts):
            commands.append(texts[index + 1])
        elif text.startswith("+") and len(text) > 1:
            commands.append(text[1:])
    for ex in commands:
        match = _VIM_SHELL.search(ex)
        if match is None:
            continue
        shell = match.group(1)
        if shell is None:
            literals = rules.string_literals(ex)
            for literal in literals:
                reason = check_text(literal, scope)
                if reason:
                    return reason
            if not literals:
                return "the editor runs a shell command built at run time"
            continue
        reason = check_text(shell, scope)
        if reason:
            return reason
    return None


_MAKEFILE_FROM_STDIN = frozenset({"-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"})


def make_reason(command: Command, texts: list[str], scope: Scope, check_text: CheckText) -> str | None:
    """A makefile read from stdin (`make -f /dev/stdin <<EOF`) or given with `--eval`: its recipe
    lines are shell commands, judged as such; one that cannot be read asks."""
    makefiles: list[str] = []
    evals: list[str] = []
    for index, text in enumerate(texts):
        if text in ("-f", "--file", "--makefile") and index + 1 < len(texts):
            makefiles.append(texts[index + 1])
        elif text.startswith(("--file=", "--makefile=", "--eval=")):
            key, _, value = text.partition("=")
            (evals if key == "--eval" else makefiles).append(value)
        elif text == "-E" and index + 1 < len(texts):
            evals.append(texts[index + 1])
        elif text.startswith("-f") and len(text) > 2:
            makefiles.append(text[2:])
    bodies = list(evals)
    if any(m in _MAKEFILE_FROM_STDIN for m in makefiles):
        piped, fed = stdin_text(command)
        if piped is None:
            return "runs a makefile produced by another command" if fed else None
        bodies.append(piped)
    for body in bodies:
        for line in body.replace("\\n", "\n").replace("\\t", "\t").splitlines():
            recipe = (
                line[1:] if line.startswith("\t") else (line.split(";", 1)[1] if ":" in line and ";" in line else "")
            )
            recipe = recipe.lstrip("@-+ ")
            if recipe.strip():
                reason = check_text(recipe, scope)
                if reason:
                    return reason
    return None
