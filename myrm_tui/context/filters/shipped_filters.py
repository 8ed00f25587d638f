"""The declarative filters shipped in the package (`shipped/*.toml`), consulted after the user's.

Why data files and not more shell compressors: each of these outputs is "one progress line per
item, with the tool's own messages in between" (tar -v, unzip, du -a, dpkg -l), which a handful of
regexes says completely; the same format users write their own filters in (settings/config_files/filter_files.py)
keeps them readable and checked by the same parser. They are the product's, not the workspace's,
so they need no trust and apply in every command, replay included (a replay stays independent of
who replays it). Read through importlib.resources, so an installed wheel finds them as a checkout
does. The measured savings are in docs/using-the-engine.md ("Built-in declarative filters").
"""

from __future__ import annotations

import functools
import logging
from importlib import resources
from pathlib import Path

from myrm_tui.settings.config_files.filter_files import BUILT_IN, FILE_SUFFIX, parse_filter
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.sections.output_filters import FilterSpec

_log = logging.getLogger(__name__)

# The folder, inside this package, holding one TOML file per shipped filter.
SHIPPED_FOLDER = "shipped"


@functools.cache
def shipped_filters() -> tuple[FilterSpec, ...]:
    """Every shipped filter, sorted by file name (parsed once per process: package data does not
    change while it runs). A file that does not parse is a packaging bug: logged and skipped, so
    the other filters still apply (tests/context/filters/test_shipped_filters.py keeps it at 0)."""
    folder = resources.files("myrm_tui.context.filters").joinpath(SHIPPED_FOLDER)
    problems: list[ConfigProblem] = []
    specs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(FILE_SUFFIX) or not entry.is_file():
            continue
        name = entry.name[: -len(FILE_SUFFIX)]
        spec = parse_filter(name, Path(str(entry)), BUILT_IN, entry.read_bytes(), problems)
        if spec is not None:
            specs.append(spec)
    for problem in problems:
        _log.warning("shipped output filter skipped: %s", problem)
    return tuple(specs)
