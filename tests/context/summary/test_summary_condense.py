"""DAG growth: which run folds next, and SUPERSEDED marking of reversed decisions."""

from __future__ import annotations

from myrm_tui.context.summary.condense import (
    FoldRun,
    SummaryNode,
    find_fold_run,
    mark_superseded,
    mark_superseded_decisions,
    reverses,
    runs,
)
from myrm_tui.context.summary.schema import StructuredSummary


def chain(depths: list[int], start: int = 0, size: int = 10, tokens: int = 500, gap_after: int | None = None):
    nodes, pos = [], start
    for i, depth in enumerate(depths):
        nodes.append(SummaryNode(f"S{i}", depth, pos, pos + size, tokens))
        pos += size + (5 if gap_after is not None and i == gap_after else 0)
    return nodes


def test_four_contiguous_leaves_fold_into_depth_one():
    nodes = chain([0, 0, 0, 0, 0])
    run = find_fold_run(nodes)
    assert isinstance(run, FoldRun)
    assert [n.id for n in run.nodes] == ["S0", "S1", "S2", "S3", "S4"] and run.depth == 1
    assert (run.start, run.end, run.tokens) == (0, 50, 2_500)


def test_three_are_not_enough_without_pressure_but_two_are_with_it():
    nodes = chain([0, 0, 0])
    assert find_fold_run(nodes) is None
    run = find_fold_run(nodes, pressure=True)
    assert run is not None and len(run.nodes) == 3


def test_deepest_qualifying_run_first_ties_to_the_oldest():
    nodes = chain([1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    run = find_fold_run(nodes)
    assert run is not None
    assert [n.id for n in run.nodes] == ["S0", "S1", "S2", "S3"] and run.depth == 2


def test_a_raw_message_gap_or_depth_change_breaks_a_run():
    nodes = chain([0, 0, 0, 0], gap_after=1)
    assert [len(r) for r in runs(nodes)] == [2, 2]
    assert find_fold_run(nodes) is None
    run = find_fold_run(nodes, pressure=True)
    assert run is not None
    assert [n.id for n in run.nodes] == ["S0", "S1"]


def test_prefix_trimmed_to_the_summarizer_budget_and_honest_skip():
    nodes = chain([0] * 6, tokens=1_000)
    run = find_fold_run(nodes, max_tokens=3_500)
    assert run is not None
    assert [n.id for n in run.nodes] == ["S0", "S1", "S2"], "longest prefix that fits"
    assert find_fold_run(nodes, max_tokens=1_500) is None, "one child fits: folding it saves nothing"


def test_trimmed_deep_run_that_cannot_fold_lets_a_shallower_one_go():
    deep = [SummaryNode(f"D{i}", 1, i * 10, i * 10 + 10, 3_000) for i in range(4)]
    shallow = [SummaryNode(f"L{i}", 0, 40 + i * 10, 50 + i * 10, 400) for i in range(4)]
    run = find_fold_run(deep + shallow, max_tokens=4_000)
    assert run is not None
    assert [n.id for n in run.nodes] == ["L0", "L1", "L2", "L3"]


def test_reversal_needs_a_marker_and_a_shared_subject():
    assert reverses("Reverted the asyncpg driver; back on psycopg2", "Use asyncpg for the database driver")
    assert reverses("Use REST polling instead of websockets for the status feed", "Use websockets for the status feed")
    assert not reverses("Use asyncpg for the pool as well", "Use asyncpg for the database driver"), "no marker"
    assert not reverses("Reverted the README typo fix", "Use asyncpg for the database driver"), "other subject"


def test_mark_superseded_across_child_summaries():
    children = [
        StructuredSummary(user_goal="g", decisions=["Store sessions in redis_cache", "Use black for formatting"]),
        StructuredSummary(user_goal="g", decisions=["Add retries to fetch_feed"]),
        StructuredSummary(user_goal="g", decisions=["No longer store sessions in redis_cache; use SQLite"]),
    ]
    marked = mark_superseded(children)
    assert marked[0].decisions == ["[SUPERSEDED] Store sessions in redis_cache", "Use black for formatting"]
    assert marked[1] is children[1]
    assert marked[2].decisions == children[2].decisions, "the reversal itself stays current"
    again = mark_superseded_decisions([d.decisions for d in marked])
    assert again[0][0].count("[SUPERSEDED]") == 1, "idempotent"
