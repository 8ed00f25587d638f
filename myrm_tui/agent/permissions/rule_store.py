"""The rules store: allow rules the user stored per workspace ("Always allow" in the TUI).

One JSON file in the user's config folder, keyed by the resolved workspace path like the trust
store; written atomically, and never overwritten when it cannot be read (a broken file is the
user's to fix, not ours to lose).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from pathlib import Path

from myrm_tui.agent.permissions.ruleset import RuleSet, rule_set
from myrm_tui.fenced_paths import replace_file
from myrm_tui.settings.sections.permission_syntax import parse_rule
from myrm_tui.settings.workspace_json import read_workspaces

RULES_FILE_NAME = "permission-rules.json"
RULES_FILE_VERSION = 1


class RulesStoreError(Exception):
    """The rules store cannot be read or updated without losing what is in it."""


def rules_file(user_dir: Path) -> Path:
    return user_dir / RULES_FILE_NAME


def _workspace_key(workspace: Path) -> str:
    return str(Path(workspace).resolve())


def _read(path: Path) -> dict[str, dict[str, list[str]]]:
    workspaces = read_workspaces(path, RulesStoreError)
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
    replace_file(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
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
        replace_file(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return removed
