"""Allow and deny rules for tool calls (`Bash(git status:*)`, `Edit(src/**)`): parse, match, store.

Why rules next to the policy: "ask for every bash call" trains people to say yes without reading;
a short list of commands the user has vouched for once (per workspace, or in their own config)
keeps the questions for the calls that deserve one.

Rules are trusted input, so they only come from the user: their config file (`[permissions]`,
allow and deny) and the rules store in their config folder (what "Always allow" in the TUI
writes, keyed by the resolved workspace path, like the trust store). A workspace's own
`.myrm/config.toml` may add deny rules only: stricter, never looser.

Grammar (one rule per string):

- `Bash` every bash call; `Bash(git status)` exactly that command; `Bash(git status:*)` that
  command followed by any arguments. Words are compared after quote removal, so the rule
  `Bash(git status:*)` and the line `git 'status' -s` agree.
- `Edit(GLOB)` file_edit and file_write; `Write(GLOB)` file_write only; bare `Edit` / `Write` any
  path. GLOB is relative to the workspace (`*` inside one folder, `**` across folders, `?` one
  character); one starting with `/` or `~/` is an absolute path. Paths are compared resolved
  (symlinks, `..`), so a link cannot dress a path up as another.
- `WebFetch(domain:docs.python.org)` web_fetch of that host exactly; `WebFetch(domain:*.python.org)`
  its subdomains (not the bare domain); bare `WebFetch` any host. Hosts compare lowercased,
  without a trailing dot; the port and path do not matter.

How a command line is judged (shell_lex splits it into simple commands):

- allow: every simple command on the line must match an allow rule, and the line must not do what
  no prefix can vouch for: `$(...)` or backticks, `<(...)`, variable assignments (`PATH=...`,
  `LD_PRELOAD=...`), function definitions, or redirections that write a file. So
  `git status && rm -rf x` is not allowed by `Bash(git status:*)`.
- deny: a rule matches if any program the line visibly runs matches it, also inside `$(...)`,
  `bash -c "..."`, `eval`, and behind wrappers like `sudo`, `env`, `timeout`, `xargs`; the program
  is compared by its base name (`/bin/rm` is `rm`). A name computed at run time escapes a deny
  rule: deny rules are a convenience, the sandbox is the wall.

Deny beats allow. The destructive-command seatbelt and the protected paths are not rules: they
hold whatever the rules say (approvals.decide, tools/paths.py).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from myrm_tui.settings.atomic_file import atomic_write_text
from myrm_tui.settings.permission_syntax import MCP_PREFIX, MCP_RULE, Rule, RuleError, parse_rule
from myrm_tui.shell_lex import Command, Word, nested_substitutions, split_commands

# The rule word used when "Always allow" is offered for a tool call.
SUGGESTED_RULE_TOOL = {"bash": "Bash", "file_edit": "Edit", "file_write": "Write", "web_fetch": "WebFetch"}

RULES_FILE_NAME = "permission-rules.json"
RULES_FILE_VERSION = 1
# The walk into `$(...)`, `bash -c` and `eval` for deny rules stops here (real lines nest two or
# three levels; the seatbelt in command_danger asks about deeper nesting anyway).
MAX_DENY_DEPTH = 8
# Words a suggested prefix may hold: "git status", "npm run build"; more is a whole command line.
MAX_SUGGESTED_WORDS = 3

_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_:-]*$")
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
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


class RulesStoreError(Exception):
    """The rules store cannot be read or updated without losing what is in it."""


# ---------------------------------------------------------------- rules
# The grammar (Rule, parse_rule, RuleError) is settings/permission_syntax.py: the loader checks
# rules when it reads a config file, below the agent.


# ---------------------------------------------------------------- what a call touches


@dataclass(frozen=True)
class RuleCall:
    """The facts of one tool call that rules are matched against."""

    tool: str  # bash, file_edit, file_write, …
    command: str | None = None  # bash
    path: Path | None = None  # file tools: resolved
    workspace: Path | None = None  # resolved
    host: str | None = None  # web_fetch: the URL's host, lowercased


def call_for(tool: str, args: dict, workspace: Path) -> RuleCall:
    """The rule facts of a call: the command line of bash, the resolved path of a file tool."""
    root = Path(workspace).resolve()
    if tool == "bash":
        return RuleCall(tool, command=str(args.get("command", "")), workspace=root)
    if tool == "web_fetch":
        return RuleCall(tool, workspace=root, host=url_host(str(args.get("url", ""))))
    raw = args.get("path")
    if isinstance(raw, str) and raw.strip():
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = root / candidate
        try:
            return RuleCall(tool, path=candidate.resolve(strict=False), workspace=root)
        except (OSError, RuntimeError):  # a symlink loop: no path a rule could name
            pass
    return RuleCall(tool, workspace=root)


# ---------------------------------------------------------------- bash: allow


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


def _argv_matches(rule: Rule, argv: Sequence[str]) -> bool:
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


def _deny_matches(rule: Rule, argv: Sequence[str]) -> bool:
    named = [os.path.basename(argv[0]), *argv[1:]] if argv else []
    return _argv_matches(rule, argv) or _argv_matches(rule, named)


# ---------------------------------------------------------------- paths


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        for ch in part:
            out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        if not last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def path_matches(rule: Rule, path: Path, workspace: Path) -> bool:
    """Whether a resolved path falls under a path rule's glob."""
    pattern = rule.pattern
    if pattern is None:
        return True
    if pattern.startswith("~/"):
        pattern = str(Path.home()) + pattern[1:]
    if pattern.startswith("/"):
        base = Path(pattern.split("*", 1)[0].split("?", 1)[0] or "/")
        resolved_root = _resolved_prefix(base)
        target = path.as_posix()
        if resolved_root != base:  # /tmp -> /private/tmp: compare in resolved form
            pattern = resolved_root.as_posix() + pattern[len(base.as_posix()) :]
        return _glob_regex(pattern).fullmatch(target) is not None
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return False
    return _glob_regex(pattern).fullmatch(relative.as_posix()) is not None


