"""Layered settings: defaults → user config → workspace config → `MYRM_*` env → CLI flags.

Why problems instead of exceptions: a typo in a config file must never stop the app from
starting. Every layer is validated against the schema; a bad value is reported (file, line,
one sentence with the fix) and skipped, so the earlier layers' value stays in force.

API keys are deliberately not settings: keys in a config file end up in dotfile repos and
backups, so a key that looks like one is refused with a pointer to the environment.

The workspace file comes with the repository, so it passes a gate (settings/trust.py): values
that decide what runs or where data goes wait for the user's trust, and the tool permissions
can only be tightened by it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from myrm_tui.settings import mcp_entries, paths
from myrm_tui.settings import trust as T
from myrm_tui.settings.atomic_file import atomic_write_text as _atomic_write
from myrm_tui.settings.model_overrides import MODEL_OVERRIDE_TYPES
from myrm_tui.settings.permission_syntax import RuleError, parse_rule
from myrm_tui.settings.schema import (
    MODEL_FIELD_MINIMUMS,
    NEEDS_TRUST,
    SETTINGS,
    SPECS_BY_KEY,
    TIGHTEN_ONLY,
    SettingSpec,
)
from myrm_tui.settings.settings import PermissionLists, RuleEntry, Settings
from myrm_tui.settings.toml_write import dumps, parse_for_edit

ENV_PREFIX = "MYRM_"
MODELS_TABLE = "models"
KEYMAP_TABLE = "keymap"
PERMISSIONS_TABLE = "permissions"
PERMISSION_LISTS = ("allow", "deny")

# Names that look like secrets. Matching is on the key name only; the value is never echoed.
_SECRET_KEY = re.compile(r"(api_?key|secret|password|passwd|(^|_)(access|auth|bearer)_?token)$", re.IGNORECASE)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_TYPE_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}


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
    workspace_trust: T.WorkspaceTrust | None = None  # what the workspace file needs trust for


class ConfigWriteError(Exception):
    """The config file cannot be updated without losing what is in it."""


def load_settings(
    workspace_root: Path,
    flags: Mapping[str, Any] | None = None,
    *,
    user_config_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    accept_workspace: str | None = None,
) -> LoadedSettings:
    """Resolve the settings for a workspace; never raises for bad user input.

    `accept_workspace` is the user's word for this run only: trust.ACCEPT_ANY (`--trust`)
    accepts the workspace file whatever it says, a sha256 accepts it only while its content
    still has that digest (the trust dialog: what was shown is what is accepted).
    """
    env = os.environ if env is None else env
    user_dir = user_config_dir if user_config_dir is not None else paths.user_config_dir(env)
    layers = _Layers()
    user_file = user_dir / paths.CONFIG_FILE_NAME
    workspace_file = paths.workspace_config_file(workspace_root)
    user_mcp = mcp_entries.user_mcp_json(user_dir)
    workspace_mcp = mcp_entries.workspace_mcp_json(workspace_root)
    checked = [user_file, user_mcp, workspace_file, workspace_mcp]
    found = []
    trust = T.WorkspaceTrust(workspace_root.resolve(), workspace_file)
    if user_file.is_file():
        found.append(user_file)
        layers.apply_file(user_file)
    if user_mcp.is_file():
        found.append(user_mcp)
        layers.apply_mcp_json(user_mcp)
    own_file = workspace_file if workspace_file.is_file() and not _same_file(workspace_file, user_file) else None
    if own_file is not None or workspace_mcp.is_file():
        found += [path for path in (own_file, workspace_mcp) if path is not None and path.is_file()]
        trust = layers.apply_workspace_file(
            own_file, workspace_root, user_dir, accept_workspace, mcp_json=workspace_mcp
        )
    layers.apply_env(env)
    layers.apply_flags(flags or {})
    trust = layers.settle_trust(trust)
    return LoadedSettings(layers.build(), layers.problems, found, checked, trust)


def _same_file(a: Path, b: Path) -> bool:
    """MYRM_CONFIG_DIR pointed at the workspace's own .myrm: the file is the user's, read once."""
    try:
        return b.is_file() and a.samefile(b)
    except OSError:
        return False


def save_user_settings(changes: Mapping[str, Any], path: Path | None = None) -> Path:
    """Merge `changes` into the user config file atomically, keeping every other key.

    Schema keys map to values (None removes the key, i.e. back to the default); `models` maps a
    model name to an overrides dict (None removes that model) and `keymap` a binding id to keys.
    Raises ValueError for an invalid change (TypeError for a table that is not a mapping) and
    ConfigWriteError when the existing file cannot be parsed (rewriting it would lose content).
    """
    path = path if path is not None else paths.user_config_file()
    # An editable document, not plain data: the rewrite keeps the user's comments and key order.
    current: dict[str, Any] = parse_for_edit("")
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
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
        self.mcp_servers: dict[str, Any] = {}  # name -> settings.mcp_config.McpServerConfig
        self.permissions: dict[str, list[RuleEntry]] = {kind: [] for kind in PERMISSION_LISTS}
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
        )

    def _problem(self, file: str, line: int | None, message: str, level: str = "warning") -> None:
        self.problems.append(ConfigProblem(file, line, message, level))

    def apply_file(self, path: Path) -> None:
        """A file of the user's own: every valid value applies."""
        parsed = self._read_toml(path)
        if parsed is not None:
            self._apply_data(str(path), *parsed, _Gate())

    def apply_mcp_json(self, path: Path) -> None:
        """The user's own `mcp.json` (Claude Code's shape): every valid server applies."""
        raw = self._read_bytes(path)
        if raw is not None:
            mcp_entries.apply_json_file(self, str(path), raw, _Gate())

    def _read_bytes(self, path: Path | None) -> bytes | None:
        if path is None or not path.is_file():
            return None
        try:
            return path.read_bytes()
        except OSError as exc:
            self._problem(str(path), None, f"cannot read the file ({exc}); it is ignored.")
            return None

    def apply_workspace_file(
        self, path: Path | None, workspace: Path, user_dir: Path, accept: str | None, mcp_json: Path | None = None
    ) -> T.WorkspaceTrust:
        """The repository's files (`.myrm/config.toml` and `.mcp.json`): values pass the
        workspace gate; returns the trust state, keyed by both files' bytes together."""
        data = self._read_bytes(path)
        mcp_data = self._read_bytes(mcp_json)
        shown = path if path is not None and (data is not None or mcp_data is None) else mcp_json
        assert shown is not None  # the caller passes at least one existing file
        name = str(shown)
        state = T.WorkspaceTrust(workspace.resolve(), shown)
        if data is None and mcp_data is None:
            return state
        digest = T.workspace_digest(data, mcp_data)
        trusted_at = None
        if accept in (T.ACCEPT_ANY, digest):
            decided = T.ACCEPTED
        else:
            try:
                trusted_at = T.stored_decision(user_dir, workspace, digest)
            except T.TrustStoreError as exc:
                self._problem(
                    str(T.trust_file(user_dir)),
                    None,
                    f"{exc} Workspace files count as not trusted until it is fixed or deleted.",
                )
            decided = T.TRUSTED if trusted_at else T.UNTRUSTED
        gate = _WorkspaceGate(self, name, trusted=decided != T.UNTRUSTED)
        parsed = self._parse(name, data) if data is not None else None
        if parsed is not None:
            self._apply_data(name, *parsed, gate)
        if mcp_data is not None:
            mcp_entries.apply_json_file(self, str(mcp_json), mcp_data, gate)
        if not gate.entries:
            return dataclasses.replace(state, state=T.NOTHING_TO_TRUST, digest=digest)
        return dataclasses.replace(
            state, state=decided, digest=digest, entries=tuple(gate.entries), trusted_at=trusted_at
        )

    def settle_trust(self, state: T.WorkspaceTrust) -> T.WorkspaceTrust:
        """After env and flags: a held-back value the user overrode anyway (`--model`,
        MYRM_MODEL) needs no decision; what is left is reported once."""
        if not state.needs_decision:
            return state
        user_set = ("env ", "flag ")
        moot = tuple(e for e in state.entries if e.setting is not None and self.sources[e.setting].startswith(user_set))
        entries = tuple(e for e in state.entries if e not in moot)
        if not entries:
            return dataclasses.replace(state, state=T.NOTHING_TO_TRUST, entries=(), overridden=moot)
        state = dataclasses.replace(state, entries=entries, overridden=moot)
        self._problem(str(state.config_file), None, state.notice())
        return state

    def _read_toml(self, path: Path) -> tuple[str, dict[str, Any]] | None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            self._problem(str(path), None, f"cannot read the file ({exc}); it is ignored.")
            return None
        return self._parse(str(path), data)

    def _parse(self, name: str, raw: bytes) -> tuple[str, dict[str, Any]] | None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._problem(name, None, f"cannot read the file ({exc}); it is ignored.")
            return None
        try:
            return text, tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line = _error_line(str(exc))
            self._problem(name, line, f"not valid TOML: {exc}. The whole file is ignored until it is fixed.")
            return None

    def _apply_data(self, name: str, text: str, data: dict[str, Any], gate: _Gate) -> None:
        locate = _Locator(text)
        for key, value in data.items():
            line = locate.key(key)
            if key == MODELS_TABLE:
                self._apply_models(name, locate, value, gate)
            elif key == KEYMAP_TABLE:
                self._apply_keymap(name, locate, value, gate)
            elif key == PERMISSIONS_TABLE:
                self._apply_permissions(name, locate, value, gate)
            elif key == mcp_entries.MCP_TABLE:
                mcp_entries.apply_toml_table(self, name, locate, value, gate)
            elif _SECRET_KEY.search(key):
                self._secret_problem(name, line, key)
            elif key not in SPECS_BY_KEY:
                self._problem(name, line, f"unknown setting `{key}` is ignored{_did_you_mean(key)}.")
            else:
                spec = SPECS_BY_KEY[key]
                error = _type_error(spec, value)
                if error:
                    self._problem(name, line, error + " It is ignored.")
                elif gate.setting(spec, value, line):
                    self._set(spec, value, name)

    def _apply_models(self, name: str, locate: _Locator, table: Any, gate: _Gate) -> None:
        if not isinstance(table, dict):
            self._problem(name, locate.key(MODELS_TABLE), 'write model overrides as tables: [models."provider/name"].')
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
                    self._problem(
                        name, key_line, f"unknown model override `{key}` for `{model}` is ignored; known: {known}."
                    )
                elif not _is_type(value, expected):
                    self._problem(
                        name,
                        key_line,
                        f"`{key}` of `{model}` must be {_TYPE_WORDS[expected]}, not {value!r}; it is ignored.",
                    )
                elif (range_error := _model_field_error(model, key, value)) is not None:
                    self._problem(name, key_line, f"{range_error} It is ignored.")
                elif gate.model_field(model, key, value, key_line):
                    accepted[key] = float(value) if expected is float else value
            if not accepted:
                del self.models[model]

    def _apply_keymap(self, name: str, locate: _Locator, table: Any, gate: _Gate) -> None:
        if not isinstance(table, dict):
            self._problem(name, locate.key(KEYMAP_TABLE), "write key bindings as a [keymap] table.")
            return
        for binding, keys in table.items():
            if isinstance(keys, str) and keys.strip():
                if gate.keymap(binding, locate.key(binding)):
                    self.keymap[binding] = keys.strip()
            else:
                self._problem(
                    name,
                    locate.key(binding),
                    f'keymap `{binding}` must be a key string such as "ctrl+k"; it is ignored.',
                )

    def _apply_permissions(self, name: str, locate: _Locator, table: Any, gate: _Gate) -> None:
        """`[permissions] allow = [...]`, `deny = [...]`: rule strings, each checked on its own (a
        bad rule is skipped with its line; the others apply)."""
        if not isinstance(table, dict):
            self._problem(
                name,
                locate.key(PERMISSIONS_TABLE),
                'write rules as a [permissions] table: allow = ["Bash(git status:*)"], deny = ["Bash(git push:*)"].',
            )
            return
        start = locate.table(PERMISSIONS_TABLE)
        for kind, rules in table.items():
            line = locate.key(kind, after=start)
            if kind not in PERMISSION_LISTS:
                self._problem(name, line, f"unknown key `{kind}` in [permissions] is ignored; use allow or deny.")
                continue
            if not isinstance(rules, list):
                self._problem(
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
                    self._problem(name, line, f"[permissions] {kind}: {exc}; the rule is ignored.")
                    continue
                where = f"{name}:{line}" if line else name
                self.permissions[kind].append(RuleEntry(rule.text, where))

    def _secret_problem(self, name: str, line: int | None, key: str) -> None:
        self._problem(
            name,
            line,
            f"`{key}` looks like an API key; myrm never reads keys from config "
            "files. Remove it and set the provider's environment variable instead (e.g. "
            "export ANTHROPIC_API_KEY=...); `myrm doctor` lists the names.",
        )

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


class _Gate:
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


class _WorkspaceGate(_Gate):
    """The repository's file: needs-trust values wait for trust (and are listed), tighten-only
    values may only make things stricter, the approval keys cannot be remapped."""

    scope = "workspace"

    def __init__(self, layers: _Layers, name: str, *, trusted: bool) -> None:
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
        if rule == TIGHTEN_ONLY:
            current = self.layers.values[spec.key]
            if not T.loosens(spec, value, current):
                return True
            self.layers._problem(
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
        self.layers._problem(
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
        self.layers._problem(
            self.name,
            line,
            (
                "`[permissions] allow` is ignored: a workspace file may only add deny rules, trusted or not; "
                'allow rules come from your user config or your own "Always allow" answers.'
            ),
        )
        return False


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
    if spec.type in (int, float):
        return _range_error(f"`{spec.key}`", value, minimum=spec.minimum, above=spec.above, maximum=spec.maximum)
    return None


def _range_error(
    what: str, value: float, *, minimum: float | None = None, above: float | None = None, maximum: float | None = None
) -> str | None:
    """One sentence when `value` is out of the declared range (no bound declared: not negative)."""
    if above is not None and not value > above:
        return f"{what} must be more than {_number(above)}, not {value!r}."
    low = 0 if minimum is None and above is None else minimum
    if low is not None and value < low:
        if value < 0 <= low:
            return f"{what} cannot be negative ({value!r}); use at least {_number(low)}."
        return f"{what} must be at least {_number(low)}, not {value!r}."
    if maximum is not None and value > maximum:
        return f"{what} must be at most {_number(maximum)}, not {value!r}."
    return None


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _model_field_error(model: str, key: str, value: Any) -> str | None:
    if key == "reasoning_effort":
        choices = SPECS_BY_KEY["reasoning_effort"].choices
        return (
            None
            if value in choices
            else f"`reasoning_effort` of `{model}` must be one of {', '.join(choices)}, not {value!r}."
        )
    minimum = MODEL_FIELD_MINIMUMS.get(key)
    if minimum is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return _range_error(f"`{key}` of `{model}`", value, minimum=minimum)


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
        if _SECRET_KEY.search(key):
            raise ValueError(f"`{key}` looks like an API key; myrm keeps keys in the environment only.")
        expected = MODEL_OVERRIDE_TYPES.get(key)
        if expected is None:
            raise ValueError(f"unknown model override `{key}`")
        if value is not None and not _is_type(value, expected):
            raise ValueError(f"`{key}` must be {_TYPE_WORDS[expected]}, not {value!r}")
        range_error = _model_field_error(model, key, value) if value is not None else None
        if range_error is not None:
            raise ValueError(range_error)


def _check_keymap_entry(binding: str, keys: Any) -> None:
    if not isinstance(keys, str) or not keys.strip():
        raise ValueError(f"keymap `{binding}` must be a non-empty key string")
