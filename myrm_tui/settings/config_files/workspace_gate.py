"""Whether a valid value from a config file may apply: always for the user's files; for the
repository's own files, by the rule each setting declares in the schema (settings/trust.py).

Why a gate object: the file reader (settings/config_files/tables.py, settings/config_files/mcp_entries.py) is the
same for both kinds of file; only this answer differs, and the workspace gate also lists what
waits for trust so the trust dialog can show it.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.layers import Layers
from myrm_tui.settings.setting_spec import NEEDS_TRUST, TIGHTEN_ONLY, USER_ONLY, SettingSpec


class Gate:
    """Says whether a valid value from a config file may apply (the user's files: always)."""

    scope = "user"  # what an MCP server from this file counts as (settings.mcp_config.USER)

    def mcp_server(self, config: Any, label: str, line: int | None) -> bool:
        return True

    def setting(self, spec: SettingSpec, value: Any, line: int | None) -> bool:
        return True

    def model_field(self, model: str, key: str, value: Any, line: int | None) -> bool:
        return True

    def keymap(self, binding: str, line: int | None) -> bool:
        return True

    def permission_list(self, kind: str, line: int | None) -> bool:
        return True

    def hooks(self, line: int | None) -> bool:
        return True


class WorkspaceGate(Gate):
    """The repository's file: needs-trust values wait for trust (and are listed), tighten-only
    values may only make things stricter, the approval keys cannot be remapped."""

    scope = "workspace"

    def __init__(self, layers: Layers, name: str, *, trusted: bool) -> None:
        self.layers = layers
        self.name = name
        self.trusted = trusted
        self.entries: list[T.WorkspaceEntry] = []  # every value that needs trust, applied or not

    def mcp_server(self, config: Any, label: str, line: int | None) -> bool:
        """A server is a command that runs (or an endpoint that gets the tool calls): it needs trust."""
        self.entries.append(T.mcp_server_entry(label, config.name, config.as_written(), line))
        return self.trusted

    def setting(self, spec: SettingSpec, value: Any, line: int | None) -> bool:
        rule = T.setting_rule(spec)
        if rule == USER_ONLY:
            self.layers.problem(
                self.name,
                line,
                (
                    f"`{spec.key}` is ignored: it bounds or hides what commands can reach, so only your own "
                    f"config sets it, never a workspace file, trusted or not (your user config, "
                    f"MYRM_{spec.key.upper()} or a flag)."
                ),
            )
            return False
        if rule == TIGHTEN_ONLY:
            current = self.layers.values[spec.key]
            if not T.loosens(spec, value, current):
                return True
            self.layers.problem(
                self.name,
                line,
                (
                    f"`{spec.key} = {T.toml_text(value)}` is ignored: it would loosen {T.toml_text(current)}, and "
                    f"a workspace file may only make `{spec.key}` stricter, trusted or not. If you want it, "
                    f"set it yourself (your user config, MYRM_{spec.key.upper()} or a flag)."
                ),
            )
            return False
        if rule == NEEDS_TRUST:
            self.entries.append(T.setting_entry(spec.key, value, line))
            return self.trusted
        return True

    def model_field(self, model: str, key: str, value: Any, line: int | None) -> bool:
        if not T.model_field_needs_trust(key):
            return True
        self.entries.append(T.model_entry(model, key, value, line))
        return self.trusted

    def keymap(self, binding: str, line: int | None) -> bool:
        if not T.keymap_user_only(binding):
            return True
        self.layers.problem(
            self.name,
            line,
            (
                f"`[keymap] {T.toml_key(binding)}` is ignored: a workspace file cannot remap the keys "
                "that answer an approval, trusted or not; set it in your user config if you want it."
            ),
        )
        return False

    def permission_list(self, kind: str, line: int | None) -> bool:
        """Deny rules only make things stricter, so they apply; allow rules would let the
        repository's author approve calls for the user, so they never do, trusted or not."""
        if kind == "deny":
            return True
        self.layers.problem(
            self.name,
            line,
            (
                "`[permissions] allow` is ignored: a workspace file may only add deny rules, trusted or not; "
                'allow rules come from your user config or your own "Always allow" answers.'
            ),
        )
        return False

    def hooks(self, line: int | None) -> bool:
        """A hook runs code at every turn: only the user's own config may define one, trusted or not."""
        self.layers.problem(
            self.name,
            line,
            (
                "`[hooks]` is ignored: hooks run commands, so only your user config may define them, "
                "never a workspace file, trusted or not; move them to your user config if you want them."
            ),
        )
        return False
