"""The rules in one set, judged against one call: deny beats allow (see rules).

`RuleCall` holds the facts of a call a rule can name (command line, resolved path, host);
`RuleSet.judge` says which deny rule matched, else which allow rules together cover the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from myrm_tui.agent.permissions.bash_lines import argv_matches, deny_matches, plain_commands, reachable_commands
from myrm_tui.agent.permissions.targets import host_matches, path_matches, url_host
from myrm_tui.settings.sections.permission_syntax import Rule, RuleError, parse_rule


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
                    if deny_matches(rule, argv):
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
                rule = next((r for r in rules if argv_matches(r, argv)), None)
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
