"""Layered settings: defaults → user config → workspace config → `MYRM_*` env → CLI flags.

Why problems instead of exceptions: a typo in a config file must never stop the app from
starting. Every layer is validated against the schema; a bad value is reported (file, line,
one sentence with the fix) and skipped, so the earlier layers' value stays in force.

API keys are deliberately not settings: keys in a config file end up in dotfile repos and
backups, so a key that looks like one is refused with a pointer to the environment.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from myrm_tui.llm.model_info import ModelInfo
from myrm_tui.llm.registry import OVERRIDABLE_FIELDS
from myrm_tui.settings import paths
from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY, SettingSpec
from myrm_tui.settings.settings import Settings
from myrm_tui.settings.toml_write import dumps

ENV_PREFIX = "MYRM_"
MODELS_TABLE = "models"
KEYMAP_TABLE = "keymap"

# Names that look like secrets. Matching is on the key name only; the value is never echoed.
_SECRET_KEY = re.compile(r"(api_?key|secret|password|passwd|(^|_)(access|auth|bearer)_?token)$", re.IGNORECASE)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_TYPE_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}

# Per-model overrides accepted under [models."name"]: the registry's list of overridable fields,
# typed by ModelInfo's annotations (strings, because of postponed evaluation; hence the map).
_ANNOTATION_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "str | None": str}
MODEL_OVERRIDE_TYPES: dict[str, type] = {
    f.name: _ANNOTATION_TYPES[str(f.type)]
    for f in dataclasses.fields(ModelInfo)
    if f.name in OVERRIDABLE_FIELDS
}


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with the configuration. `file` is a path, `env` or `flags`."""

    file: str
    line: int | None
    message: str
    level: str = "warning"  # warning: value skipped, app goes on; error: the command should stop

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    problems: list[ConfigProblem] = field(default_factory=list)
    files_found: list[Path] = field(default_factory=list)  # config files that exist, in layer order
    files_checked: list[Path] = field(default_factory=list)  # every file looked for, in layer order


class ConfigWriteError(Exception):
    """The config file cannot be updated without losing what is in it."""


