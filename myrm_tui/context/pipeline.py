"""The engine's stages, defined once, in run order.

Why here: the clock records these names in every report (`stage_ms`), the circuit breakers are
keyed by them, and docs/context-engine.md shows the table `stages_table` renders from this list
(a test fails when the doc and the code differ). Three lists (a doc table, the timer's names, the
breakers') had drifted apart; now a stage is added or renamed in one place.

Two granularities, on purpose: every stage has its own time in the report's `stage_ms` (a key
the replay digest ignores, like every wall-clock figure), while the token figures stay in the
report's `stages` entries as they always were (`figures` names the entry that counts a stage):
replays digest those entries, so splitting them would change every stored report's digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SYNC = "sync"
SMART_FILTER = "smart_filter"
THINKING_CLEANUP = "thinking_cleanup"
MEDIA_FILTER = "media_filter"
NORMALIZE = "normalize"
COMPRESS = "compress"
PRE_COMPACT = "pre_compact"
SUMMARIZE = "summarize"
POST_COMPACTION_REREAD = "post_compaction_reread"
INTEGRITY = "integrity"
PREFLIGHT = "preflight"
OBJECTIVE_NOTE = "objective_note"
CACHE_OPTIMIZE = "cache_optimize"
MEDIA_RESOLVE = "media_resolve"
ENCODE_SAFE = "encode_safe"

# The report's `stages` entry for the three per-row render stages (one pass over new rows).
RENDER = "render"

# Who measures a stage's time: `engine` (the assemble, around the call), `render` (summed per
# row inside `RenderedHistory.render`), `breaker` (the breaker it runs behind, inside an event).
TimedBy = Literal["engine", "render", "breaker"]


@dataclass(frozen=True)
class Stage:
    name: str  # as the report's `stage_ms` and `breakers` name it
    where: str  # the module (under context/) that does the work
    timed_by: TimedBy
    figures: str | None  # the report's `stages` entry counting its tokens/items; None: time only
    breaker: str | None  # the circuit breaker it runs behind (`breaker.py`), None: never skipped
    what: str


STAGES: tuple[Stage, ...] = (
    Stage(SYNC, "history.py", "engine", SYNC, None, "read the rows stored since the last request"),
    Stage(
        SMART_FILTER,
        "arrival_filter.py, filters/",
        "engine",
        SMART_FILTER,
        SMART_FILTER,
        "oversized new rows become an excerpt with a handle, decided once on arrival",
    ),
    Stage(
        THINKING_CLEANUP,
        "stages/thinking_cleanup.py, stages/inline_thinking.py",
        "render",
        RENDER,
        None,
        "reasoning per family; signed blocks only to their signer's family; leading inline `<think>` text dropped",
    ),
    Stage(
        MEDIA_FILTER,
        "stages/media_filter.py",
        "render",
        RENDER,
        None,
        "images outside the newest few (or all, for a model without vision) become placeholders",
    ),
    Stage(
        NORMALIZE,
        "stages/normalize.py",
        "render",
        RENDER,
        None,
        "only the fields a provider accepts, in a stable shape; the row's tokens recounted if changed",
    ),
    Stage(
        COMPRESS,
        "ladder.py, compactor.py, stages/compress.py",
        "engine",
        COMPRESS,
        COMPRESS,
        "the ladder's event (a deferred tier waits for a cold cache): dedup, supersede, filter, mask, shrink, remove",
    ),
    Stage(PRE_COMPACT, "compactor.py", "breaker", COMPRESS, PRE_COMPACT, "the pre-compact hook, inside each event"),
    Stage(
        SUMMARIZE,
        "summary_area.py, dag.py",
        "breaker",
        COMPRESS,
        SUMMARIZE,
        "removed rows become summary nodes (prepared ones first), nodes fold, the area is capped",
    ),
    Stage(
        POST_COMPACTION_REREAD,
        "stages/post_compaction_reread.py",
        "breaker",
        COMPRESS,
        POST_COMPACTION_REREAD,
        "recently modified files, re-read, before the fresh tail",
    ),
    Stage(
        INTEGRITY,
        "integrity.py",
        "engine",
        INTEGRITY,
        None,
        "calls and results paired by id, orphans dropped, dangling calls answered",
    ),
    Stage(
        PREFLIGHT,
        "compactor.py",
        "engine",
        PREFLIGHT,
        COMPRESS,
        "while still over the limit: emergency outside the tail, then inside it, then the floor",
    ),
    Stage(
        OBJECTIVE_NOTE,
        "objective_note.py",
        "engine",
        None,
        None,
        "after a compaction: the anchor objective restated after the newest message, outside the cache markers",
    ),
    Stage(
        CACHE_OPTIMIZE,
        "stages/cache_optimize.py",
        "engine",
        CACHE_OPTIMIZE,
        None,
        "provider cache markers; the cache-break detector names the first changed message and why",
    ),
    Stage(
        MEDIA_RESOLVE, "stages/media_resolve.py", "engine", MEDIA_RESOLVE, None, "vault handles become the images sent"
    ),
    Stage(
        ENCODE_SAFE,
        "stages/encode_safe.py",
        "engine",
        None,
        None,
        "lone UTF-16 surrogates in any string sent become U+FFFD (the store keeps the original)",
    ),
)

STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)
# The report's `stages` entries, in the order an assemble writes them.
FIGURE_ENTRIES: tuple[str, ...] = tuple(dict.fromkeys(s.figures for s in STAGES if s.figures is not None))
TIMED_BY_BREAKER: frozenset[str] = frozenset(s.name for s in STAGES if s.timed_by == "breaker")
BREAKERS: frozenset[str] = frozenset(s.breaker for s in STAGES if s.breaker is not None)


def stages_table() -> str:
    """The Markdown table docs/context-engine.md carries between its stage-table markers."""
    lines = [
        "| # | stage | where (context/) | timed by | report entry | breaker | what |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, stage in enumerate(STAGES, 1):
        breaker = f"`{stage.breaker}`" if stage.breaker else "—"
        figures = f"`{stage.figures}`" if stage.figures else "—"
        lines.append(
            f"| {number} | `{stage.name}` | {stage.where} | {stage.timed_by} | {figures} | {breaker} | {stage.what} |"
        )
    return "\n".join(lines) + "\n"
