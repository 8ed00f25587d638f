"""The bench writes a small summary next to its raw results (the raw file is not kept in git)."""

from __future__ import annotations

import json

from bench.grid import publish
from bench.result_summary import COLUMNS, summary_path


def _row(contender: str, p50: float, padding: int) -> dict:
    return {
        "contender": contender,
        "workload": "coding-400",
        "window": 32000,
        "summarizer": "null",
        "status": "ok",
        "wall_s": 1.5,
        "report": {
            "turns": 400,
            "timing": {"p50_ms": p50, "p95_ms": 9.87654321, "buckets": {"x": ["detail"] * padding}},
            "retention": {"r_verbatim": 0.5, "r_1": 1.0, "by_lag": {"5": [0.1] * padding}},
            "prefix": {"openai": {"token_weighted": 0.85}},
            "budget": {"over_budget_turns": 3, "over_budget_list": list(range(padding))},
            "exceptions": 0,
        },
    }


def test_publish_writes_a_small_summary_with_the_headline_figures(tmp_path, capsys):
    document = {
        "mode": "all",
        "command": "python -m bench all",
        "seed": 1,
        "results": [_row("myrm", 1.23456789, 2_000), _row("raw", 0.5, 2_000)],
        "adversarial": {"window": 32000, "elapsed_s": 2.0, "results": [_row("myrm", 2.0, 2_000) | {"case": "c1"}]},
    }
    out = tmp_path / "all.json"
    publish(document, out, "the table", None, 1.0)
    summary_file = summary_path(out)
    assert summary_file == tmp_path / "all.summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    assert summary["command"] == "python -m bench all" and summary["seed"] == 1
    rows = [dict(zip(summary["results"]["columns"], row, strict=True)) for row in summary["results"]["rows"]]
    assert summary["results"]["columns"] == list(COLUMNS)
    assert [r["contender"] for r in rows] == ["myrm", "raw"]
    assert rows[0]["b1_p50_ms"] == 1.2346 and rows[0]["b1_p95_ms"] == 9.8765  # rounded: stable diffs
    assert rows[0]["b2_r_verbatim"] == 0.5 and rows[0]["b3_prefix_openai"] == 0.85
    assert rows[0]["b4_over_budget_turns"] == 3 and rows[0]["b4_exceptions"] == 0
    assert rows[0]["b5_prompt_tokens"] is None  # absent in the report: None, not a crash
    (adversarial,) = summary["adversarial"]["results"]["rows"]
    assert adversarial[COLUMNS.index("case")] == "c1"
    # the per-turn details stay in the raw file only
    assert summary_file.stat().st_size * 10 < out.stat().st_size
    assert json.loads(out.read_text(encoding="utf-8")) == document
