"""The one-off facts a masked output keeps in its stub.

Why: a compaction masks older outputs to a one-line stub (what ran, the first line, a handle),
and the fact in the middle of a long output went with it: a config override amid a build log,
the one record with an extra field in a JSON page. At 64k, where the first compactions come
late and cut deep, most such facts were gone five turns after they arrived, long before a
summary covered their turn, and recall only helps a model that knows what to ask for. The
excerpt's scan found them already (`notable.py`); keeping the best few costs a few dozen tokens a
stub, and only outputs with a standout line (or a line the conversation named, or one a later run
changed: `context/observations/fact_context.py`) pay it.
"""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.context.filters.markers import marker
from myrm_tui.context.filters.notable import LINE_CHARS, standout_facts
from myrm_tui.sinks import VIEW_PLACEHOLDER, scrub

# Facts a stub keeps: as many as a summary takes from one output (`extractive.FINDINGS_PER_OUTPUT`),
# so what the stub shows and what a later summary of the same turn lists agree. Three: a line a
# later message named, a changed line and a shape break can all be there at once.
MASK_FACTS = 3


def kept_facts(content: str, leading: Sequence[str] = ()) -> list[str]:
    """Lines to append to the stub of `content` (an output, or its excerpt with notes): first
    `leading` (lines the conversation named, or that a run of the same call changed:
    `context/observations/fact_context.py`), then the output's own shape breaks; each redacted, flattened and
    cut to a notable line's length, at most MASK_FACTS."""
    out: list[str] = []
    seen: set[str] = set()
    for fact in [*leading, *standout_facts(content, MASK_FACTS)]:
        clean = " ".join(scrub(VIEW_PLACEHOLDER, fact).split())[:LINE_CHARS]
        if clean and clean not in seen:
            seen.add(clean)
            out.append(marker(f"kept: {clean}"))
        if len(out) == MASK_FACTS:
            break
    return out