def _resolved_prefix(base: Path) -> Path:
    try:
        return base.resolve(strict=False)
    except (OSError, RuntimeError):
        return base


# ---------------------------------------------------------------- hosts


def url_host(url: str) -> str | None:
    """The host a URL names (lowercased, no trailing dot), or None when it names none."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def host_matches(rule: Rule, host: str | None) -> bool:
    if rule.pattern is None:
        return True
    if not host:
        return False
    name = rule.pattern.removeprefix("domain:")
    if name.startswith("*."):
        return host.endswith(name[1:])
    return host == name


# ---------------------------------------------------------------- rule sets


@dataclass(frozen=True)
class Judgement:
    """What the rules say about one call: a deny rule that matched, else the allow rules that
    together cover it (empty: not allowed by rules)."""

    denied_by: Rule | None = None
    allowed_by: tuple[Rule, ...] = ()

    @property
    def allowed(self) -> bool:
        return self.denied_by is None and bool(self.allowed_by)


@dataclass(frozen=True)
class RuleSet:
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)  # rules skipped, and why

    def __bool__(self) -> bool:
        return bool(self.allow or self.deny)

    def judge(self, call: RuleCall) -> Judgement:
        denied = self._denied_by(call)
        if denied is not None:
            return Judgement(denied_by=denied)
        return Judgement(allowed_by=self._allowed_by(call))

    def _denied_by(self, call: RuleCall) -> Rule | None:
        rules = [r for r in self.deny if r.covers(call.tool)]
        if not rules:
            return None
        for rule in rules:
            if rule.pattern is None:
                return rule
        if call.tool == "bash":
            for argv in reachable_commands(call.command or ""):
                for rule in rules:
                    if _deny_matches(rule, argv):
                        return rule
            return None
        if call.tool == "web_fetch":
            return next((r for r in rules if host_matches(r, call.host)), None)
        if call.path is None or call.workspace is None:
            return None
        return next((r for r in rules if path_matches(r, call.path, call.workspace)), None)

    def _allowed_by(self, call: RuleCall) -> tuple[Rule, ...]:
        rules = [r for r in self.allow if r.covers(call.tool)]
        if not rules:
            return ()
        whole = next((r for r in rules if r.pattern is None), None)
        if whole is not None:
            return (whole,)
        if call.tool == "bash":
            parts = plain_commands(call.command or "")
            if parts is None:
                return ()
            used: list[Rule] = []
            for argv in parts:
                rule = next((r for r in rules if _argv_matches(r, argv)), None)
                if rule is None:
                    return ()
                if rule not in used:
                    used.append(rule)
            return tuple(used)
        if call.tool == "web_fetch":
            rule = next((r for r in rules if host_matches(r, call.host)), None)
            return (rule,) if rule is not None else ()
        if call.path is None or call.workspace is None:
            return ()
        rule = next((r for r in rules if path_matches(r, call.path, call.workspace)), None)
        return (rule,) if rule is not None else ()


def rule_set(allow: Iterable[tuple[str, str]] = (), deny: Iterable[tuple[str, str]] = ()) -> RuleSet:
    """Rules from (text, source) pairs; unreadable ones are skipped and named in `problems`."""
    problems: list[str] = []

    def parsed(pairs: Iterable[tuple[str, str]]) -> tuple[Rule, ...]:
        out = []
        for text, source in pairs:
            try:
                out.append(parse_rule(text, source))
            except RuleError as exc:
                problems.append(f"{source}: {exc}; the rule is ignored" if source else f"{exc}; ignored")
        return tuple(out)

    return RuleSet(parsed(allow), parsed(deny), tuple(problems))


def combine(*sets: RuleSet) -> RuleSet:
    return RuleSet(
        tuple(r for s in sets for r in s.allow),
        tuple(r for s in sets for r in s.deny),
        tuple(p for s in sets for p in s.problems),
    )


# ---------------------------------------------------------------- suggestions


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


# ---------------------------------------------------------------- the store


def rules_file(user_dir: Path) -> Path:
    return user_dir / RULES_FILE_NAME


def _workspace_key(workspace: Path) -> str:
    return str(Path(workspace).resolve())


def _read(path: Path) -> dict[str, dict[str, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesStoreError(f"cannot read {path} ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesStoreError(f"{path} is not valid JSON ({exc})") from exc
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(workspaces, dict):
        raise RulesStoreError(f"{path} has no `workspaces` table")
    clean: dict[str, dict[str, list[str]]] = {}
    for key, entry in workspaces.items():
        if not isinstance(entry, dict):
            continue
        clean[key] = {
            kind: [r for r in entry.get(kind, []) if isinstance(r, str)]
            for kind in ("allow", "deny")
            if isinstance(entry.get(kind, []), list)
        }
        for extra in ("updated_at",):
            if isinstance(entry.get(extra), str):
                clean[key][extra] = entry[extra]
    return clean


def stored_rules(user_dir: Path, workspace: Path) -> RuleSet:
    """The rules stored for this workspace (RulesStoreError when the store is unusable)."""
    path = rules_file(user_dir)
    entry = _read(path).get(_workspace_key(workspace), {})
    source = f"{path} (this workspace)"
    return rule_set(
        allow=[(t, source) for t in entry.get("allow", [])], deny=[(t, source) for t in entry.get("deny", [])]
    )


def remember_allow(user_dir: Path, workspace: Path, rules: Sequence[str], *, now: _dt.datetime | None = None) -> Path:
    """Add allow rules for this workspace (the TUI's "Always allow"); an existing store that cannot
    be read is never overwritten."""
    for text in rules:
        parse_rule(text)  # a bad rule must not reach the store
    path = rules_file(user_dir)
    try:
        workspaces = _read(path)
    except RulesStoreError as exc:
        raise RulesStoreError(f"{exc}; fix or delete it, then allow again") from exc
    entry = workspaces.setdefault(_workspace_key(workspace), {"allow": [], "deny": []})
    allow = entry.setdefault("allow", [])
    for text in rules:
        if text not in allow:
            allow.append(text)
    entry.setdefault("deny", [])
    entry["updated_at"] = (now or _dt.datetime.now(_dt.UTC)).isoformat(timespec="seconds")  # type: ignore[assignment]
    body = {"version": RULES_FILE_VERSION, "workspaces": dict(sorted(workspaces.items()))}
    atomic_write_text(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return path


def forget_rule(user_dir: Path, workspace: Path, text: str) -> bool:
    """Remove one stored rule of this workspace (allow or deny); whether it was there."""
    path = rules_file(user_dir)
    workspaces = _read(path)
    entry = workspaces.get(_workspace_key(workspace))
    if not entry:
        return False
    removed = False
    for kind in ("allow", "deny"):
        if text in entry.get(kind, []):
            entry[kind] = [r for r in entry[kind] if r != text]
            removed = True
    if removed:
        body = {"version": RULES_FILE_VERSION, "workspaces": dict(sorted(workspaces.items()))}
        atomic_write_text(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return removed


def effective_rules(permissions: object, workspace: Path, user_dir: Path) -> RuleSet:
    """The rules in force for one call: the configured ones (`settings.permissions`: the user
    file's allow and deny, the workspace file's deny) and the ones stored for this workspace. An
    unreadable store adds no rules and says so in `problems` (read fresh each time: another
    myrm, or the user editing the file, changes it while this one runs)."""
    allow = [(e.text, e.source) for e in getattr(permissions, "allow", ())]
    deny = [(e.text, e.source) for e in getattr(permissions, "deny", ())]
    configured = rule_set(allow, deny)
    try:
        stored = stored_rules(user_dir, workspace)
    except RulesStoreError as exc:
        stored = RuleSet(problems=(f"{exc}; the rules stored there are not used until it is fixed",))
    return combine(configured, stored)
