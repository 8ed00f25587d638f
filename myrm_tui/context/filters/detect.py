"""Which command produced an output, and what shape a text has.

Why parse the command line ourselves: the agent's bash calls are rarely a bare `pytest`; they
are `cd pkg && PYTHONPATH=. uv run pytest -x 2>&1 | tail -50`. We tokenise with shlex (so
quotes are respected), split on control operators, strip redirections, env assignments and
wrappers (`sudo`, `time`, `timeout 60`, `uv run`, `python -m`, `npx`), and name the tool whose
output dominates. Sniffing looks at a bounded sample so a 10 MB output costs the same as 64 KB
(except the JSON parse, which is linear and C-fast).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

# Bytes of content examined by the sniffers: enough for 100+ lines of any format.
SNIFF_CHARS = 64 * 1024
# Lines examined by line-shape sniffers.
SNIFF_LINES = 40

_CONTROL = {";", "&&", "||", "|", "&", "|&", "(", ")", "{", "}", "!"}
_PIPE = {"|", "|&"}
_FD_BEFORE_REDIRECT = re.compile(r"(?<![\w$-])\d+(?=[<>])")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Programs that run another command: skip them and their own options.
_WRAPPERS = {"sudo", "time", "nice", "nohup", "command", "exec", "stdbuf", "env", "ionice", "chronic"}
_WRAPPER_ARG_OPTS = {"-n", "-u", "-g", "-c", "-o", "-e"}
# Commands that do not produce the output we care about (navigation, plumbing, pagers).
_TRANSPARENT = {
    "cd",
    "pushd",
    "popd",
    "export",
    "set",
    "source",
    ".",
    "true",
    ":",
    "unset",
    "ulimit",
    "tail",
    "head",
    "tee",
    "less",
    "more",
    "cat",
    "sort",
    "uniq",
    "wc",
    "cut",
    "sed",
    "awk",
    "tr",
    "column",
    "nl",
    "echo",
    "printf",
    "sleep",
    "clear",
    "ts",
}
_PYTHON = re.compile(r"^(python|python3|python3\.\d+|py|pypy3?)$")
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("rye", "run"),
}
_RUNNER_PROGRAMS = {"npx", "bunx", "pnpx", "dotenv"}
_GIT_OPTS_WITH_ARG = {"-C", "-c", "--git-dir", "--work-tree", "--namespace"}
_COMPILERS = {"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "icc", "icx"}
_LISTERS = {"ls", "find", "tree", "fd", "fdfind", "exa", "eza", "dir"}
_GREPS = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"}


@dataclass(frozen=True)
class Command:
    """One simple command after stripping wrappers: `tool` is the normalised name
    (e.g. "pytest" for `python -m pytest`, "pip" for `uv pip`), `args` what follows it."""

    tool: str
    args: tuple[str, ...]

    @property
    def sub(self) -> str:
        """First non-option argument (git/npm/cargo subcommand), or ""."""
        return next((a for a in self.args if not a.startswith("-")), "")


def split_command_line(command: str) -> list[list[list[str]]]:
    """Split a shell line into chains of pipelines of argv lists.

    `a && b | c; d` → [[[a]], [[b], [c]], [[d]]] — each chain element is one pipeline.
    Redirections (`2>&1`, `> out.txt`, `< in`) are removed. Unbalanced quotes fall back to a
    plain whitespace split so detection still works on a malformed line.
    """
    text = _FD_BEFORE_REDIRECT.sub("", command.replace("\\\n", " ").replace("\n", " ; "))
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    chains: list[list[list[str]]] = [[[]]]
    skip_target = False
    for tok in tokens:
        if skip_target:
            skip_target = False
            if not (tok and set(tok) <= set(";&|()<>")):
                continue  # the redirection's file or fd
        if tok and set(tok) <= set("<>&") and ("<" in tok or ">" in tok):
            skip_target = True
        elif tok in _PIPE:
            chains[-1].append([])
        elif tok in _CONTROL or (tok and set(tok) <= set(";&|()")):
            chains.append([[]])
        else:
            chains[-1][-1].append(tok)
    return [[argv for argv in chain if argv] for chain in chains if any(chain)]


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def normalize(argv: list[str]) -> Command | None:
    """Strip env assignments, wrappers and runners; name the tool (None for an empty argv)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        base = _basename(word)
        if _ASSIGNMENT.match(word):
            i += 1
        elif base in _WRAPPERS:
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or _ASSIGNMENT.match(argv[i])):
                i += 2 if argv[i] in _WRAPPER_ARG_OPTS else 1
        elif base == "timeout":
            i += 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 1
            i += 1  # the duration
        elif base in _RUNNER_PROGRAMS:
            i += 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 1
        elif i + 1 < len(argv) and (base, argv[i + 1]) in _RUNNERS:
            i += 2
            while i < len(argv) and argv[i].startswith("-"):
                # `uv run --with x pytest`: options that take a value
                i += 2 if argv[i] in {"--with", "--python", "-p", "--env-file", "--group", "--extra"} else 1
        else:
            break
    rest = argv[i:]
    if not rest:
        return None
    base = _basename(rest[0])
    args = rest[1:]
    if _PYTHON.match(base) or base.startswith("python"):
        j = 0
        while j < len(args) and args[j].startswith("-") and args[j] != "-m":
            j += 1
        if j + 1 < len(args) and args[j] == "-m":
            return _name(args[j + 1], tuple(args[j + 2 :]))
        return Command("python", tuple(args))
    if base == "uv" and args[:1] == ["pip"]:
        return Command("pip", tuple(args[1:]))
    if base == "git":
        j = 0
        while j < len(args) and args[j].startswith("-"):
            j += 2 if args[j] in _GIT_OPTS_WITH_ARG else 1
        if j < len(args) and args[j] == "grep":
            return Command("grep", tuple(args[j + 1 :]))
        return Command("git", tuple(args[j:]))
    return _name(base, tuple(args))


