"""Saves changes into the user config file (the settings screen, `/model NAME --default`).

Why an edit of the parsed document and not a fresh dump: the user's comments and key order
survive; and a file the TOML reader rejects is never rewritten, since that would lose content.
Each change is checked like the loader checks a value, so what is saved is what will load.
The file is read and replaced through one handle of its folder, never through a link
(myrm_tui/fenced_files.py): a config file that is a symlink is refused with what to do, rather
than written through or silently replaced by a plain file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from myrm_tui.fenced_files import FenceError
from myrm_tui.fenced_paths import user_file
from myrm_tui.settings import paths
from myrm_tui.settings.config_files.problems import ConfigWriteError
from myrm_tui.settings.config_files.tables import KEYMAP_TABLE, MODELS_TABLE
from myrm_tui.settings.config_files.toml_write import dumps, parse_for_edit
from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.settings.sections.model_overrides import MODEL_OVERRIDE_TYPES
from myrm_tui.settings.value_checks import SECRET_KEY, TYPE_WORDS, is_type, model_field_error, type_error


def save_user_settings(changes: Mapping[str, Any], path: Path | None = None) -> Path:
    """Merge `changes` into the user config file atomically, keeping every other key.

    Schema keys map to values (None removes the key, i.e. back to the default); `models` maps a
    model name to an overrides dict (None removes that model) and `keymap` a binding id to keys.
    Raises ValueError for an invalid change (TypeError for a table that is not a mapping) and
    ConfigWriteError when the existing file cannot be parsed (rewriting it would lose content).
    """
    path = path if path is not None else paths.user_config_file()
    with user_file(path, create_folder=True) as target:
        try:
            found = target.lstat()
            data = target.read_bytes() if found is not None else None
        except FenceError as exc:
            raise ConfigWriteError(
                f"{exc.fact}; myrm saves settings only into a real file, never through a link. Edit "
                "the file it points to yourself, or replace the link with a copy of it, then save again."
            ) from None
        target.replace(dumps(_apply(path, data, changes)))
    return path


def _apply(path: Path, data: bytes | None, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The document with `changes` merged in (see `save_user_settings`)."""
    # An editable document, not plain data: the rewrite keeps the user's comments and key order.
    current: dict[str, Any] = parse_for_edit("")
    if data is not None:
        try:
            text = data.decode("utf-8")
            tomllib.loads(text)  # the reader's verdict decides what counts as broken
            current = parse_for_edit(text)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
            raise ConfigWriteError(f"{path} is not valid TOML ({exc}); fix or remove it, then save again.") from exc
    for key, value in changes.items():
        if key == MODELS_TABLE:
            _merge_table(current, key, value, _check_model_table)
        elif key == KEYMAP_TABLE:
            _merge_table(current, key, value, _check_keymap_entry)
        elif key in SPECS_BY_KEY:
            if value is None:
                current.pop(key, None)
            else:
                error = type_error(SPECS_BY_KEY[key], value)
                if error:
                    raise ValueError(error)
                current[key] = float(value) if SPECS_BY_KEY[key].type is float else value
        elif SECRET_KEY.search(key):
            raise ValueError(f"`{key}` looks like an API key; myrm keeps keys in the environment only.")
        else:
            raise ValueError(f"unknown setting `{key}`")
    return current


def _merge_table(current: dict[str, Any], name: str, changes: Any, check: Callable[[str, Any], None]) -> None:
    if not isinstance(changes, Mapping):
        raise TypeError(f"`{name}` changes must be a mapping")
    table = current.setdefault(name, {})
    if not isinstance(table, dict):
        raise ConfigWriteError(f"`{name}` in the config file is not a table; fix it by hand first.")
    for key, value in changes.items():
        if value is None:
            table.pop(key, None)
            continue
        check(key, value)
        if isinstance(value, Mapping) and isinstance(table.get(key), dict):
            # In place, not a fresh table: the comments inside the user's table survive.
            existing = table[key]
            for field_name, field_value in value.items():
                if field_value is None:
                    existing.pop(field_name, None)
                else:
                    existing[field_name] = field_value
        else:
            table[key] = dict(value) if isinstance(value, Mapping) else value
    if not table:
        del current[name]


def _check_model_table(model: str, overrides: Any) -> None:
    if not isinstance(overrides, Mapping):
        raise TypeError(f"overrides for `{model}` must be a mapping")
    for key, value in overrides.items():
        if SECRET_KEY.search(key):
            raise ValueError(f"`{key}` looks like an API key; myrm keeps keys in the environment only.")
        expected = MODEL_OVERRIDE_TYPES.get(key)
        if expected is None:
            raise ValueError(f"unknown model override `{key}`")
        if value is not None and not is_type(value, expected):
            raise ValueError(f"`{key}` must be {TYPE_WORDS[expected]}, not {value!r}")
        range_error = model_field_error(model, key, value) if value is not None else None
        if range_error is not None:
            raise ValueError(range_error)


def _check_keymap_entry(binding: str, keys: Any) -> None:
    if not isinstance(keys, str) or not keys.strip():
        raise ValueError(f"keymap `{binding}` must be a non-empty key string")
