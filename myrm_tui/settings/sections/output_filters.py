"""A declarative output filter as a value: what it matches and which lines it keeps.

Why apart from the loader (settings/config_files/filter_files.py, which reads and checks the
files): the resolved settings carry the filters that apply (`Settings.output_filters`), and the
settings value must not depend on the loader that builds it. The context layer applies them
(context/filters/declarative.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# How a filter picks the outputs it applies to: a regex searched in the shell command line, a
# command-line prefix (whole words), or a tool's name (any tool, its every output).
MATCH_COMMAND = "command"
MATCH_PREFIX = "prefix"
MATCH_TOOL = "tool"


@dataclass(frozen=True)
class FilterSpec:
    """One valid filter, patterns compiled."""

    name: str
    path: Path
    scope: str  # USER, WORKSPACE or BUILT_IN
    match_kind: str  # one of MATCH_KINDS
    match_value: str
    match_regex: re.Pattern[str] | None  # MATCH_COMMAND only
    keep: tuple[re.Pattern[str], ...] = ()
    drop: tuple[re.Pattern[str], ...] = ()
    head: int = 0
    tail: int = 0
    collapse_repeats: bool = False
    max_lines: int | None = None

    def describe_match(self) -> str:
        """`bash command ~ /regex/`, `bash command starts with "x"`, `tool jira_search`: for doctor."""
        if self.match_kind == MATCH_COMMAND:
            return f"shell command matching /{self.match_value}/"
        if self.match_kind == MATCH_PREFIX:
            return f"shell command starting with {self.match_value!r}"
        return f"every output of the tool {self.match_value!r}"
