"""The merge: each layer (user file, workspace file, env, flags) overwrites the values before it.

Why a mutable builder: the layers are applied in order by settings/config_files/loader.py and each records
where a value came from (`sources`, shown by `myrm doctor`); the result is the frozen Settings.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from myrm_tui.fenced_files import FenceError
from myrm_tui.fenced_paths import read_inside
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.sections.hooks import HookSpec
from myrm_tui.settings.setting_spec import SettingSpec
from myrm_tui.settings.settings import PermissionLists, RuleEntry, Settings

PERMISSION_LISTS = ("allow", "deny")
# `.myrm/config.toml` and `.mcp.json` hold a few KB of settings; 1 MB is far beyond any real one,
# and a multi-GB file a command left in the workspace must not be read into memory on every start.
WORKSPACE_FILE_MAX_BYTES = 1024 * 1024


def read_workspace_file(workspace: Path, path: Path) -> tuple[bytes | None, str]:
    """(bytes, '') of a workspace settings file; (None, '') when absent; (None, why) when it is
    not read: a link out of the workspace (a committed `.myrm/config.toml` linked to the user's
    own config would show it as the repository's), not a regular file, or over the cap. Shared
    by the loader and the trust check, so both digest the same bytes."""
    try:
        data = read_inside(workspace, path, limit=WORKSPACE_FILE_MAX_BYTES)
    except FenceError as exc:
        return None, f"not read ({exc}); it is ignored."
    except OSError as exc:
        return None, f"cannot read the file ({exc}); it is ignored."
    if data is not None and len(data) > WORKSPACE_FILE_MAX_BYTES:
        return None, f"the file is over {WORKSPACE_FILE_MAX_BYTES:,} bytes; it is ignored."
    return data, ""


class Layers:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {s.key: s.default for s in SETTINGS}
        self.sources: dict[str, str] = {s.key: "default" for s in SETTINGS}
        self.models: dict[str, dict[str, Any]] = {}
        self.keymap: dict[str, str] = {}
        self.mcp_servers: dict[str, Any] = {}  # name -> settings.mcp_config.McpServerConfig
        self.permissions: dict[str, list[RuleEntry]] = {kind: [] for kind in PERMISSION_LISTS}
        self.hooks: list[HookSpec] = []  # the user file's [hooks] (settings/sections/hooks.py)
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

    def read_workspace_bytes(self, path: Path | None, workspace: Path) -> bytes | None:
        """`read_workspace_file`, its refusal recorded as a problem."""
        if path is None:
            return None
        data, why = read_workspace_file(workspace, path)
        if why:
            self.problem(str(path), None, why)
        return data
