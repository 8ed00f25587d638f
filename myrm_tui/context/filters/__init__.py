"""Smart filter: deterministic excerpts of oversized tool outputs (no I/O, no LLM).

`filter_output(content, tool=..., arguments=..., budget_chars=...)` returns a `FilterResult`
whose text fits the budget and holds only real lines of the output plus `… N lines omitted …`
markers, or None when the content already fits.
"""

from myrm_tui.context.filters.detect import Command, detect_command, sniff_content, split_command_line
from myrm_tui.context.filters.markers import is_marker_line, strip_cut_tag
from myrm_tui.context.filters.result import FilterResult
from myrm_tui.context.filters.smart import filter_output

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
