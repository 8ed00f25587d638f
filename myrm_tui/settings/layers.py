"""The merge: each layer (user file, workspace file, env, flags) overwrites the values before it.

Why a mutable builder: the layers are applied in order by settings/loader.py and each records
where a value came from (`sources`, shown by `myrm doctor`); the result is the frozen Settings.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from myrm_tui.settings.config_problem import ConfigProblem
from myrm_tui.settings.hooks_config import HookSpec
from myrm_tui.settings.schema import SETTINGS, SettingSpec
from myrm_tui.settings.settings import PermissionLists, RuleEntry, Settings

PERMISSION_LISTS = ("allow", "deny")


class Layers:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {s.key: s.default for s in SETTINGS}
        self.sources: dict[str, str] = {s.key: "default" for s in SETTINGS}
        self.models: dict[str, dict[str, Any]] = {}
        self.keymap: dict[str, str] = {}
        self.mcp_servers: dict[str, Any] = {}  # name -> settings.mcp_config.McpServerConfig
        self.permissions: dict[str, list[RuleEntry]] = {kind: [] for kind in PERMISSION_LISTS}
        self.hooks: list[HookSpec] = []  # the user file's [hooks] (settings/hooks_config.py)
        self.problems: list[ConfigProblem] = []

    def build(self) -> Settings:
        return Settings(
            values=MappingProxyType(dict(self.values)),
            # Plain dicts, like Settings' own defaults, so consumers can json.dumps them.
            models={k: dict(v) for k, v in self.models.items()},
            keymap=dict(self.keymap),
            sources=MappingProxyType(dict(self.sources)),
            permissions=PermissionLists(tuple(self.permissions["allow"]), tuple(self.permissions["deny"])),
            mcp_servers=dict(self.mcp_servers),
            hooks=tuple(self.hooks),
        )

    def problem(self, file: str, line: int | None, message: str, level: str = "warning") -> None:
        self.problems.append(ConfigProblem(file, line, message, level))

    def set(self, spec: SettingSpec, value: Any, source: str) -> None:
        self.values[spec.key] = float(value) if spec.type is float else value
        self.sources[spec.key] = source

    def read_bytes(self, path: Path | None) -> bytes | None:
        """The file's bytes; None (and a problem) when it cannot be read, None when absent."""
        if path is None or not path.is_file():
            return None
        try:
            return path.read_bytes()
        except OSError as exc:
            self.problem(str(path), None, f"cannot read the file ({exc}); it is ignored.")
            return None
