"""The one-off facts a masked output keeps in its stub.

Why: a compaction masks older outputs to a one-line stub (what ran, the first line, a handle),
and the fact in the middle of a long output went with it: a config override amid a build log,
the one record with an extra field in a JSON page. At 64k, where the first compactions come
late and cut deep, most such facts were gone five turns after they arrived, long before a
summary covered their turn, and recall only helps a model that knows what to ask for. The
excerpt's scan found them already (`notable.py`); keeping the best one or two costs a few dozen
tokens a stub, and only outputs repetitive enough to have a standout line pay it.
"""

from __future__ import annotations

from myrm_tui.context.filters.markers import marker
from myrm_tui.context.filters.notable import LINE_CHARS, standout_facts
from myrm_tui.sinks import VIEW_PLACEHOLDER, scrub

# Facts a stub keeps: as many as a summary takes from one output (`extractive.FINDINGS_PER_OUTPUT`),
# so what the stub shows and what a later summary of the same turn lists agree.
MASK_FACTS = 2
# Of an output's notable lines, those scoring this share of the best are kept: the same rule
# as a summary's findings (`extractive.FINDING_SCORE_SHARE`), for the same reason.
MASK_FACT_SHARE = 0.75


def kept_facts(content: str) -> list[str]:
    """Lines to append to the mask stub of `content` (an output, or its excerpt with notes):
    each a redacted one-off fact, flattened and cut to a notable line's length."""
    out = []
    for fact in standout_facts(content, MASK_FACTS, MASK_FACT_SHARE):
        clean = " ".join(scrub(VIEW_PLACEHOLDER, fact).split())[:LINE_CHARS]
        if clean:
            out.append(marker(f"kept: {clean}"))
        if len(out) == MASK_FACTS:
            break
    return out