def _name(base: str, args: tuple[str, ...]) -> Command:
    if base in {"py.test", "pytest", "pytest-3"}:
        return Command("pytest", args)
    if base in {"pip", "pip3"} or re.match(r"^pip3\.\d+$", base):
        return Command("pip", args)
    if base in {"make", "gmake", "ninja"}:
        return Command("make", args)
    if base in _COMPILERS:
        return Command("cc", args)
    if base in {"docker", "podman", "buildah"}:
        words = [a for a in args if not a.startswith("-")]
        if words[:1] in (["build"], ["image"]) or words[:2] in (["buildx", "build"], ["compose", "build"]):
            return Command("docker-build", args)
        return Command("docker", args)
    if base in _LISTERS:
        return Command({"fdfind": "fd", "exa": "ls", "eza": "ls", "dir": "ls"}.get(base, base), args)
    if base in _GREPS:
        return Command("grep", args)
    if base in {"jest", "vitest", "mocha", "ava"}:
        return Command("jest", args)
    return Command(base, args)


# Tools some compressor understands; anything else does not decide the output's shape.
KNOWN_TOOLS = {
    "git",
    "pytest",
    "unittest",
    "npm",
    "yarn",
    "pnpm",
    "bun",
    "jest",
    "pip",
    "cargo",
    "make",
    "cc",
    "docker-build",
    "ls",
    "find",
    "tree",
    "fd",
    "grep",
    "tox",
    "nox",
}


def detect_command(command: str) -> Command | None:
    """The command whose output most likely fills the result.

    Across a chain (`;`, `&&`) the last known tool wins (`cd x && pytest`); inside a pipeline
    the first known tool wins (`pytest | tail`, `git log | head`), because later stages only
    filter its lines. Unknown tools give None (structure sniffing decides then).
    """
    if not command or not command.strip():
        return None
    for chain in reversed(split_command_line(command)):
        for argv in chain:
            cmd = normalize(argv)
            if cmd is None or cmd.tool in _TRANSPARENT:
                continue
            if cmd.tool in KNOWN_TOOLS:
                return cmd
            if cmd.tool not in _TRANSPARENT:
                break  # an unknown producer fills this pipeline; look at the previous chain
    return None


# --- content sniffing ----------------------------------------------------------------------

