"""The resolved settings value passed around the app (immutable; built by the loader)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY


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
    rules (a workspace cannot allow; settings/loader.py)."""

    allow: tuple[RuleEntry, ...] = ()
    deny: tuple[RuleEntry, ...] = ()


@dataclass(frozen=True)
class Settings:
    """Schema values (attribute access: `settings.model`), per-model overrides and the keymap.

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
    # once the workspace is trusted (settings/loader.py).
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, key: str) -> Any:
        if key in SPECS_BY_KEY:
            return self.values.get(key, SPECS_BY_KEY[key].default)
        raise AttributeError(key)

    def with_values(self, **changes: Any) -> Settings:
        unknown = set(changes) - set(SPECS_BY_KEY)
        if unknown:
            raise KeyError(f"unknown settings: {sorted(unknown)}")
        merged = dict(self.values)
        merged.update(changes)
        sources = dict(self.sources)
        sources.update({k: "override" for k in changes})
        # replace(): every other field (models, keymap, permissions, mcp_servers) carries over.
        return dataclasses.replace(self, values=MappingProxyType(merged), sources=MappingProxyType(sources))


# Where a model setting counts as "said for this launch" (and so beats a resumed session's own
# model): a command-line flag, a MYRM_MODEL variable, or a switch made in the running app. A model
# from a config file is a default for new sessions; a resumed session keeps the model it was
# started with.
_LAUNCH_SOURCES = ("flag", "env", "override")


def model_for_session(settings: Settings, session_model: str | None) -> tuple[str, str] | None:
    """(model, where it came from) for a session being opened, or None when nothing names one
    (the caller then picks the default model). One rule for the TUI and `myrm run`."""
    model = str(settings.model or "")
    source = settings.sources.get("model", "default")
    if model and source.startswith(_LAUNCH_SOURCES):
        return model, source
    if session_model:
        return session_model, "the session's model"
    if model:
        return model, source
    return None
