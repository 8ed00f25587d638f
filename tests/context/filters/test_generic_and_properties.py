"""Generic head/tail, the fit guarantees, and the property over arbitrary text."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.filters import filter_output
from myrm_tui.context.filters.excerpt import Excerpt, Tier, fit
from tests.context.filters.conftest import assert_real_excerpt, filtered
from tests.hypothesis_profiles import examples


def test_none_when_it_fits() -> None:
    assert filter_output("short", tool="bash", arguments={"command": "ls"}, budget_chars=100) is None
    assert filter_output("x" * 100, tool="bash", arguments={}, budget_chars=100) is None


def test_bad_budget_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="budget_chars must be positive"):
        filter_output("abc", tool="bash", arguments={}, budget_chars=0)


def test_generic_keeps_head_tail_and_middle_error(needle: str) -> None:
    rng = random.Random(7)
    lines = [f"step {i}: {rng.choice(['copy', 'link', 'scan'])} {rng.random():.6f}" for i in range(5000)]
    lines[2600] = f"fatal: could not lock ref {needle}"
    text = "\n".join(lines)
    result = filtered(text, 1200, "./deploy.sh")
    assert result.kind == "head-tail"
    assert result.text.startswith("step 0:")
    assert lines[-1] in result.text
    assert needle in result.text
    assert result.important_lines >= 1


def test_single_huge_line_is_cut_to_a_prefix() -> None:
    text = "A" * 50_000
    result = filtered(text, 500, "cat blob")
    assert result.text.startswith("AAAA") and "chars]" in result.text


def test_unknown_tool_and_odd_arguments() -> None:
    text = "\n".join(f"row {i}" for i in range(1000))
    for tool, args in (("mcp_tool", {}), ("bash", {"command": None}), ("bash", {"command": ["ls"]})):
        result = filter_output(text, tool=tool, arguments=args, budget_chars=300)
        assert result is not None and len(result.text) <= 300


def test_fit_always_fits_even_tiny_budgets() -> None:
    ex = Excerpt("t")
    for i in range(50):
        ex.keep(f"line {i} " + "x" * (i * 7), Tier.IMPORTANT if i % 5 == 0 else Tier.BULK, line=i)
    for budget in (1, 5, 20, 60, 200, 1000):
        fitted = fit(ex, budget, 50)
        assert len(fitted.text) <= budget
        assert fitted.shown_lines >= 1 or budget < 1


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(min_size=0, max_size=3000),
        st.lists(
            st.sampled_from(
                [
                    "ERROR boom",
                    "ok",
                    "",
                    '  File "x.py", line 3',
                    "PASSED",
                    "{",
                    "}",
                    "a,b,c",
                    "key: value",
                    "- item",
                    "# Head",
                    "def f():",
                    "@@ -1 +1 @@",
                    "diff --git a/x b/x",
                    "+added",
                    "-removed",
                    "warning: w",
                    "… 3 …",
                    "x" * 400,
                ]
            ),
            max_size=400,
        ).map("\n".join),
    ),
    budget=st.integers(min_value=200, max_value=4000),
    command=st.sampled_from(
        [
            "",
            "pytest",
            "git diff",
            "git log",
            "git status",
            "npm install",
            "pip install x",
            "cargo build",
            "make",
            "docker build .",
            "ls -R",
            "find .",
            "grep -rn x .",
            "python -m unittest",
            "cat f",
        ]
    ),
)
def test_property_fits_and_only_real_lines(text: str, budget: int, command: str) -> None:
    result = filter_output(text, tool="bash", arguments={"command": command}, budget_chars=budget)
    if len(text) <= budget:
        assert result is None
        return
    assert result is not None
    assert_real_excerpt(result, text, budget)


@pytest.mark.perf  # a speed budget, measured on the wall clock: `pytest -m perf` runs it
def test_ten_megabytes_is_fast() -> None:
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "error", "warning", "ok", "x" * 30]
    lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(140_000)]
    text = "\n".join(lines)
    assert len(text) > 10_000_000
    for command in ("./run", "pytest", "git diff", "grep -rn x ."):
        start = time.perf_counter()
        result = filter_output(text, tool="bash", arguments={"command": command}, budget_chars=20_000)
        elapsed = time.perf_counter() - start
        assert result is not None and len(result.text) <= 20_000
        assert elapsed < 3.0, f"{command}: {elapsed:.2f}s"
