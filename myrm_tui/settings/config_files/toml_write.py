"""The write side of myrm's TOML config files: change a value, keep what the user wrote around it.

Why tomlkit: the TUI saves a setting into a file the user also edits by hand. A writer that
re-serialises plain data drops every comment and blank line and reorders keys, so one click in
the settings screen would wipe the user's notes. tomlkit keeps the parsed document (comments,
key order, quoting, spacing) and emits it again with only the edited values replaced. Reading a
config for its *settings* stays on the stdlib's tomllib (strict, no dependency in the hot path);
this module is used only when a file is rewritten, so tomlkit is imported there too (the
settings loader imports this module, and `myrm` loads settings before its first frame).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tomlkit import TOMLDocument


def parse_for_edit(text: str) -> TOMLDocument:
    """The file as an editable document (a dict whose tables are dicts); ValueError if not TOML.

    Edits made through the mapping interface replace a value in place: its trailing comment and
    the comment lines above it stay where they were.
    """
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise ValueError(str(exc)) from exc


def dumps(data: Mapping[str, Any]) -> str:
    """TOML text for `data`: a document from `parse_for_edit` comes back as it was read plus the
    edits; a plain mapping gets top-level keys first, then one header per table.

    TypeError for a value TOML cannot hold (the caller validated the schema; this is a bug guard).
    """
    import tomlkit
    from tomlkit.exceptions import ConvertError

    try:
        return tomlkit.dumps(data)
    except ConvertError as exc:
        raise TypeError(f"cannot write to a config file: {exc}") from exc
