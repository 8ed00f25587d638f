"""The light tier's excerpt pass (`_Planner.filter_big`): the first thing a compaction does to a
large tool output is replace it with a filtered excerpt behind its handle, before any masking.

Why these tests: the mutation gate (scripts/mutation_gate.py) left 38 of this pass's mutants alive;
the tests it had reached the pass only through whole compactions whose outcome did not depend on
which rows it filtered, or how.
"""

from __future__ import annotations

import re
from pathlib import Path

from myrm_tui.context.rows.views import FILTERED, msg_handle
from myrm_tui.context.stages.compress import LIGHT, plan_compaction
from myrm_tui.settings.sections.output_filters import MATCH_PREFIX, FilterSpec
from tests.context.plan_helpers import plan_input, tool_unit

# A build log whose one telling line sits in the middle, among hundreds of look-alike lines.
NAMED = "linking frobnicate_widget_v2 against libquux: undefined symbol quux_open"


def build_log(tag: str, lines: int = 400) -> str:
    body = [f"[{n:4d}/{lines}] compiling src/{tag}/module_{n}.c -O2 -Wall" for n in range(lines)]
    body[lines // 2] = NAMED
    return "\n".join(body)


def session(*, later: str = "keep going") -> list[dict]:
    return [
        {"role": "user", "content": "fix the build"},
        *tool_unit("c1", "bash", {"command": "make all"}, build_log("a")),
        # Over the excerpt's own budget but under the tier's threshold (light_filter_tokens): kept whole.
        *tool_unit("c2", "bash", {"command": "make clean"}, build_log("small", 12)),
        *tool_unit("c3", "session_note", {"text": "notes"}, build_log("notes")),
        *tool_unit("c4", "bash", {"command": "make test"}, build_log("b")),
        {"role": "user", "content": later},
        *tool_unit("c5", "bash", {"command": "make check"}, build_log("c")),
    ]


def filtered(inp, plan) -> dict[str, str]:
    """Tool call id → the excerpt text of each row the pass filtered."""
    out = {}
    for row in inp.rows:
        view = plan.views.get(row.id)
        if view is not None and view.kind == FILTERED:
            out[row.message["tool_call_id"]] = view.message["content"]
    return out


def test_large_outputs_become_excerpts_behind_their_handle_and_nothing_else_is_touched():
    inp = plan_input(session(), tier=LIGHT, target=0)
    plan = plan_compaction(inp)
    got = filtered(inp, plan)
    # The small output and the protected tool stay whole; the newest unit (the fresh tail) too.
    small = next(r for r in inp.rows if r.message.get("tool_call_id") == "c2")
    assert 400 // 4 < small.tokens <= inp.light_filter_tokens
    assert set(got) == {"c1", "c4"}
    for call_id, text in got.items():
        row = next(r for r in inp.rows if r.message.get("tool_call_id") == call_id)
        header = text.splitlines()[0]
        assert header.startswith(f"[output {row.tokens:,} tokens → ")
        assert f"full: {msg_handle(row.id)}" in header
        assert inp.count({"role": "tool", "content": text}) < row.tokens // 2
    assert plan.saved > 0


def test_the_pass_stops_once_the_target_is_met():
    probe = plan_input(session(), tier=LIGHT, target=0)
    one = filtered(probe, plan_compaction(probe))
    first_saving = next(r.tokens for r in probe.rows if r.message.get("tool_call_id") == "c1") - probe.count(
        {"role": "tool", "content": one["c1"]}
    )
    inp = plan_input(session(), tier=LIGHT, target=probe.total - first_saving // 2)
    assert list(filtered(inp, plan_compaction(inp))) == ["c1"]  # oldest first, then done


def test_a_line_a_later_message_names_is_kept_even_where_the_excerpt_cut_it():
    plain = plan_input(session(), tier=LIGHT, target=0)
    assert NAMED not in filtered(plain, plan_compaction(plain))["c1"]  # the generic excerpt cuts it
    inp = plan_input(session(later="why does frobnicate_widget_v2 not link?"), tier=LIGHT, target=0)
    assert NAMED in filtered(inp, plan_compaction(inp))["c1"]


def test_the_sessions_own_filter_decides_the_excerpt():
    spec = FilterSpec(
        name="make-errors",
        path=Path("make.toml"),
        scope="user",
        match_kind=MATCH_PREFIX,
        match_value="make",
        match_regex=None,
        keep=(re.compile("undefined symbol"),),
        max_lines=5,
    )
    inp = plan_input(session(), tier=LIGHT, target=0)
    inp.output_filters = (spec,)
    got = filtered(inp, plan_compaction(inp))
    assert "(filter make-errors excerpt)" in got["c1"].splitlines()[0]
    assert NAMED in got["c1"]
