"""Workspace trust: what a workspace config file may set, and which files the user trusts.

Why: `.myrm/config.toml` arrives with `git clone`, written by whoever wrote the repository. Read
blindly, it could point the user's API key and every prompt at another endpoint. So each
setting declares in the schema (`SettingSpec.from_workspace`) how far a workspace file is
believed:

- free: looks and limits (theme, max_steps, …) apply at once;
- needs trust: what runs or where data goes (model, api_base, a model's api_base, …) applies
  only once the user has trusted this exact file content (`myrm trust`, the TUI dialog, or
  `--trust` for one run); an edited file asks again;
- tighten only: what tools may touch (approval, allow_outside_workspace) can only be made
  stricter by a workspace file, trusted or not: loosening them takes the user's own word (user
  config, `MYRM_*`, a flag).

Decisions live in the user's config dir (never in the workspace, which the repository
controls), keyed by the resolved workspace path and the sha256 of the file's bytes.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.fenced_files import FenceError
from myrm_tui.fenced_paths import replace_file
from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.setting_spec import NEEDS_TRUST, TIGHTEN_ONLY, WORKSPACE_RULES, SettingSpec
from myrm_tui.settings.workspace_json import read_workspaces

# `[models."NAME"]` fields a workspace file may set untrusted: they describe the model (window,
# features, prices). Any other field (api_base, and whatever endpoint, header or key-variable
# field is added later) decides where the prompt and the key go, so it needs trust.
MODEL_FIELDS_FREE_IN_WORKSPACE = frozenset(
    {
        "context_window",
        "max_output_tokens",
        "supports_tools",
        "supports_vision",
        "supports_prompt_caching",
        "supports_reasoning",
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_cost_per_token",
        "cache_write_cost_per_token",
        "reasoning_effort",
    }
)
# `[keymap]` binds a binding id to keys; bindings only trigger built-in actions, so a workspace may
# remap them, except the approval answers: a repo that swaps "allow" onto `n` turns the user's
# no into a yes. Those ids are honoured from user files only, trusted workspace or not.
KEYMAP_USER_ONLY_PREFIXES = ("approval.",)

TRUST_FILE_NAME = "trusted-workspaces.json"
TRUST_FILE_VERSION = 1
# Trusted versions remembered per workspace: switching between a few branches whose configs
# differ should not ask at every checkout; a version older than that asks again, which is cheap.
KEEP_VERSIONS = 8
# `--trust`: accept whatever the file says, for this run only (nothing is stored).
ACCEPT_ANY = "any"

# Answers to the trust question (the TUI dialog).
IGNORE = "ignore"  # go on without the values that need trust
ONCE = "once"  # apply them for this session only
ALWAYS = "always"  # apply them and remember this exact file content

# Trust states of a workspace's config file.
NO_FILE = "no-file"  # no workspace config (or an unreadable one): nothing to decide
NOTHING_TO_TRUST = "nothing-to-trust"  # the file only sets things that apply without trust
TRUSTED = "trusted"  # stored decision for this exact content
ACCEPTED = "accepted"  # accepted for this run only (--trust, "accept once")
UNTRUSTED = "untrusted"  # needs-trust entries are ignored until the user decides

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class TrustStoreError(Exception):
    """The trust store cannot be updated without losing what is in it."""


# ---------------------------------------------------------------- classification


def setting_rule(spec: SettingSpec) -> str:
    """How a workspace file may set `spec`; an unknown rule fails safe (needs trust)."""
    return spec.from_workspace if spec.from_workspace in WORKSPACE_RULES else NEEDS_TRUST


def tighten_only_keys() -> str:
    """`approval`, `allow_outside_workspace`, …: for the sentences that say trust cannot loosen them."""
    return ", ".join(f"`{s.key}`" for s in SETTINGS if setting_rule(s) == TIGHTEN_ONLY)


def model_field_needs_trust(name: str) -> bool:
    return name not in MODEL_FIELDS_FREE_IN_WORKSPACE


def keymap_user_only(binding: str) -> bool:
    return binding.startswith(KEYMAP_USER_ONLY_PREFIXES)


def loosens(spec: SettingSpec, value: Any, current: Any) -> bool:
    """True when `value` is less strict than `current` for a tighten-only setting (a value the
    ranking does not know counts as loosening: fail safe)."""
    order = list(spec.strictness)
    try:
        return _rank(order, value) > _rank(order, current)
    except ValueError:
        return True


def _rank(order: list[Any], value: Any) -> int:
    # By identity of type as well as value: True == 1 must not rank an int like a bool.
    for index, known in enumerate(order):
        if type(known) is type(value) and known == value:
            return index
    raise ValueError(value)


# ---------------------------------------------------------------- what a file asks for


def toml_text(value: Any) -> str:
    """A value as TOML would spell it, with every control or invisible character escaped, so a
    hostile value cannot redraw the terminal or hide in the trust dialog."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value).replace("\x7f", "\\u007f")  # ASCII-only: escapes C0, C1, bidi
    return repr(value)


