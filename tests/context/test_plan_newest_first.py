"""An emergency's steps skip the rows removal is certain to take, and plan exactly what they would
have planned over every row (`_Planner.steps_newest_first`).

Through `myrm replay` (the recorded session through the real agent, engine and store): every
event's plan is made twice, as the engine makes it and with `newest_first` off (the steps over
every row, in their own order), and the two must leave the same views, totals and savings. The
sessions are the bench's seeded workloads at windows and seeds the change was not measured on.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.workload import generate
from myrm_tui.context.compaction import compactor
from myrm_tui.context.observations.relevance_policy import RECENCY, RELEVANCE
from myrm_tui.context.rows.views import FILTERED, MASKED, REMOVED, View
from myrm_tui.context.stages import compress
from myrm_tui.context.stages.compress import EMERGENCY, Plan, PlanInput
from myrm_tui.replay import ReplayOptions, replay
from tests.context.plan_helpers import count, plan_input, tool_unit
from tests.hypothesis_profiles import examples


@pytest.mark.parametrize(
    ("kind", "turns", "seed", "window"),
    [
        ("coding", 100, 4, 20_000),
        pytest.param("coding", 160, 4, 16_000, marks=pytest.mark.slow),
        pytest.param("coding", 200, 5, 32_000, marks=pytest.mark.slow),
        pytest.param("tool-storm", 160, 6, 24_000, marks=pytest.mark.slow),
    ],
)
def test_the_steps_plan_the_same_when_they_skip_what_removal_takes(monkeypatch, kind, turns, seed, window):
    made = compress.plan_compaction
    seen: Counter[str] = Counter()

    def both(inp: PlanInput) -> Plan:
        fast = made(inp)
        reference = made(dataclasses.replace(inp, newest_first=False))
        assert fast.views == reference.views
        assert (fast.total, fast.saved) == (reference.total, reference.saved)
        if inp.tier == EMERGENCY:
            seen["emergency"] += 1
            # What the reference masked and then removed anyway, the engine's plan never masked.
            if sum(fast.ops.values()) < sum(reference.ops.values()):
                seen["skipped"] += 1
        return fast

    monkeypatch.setattr(compactor, "plan_compaction", both)
    lines, _answers = generate(kind, turns, seed)
    for _record in replay(lines, ReplayOptions(window=window, summarizer="null")):
        pass
    assert seen["emergency"] >= 3, seen
    assert seen["skipped"] >= 1, seen


# -- the same on small generated histories, at every target ----------------------------------------
_OUTPUT = st.sampled_from(
    [
        "ok",
        "\n".join(f"test_{n} PASSED" for n in range(60)),
        "\n".join(f"[{n}/90] compiling src/m{n}.c" for n in range(90)),
        "\n".join(f"line {n} of the config" for n in range(25)) + "\nERROR: port 8443 in use",
        "\n".join(f"def f{n}(x):\n    return x + {n}" for n in range(40)),
    ]
)
_UNIT = st.tuples(
    st.sampled_from(["bash", "file_read", "grep"]),
    st.sampled_from(["a.py", "b.py", "make test"]),
    _OUTPUT,
    st.booleans(),  # a user message before it
)


@given(
    st.lists(_UNIT, min_size=2, max_size=12),
    st.floats(0.0, 1.0),
    st.integers(1, 3),
    st.sampled_from([RECENCY, RELEVANCE]),
    st.sampled_from(["what now?", "is port 8443 free?", "which tests PASSED?", "what did compiling print?"]),
)
@settings(max_examples=examples(200), deadline=None)
def test_generated_histories_plan_the_same_at_any_target(units, share, tail_units, eviction, ask):
    """Targets from nothing to everything: removal takes all, some or none of the history, and
    where the steps alone meet the target the engine falls back to the steps' own order; so does
    removal by relevance to the newest ask (any group may stay)."""
    messages: list[dict] = [{"role": "user", "content": "start"}]
    for k, (name, what, output, asks) in enumerate(units):
        if asks:
            messages.append({"role": "user", "content": f"and now {what}?"})
        arguments = {"command": what} if name == "bash" else {"path": what, "pattern": "x"}
        messages += tool_unit(f"c{k}", name, arguments, output)
    messages.append({"role": "user", "content": ask})  # what removal by relevance ranks against
    messages += tool_unit("last", "bash", {"command": "make"}, "ok")
    probe = plan_input(messages, tier=EMERGENCY, target=0, tail_units=tail_units, eviction=eviction)
    inp = dataclasses.replace(probe, target=int(probe.total * share))
    fast = compress.plan_compaction(inp)
    reference = compress.plan_compaction(dataclasses.replace(inp, newest_first=False))
    assert fast.views == reference.views
    assert (fast.total, fast.saved) == (reference.total, reference.saved)


# -- the same with what an engine's input may also hold (a review's attack on the exactness) ------
_KIND = st.sampled_from(["bash", "file_read", "grep", "glob", "session_note", "file_write", "ls"])


@given(
    st.lists(st.tuples(_KIND, st.sampled_from(["a.py", "b.py", "make test"]), _OUTPUT, st.integers(0, 2)), max_size=12),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.integers(0, 3),
    st.data(),
)
@settings(max_examples=examples(300), deadline=None)
def test_earlier_views_fences_blocks_and_age_windows_plan_the_same(units, share, removal_share, tail_units, data):
    """Earlier masks and removals, a live history that starts later, a fence anywhere (past the
    tail too), a prepared block, a removal end, more anchors, a lower removal target, the age
    windows, protected reads, kept edit heads, ephemeral and protected tools, and long write
    arguments in and out of the tail: the engine's plan and the steps over every row agree."""
    messages: list[dict] = [{"role": "user", "content": "start"}]
    for k, (name, what, output, asks) in enumerate(units):
        if asks:
            messages.append({"role": "user", "content": f"and now {what}? see the test_3 entry"})
        if asks == 2:
            messages.append({"role": "assistant", "content": "noted src/m7.c"})
        if name == "ls":
            name, arguments = "bash", {"command": "ls"}
        elif name == "bash":
            arguments = {"command": what}
        elif name == "file_write":
            arguments, output = {"path": what, "content": output * 2}, "written"
        else:
            arguments = {"path": what, "pattern": "x"}
        messages += tool_unit(f"c{k}", name, arguments, output)
    messages.append({"role": "user", "content": "what now"})
    body = "x" * data.draw(st.sampled_from([10, 3000]))
    messages += tool_unit("last", "file_write", {"path": "z.py", "content": body}, "ok")
    probe = plan_input(messages, tier=EMERGENCY, target=0, tail_units=tail_units)
    rows, n = probe.rows, len(probe.rows)
    views: dict[int, View] = {}
    tokens = [row.tokens for row in rows]  # what plan_input counted
    for i in data.draw(st.lists(st.integers(0, n - 1), max_size=4)):
        kind = data.draw(st.sampled_from([MASKED, REMOVED, FILTERED]))
        if kind == REMOVED:
            views[rows[i].id], tokens[i] = View(REMOVED, None, 0), 0
        elif rows[i].role == "tool":
            stub = {"role": "tool", "tool_call_id": rows[i].message.get("tool_call_id", ""), "content": f"stub {kind}"}
            views[rows[i].id], tokens[i] = View(kind, stub, count(stub)), count(stub)
    unit_starts = [u.start for u in probe.units]
    start = data.draw(st.sampled_from([0, *unit_starts[:3]]))
    tokens[:start] = [0] * start  # rows before the live history are left out already
    blocks = {}
    if data.draw(st.booleans()):
        first = data.draw(st.sampled_from(unit_starts))
        blocks[first] = data.draw(st.integers(first + 1, n))
    total = sum(tokens)
    inp = dataclasses.replace(
        probe,
        views=views,
        row_tokens=tokens,
        total=total,
        target=int(total * share),
        start=start,
        fence=data.draw(st.integers(0, n)),
        blocks=blocks,
        removal_end=data.draw(st.one_of(st.none(), st.integers(0, n))),
        protected=probe.protected | frozenset(data.draw(st.lists(st.integers(0, n - 1), max_size=2))),
        removal_target=data.draw(st.one_of(st.none(), st.just(int(total * share * removal_share)))),
        observation_keep=data.draw(st.integers(0, 3)),
        eviction_min_age=data.draw(st.integers(0, 2)),
        file_protect_tokens=data.draw(st.sampled_from([0, 50, 500])),
        edit_keep_chars=data.draw(st.sampled_from([0, 200])),
        light_filter_tokens=data.draw(st.sampled_from([50, 200])),
    )
    fast = compress.plan_compaction(inp)
    reference = compress.plan_compaction(dataclasses.replace(inp, newest_first=False))
    assert fast.views == reference.views
    assert (fast.total, fast.saved) == (reference.total, reference.saved)
