"""Reads one TOML config file into the layers: every top-level key and table checked on its own.

Why each value on its own: a bad value is reported with its file and line and skipped, and the
rest of the file still applies. API keys are deliberately not settings: keys in a config file end
up in dotfile repos and backups, so a key that looks like one is refused with a pointer to the
environment. Whether a valid value may apply is the gate's call (settings/config_files/workspace_gate.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from myrm_tui.settings.config_files import mcp_entries
from myrm_tui.settings.config_files.hooks_table import apply_hooks_table
from myrm_tui.settings.config_files.layers import PERMISSION_LISTS, Layers
from myrm_tui.settings.config_files.toml_lines import Locator, error_line
from myrm_tui.settings.config_files.workspace_gate import Gate
from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.settings.sections.hooks import HOOKS_TABLE
from myrm_tui.settings.sections.model_overrides import MODEL_OVERRIDE_TYPES
from myrm_tui.settings.sections.permission_syntax import RuleError, parse_rule
from myrm_tui.settings.settings import RuleEntry
from myrm_tui.settings.value_checks import SECRET_KEY, TYPE_WORDS, did_you_mean, is_type, model_field_error, type_error

MODELS_TABLE = "models"
KEYMAP_TABLE = "keymap"
PERMISSIONS_TABLE = "permissions"


def read_toml(layers: Layers, path: Path) -> tuple[str, dict[str, Any]] | None:
    """The file's text and parsed tables, or None after reporting why it cannot be used."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        layers.problem(str(path), None, f"cannot read the file ({exc}); it is ignored.")
        return None
    return parse_toml(layers, str(path), data)


def parse_toml(layers: Layers, name: str, raw: bytes) -> tuple[str, dict[str, Any]] | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        layers.problem(name, None, f"cannot read the file ({exc}); it is ignored.")
        return None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = error_line(str(exc))
        layers.problem(name, line, f"not valid TOML: {exc}. The whole file is ignored until it is fixed.")
        return None


def apply_tables(layers: Layers, name: str, text: str, data: dict[str, Any], gate: Gate) -> None:
    """Every key of a parsed file into `layers`, each valid one only if `gate` lets it apply."""
    locate = Locator(text)
    for key, value in data.items():
        line = locate.key(key)
        if key == MODELS_TABLE:
            _apply_models(layers, name, locate, value, gate)
        elif key == KEYMAP_TABLE:
            _apply_keymap(layers, name, locate, value, gate)
        elif key == PERMISSIONS_TABLE:
            _apply_permissions(layers, name, locate, value, gate)
        elif key == mcp_entries.MCP_TABLE:
            mcp_entries.apply_toml_table(layers, name, locate, value, gate)
        elif key == HOOKS_TABLE:
            apply_hooks_table(layers, name, locate, value, gate)
        elif SECRET_KEY.search(key):
            _secret_problem(layers, name, line, key)
        elif key not in SPECS_BY_KEY:
            layers.problem(name, line, f"unknown setting `{key}` is ignored{did_you_mean(key)}.")
        else:
            spec = SPECS_BY_KEY[key]
            error = type_error(spec, value)
            if error:
                layers.problem(name, line, error + " It is ignored.")
            elif gate.setting(spec, value, line):
                layers.set(spec, value, name)


def _apply_models(layers: Layers, name: str, locate: Locator, table: Any, gate: Gate) -> None:
    if not isinstance(table, dict):
        layers.problem(name, locate.key(MODELS_TABLE), 'write model overrides as tables: [models."provider/name"].')
        return
    for model, overrides in table.items():
        line = locate.table(MODELS_TABLE, model)
        if not isinstance(overrides, dict):
            layers.problem(name, line, f'write the overrides of `{model}` as a table: [models."{model}"].')
            continue
        accepted = layers.models.setdefault(model, {})
        for key, value in overrides.items():
            key_line = locate.key(key, after=line)
            if SECRET_KEY.search(key):
                _secret_problem(layers, name, key_line, f"models.{model}.{key}")
                continue
            expected = MODEL_OVERRIDE_TYPES.get(key)
            if expected is None:
                known = ", ".join(sorted(MODEL_OVERRIDE_TYPES))
                layers.problem(
                    name, key_line, f"unknown model override `{key}` for `{model}` is ignored; known: {known}."
                )
            elif not is_type(value, expected):
                layers.problem(
                    name,
                    key_line,
                    f"`{key}` of `{model}` must be {TYPE_WORDS[expected]}, not {value!r}; it is ignored.",
                )
            elif (range_error := model_field_error(model, key, value)) is not None:
                layers.problem(name, key_line, f"{range_error} It is ignored.")
            elif gate.model_field(model, key, value, key_line):
                accepted[key] = float(value) if expected is float else value
        if not accepted:
            del layers.models[model]


def _apply_keymap(layers: Layers, name: str, locate: Locator, table: Any, gate: Gate) -> None:
    if not isinstance(table, dict):
        layers.problem(name, locate.key(KEYMAP_TABLE), "write key bindings as a [keymap] table.")
        return
    for binding, keys in table.items():
        if isinstance(keys, str) and keys.strip():
            if gate.keymap(binding, locate.key(binding)):
                layers.keymap[binding] = keys.strip()
        else:
            layers.problem(
                name,
                locate.key(binding),
                f'keymap `{binding}` must be a key string such as "ctrl+k"; it is ignored.',
            )


def _apply_permissions(layers: Layers, name: str, locate: Locator, table: Any, gate: Gate) -> None:
    """`[permissions] allow = [...]`, `deny = [...]`: rule strings, each checked on its own (a
    bad rule is skipped with its line; the others apply)."""
    if not isinstance(table, dict):
        layers.problem(
            name,
            locate.key(PERMISSIONS_TABLE),
            'write rules as a [permissions] table: allow = ["Bash(git status:*)"], deny = ["Bash(git push:*)"].',
        )
        return
    start = locate.table(PERMISSIONS_TABLE)
    for kind, rules in table.items():
        line = locate.key(kind, after=start)
        if kind not in PERMISSION_LISTS:
            layers.problem(name, line, f"unknown key `{kind}` in [permissions] is ignored; use allow or deny.")
            continue
        if not isinstance(rules, list):
            layers.problem(
                name,
                line,
                f'`{kind}` in [permissions] must be a list of rules such as ["Bash(git status:*)"]; it is ignored.',
            )
            continue
        if not gate.permission_list(kind, line):
            continue
        for text in rules:
            try:
                rule = parse_rule(text)
            except RuleError as exc:
                layers.problem(name, line, f"[permissions] {kind}: {exc}; the rule is ignored.")
                continue
            where = f"{name}:{line}" if line else name
            layers.permissions[kind].append(RuleEntry(rule.text, where))


def _secret_problem(layers: Layers, name: str, line: int | None, key: str) -> None:
    layers.problem(
        name,
        line,
        f"`{key}` looks like an API key; myrm never reads keys from config "
        "files. Remove it and set the provider's environment variable instead (e.g. "
        "export ANTHROPIC_API_KEY=...); `myrm doctor` lists the names.",
    )