_TIMESTAMP = re.compile(
    r"^\s*(?:\[\s*)?(?:"
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"  # ISO 8601
    r"|\d{2}/\w{3}/\d{4}:\d{2}:\d{2}"  # Apache
    r"|\w{3} [ \d]\d \d{2}:\d{2}:\d{2}"  # syslog
    r"|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s"  # bare time
    r"|\d{10}(?:\.\d+)?\s"  # epoch
    r")"
)
_LEVEL_PREFIX = re.compile(r"^\s*\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b[\]:]?\s")
_YAML_LINE = re.compile(r"^\s*(?:-\s+)?[\w.\-\"'/$@]+\s*:(?:\s|$)|^\s*-\s+\S|^\s*#|^\s*$")
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_CODE_LINE = re.compile(
    r"^\s*(?:(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|func|interface|struct|enum|trait|impl|"
    r"module|package|namespace|type)\b|import\s|from\s+\S+\s+import\s|#include\s|use\s+\w|"
    r"(?:pub(?:\(crate\))?|public|private|protected|static|const|let|var)\s+\w)"
)
_CODE_SYMBOLS = re.compile(r"[{};()]\s*$")


def _sample_lines(text: str) -> list[str]:
    lines = text[:SNIFF_CHARS].splitlines()
    if len(text) > SNIFF_CHARS and lines:
        lines.pop()  # probably a cut line
    return [ln for ln in lines if ln.strip()][:SNIFF_LINES]


def looks_like_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return True


def table_delimiter(lines: list[str]) -> str | None:
    """`,`, `\\t`, `;` or `|` when every sampled line has the same number (≥1) of it."""
    if len(lines) < 3:
        return None
    for delim in ("\t", ",", ";", "|"):
        counts = {_count_outside_quotes(ln, delim) for ln in lines[:SNIFF_LINES]}
        if len(counts) == 1 and counts.pop() >= 1:
            return delim
    return None


def _count_outside_quotes(line: str, delim: str) -> int:
    if '"' not in line:
        return line.count(delim)
    return re.sub(r'"(?:[^"]|"")*"', "", line).count(delim)


def sniff_content(text: str) -> str | None:
    """The content's structure: "json", "xml", "html", "log", "csv", "tsv", "yaml",
    "markdown", "code" — or None for plain text."""
    head = text.lstrip()[:SNIFF_CHARS]
    if not head:
        return None
    if head[0] in "{[" and looks_like_json(text):
        return "json"
    lines = _sample_lines(text)
    if not lines:
        return None
    lowered = head[:2048].lower()
    if head.startswith("<"):
        if "<!doctype html" in lowered or "<html" in lowered:
            return "html"
        if head.startswith("<?xml") or re.match(r"<[A-Za-z_][\w:.-]*[\s>/]", head):
            return "html" if re.search(r"<(?:div|body|head|span|p|a|table)\b", lowered) else "xml"
    stamped = sum(1 for ln in lines if _TIMESTAMP.match(ln) or _LEVEL_PREFIX.match(ln))
    if stamped >= 3 and stamped * 10 >= len(lines) * 5:
        return "log"
    delim = table_delimiter(lines)
    if delim is not None and delim != "|":
        return "tsv" if delim == "\t" else "csv"
    code = sum(1 for ln in lines if _CODE_LINE.match(ln))
    headings = sum(1 for ln in lines if _MD_HEADING.match(ln))
    if headings >= 1 and (headings >= 2 or "```" in head) and code * 3 < len(lines):
        return "markdown"
    if code >= 3 or (code >= 1 and sum(1 for ln in lines if _CODE_SYMBOLS.search(ln)) * 3 >= len(lines)):
        return "code"
    if lines[0].strip() == "---" or (
        len(lines) >= 3
        and sum(1 for ln in lines if _YAML_LINE.match(ln)) * 10 >= len(lines) * 8
        and any(":" in ln for ln in lines)
        and not any(ln.rstrip().endswith(("{", ";")) for ln in lines)
    ):
        return "yaml"
    if delim == "|" and len(lines) >= 3:
        return "markdown" if lines[0].lstrip().startswith("|") else None
    return None
