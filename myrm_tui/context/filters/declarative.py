"""Declarative filters from TOML files as compressors, ahead of the hand-written ones: the user's
and the trusted workspace's (settings/config_files/filter_files.py), then the shipped ones (shipped_filters.py).

Why the user's and workspace's filters are an argument and not a module-level set: they belong to
a session (`Settings.output_filters`, settled with its workspace's trust), and one process may
serve sessions of several workspaces; each caller of `filter_output` passes its session's. The
default is none, which is what `myrm replay` gets (its settings are built from the recording, so a
replay does not depend on who replays it).

What a filter does is decide which lines the excerpt shows; everything else is the same as for
a built-in compressor: `excerpt.fit` enforces the budget, only real lines and `… …` markers
appear, and the caller keeps the full output behind the handle in the header.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import split_command_line
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier
from myrm_tui.context.filters.shipped_filters import shipped_filters
from myrm_tui.settings.sections.output_filters import MATCH_COMMAND, MATCH_PREFIX, MATCH_TOOL, FilterSpec

# Characters of a line the patterns see: a megabyte-long line costs the same as a normal one
# (the generic filter probes the same width).
LINE_PROBE_CHARS = 2000
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def pick(tool: str, command: str | None, filters: Sequence[FilterSpec] = ()) -> FilterSpec | None:
    """The first filter for this call, the session's `filters` (the user's, then the trusted
    workspace's) before the shipped ones (shipped_filters.py): `command` is the shell line (None
    for a tool that is not a shell)."""
    for spec in filters:
        if matches(spec, tool, command):
            return spec
    if command is None:
        return None  # every shipped filter matches a shell command line
    for spec in shipped_filters():
        if matches(spec, tool, command):
            return spec
    return None


def matches(spec: FilterSpec, tool: str, command: str | None) -> bool:
    if spec.match_kind == MATCH_TOOL:
        return tool == spec.match_value
    if command is None:
        return False
    if spec.match_kind == MATCH_COMMAND:
        return spec.match_regex is not None and spec.match_regex.search(command) is not None
    if spec.match_kind == MATCH_PREFIX:
        return any(_starts_with(words, spec.match_value) for words in _simple_commands(command))
    return False


def _simple_commands(command: str) -> list[str]:
    """Each simple command of the line, as written and without its leading `NAME=value` words:
    `cd app && FOO=1 ./gradlew build | tail` → `cd app`, `FOO=1 ./gradlew build`, `./gradlew build`, `tail`."""
    found = []
    for chain in split_command_line(command):
        for argv in chain:
            found.append(" ".join(argv))
            start = 0
            while start < len(argv) and _ASSIGNMENT.match(argv[start]):
                start += 1
            if start:
                found.append(" ".join(argv[start:]))
    return found


def _starts_with(words: str, prefix: str) -> bool:
    """Whole words only: the prefix `git` matches `git status`, not `gitk`."""
    return words == prefix or words.startswith(prefix + " ")


def compress(spec: FilterSpec, lines: list[str]) -> Excerpt:
    """The excerpt the filter's rules ask for; `fit` still applies the size budget after it."""
    n = len(lines)
    probes = [line[:LINE_PROBE_CHARS] for line in lines]
    kept_by_rule = [any(p.search(probe) for p in spec.keep) for probe in probes]
    dropped = [not kept_by_rule[i] and any(p.search(probes[i]) for p in spec.drop) for i in range(n)]
    survivors = [i for i in range(n) if not dropped[i]]
    pinned = set(survivors[: spec.head]) | set(survivors[max(0, len(survivors) - spec.tail) :] if spec.tail else ())
    bulk_shown = not spec.keep and not spec.head and not spec.tail
    tiers: dict[int, int] = {}
    for i in survivors:
        if i in pinned:
            tiers[i] = Tier.PINNED
        elif kept_by_rule[i]:
            tiers[i] = Tier.IMPORTANT
        elif bulk_shown:
            tiers[i] = Tier.BULK
    if not tiers:
        # Every line was filtered out: show how the output ended rather than nothing at all.
        last = next((i for i in range(n - 1, -1, -1) if lines[i].strip()), n - 1)
        if last >= 0:
            tiers[last] = Tier.PINNED
    repeats = _repeats(lines, tiers) if spec.collapse_repeats else {}
    if spec.max_lines is not None and len(tiers) > spec.max_lines:  # a collapsed run counts once
        _limit(tiers, repeats, spec.max_lines, n)
    return _render(spec, lines, tiers, repeats, dropped)


def _repeats(lines: list[str], tiers: dict[int, int]) -> dict[int, int]:
    """First line of each run of identical shown lines → how many more follow it (they leave `tiers`)."""
    runs: dict[int, int] = {}
    first = -1
    for i in sorted(tiers):
        if first >= 0 and i == first + runs.get(first, 0) + 1 and lines[i] == lines[first]:
            runs[first] = runs.get(first, 0) + 1
            tiers[first] = max(tiers[first], tiers.pop(i))
        else:
            first = i
    return runs


def _limit(tiers: dict[int, int], repeats: dict[int, int], max_lines: int, n: int) -> None:
    """Keep `max_lines` shown lines: the highest tiers, then those nearest the head and tail."""

    def position(i: int) -> float:
        return min(i / C.HEAD_WEIGHT, (n - 1 - i) / C.TAIL_WEIGHT)

    order = sorted(tiers, key=lambda i: (-tiers[i], position(i), i))
    for i in order[max_lines:]:
        del tiers[i]
        repeats.pop(i, None)


def _render(
    spec: FilterSpec, lines: list[str], tiers: dict[int, int], repeats: dict[int, int], dropped: list[bool]
) -> Excerpt:
    ex = Excerpt(f"filter {spec.name}")
    gaps = Dropper(ex, Tier.CONTEXT)
    i = 0
    while i < len(lines):
        if i not in tiers:
            gaps.drop(i, "dropped by the filter" if dropped[i] else "")
            i += 1
            continue
        tier = tiers[i]
        gaps.keep(lines[i], tier, i)
        more = repeats.get(i, 0)
        if more:
            ex.skipped(more, f"the line above again, ×{more + 1} in a row", tier, first=i + 1, last=i + more)
        i += 1 + more
    gaps.flush()
    return ex
