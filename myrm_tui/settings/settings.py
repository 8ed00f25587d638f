"""The resolved settings value passed around the app (immutable; built by the loader)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY


def _defaults() -> dict[str, Any]:
    return {spec.key: spec.default for spec in SETTINGS}


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
        return Settings(MappingProxyType(merged), self.models, self.keymap, MappingProxyType(sources))
