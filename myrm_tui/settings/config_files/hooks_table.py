"""The loader's hooks layer: `[hooks]` of a config file into the settings, each bad entry reported
with its file and line and skipped; the gate decides whether the table may apply at all (a
workspace file never may: settings/config_files/workspace_gate.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from myrm_tui.settings.sections.hooks import HOOK_EVENTS, HOOKS_TABLE, parse_entry

if TYPE_CHECKING:  # the loader's modules import this one; the types only annotate
    from myrm_tui.settings.config_files.layers import Layers
    from myrm_tui.settings.config_files.toml_lines import Locator
    from myrm_tui.settings.config_files.workspace_gate import Gate


def apply_hooks_table(layers: Layers, name: str, locate: Locator, table: Any, gate: Gate) -> None:
    """`[hooks]` of one config file into `layers.hooks`; each bad entry is reported and skipped."""
    start = locate.table(HOOKS_TABLE) or locate.key(HOOKS_TABLE)
    if not gate.hooks(start):
        return
    if not isinstance(table, dict):
        layers.problem(name, start, 'write hooks as a [hooks] table: post_tool = ["command ..."].')
        return
    for event, entries in table.items():
        line = locate.key(event, after=start)
        if event not in HOOK_EVENTS:
            layers.problem(name, line, f"unknown hook event `{event}` is ignored; known: {', '.join(HOOK_EVENTS)}.")
            continue
        if not isinstance(entries, list):
            entries = [entries]
        where = f"{name}:{line}" if line else name
        for entry in entries:
            spec, error = parse_entry(event, entry, where)
            if error:
                layers.problem(name, line, f"[hooks] {event}: {error}; the entry is ignored.")
            elif spec is not None:
                layers.hooks.append(spec)
