"""Layered settings: defaults → user config → workspace config → `MYRM_*` env → CLI flags.

Why problems instead of exceptions: a typo in a config file must never stop the app from
starting. Every layer is validated against the schema; a bad value is reported (file, line,
one sentence with the fix) and skipped, so the earlier layers' value stays in force.

The workspace file comes with the repository, so it passes a gate (settings/trust.py): values
that decide what runs or where data goes wait for the user's trust, and the tool permissions
can only be tightened by it.

This module finds the files and settles trust; the jobs it hands out: reading one file's tables
(tables.py), the gates (workspace_gate.py), env and flags (env_layer.py), the merge
(layers.py), the value checks (value_checks.py), and saving (write.py).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.settings import paths
from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files import mcp_entries
from myrm_tui.settings.config_files.command_files import workspace_command_models, workspace_commands_dir
from myrm_tui.settings.config_files.env_layer import ENV_PREFIX, apply_env, apply_flags
from myrm_tui.settings.config_files.filter_files import FILE_SUFFIX, workspace_filter_bytes, workspace_filters_dir
from myrm_tui.settings.config_files.layers import Layers
from myrm_tui.settings.config_files.problems import ConfigProblem, ConfigWriteError
from myrm_tui.settings.config_files.tables import apply_tables, parse_toml, read_toml
from myrm_tui.settings.config_files.workspace_gate import Gate, WorkspaceGate
from myrm_tui.settings.config_files.write import save_user_settings
from myrm_tui.settings.sections.model_overrides import MODEL_OVERRIDE_TYPES
from myrm_tui.settings.settings import Settings

# The names importers use from here (tests, tui/app.py, cli_commands/common.py).
__all__ = [
    "ENV_PREFIX",
    "MODEL_OVERRIDE_TYPES",
    "ConfigProblem",
    "ConfigWriteError",
    "LoadedSettings",
    "load_settings",
    "save_user_settings",
]


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    problems: list[ConfigProblem] = field(default_factory=list)
    files_found: list[Path] = field(default_factory=list)  # config files that exist, in layer order
    files_checked: list[Path] = field(default_factory=list)  # every file looked for, in layer order
    workspace_trust: T.WorkspaceTrust | None = None  # what the workspace file needs trust for


def load_settings(
    workspace_root: Path,
    flags: Mapping[str, Any] | None = None,
    *,
    user_config_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    accept_workspace: str | None = None,
) -> LoadedSettings:
    """Resolve the settings for a workspace; never raises for bad user input.

    `accept_workspace` is the user's word for this run only: trust.ACCEPT_ANY (`--trust`)
    accepts the workspace file whatever it says, a sha256 accepts it only while its content
    still has that digest (the trust dialog: what was shown is what is accepted).
    """
    env = os.environ if env is None else env
    user_dir = user_config_dir if user_config_dir is not None else paths.user_config_dir(env)
    layers = Layers()
    user_file = user_dir / paths.CONFIG_FILE_NAME
    workspace_file = paths.workspace_config_file(workspace_root)
    user_mcp = mcp_entries.user_mcp_json(user_dir)
    workspace_mcp = mcp_entries.workspace_mcp_json(workspace_root)
    checked = [user_file, user_mcp, workspace_file, workspace_mcp]
    found = []
    trust = T.WorkspaceTrust(workspace_root.resolve(), workspace_file)
    if user_file.is_file():
        found.append(user_file)
        _apply_user_file(layers, user_file)
    if user_mcp.is_file():
        found.append(user_mcp)
        _apply_user_mcp_json(layers, user_mcp)
    own_file = workspace_file if workspace_file.is_file() and not _same_file(workspace_file, user_file) else None
    # The workspace's output filters are the repository's word too (they decide what the model sees
    # of a command's output): trust covers them with the config; the user's own (same folder) don't count.
    # So are the models its custom commands name (`.myrm/commands/*.md`, settings/config_files/command_files.py).
    users_own = own_file is None and workspace_file.is_file()
    filters = [] if users_own else workspace_filter_bytes(workspace_root)
    commands = () if users_own else workspace_command_models(workspace_root)
    if own_file is not None or workspace_mcp.is_file() or filters or commands:
        found += [path for path in (own_file, workspace_mcp) if path is not None and path.is_file()]
        trust = _apply_workspace_files(
            layers, own_file, workspace_root, user_dir, accept_workspace, workspace_mcp, filters, commands
        )
    apply_env(layers, env)
    apply_flags(layers, flags or {})
    trust = _settle_trust(layers, trust)
    return LoadedSettings(layers.build(), layers.problems, found, checked, trust)


def _same_file(a: Path, b: Path) -> bool:
    """MYRM_CONFIG_DIR pointed at the workspace's own .myrm: the file is the user's, read once."""
    try:
        return b.is_file() and a.samefile(b)
    except OSError:
        return False


def _apply_user_file(layers: Layers, path: Path) -> None:
    """A file of the user's own: every valid value applies."""
    parsed = read_toml(layers, path)
    if parsed is not None:
        apply_tables(layers, str(path), *parsed, Gate())


