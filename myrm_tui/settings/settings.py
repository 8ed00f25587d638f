"""The resolved settings value passed around the app (immutable; built by the loader)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Unpack

from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY
from myrm_tui.settings.sections.hooks import HookSpec
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.settings.typed_values import SettingChanges, SettingValues


def _defaults() -> dict[str, Any]:
    return {spec.key: spec.default for spec in SETTINGS}


@dataclass(frozen=True)
class RuleEntry:
    """One permission rule as a config file wrote it (parsed and matched in agent/permission_rules)."""

    text: str  # Bash(git status:*), Edit(src/**)
    source: str  # the file (and line) it came from, for messages


@dataclass(frozen=True)
class PermissionLists:
    """The `[permissions]` tables: the user file's allow and deny rules, the workspace file's deny
    rules (a workspace cannot allow; settings/config_files/loader.py)."""

    allow: tuple[RuleEntry, ...] = ()
    deny: tuple[RuleEntry, ...] = ()


@dataclass(frozen=True)
class Settings(SettingValues):
    """Schema values (typed attribute access: `settings.model`, settings/typed_values.py),
    per-model overrides and the keymap.

    `models` maps a model name to overrides for the registry (context_window, max_output_tokens,
    api_base, supports_tools, supports_vision, input_cost_per_token, …), which is how custom
    endpoints (Ollama, vLLM, LM Studio) are described. `sources` says where each value came from
    (default, a file path, env, flag), for `myrm doctor`.
    """

    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType(_defaults()))
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    keymap: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    permissions: PermissionLists = field(default_factory=PermissionLists)
    # MCP servers by name (settings.mcp_config.McpServerConfig): user entries, and workspace entries
    # once the workspace is trusted (settings/config_files/loader.py).
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    # The user config's [hooks] (settings.hooks_config.HookSpec), in file order; never a workspace's.
    hooks: tuple[HookSpec, ...] = ()
    # The declarative output filters that apply (settings/config_files/filter_files.py): the user's,
    # then the workspace's once trusted, in that order (first match wins). Settled with the trust
    # decision (cli_commands/filter_setup.py) and carried by value, so each session filters with its
    # own workspace's files; empty (the shipped filters only) for `myrm replay` and a bare Settings().
    output_filters: tuple[FilterSpec, ...] = ()

    def with_values(self, **changes: Unpack[SettingChanges]) -> Settings:
        unknown = set(changes) - set(SPECS_BY_KEY)
        if unknown:
            raise KeyError(f"unknown settings: {sorted(unknown)}")
        merged = dict(self.values)
        merged.update(changes)
        sources = dict(self.sources)
        sources.update({k: "override" for k in changes})
        # replace(): every other field (models, keymap, permissions, mcp_servers, hooks, output_filters) carries over.
        return dataclasses.replace(self, values=MappingProxyType(merged), sources=MappingProxyType(sources))