def toml_key(name: str) -> str:
    return name if _BARE_KEY.match(name) else toml_text(name)


@dataclass(frozen=True)
class WorkspaceEntry:
    """One value of the workspace file that needs trust, as the file spells it."""

    name: str  # `api_base`, `[models."openai/gpt-4o"] api_base`
    value: Any
    line: int | None = None
    setting: str | None = None  # the schema key of a top-level value (None inside a table)
    mcp_server: str | None = None  # the server's name, for an MCP server entry (a command that runs)

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.name} = {toml_text(self.value)}{where}"


def setting_entry(key: str, value: Any, line: int | None) -> WorkspaceEntry:
    return WorkspaceEntry(toml_key(key), value, line, key)


def model_entry(model: str, key: str, value: Any, line: int | None) -> WorkspaceEntry:
    return WorkspaceEntry(f"[models.{toml_key(model)}] {toml_key(key)}", value, line)


def filter_entry(name: str, path: Path) -> WorkspaceEntry:
    """An output filter of the workspace: it decides which lines of a matching command's output
    the model sees inline, so it can hide what matters (a FAILED line) until trusted."""
    return WorkspaceEntry(f"filter {name}", f"output filter {path.name}", None)


def command_entry(command: str, model: str, path: Path) -> WorkspaceEntry:
    """A workspace custom command that names a model: using it would send the message (and the
    user's key) to that model, exactly like the `model` setting, so it applies only when trusted."""
    return WorkspaceEntry(f"command {command} ({path.name}) model", model, None)


def mcp_server_entry(label: str, server: str, summary: str, line: int | None) -> WorkspaceEntry:
    """An MCP server of the workspace: `summary` is the command line it runs (or the URL it sends
    the conversation's tool calls to), which is exactly what trusting it allows."""
    return WorkspaceEntry(label, summary, line, mcp_server=server)


@dataclass(frozen=True)
class WorkspaceTrust:
    """The trust state of one workspace config file, as the loader found it."""

    workspace: Path  # resolved
    config_file: Path
    state: str = NO_FILE
    digest: str | None = None  # sha256 hex of the file's bytes
    entries: tuple[WorkspaceEntry, ...] = ()  # the values that need trust
    # Values that need trust but that the user's env or flags override in this run anyway: they
    # need no decision now, and `myrm trust` still lists them (trust covers the whole file).
    overridden: tuple[WorkspaceEntry, ...] = ()
    trusted_at: str | None = None  # when the stored decision was made (state TRUSTED)

    @property
    def needs_decision(self) -> bool:
        """The file sets values that need trust and the user has not decided: they are ignored."""
        return self.state == UNTRUSTED

    @property
    def applied(self) -> bool:
        return self.state in (TRUSTED, ACCEPTED)

    def listing(self, separator: str = "; ") -> str:
        return separator.join(str(e) for e in self.entries)

    def short_digest(self) -> str:
        return (self.digest or "")[:12]

    def notice(self) -> str:
        """The loader's warning: exactly what was ignored, and how to apply it."""
        count = len(self.entries)
        return (
            f"this workspace file is not trusted yet, so {count} setting(s) in it that decide "
            f"what runs or where your prompts and keys go are ignored: {self.listing()}. "
            "Read the file; if you trust it, run `myrm trust` (or pass --trust for one run)."
        )

    def run_refusal(self) -> str:
        """Why `myrm run` stops: running with half the file ignored would surprise whoever wrote
        it, running with all of it would surprise the user."""
        return (
            f"{self.config_file} sets {len(self.entries)} setting(s) that need your trust "
            f"({', '.join(e.name for e in self.entries)}); myrm run does not start until you "
            "decide. Read the file, then run `myrm trust` to trust this version, or rerun "
            "with --trust to accept it for this run only."
        )


# ---------------------------------------------------------------- the store


def trust_file(user_dir: Path) -> Path:
    return user_dir / TRUST_FILE_NAME


