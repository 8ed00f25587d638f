"""The compression intent beyond paths (modules, symbols) and every compress step consulting it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.observations.intent import (
    MAX_FOCUS,
    Intent,
    build_intent,
    current_query,
    focus_modules,
    focus_symbols,
)
from myrm_tui.context.rows.views import DEDUP, FILTERED, MASKED, SUPERSEDED
from myrm_tui.context.stages.compress import EMERGENCY, LIGHT, _Planner
from tests.context.plan_helpers import plan_input, rows_of, tool_unit


# -- what the intent holds -------------------------------------------------------------------
def test_a_dotted_module_and_a_python_path_are_both_focus_modules_in_both_spellings():
    modules = focus_modules(
        "the bug is in myrm_tui.context.observations.intent, see pkg/sub/mod.py", ["pkg/sub/mod.py"]
    )
    assert modules == {
        "myrm_tui.context.observations.intent",
        "myrm_tui/context/observations/intent",
        "pkg.sub.mod",
        "pkg/sub/mod",
    }


def test_file_names_and_bare_python_files_are_not_modules():
    assert focus_modules("edit README.md and app.py, then config.toml", ["app.py"]) == frozenset()


def test_symbols_are_camel_case_snake_case_and_called_names_of_four_characters_or_more():
    symbols = focus_symbols("ReplayOptions breaks plan_input; call remove_units() not run(); ok Foo id_ x_y")
    assert symbols == {"ReplayOptions", "plan_input", "remove_units"}


@given(st.lists(st.from_regex(r"[a-z]{3,6}_[a-z]{3,6}", fullmatch=True), max_size=40))
def test_symbols_and_modules_are_capped(names):
    text = " ".join(names) + " " + " ".join(f"pkg{n}.mod{n}" for n in range(len(names)))
    assert len(focus_symbols(text)) <= MAX_FOCUS
    assert len(focus_modules(text)) <= 2 * MAX_FOCUS


def test_build_intent_protects_an_output_that_only_names_the_module_or_the_symbol():
    rows = rows_of([{"role": "user", "content": "why does myrm_tui.replay call ReplayOptions wrong?"}])
    intent = build_intent(rows, 0)
    assert intent.protects("from myrm_tui.replay import x")
    assert intent.protects("File myrm_tui/replay.py, line 3")
    assert intent.protects("class ReplayOptions:")
    assert not intent.protects("an unrelated log line")
    assert not Intent() and intent


def test_current_query_is_the_latest_user_message_and_the_calls_since():
    messages = [
        {"role": "user", "content": "old question"},
        {"role": "user", "content": "fix the parser"},
        *tool_unit("c1", "grep", {"pattern": "tokenize"}, "out"),
    ]
    query = current_query(rows_of(messages), 1)
    assert "fix the parser" in query and "tokenize" in query and "old question" not in query
    assert current_query(rows_of(messages), None) == ""


# -- each step defers the task's rows --------------------------------------------------------
LINES = "\n".join(f"line {i}: some words of an ordinary file" for i in range(200))
QUESTION = {"role": "user", "content": "please fix src/focus.py"}


def only_one_needed(messages, step, tier=LIGHT):
    """Run one planner step with a target one change away; the kinds of the rows it changed."""
    probe = plan_input(messages, tier=tier, target=0)
    inp = plan_input(messages, tier=tier, target=probe.total - 50)
    planner = _Planner(inp)
    step(planner)
    return {i: planner.plan.views[r.id].kind for i, r in enumerate(inp.rows) if r.id in planner.plan.views}


def test_filter_big_filters_another_old_output_before_the_focus_file():
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "file_read", {"path": "src/focus.py"}, LINES),
        *tool_unit("c2", "file_read", {"path": "src/other.py"}, LINES.replace("ordinary", "unrelated")),
        QUESTION,
        *tool_unit("c3", "bash", {"command": "true"}, "ok"),
    ]
    assert only_one_needed(messages, _Planner.filter_big) == {4: FILTERED}


def test_dedup_points_the_other_duplicate_first():
    focus_out = "src/focus.py " + LINES
    other_out = "elsewhere " + LINES
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "bash", {"command": "cat src/focus.py"}, focus_out),
        *tool_unit("c2", "bash", {"command": "cat b"}, other_out),
        *tool_unit("c3", "bash", {"command": "cat src/focus.py again"}, focus_out),
        *tool_unit("c4", "bash", {"command": "cat b again"}, other_out),
        QUESTION,
        *tool_unit("c5", "bash", {"command": "true"}, "ok"),
    ]
    assert only_one_needed(messages, _Planner.dedup) == {4: DEDUP}


def test_superseded_replaces_the_other_repeated_call_first():
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "grep", {"pattern": "focus", "path": "src/focus.py"}, "v1 " + LINES),
        *tool_unit("c2", "grep", {"pattern": "other", "path": "src"}, "w1 " + LINES),
        *tool_unit("c3", "grep", {"pattern": "focus", "path": "src/focus.py"}, "v2 " + LINES),
        *tool_unit("c4", "grep", {"pattern": "other", "path": "src"}, "w2 " + LINES),
        QUESTION,
        *tool_unit("c5", "bash", {"command": "true"}, "ok"),
    ]
    assert only_one_needed(messages, _Planner.superseded) == {4: SUPERSEDED}


def test_the_emergency_mask_reaches_the_focus_output_last():
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "file_read", {"path": "src/focus.py"}, LINES),
        *tool_unit("c2", "file_read", {"path": "src/other.py"}, LINES),
        QUESTION,
        *tool_unit("c3", "bash", {"command": "true"}, "ok"),
    ]
    assert only_one_needed(messages, lambda p: p.mask(protect_intent=False), EMERGENCY) == {4: MASKED}


def test_without_focus_the_oldest_goes_first_as_before():
    messages = [
        {"role": "user", "content": "start"},
        *tool_unit("c1", "file_read", {"path": "src/one.py"}, LINES),
        *tool_unit("c2", "file_read", {"path": "src/two.py"}, LINES),
        {"role": "user", "content": "what next"},
        *tool_unit("c3", "bash", {"command": "true"}, "ok"),
    ]
    assert only_one_needed(messages, _Planner.filter_big) == {2: FILTERED}