def _apply_user_mcp_json(layers: Layers, path: Path) -> None:
    """The user's own `mcp.json` (Claude Code's shape): every valid server applies."""
    raw = layers.read_bytes(path)
    if raw is not None:
        mcp_entries.apply_json_file(layers, str(path), raw, Gate())


def _apply_workspace_files(
    layers: Layers,
    path: Path | None,
    workspace: Path,
    user_dir: Path,
    accept: str | None,
    mcp_json: Path | None,
    filters: Sequence[tuple[str, bytes]] = (),
    commands: Sequence[tuple[str, str, Path]] = (),
) -> T.WorkspaceTrust:
    """The repository's files (`.myrm/config.toml`, `.mcp.json`, `.myrm/filters/*.toml`, the
    models of `.myrm/commands/*.md`): values pass the workspace gate, every filter and command
    model needs trust; returns the trust state, keyed by all of them together (T.workspace_digest)."""
    data = layers.read_workspace_bytes(path, workspace)
    mcp_data = layers.read_workspace_bytes(mcp_json, workspace)
    if path is not None and (data is not None or (mcp_data is None and not filters and not commands)):
        shown = path
    elif mcp_data is not None and mcp_json is not None:
        shown = mcp_json
    elif filters:
        shown = workspace_filters_dir(workspace)
    else:
        shown = workspace_commands_dir(workspace)
    name = str(shown)
    state = T.WorkspaceTrust(workspace.resolve(), shown)
    if data is None and mcp_data is None and not filters and not commands:
        return state
    digest = T.workspace_digest(data, mcp_data, filters, T.command_pairs(commands))
    trusted_at = None
    if accept in (T.ACCEPT_ANY, digest):
        decided = T.ACCEPTED
    else:
        try:
            trusted_at = T.stored_decision(user_dir, workspace, digest)
        except T.TrustStoreError as exc:
            layers.problem(
                str(T.trust_file(user_dir)),
                None,
                f"{exc} Workspace files count as not trusted until it is fixed or deleted.",
            )
        decided = T.TRUSTED if trusted_at else T.UNTRUSTED
    gate = WorkspaceGate(layers, name, trusted=decided != T.UNTRUSTED)
    parsed = parse_toml(layers, name, data) if data is not None else None
    if parsed is not None:
        apply_tables(layers, name, *parsed, gate)
    if mcp_data is not None:
        mcp_entries.apply_json_file(layers, str(mcp_json), mcp_data, gate)
    folder = workspace_filters_dir(workspace)
    gate.entries += [
        T.filter_entry(file_name.removesuffix(FILE_SUFFIX), folder / file_name) for file_name, _ in filters
    ]
    gate.entries += [T.command_entry(command, model, file) for command, model, file in commands]
    if not gate.entries:
        return dataclasses.replace(state, state=T.NOTHING_TO_TRUST, digest=digest)
    return dataclasses.replace(state, state=decided, digest=digest, entries=tuple(gate.entries), trusted_at=trusted_at)


def _settle_trust(layers: Layers, state: T.WorkspaceTrust) -> T.WorkspaceTrust:
    """After env and flags: a held-back value the user overrode anyway (`--model`,
    MYRM_MODEL) needs no decision; what is left is reported once."""
    if not state.needs_decision:
        return state
    user_set = ("env ", "flag ")
    moot = tuple(e for e in state.entries if e.setting is not None and layers.sources[e.setting].startswith(user_set))
    entries = tuple(e for e in state.entries if e not in moot)
    if not entries:
        return dataclasses.replace(state, state=T.NOTHING_TO_TRUST, entries=(), overridden=moot)
    state = dataclasses.replace(state, entries=entries, overridden=moot)
    layers.problem(str(state.config_file), None, state.notice())
    return state
