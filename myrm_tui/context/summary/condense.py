"""How the summary DAG grows upward: which top-level summaries fold into a deeper one, and
which decisions a depth-1 timeline marks as superseded.

Fold choice: a run is a maximal sequence of same-depth summaries
whose covered ranges touch (a raw message or a depth change in between breaks it, so a fold never
hides an unsummarized message); the DEEPEST qualifying run is folded first, ties to the oldest
(folding the shallowest first kept re-folding depth 0 and the tree never climbed). A run
qualifies with MIN_FANOUT nodes, or MIN_FANOUT_PRESSURE under context pressure. When the
summarizer cannot take the whole run, its longest fitting prefix of ≥2 nodes is folded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from myrm_tui.context.summary.schema import SUPERSEDED_TAG, StructuredSummary

# Four children per fold: the tree stays shallow (log4) while each fold still compresses a lot.
MIN_FANOUT = 4
# Under pressure any two neighbours may fold: saving tokens now beats a balanced tree.
MIN_FANOUT_PRESSURE = 2


@dataclass(frozen=True)
class SummaryNode:
    id: str  # the summary handle, e.g. "S12"
    depth: int
    start: int  # first covered row index (session order), inclusive
    end: int  # last covered row index, exclusive
    tokens: int


@dataclass(frozen=True)
class FoldRun:
    nodes: tuple[SummaryNode, ...]
    depth: int  # depth of the new summary (children's depth + 1)

    @property
    def start(self) -> int:
        return self.nodes[0].start

    @property
    def end(self) -> int:
        return self.nodes[-1].end

    @property
    def tokens(self) -> int:
        return sum(n.tokens for n in self.nodes)


def runs(nodes: Sequence[SummaryNode]) -> list[list[SummaryNode]]:
    """Maximal runs of same-depth nodes whose ranges touch, in order."""
    out: list[list[SummaryNode]] = []
    for node in nodes:
        last = out[-1][-1] if out else None
        if last is not None and last.depth == node.depth and last.end == node.start:
            out[-1].append(node)
        else:
            out.append([node])
    return out


def find_fold_run(
    nodes: Sequence[SummaryNode],
    *,
    pressure: bool = False,
    max_tokens: int | None = None,
    min_fanout: int = MIN_FANOUT,
    min_fanout_pressure: int = MIN_FANOUT_PRESSURE,
) -> FoldRun | None:
    """The run to fold next, or None. `nodes`: the current top-level summaries in session order.
    `max_tokens`: the most child tokens the summarizer can take (window − overhead − target)."""
    fanout = max(2, min_fanout_pressure if pressure else min_fanout)
    candidates: list[tuple[int, int, list[SummaryNode]]] = []
    for order, run in enumerate(runs(nodes)):
        if len(run) < fanout:
            continue
        if max_tokens is not None:
            total, keep = 0, 0
            for node in run:
                if total + node.tokens > max_tokens:
                    break
                total += node.tokens
                keep += 1
            run = run[:keep]
            if len(run) < 2:
                continue  # honest skip: a fold of one node compresses nothing
        candidates.append((-run[0].depth, order, run))
    if not candidates:
        return None
    _, _, best = min(candidates, key=lambda c: (c[0], c[1]))
    return FoldRun(tuple(best), best[0].depth + 1)


def oldest_touching_pair(nodes: Sequence[SummaryNode]) -> FoldRun | None:
    """The first two adjacent nodes whose ranges touch, whatever their depths: the squeeze fold
    used when summaries outgrow their share of the budget (same-depth runs may never form when
    removal is fragmented, e.g. around a protected message)."""
    for left, right in pairwise(nodes):
        if left.end == right.start:
            return FoldRun((left, right), max(left.depth, right.depth) + 1)
    return None


# ---------------------------------------------------------------- superseded decisions

# Words that say a decision replaced an earlier one. Kept explicit and small on purpose: this
# marks, it never deletes, and a missed reversal only costs a line the model reads as history.
REVERSAL_MARKERS = (
    "revert",
    "reverted",
    "reverting",
    "instead",
    "no longer",
    "rolled back",
    "roll back",
    "replaced",
    "replace ",
    "switched from",
    "switch from",
    "abandon",
    "dropped",
    "undo",
    "undid",
    "changed our mind",
    "back out",
)
_WORD = re.compile(r"[A-Za-z_][\w./-]*")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "then",
        "than",
        "when",
        "were",
        "was",
        "are",
        "been",
        "have",
        "has",
        "had",
        "will",
        "would",
        "should",
        "could",
        "about",
        "after",
        "before",
        "again",
        "also",
        "only",
        "just",
        "more",
        "most",
        "other",
        "some",
        "such",
        "very",
        "instead",
        "reverted",
        "revert",
        "replaced",
        "dropped",
        "longer",
        "using",
        "use",
        "used",
        "back",
        "decided",
        "decision",
        "switch",
        "switched",
        "rolled",
        "roll",
    )
)
# Two shared content words, or one shared identifier-shaped word (has _ . / or a digit or a
# capital inside), tie a reversal to an earlier decision.
MIN_SHARED_WORDS = 2


def _terms(text: str) -> tuple[set[str], set[str]]:
    words, idents = set(), set()
    for w in _WORD.findall(text):
        low = w.lower().strip("./-")
        if len(low) < 4 or low in _STOP:
            continue
        if re.search(r"[_./\d]", w) or re.search(r"[a-z][A-Z]", w):
            idents.add(low)
        else:
            words.add(low)
    return words, idents


def is_reversal(text: str) -> bool:
    low = text.lower()
    return any(marker in low for marker in REVERSAL_MARKERS)


def reverses(later: str, earlier: str) -> bool:
    """Does decision `later` reverse decision `earlier`? (a marker + a shared subject)"""
    if not is_reversal(later):
        return False
    lw, li = _terms(later)
    ew, ei = _terms(earlier)
    return bool(li & ei) or len(lw & ew) >= MIN_SHARED_WORDS


def mark_superseded_decisions(decisions: Sequence[Sequence[str]]) -> list[list[str]]:
    """Per summary (oldest first), its decisions with reversed ones prefixed by [SUPERSEDED].
    A decision is reversed by a LATER decision (later summary, or later in the same list)."""
    flat = [(i, j, d) for i, group in enumerate(decisions) for j, d in enumerate(group)]
    out = [list(group) for group in decisions]
    for pos, (i, j, text) in enumerate(flat):
        if text.startswith(SUPERSEDED_TAG):
            continue
        if any(reverses(later, text) for _, _, later in flat[pos + 1 :]):
            out[i][j] = f"{SUPERSEDED_TAG} {text}"
    return out


def mark_superseded(summaries: Sequence[StructuredSummary]) -> list[StructuredSummary]:
    """The child summaries of a depth-1 fold with reversed decisions marked (before the call, so
    the model sees the marks; the timeline prompt asks it to keep them)."""
    marked = mark_superseded_decisions([s.decisions for s in summaries])
    return [replace(s, decisions=d) if d != s.decisions else s for s, d in zip(summaries, marked, strict=True)]


# ---------------------------------------------------------------- what a fold keeps open

# Fields of a later summary that can settle an earlier blocker or next step. An "X -> unresolved"
# fix settles nothing.
SETTLING_FIELDS = ("completed_actions", "errors_and_fixes", "resolved_questions")
_UNRESOLVED = re.compile(r"->\s*unresolved\s*$", re.IGNORECASE)


def settles(later: str, earlier: str) -> bool:
    """Does `later` (something done, fixed or answered) settle `earlier` (a blocker or a step)?
    The same subject test as `reverses`: one shared identifier or two shared content words."""
    if _UNRESOLVED.search(later):
        return False
    lw, li = _terms(later)
    ew, ei = _terms(earlier)
    return bool(li & ei) or len(lw & ew) >= MIN_SHARED_WORDS


def open_items(summaries: Sequence[StructuredSummary]) -> tuple[list[str], list[str]]:
    """(blocked_items, next_steps) of a fold without a model: every child's, oldest first, minus
    those a LATER child settled, duplicates once. (Keeping only the newest child's lists, as
    folds did, dropped open blockers of older children and kept nothing about what was done.)"""
    blocked: list[str] = []
    steps: list[str] = []
    for i, child in enumerate(summaries):
        later = [text for c in summaries[i + 1 :] for name in SETTLING_FIELDS for text in getattr(c, name)]
        for item in child.blocked_items:
            if item not in blocked and not any(settles(t, item) for t in later):
                blocked.append(item)
        for item in child.next_steps:
            if item not in steps and not any(settles(t, item) for t in later):
                steps.append(item)
    return blocked, steps
