"""Smart filter: deterministic excerpts of oversized tool outputs (no I/O, no LLM).

`filter_output(content, tool=..., arguments=..., budget_chars=...)` returns a `FilterResult`
whose text fits the budget and holds only real lines of the output plus `… N lines omitted …`
markers, or None when the content already fits.

The names below load on first use (PEP 562): `myrm` installs the user's declarative filters
(`filters.declarative`) before its first frame, and that must not pull in every built-in
compressor (~0.1 s), which only a turn needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from myrm_tui.context.filters.detect import Command, detect_command, sniff_content, split_command_line
    from myrm_tui.context.filters.markers import is_marker_line, strip_cut_tag
    from myrm_tui.context.filters.result import FilterResult
    from myrm_tui.context.filters.smart import filter_output

# Each exported name, by the submodule that defines it.
_HOMES = {
    "Command": "detect",
    "detect_command": "detect",
    "sniff_content": "detect",
    "split_command_line": "detect",
    "is_marker_line": "markers",
    "strip_cut_tag": "markers",
    "FilterResult": "result",
    "filter_output": "smart",
}

__all__ = [
    "Command",
    "FilterResult",
    "detect_command",
    "filter_output",
    "is_marker_line",
    "sniff_content",
    "split_command_line",
    "strip_cut_tag",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