def load_settings(
    workspace_root: Path,
    flags: Mapping[str, Any] | None = None,
    *,
    user_config_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedSettings:
    """Resolve the settings for a workspace; never raises for bad user input."""
    env = os.environ if env is None else env
    user_dir = user_config_dir if user_config_dir is not None else paths.user_config_dir(env)
    layers = _Layers()
    checked = [user_dir / paths.CONFIG_FILE_NAME, paths.workspace_config_file(workspace_root)]
    found = []
    for config_file in checked:
        if config_file.is_file():
            found.append(config_file)
            layers.apply_file(config_file)
    layers.apply_env(env)
    layers.apply_flags(flags or {})
    return LoadedSettings(layers.build(), layers.problems, found, checked)


def save_user_settings(changes: Mapping[str, Any], path: Path | None = None) -> Path:
    """Merge `changes` into the user config file atomically, keeping every other key.

    Schema keys map to values (None removes the key, i.e. back to the default); `models` maps a
    model name to an overrides dict (None removes that model) and `keymap` a binding id to keys.
    Raises ValueError for an invalid change (TypeError for a table that is not a mapping) and
    ConfigWriteError when the existing file cannot be parsed (rewriting it would lose content).
    """
    path = path if path is not None else paths.user_config_file()
    current: dict[str, Any] = {}
    if path.is_file():
        try:
            current = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigWriteError(
                f"{path} is not valid TOML ({exc}); fix or remove it, then save again."
            ) from exc
    for key, value in changes.items():
        if key == MODELS_TABLE:
            _merge_table(current, key, value, _check_model_table)
        elif key == KEYMAP_TABLE:
            _merge_table(current, key, value, _check_keymap_entry)
        elif key in SPECS_BY_KEY:
            if value is None:
                current.pop(key, None)
            else:
                error = _type_error(SPECS_BY_KEY[key], value)
                if error:
                    raise ValueError(error)
                current[key] = float(value) if SPECS_BY_KEY[key].type is float else value
        elif _SECRET_KEY.search(key):
            raise ValueError(f"`{key}` looks like an API key; myrm keeps keys in the environment only.")
        else:
            raise ValueError(f"unknown setting `{key}`")
    _atomic_write(path, dumps(current))
    return path


# ---------------------------------------------------------------- layering


class _Layers:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {s.key: s.default for s in SETTINGS}
        self.sources: dict[str, str] = {s.key: "default" for s in SETTINGS}
        self.models: dict[str, dict[str, Any]] = {}
        self.keymap: dict[str, str] = {}
        self.problems: list[ConfigProblem] = []

    def build(self) -> Settings:
        return Settings(
            values=MappingProxyType(dict(self.values)),
            # Plain dicts, like Settings' own defaults, so consumers can json.dumps them.
            models={k: dict(v) for k, v in self.models.items()},
            keymap=dict(self.keymap),
            sources=MappingProxyType(dict(self.sources)),
        )

    def _problem(self, file: str, line: int | None, message: str, level: str = "warning") -> None:
        self.problems.append(ConfigProblem(file, line, message, level))

    def apply_file(self, path: Path) -> None:
        name = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._problem(name, None, f"cannot read the file ({exc}); it is ignored.")
            return
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line = _error_line(str(exc))
            self._problem(name, line, f"not valid TOML: {exc}. The whole file is ignored until it is fixed.")
            return
        locate = _Locator(text)
        for key, value in data.items():
            line = locate.key(key)
            if key == MODELS_TABLE:
                self._apply_models(name, locate, value)
            elif key == KEYMAP_TABLE:
                self._apply_keymap(name, locate, value)
            elif _SECRET_KEY.search(key):
                self._secret_problem(name, line, key)
            elif key not in SPECS_BY_KEY:
                self._problem(name, line, f"unknown setting `{key}` is ignored{_did_you_mean(key)}.")
            else:
                spec = SPECS_BY_KEY[key]
                error = _type_error(spec, value)
                if error:
                    self._problem(name, line, error + " It is ignored.")
                else:
                    self._set(spec, value, name)

    def _apply_models(self, name: str, locate: _Locator, table: Any) -> None:
        if not isinstance(table, dict):
            self._problem(name, locate.key(MODELS_TABLE),
                          'write model overrides as tables: [models."provider/name"].')
            return
        for model, overrides in table.items():
            line = locate.table(MODELS_TABLE, model)
            if not isinstance(overrides, dict):
                self._problem(name, line, f'write the overrides of `{model}` as a table: [models."{model}"].')
                continue
            accepted = self.models.setdefault(model, {})
            for key, value in overrides.items():
                key_line = locate.key(key, after=line)
                if _SECRET_KEY.search(key):
                    self._secret_problem(name, key_line, f"models.{model}.{key}")
                    continue
                expected = MODEL_OVERRIDE_TYPES.get(key)
                if expected is None:
                    known = ", ".join(sorted(MODEL_OVERRIDE_TYPES))
                    self._problem(name, key_line, f"unknown model override `{key}` for `{model}` is "
                                  f"ignored; known: {known}.")
                elif not _is_type(value, expected):
                    self._problem(name, key_line, f"`{key}` of `{model}` must be "
                                  f"{_TYPE_WORDS[expected]}, not {value!r}; it is ignored.")
                else:
                    accepted[key] = float(value) if expected is float else value
            if not accepted:
                del self.models[model]

    def _apply_keymap(self, name: str, locate: _Locator, table: Any) -> None:
        if not isinstance(table, dict):
            self._problem(name, locate.key(KEYMAP_TABLE), "write key bindings as a [keymap] table.")
            return
        for binding, keys in table.items():
            if isinstance(keys, str) and keys.strip():
                self.keymap[binding] = keys.strip()
            else:
                self._problem(name, locate.key(binding), f"keymap `{binding}` must be a key string "
                              f'such as "ctrl+k"; it is ignored.')

    def _secret_problem(self, name: str, line: int | None, key: str) -> None:
        self._problem(name, line, f"`{key}` looks like an API key; myrm never reads keys from config "
                      "files. Remove it and set the provider's environment variable instead (e.g. "
                      "export ANTHROPIC_API_KEY=...); `myrm doctor` lists the names.")

    def apply_env(self, env: Mapping[str, str]) -> None:
        for spec in SETTINGS:
            var = ENV_PREFIX + spec.key.upper()
            if var not in env:
                continue
            value, error = _parse_text(spec, env[var])
            if error:
                self._problem("env", None, f"{var}={env[var]!r}: {error} The value is ignored.")
            else:
                self._set(spec, value, f"env {var}")

    def apply_flags(self, flags: Mapping[str, Any]) -> None:
        for key, value in flags.items():
            if value is None:
                continue
            spec = SPECS_BY_KEY.get(key)
            if spec is None:
                raise KeyError(f"unknown setting passed as a flag: {key}")  # a programming error
            flag = "--" + key.replace("_", "-")
            error = _type_error(spec, value)
            if error:
                self._problem("flags", None, f"{flag}: {error}", level="error")
            else:
                self._set(spec, value, f"flag {flag}")

    def _set(self, spec: SettingSpec, value: Any, source: str) -> None:
        self.values[spec.key] = float(value) if spec.type is float else value
        self.sources[spec.key] = source


# ---------------------------------------------------------------- validation


def _is_type(value: Any, expected: type) -> bool:
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, expected)


