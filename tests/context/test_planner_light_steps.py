"""The planner's cheapest steps, by what each changes (context/stages/compress.py): dedup points an
older copy of a long output at the newer one; superseded replaces an older run of the same call
(same tool, same arguments in any key order) by a pointer to the newer run, keeping what the
newer run lost; the mask order takes read-only outputs first, then earlier failures, then the
rest. Driven with no target, so each step does all it would ever do.
"""

from __future__ import annotations

from myrm_tui.context.rows.views import DEDUP, MASKED, SUPERSEDED
from myrm_tui.context.stages.compress import FULL, LIGHT, MIN_DEDUP_CHARS, _Planner
from tests.context.plan_helpers import plan_input, tool_unit

LONG = "\n".join(f"row {i}: value {i * 3}" for i in range(60))
QUESTION = {"role": "user", "content": "what now?"}
TAIL = tool_unit("c9", "bash", {"command": "true"}, "ok")


def changed(messages: list[dict], step, tier: str = LIGHT) -> dict[int, tuple[str, str]]:
    """Row index → (view kind, the new text) of every row the step changed."""
    planner = _Planner(plan_input(messages, tier=tier, target=0))
    step(planner)
    rows = planner.inp.rows
    return {
        i: (view.kind, (view.message or {}).get("content", ""))
        for i, r in enumerate(rows)
        if (view := planner.plan.views.get(r.id)) is not None
    }


def test_dedup_points_the_older_copy_of_a_long_output_at_the_newer() -> None:
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "bash", {"command": "cat a"}, LONG),
        *tool_unit("c2", "bash", {"command": "cat b"}, LONG + "\nmore"),
        *tool_unit("c3", "bash", {"command": "cat a again"}, LONG),
        QUESTION,
        *TAIL,
    ]
    planner = _Planner(plan_input(messages, tier=LIGHT, target=0))
    planner.dedup()
    assert {i for i, r in enumerate(planner.inp.rows) if r.id in planner.plan.views} == {2}
    view = planner.plan.views[planner.inp.rows[2].id]
    # the newer copy's handle (row 6, id 7) and the way back to this one (id 3)
    assert view.kind == DEDUP and view.reason == "identical to a later output"
    assert view.message is not None and view.message["content"] == (
        '[duplicate output; see the newer identical result msg:7 · original: ctx_expand("msg:3")]'
    )
    assert planner.plan.ops == {"dedup": 1}


def test_dedup_leaves_short_outputs_alone() -> None:
    short = "x" * (MIN_DEDUP_CHARS - 1)
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "bash", {"command": "cat a"}, short),
        *tool_unit("c2", "bash", {"command": "cat a"}, short),
        QUESTION,
        *TAIL,
    ]
    assert changed(messages, _Planner.dedup) == {}
    at_limit = "x" * MIN_DEDUP_CHARS
    messages[2]["content"] = messages[4]["content"] = at_limit
    assert [kind for kind, _ in changed(messages, _Planner.dedup).values()] == [DEDUP]


def test_a_repeated_call_with_its_arguments_in_another_order_supersedes_the_older_run() -> None:
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "grep", {"pattern": "port", "path": "cfg"}, LONG + "\nport = 4821 (override)"),
        *tool_unit("c2", "grep", {"pattern": "port", "path": "other"}, LONG),
        *tool_unit("c3", "grep", {"path": "cfg", "pattern": "port"}, LONG),
        QUESTION,
        *TAIL,
    ]
    out = changed(messages, _Planner.superseded)
    assert set(out) == {2}  # not the run with other arguments, not the newest run
    kind, text = out[2]
    assert kind == SUPERSEDED and "msg:7" in text
    assert "port = 4821 (override)" in text  # what the newer run no longer shows stays


def test_writes_and_protected_tools_are_never_superseded() -> None:
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "file_write", {"path": "a.py", "content": "x"}, LONG),
        *tool_unit("c2", "file_write", {"path": "a.py", "content": "x"}, LONG),
        *tool_unit("c3", "session_note", {"text": "n"}, LONG),
        *tool_unit("c4", "session_note", {"text": "n"}, LONG + "\n"),
        QUESTION,
        *TAIL,
    ]
    assert changed(messages, _Planner.superseded) == {}


def test_the_mask_takes_read_only_outputs_then_earlier_failures_then_the_rest() -> None:
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "bash", {"command": "make"}, "built\n" + LONG),
        *tool_unit("c2", "bash", {"command": "make test"}, "Error: 3 tests failed\n" + LONG),
        *tool_unit("c3", "file_read", {"path": "a.py"}, LONG),
        QUESTION,
        *TAIL,
    ]
    order: list[int] = []
    apply = _Planner.apply

    def noted(self: _Planner, i: int, kind: str, *args: object, **kwargs: object) -> None:
        if kind == MASKED:
            order.append(i)
        apply(self, i, kind, *args, **kwargs)  # type: ignore[arg-type]

    _Planner.apply = noted  # type: ignore[method-assign]
    try:
        changed(messages, lambda p: p.mask(protect_intent=False), FULL)
    finally:
        _Planner.apply = apply  # type: ignore[method-assign]
    assert order == [6, 4, 2]  # the read, the failed run, the successful build
