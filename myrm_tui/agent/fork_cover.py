"""The body of a fork's summary: the parent's model-written summary nodes where they cover the
forked span, the extractive summary only for the rows they leave uncovered.

Why reuse the nodes: a session that was compacted already paid a model to summarize its middle,
and those nodes say what the turns meant, not only what they contained; rebuilding the fork's
summary extractively threw that away. Reusing them costs no model call (the fork never makes
one), so a fork of a compacted session starts from the model's summary for free.

Which nodes: written by a model (not extractive, not a field merge, not a fallback), not
discarded, and lying wholly inside the span (a node that reaches into the turns the fork keeps
verbatim, or into the anchor, would say twice what the fork copies). Where several start at the
same row, the one reaching furthest wins (a model fold over its children), then the newest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from myrm_tui.context.compaction.dag import from_json_dict, merge_summaries
from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.schema import StructuredSummary
from myrm_tui.store.records import MessageRecord

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

# A node's `model` when no model wrote it: the extractive body, or a fold that merged its
# children's fields (empty model).
NOT_MODEL_WRITTEN = frozenset({"", "extractive"})


@dataclass(frozen=True)
class ForkBody:
    summary: StructuredSummary
    reused: tuple[str, ...]  # handles of the parent's nodes the body comes from, in span order
    extractive_rows: int  # rows of the span no model-written node covered


def model_nodes(store: Store, session_id: str) -> list[dict[str, Any]]:
    return [
        n
        for n in store.summaries(session_id)
        if n["status"] != "discarded" and not n["fallback"] and str(n.get("model") or "") not in NOT_MODEL_WRITTEN
    ]


def cover(
    rows: Sequence[MessageRecord], nodes: Sequence[dict[str, Any]]
) -> list[tuple[dict[str, Any] | None, list[MessageRecord]]]:
    """`rows` cut into consecutive parts, each either one node's range or a run no node covers."""
    position = {r.id: i for i, r in enumerate(rows)}
    starting: dict[int, dict[str, Any]] = {}
    for node in nodes:
        start, end = position.get(node["first_id"]), position.get(node["last_id"])
        if start is None or end is None or end < start:
            continue
        best = starting.get(start)
        if best is None or (end, node["seq"]) > (position[best["last_id"]], best["seq"]):
            starting[start] = node
    parts: list[tuple[dict[str, Any] | None, list[MessageRecord]]] = []
    i = 0
    while i < len(rows):
        found = starting.get(i)
        if found is not None:
            end = position[found["last_id"]]
            parts.append((found, list(rows[i : end + 1])))
            i = end + 1
            continue
        if parts and parts[-1][0] is None:
            parts[-1][1].append(rows[i])
        else:
            parts.append((None, [rows[i]]))
        i += 1
    return parts


def summarized_until(
    rows: Sequence[MessageRecord], start: int, keep_from: int, last_user: int, nodes: Sequence[dict[str, Any]]
) -> int:
    """Where the fork's verbatim turns begin: `keep_from`, or the end of the model-written node
    that runs across it. The parent's compaction drew its line by its own tail (often only the
    latest exchange), so its newest node usually reaches into the turns a fork would keep; cutting
    that node off would throw away the summary the parent already shows in its place. The
    fork then keeps verbatim what the parent keeps verbatim, and never less than the last ask
    (`last_user`), nor a tool result without its call."""
    at = start
    for node, part in cover(rows[start:last_user], nodes):
        end = at + len(part)
        if node is not None and at < keep_from < end:
            return end if rows[end].role != "tool" else keep_from
        at = end
    return keep_from


def fork_body(
    middle: Sequence[MessageRecord],
    nodes: Sequence[dict[str, Any]],
    *,
    previous_goal: str,
    count: Callable[[str], int],
    ends_turn: bool,
) -> ForkBody:
    """The summary standing for `middle` in the fork (not yet redacted)."""
    parts = cover(middle, nodes)
    bodies: list[StructuredSummary] = []
    for index, (node, rows) in enumerate(parts):
        if node is not None:
            bodies.append(from_json_dict(node["content"]))
            continue
        bodies.append(
            extractive_summary(
                [r.message for r in rows],
                source_tokens=sum(r.tokens for r in rows),
                previous_goal=previous_goal,
                count=count,
                # Something follows a run in the middle of the span; the last one, the kept turns.
                ends_turn=ends_turn or index < len(parts) - 1,
            )
        )
    if len(bodies) == 1:
        summary = bodies[0]
    else:
        # The fields merged as a fold without a model merges them; the narratives (a model
        # node's timeline) in span order, which that merge has no field for.
        narrative = "\n".join(b.narrative for b in bodies if b.narrative)
        summary = replace(merge_summaries(bodies), narrative=narrative)
    return ForkBody(
        summary,
        tuple(node["handle"] for node, _ in parts if node is not None),
        sum(len(rows) for node, rows in parts if node is None),
    )