def file_digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def workspace_digest(
    config: bytes | None,
    mcp_json: bytes | None,
    filters: Sequence[tuple[str, bytes]] = (),
    commands: Sequence[tuple[str, str]] = (),
) -> str:
    """The digest trust is keyed by: everything a workspace can use to change the model, an
    endpoint, the tools or what the model sees, together. That is the workspace's
    `.myrm/config.toml` (models, endpoints, permissions; read whole), `.mcp.json` (servers that
    run or receive tool calls), its output filter files (`.myrm/filters/*.toml`, as (file name,
    bytes) sorted by name: a filter can hide a failing test from the model) and the model each
    custom command names (`.myrm/commands/NAME.md` front matter, as (command, model) pairs,
    `command_pairs`: a `model:` added after trust would switch the model). Anything of these
    arriving after the user trusted the folder asks again. A command's text is not covered: it
    is prompt text the user sends by typing its name, read without asking like AGENTS.md.

    Older decisions hold: without filters and `.mcp.json` it is the config file's own sha256,
    with them the v1/v2 framing as before; commands add a part only when one names a model."""
    import hashlib

    if mcp_json is None and not filters and not commands:
        return file_digest(config or b"")
    version = 3 if commands else 2 if filters else 1
    framing = b"myrm workspace trust v%d\0" % version
    digest = hashlib.sha256(framing)
    parts: list[bytes | None] = [config, mcp_json]
    for name, data in sorted(filters):
        parts += [name.encode("utf-8", "surrogateescape"), data]
    for command, model in sorted(commands):
        parts += [command.encode("utf-8", "surrogateescape"), model.encode("utf-8", "surrogateescape")]
    for part in parts:
        framed = b"-" if part is None else b"%d:" % len(part) + part
        digest.update(framed + b"\0")
    return digest.hexdigest()


def command_pairs(found: Sequence[tuple[str, str, Path]]) -> tuple[tuple[str, str], ...]:
    """(command, model) of each workspace command that names a model (from
    settings.command_files.workspace_command_models): the commands' part of the digest."""
    return tuple((command, model) for command, model, _path in found)


def workspace_key(workspace: Path) -> str:
    return str(workspace.resolve())


def _read(path: Path) -> dict[str, list[dict[str, str]]]:
    """The stored decisions by workspace; TrustStoreError when the file exists but is unusable."""
    workspaces = read_workspaces(path, TrustStoreError, end=".")
    clean: dict[str, list[dict[str, str]]] = {}
    for key, versions in workspaces.items():
        if isinstance(versions, list):
            clean[key] = [v for v in versions if isinstance(v, dict) and isinstance(v.get("sha256"), str)]
    return clean


def stored_decision(user_dir: Path, workspace: Path, digest: str) -> str | None:
    """When this content of this workspace's file was trusted, or None. Raises TrustStoreError
    for an unreadable store (the caller treats that as "not trusted" and says so)."""
    for version in _read(trust_file(user_dir)).get(workspace_key(workspace), []):
        if version["sha256"] == digest:
            return str(version.get("trusted_at", "")) or "unknown time"
    return None


def record_trust(user_dir: Path, workspace: Path, digest: str, *, now: _dt.datetime | None = None) -> Path:
    """Remember that the user trusts this content of this workspace's file (newest first)."""
    path = trust_file(user_dir)
    try:
        workspaces = _read(path)
    except TrustStoreError as exc:
        raise TrustStoreError(f"{exc} Fix or delete it, then trust the workspace again.") from exc
    key = workspace_key(workspace)
    stamp = (now or _dt.datetime.now(_dt.UTC)).isoformat(timespec="seconds")
    versions = [v for v in workspaces.get(key, []) if v["sha256"] != digest]
    workspaces[key] = [{"sha256": digest, "trusted_at": stamp}, *versions][:KEEP_VERSIONS]
    _write(path, workspaces)
    return path


def revoke_trust(user_dir: Path, workspace: Path) -> int:
    """Forget every trusted version of this workspace's file; how many were forgotten."""
    path = trust_file(user_dir)
    workspaces = _read(path)
    removed = workspaces.pop(workspace_key(workspace), [])
    if removed:
        _write(path, workspaces)
    return len(removed)


def trusted_workspace_count(user_dir: Path) -> int:
    return len(_read(trust_file(user_dir)))


def _write(path: Path, workspaces: dict[str, list[dict[str, str]]]) -> None:
    """Replaced whole, through its folder's handle and never through a link (fenced_files.py):
    a trust store that is a symlink is refused (TrustStoreError), not written through."""
    body = {"version": TRUST_FILE_VERSION, "workspaces": dict(sorted(workspaces.items()))}
    try:
        replace_file(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    except FenceError as exc:
        raise TrustStoreError(f"{exc} Trust decisions are saved only into a real file.") from None
