"""Declarative output filters: the user's `<config dir>/filters/*.toml` and the workspace's
`.myrm/filters/*.toml`, read and checked into `FilterSpec`s (applied by context/filters/declarative.py).

Why checked here, once: a filter with a bad regex or a misspelt key must say so, naming the file
and the key, and be skipped; it must never crash a turn or silently do something else. Why the
workspace's filters wait for trust: a filter decides what the model and the user see of a
command's output, so a repository that arrives with `git clone` could otherwise hide its own
failing tests or a malicious script's output. Until the workspace is trusted they are only listed
(`myrm doctor`), as "held".

One file is one filter, named by the file's stem:

    # ~/.config/myrm/filters/gradle.toml
    match.prefix = "./gradlew"        # or match.command = '<regex>', or match.tool = "<tool name>"
    drop = ['^> Task .* UP-TO-DATE$']
    keep = ['FAILED', '^BUILD ']
    head = 3
    tail = 20
    collapse_repeats = true
    max_lines = 200
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.fenced_paths import read_inside, read_users_own
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.paths import WORKSPACE_DIR_NAME
from myrm_tui.settings.sections.output_filters import MATCH_COMMAND, MATCH_PREFIX, MATCH_TOOL, FilterSpec
from myrm_tui.settings.trust import ACCEPT_ANY, WorkspaceTrust

FILTERS_FOLDER = "filters"
FILE_SUFFIX = ".toml"
USER = "user"
WORKSPACE = "workspace"
# The filters shipped in the package (context/filters/shipped/): after the user's and the
# workspace's, so either replaces one for the commands it matches.
BUILT_IN = "built-in"

MATCH_KINDS = (MATCH_COMMAND, MATCH_PREFIX, MATCH_TOOL)

RULE_KEYS = ("keep", "drop", "head", "tail", "collapse_repeats", "max_lines")
KNOWN_KEYS = ("match", *RULE_KEYS)
# A filter's name becomes the excerpt's kind in the header the model reads; plain words only,
# so a file name cannot inject text there.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# A file larger than this is not a hand-written filter; refusing it keeps startup cheap.
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class FilterFiles:
    """What was found: filters that apply, workspace filters held until trust, and problems."""

    applied: tuple[FilterSpec, ...] = ()
    held: tuple[FilterSpec, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()


def workspace_filters_trusted(trust: WorkspaceTrust | None, accept_workspace: str | None = None) -> bool:
    """Whether the workspace's filters apply: the user trusts the workspace's files as they are
    now (`myrm trust`, the dialog) or accepted them for this run (`--trust`). A workspace whose
    config needs no trust is not thereby trusted: a filter can hide output, so it waits."""
    if accept_workspace == ACCEPT_ANY:
        return True
    return trust is not None and trust.applied


def workspace_filter_bytes(workspace: Path) -> list[tuple[str, bytes]]:
    """The workspace's filter files as (file name, bytes), sorted: what the trust digest covers,
    read whether or not they parse (a broken file is still the repository's word)."""
    folder = workspace_filters_dir(workspace)
    try:
        paths = sorted(p for p in folder.iterdir() if p.name.endswith(FILE_SUFFIX) and p.is_file())
    except OSError:
        return []
    found = []
    for path in paths:
        try:  # under the workspace's fence: a committed link to a file outside is not read
            found.append((path.name, read_inside(workspace, path, limit=MAX_FILE_BYTES) or b""))
        except OSError:
            found.append((path.name, b""))
    return found


def user_filters_dir(user_dir: Path) -> Path:
    return user_dir / FILTERS_FOLDER


def workspace_filters_dir(workspace: Path) -> Path:
    return workspace / WORKSPACE_DIR_NAME / FILTERS_FOLDER


def load_filter_files(workspace: Path, user_dir: Path, *, workspace_trusted: bool) -> FilterFiles:
    """Every filter file of the user, then of the workspace (sorted by name within each): the
    user's own come first so they win a command both match, as with custom commands."""
    problems: list[ConfigProblem] = []
    user = _read_folder(user_filters_dir(user_dir), USER, problems)
    own_folder = workspace_filters_dir(workspace)
    same = _same_folder(own_folder, user_filters_dir(user_dir))
    workspace_specs = [] if same else _read_folder(own_folder, WORKSPACE, problems, workspace)
    names = {spec.name for spec in user}
    kept_workspace = []
    for spec in workspace_specs:
        if spec.name in names:
            problems.append(
                ConfigProblem(str(spec.path), None, f"a filter named {spec.name!r} is also one of yours; yours applies")
            )
            continue
        kept_workspace.append(spec)
    if workspace_trusted:
        return FilterFiles(tuple(user + kept_workspace), (), tuple(problems))
    return FilterFiles(tuple(user), tuple(kept_workspace), tuple(problems))


def _same_folder(a: Path, b: Path) -> bool:
    """MYRM_CONFIG_DIR pointed at the workspace's own .myrm: the files are the user's, read once."""
    try:
        return a.is_dir() and b.is_dir() and a.samefile(b)
    except OSError:
        return False


def _read_folder(
    folder: Path, scope: str, problems: list[ConfigProblem], workspace: Path | None = None
) -> list[FilterSpec]:
    try:
        paths = sorted(p for p in folder.iterdir() if p.name.endswith(FILE_SUFFIX) and p.is_file())
    except OSError:
        return []  # no folder (the usual case) or unreadable: nothing to load
    specs = []
    for path in paths:
        spec = read_filter_file(path, scope, problems, workspace)
        if spec is not None:
            specs.append(spec)
    return specs


def read_filter_file(
    path: Path, scope: str, problems: list[ConfigProblem], workspace: Path | None = None
) -> FilterSpec | None:
    """The filter in `path`, or None after appending why it is skipped. `workspace`: the file is
    the repository's and is read under its fence (no link out of it, fenced_paths.read_inside)."""

    def problem(message: str) -> None:
        problems.append(ConfigProblem(str(path), None, f"{message}; this filter is skipped."))

    name = path.name[: -len(FILE_SUFFIX)]
    if not _NAME.match(name):
        problem(f"the file name {name!r} is not a filter name (letters, digits, `_`, `-`, `.`; 64 at most)")
        return None
    try:
        if workspace is None:
            raw = read_users_own(path, limit=MAX_FILE_BYTES) or b""
        else:
            raw = read_inside(workspace, path, limit=MAX_FILE_BYTES) or b""
    except OSError as exc:
        problem(f"cannot read the file ({exc})")
        return None
    return parse_filter(name, path, scope, raw, problems)


def parse_filter(name: str, path: Path, scope: str, raw: bytes, problems: list[ConfigProblem]) -> FilterSpec | None:
    """The filter in `raw` (a file's bytes), or None after appending why it is skipped; the one
    check for the user's, the workspace's and the shipped filters (context/filters/shipped/)."""

    def problem(message: str) -> None:
        problems.append(ConfigProblem(str(path), None, f"{message}; this filter is skipped."))

    if len(raw) > MAX_FILE_BYTES:
        problem(f"the file is over {MAX_FILE_BYTES:,} bytes")
        return None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        problem(f"not UTF-8 text ({exc})")
        return None
    except tomllib.TOMLDecodeError as exc:
        problem(f"not valid TOML: {exc}")
        return None
    try:
        return _spec(name, path, scope, data)
    except _Invalid as exc:
        problem(str(exc))
        return None


class _Invalid(Exception):
    """One reason a filter file cannot be used (the message names the key)."""


def _spec(name: str, path: Path, scope: str, data: dict[str, Any]) -> FilterSpec:
    for key in data:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise _Invalid(f"unknown key `{key}`{hint}; a filter has {', '.join(f'`{k}`' for k in KNOWN_KEYS)}")
    kind, value, regex = _match(data.get("match"))
    if not any(key in data for key in RULE_KEYS):
        raise _Invalid(f"the filter has no rules: set at least one of {', '.join(f'`{k}`' for k in RULE_KEYS)}")
    max_lines = _count(data, "max_lines", minimum=1) if "max_lines" in data else None
    collapse = data.get("collapse_repeats", False)
    if not isinstance(collapse, bool):
        raise _Invalid(f"`collapse_repeats` must be true or false, not {_shown(collapse)}")
    return FilterSpec(
        name=name,
        path=path,
        scope=scope,
        match_kind=kind,
        match_value=value,
        match_regex=regex,
        keep=_patterns(data, "keep"),
        drop=_patterns(data, "drop"),
        head=_count(data, "head", minimum=0),
        tail=_count(data, "tail", minimum=0),
        collapse_repeats=collapse,
        max_lines=max_lines,
    )


def _match(table: Any) -> tuple[str, str, re.Pattern[str] | None]:
    kinds = " or ".join(f"`match.{k}`" for k in MATCH_KINDS)
    if table is None:
        raise _Invalid(f"`match` is missing: set {kinds}")
    if not isinstance(table, dict):
        raise _Invalid(f"`match` must be a table with one of {kinds}, not {_shown(table)}")
    for key in table:
        if key not in MATCH_KINDS:
            raise _Invalid(f"unknown key `match.{key}`; use {kinds}")
    if len(table) != 1:
        raise _Invalid(f"`match` must have exactly one of {kinds}")
    [(kind, value)] = table.items()
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"`match.{kind}` must be a non-empty string, not {_shown(value)}")
    if kind == MATCH_COMMAND:
        return kind, value, _compile(value, f"match.{kind}")
    return kind, " ".join(value.split()) if kind == MATCH_PREFIX else value.strip(), None


def _patterns(data: dict[str, Any], key: str) -> tuple[re.Pattern[str], ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        value = [value]  # one pattern needs no list
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"`{key}` must be a list of regex strings, not {_shown(value)}")
    return tuple(_compile(pattern, f"{key}[{i}]") for i, pattern in enumerate(value))


def _compile(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise _Invalid(f"`{where}` is not a valid regex ({pattern!r}: {exc})") from exc


def _count(data: dict[str, Any], key: str, *, minimum: int) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _Invalid(f"`{key}` must be a whole number ≥ {minimum}, not {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    kind = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a table"}
    return f"{value!r} ({kind.get(type(value), type(value).__name__)})"