def _type_error(spec: SettingSpec, value: Any) -> str | None:
    """One sentence saying what is wrong with `value` for `spec`, or None if it is valid."""
    if not _is_type(value, spec.type):
        return f"`{spec.key}` must be {_TYPE_WORDS[spec.type]}, not {value!r}."
    if spec.choices and value not in spec.choices:
        return f"`{spec.key}` must be one of {', '.join(spec.choices)}, not {value!r}."
    if spec.type in (int, float) and value < 0:
        return f"`{spec.key}` cannot be negative ({value!r})."
    return None


def _parse_text(spec: SettingSpec, text: str) -> tuple[Any, str | None]:
    """Typed value of an environment string, or (None, one-sentence error)."""
    raw = text.strip()
    value: Any
    if spec.type is bool:
        if raw.lower() in _TRUE:
            value = True
        elif raw.lower() in _FALSE:
            value = False
        else:
            return None, "expected true or false (also 1/0, yes/no, on/off)."
    elif spec.type is int:
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            return None, f"expected a whole number such as {spec.default}."
    elif spec.type is float:
        try:
            value = float(raw)
        except ValueError:
            return None, f"expected a number such as {spec.default}."
    else:
        value = raw  # surrounding spaces in an env value are never meant (`export X=" yolo"`)
    return value, _type_error(spec, value)


def _did_you_mean(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(SPECS_BY_KEY), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _error_line(message: str) -> int | None:
    """tomllib puts the position in the text: '... (at line 3, column 7)'."""
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else None


class _Locator:
    """Best-effort line numbers for keys and tables (tomllib does not report positions)."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def key(self, key: str, after: int | None = None) -> int | None:
        pattern = re.compile(r"^\s*(" + re.escape(key) + r"|[\"']" + re.escape(key) + r"[\"'])\s*=")
        return self._find(pattern, after)

    def table(self, *names: str) -> int | None:
        parts = [r"\s*(" + re.escape(n) + r"|[\"']" + re.escape(n) + r"[\"'])\s*" for n in names]
        pattern = re.compile(r"^\s*\[" + r"\.".join(parts) + r"\]")
        return self._find(pattern, None)

    def _find(self, pattern: re.Pattern[str], after: int | None) -> int | None:
        start = after or 0
        for index in range(start, len(self.lines)):
            if pattern.match(self.lines[index]):
                return index + 1
        return None


# ---------------------------------------------------------------- writing


def _merge_table(current: dict[str, Any], name: str, changes: Any, check) -> None:
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
            merged = dict(table[key])
            merged.update(value)
            table[key] = {k: v for k, v in merged.items() if v is not None}
        else:
            table[key] = dict(value) if isinstance(value, Mapping) else value
    if not table:
        del current[name]


def _check_model_table(model: str, overrides: Any) -> None:
    if not isinstance(overrides, Mapping):
        raise TypeError(f"overrides for `{model}` must be a mapping")
    for key, value in overrides.items():
        if _SECRET_KEY.search(key):
            raise ValueError(f"`{key}` looks like an API key; myrm keeps keys in the environment only.")
        expected = MODEL_OVERRIDE_TYPES.get(key)
        if expected is None:
            raise ValueError(f"unknown model override `{key}`")
        if value is not None and not _is_type(value, expected):
            raise ValueError(f"`{key}` must be {_TYPE_WORDS[expected]}, not {value!r}")


def _check_keymap_entry(binding: str, keys: Any) -> None:
    if not isinstance(keys, str) or not keys.strip():
        raise ValueError(f"keymap `{binding}` must be a non-empty key string")


def _atomic_write(path: Path, text: str) -> None:
    """Temp file in the same folder + os.replace: a crash leaves the old or the new file, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".config-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # Keep the mode the user gave the file; a new file is private to the user.
        os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else 0o600)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
