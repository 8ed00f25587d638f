"""`python -m bench all` picks cells (--workloads/--windows/--summarizers/--turns), and the scorer
reports myrm's own summaries per row: accepted model answers vs extractive fallbacks, attempts,
summarizer tokens (issue 26: chat cost with model summaries).

The end-to-end case is a 70-turn chat session at a 14k window with `oracle`: small enough to run
in seconds, big enough that the agent compacts and asks its summarizer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import grid
from bench.contenders.base import Contender, RunConfig
from bench.contenders.baselines import Raw
from bench.harness import Workload, run_one
from bench.sessionio import write_session
from bench.summary_tally import SummaryTally
from bench.tables import render_cell
from bench.workload import generate


def test_default_selection_is_the_whole_grid() -> None:
    cells, b1 = grid.grid_cells(grid.parse_selection(None, None, None, None), ["real-git", "real-env"])
    long_cells = [
        grid.Cell(f"{kind}-400", w, s)
        for kind in ("coding", "chatty", "tool-storm")
        for w in (32_000, 64_000)
        for s in ("null", "oracle")
    ]
    fixed = [grid.Cell("coding-800", 64_000, "null"), grid.Cell("real-env", 32_000, "null")]
    assert cells == [*long_cells, *fixed, grid.Cell("real-git", 32_000, "null")]
    assert b1 == grid.Cell("coding-800", 64_000, "null")


def test_picked_cells_only() -> None:
    selection = grid.parse_selection("chatty-400,real", "32000,64000", "oracle", None)
    cells, b1 = grid.grid_cells(selection, ["real-env"])
    # real-env runs at 32k with `null` only: `oracle` leaves it out, and B1 is not picked.
    assert cells == [grid.Cell("chatty-400", 32_000, "oracle"), grid.Cell("chatty-400", 64_000, "oracle")]
    assert b1 is None
    assert not selection.wants_real()


@pytest.mark.parametrize(
    "argv",
    [["--workloads", "chaty-400"], ["--summarizers", "orcale"], ["--windows", "32k"], ["--turns", "5"]],
)
def test_typos_are_refused_not_an_empty_grid(argv: list[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        grid.main([*argv, "--out", str(tmp_path / "x.json"), "--quiet"], mode="all")
    assert str(stop.value).startswith("error:")


def test_tally_counts_each_listed_summary() -> None:
    tally = SummaryTally()
    tally.add_events([{"tokens": 3}])
    assert tally.as_dict() == {"available": False}  # no list reported: no counts, not zeros
    summaries = [
        {"level": "llm", "attempts": 1, "fallback": False, "tokens_in": 100, "tokens_out": 20},
        {"level": "terse", "attempts": 3, "fallback": False, "tokens_in": 300, "tokens_out": 50},
        {"level": "extractive", "attempts": 4, "fallback": True, "tokens_in": 400, "tokens_out": 90},
    ]
    tally.add_events([{"ms": 1.0}, {"replay": {"summaries": summaries[:2]}}])
    tally.add_events([{"replay": {"summaries": summaries[2:]}}, {"replay": {"summaries": []}}])
    assert tally.as_dict() == {
        "available": True,
        "summaries": 3,
        "model": 2,
        "fallback": 1,
        "attempts": 8,
        "tokens_in": 800,
        "tokens_out": 160,
        "levels": {"extractive": 1, "llm": 1, "terse": 1},
    }


class _Reporting(Contender):
    """Raw's prompts, with a replay-style summary list on every tenth turn (what `myrm replay` writes)."""

    name = "reporting"
    family = "baseline"

    def run(self, lines: Iterable[dict[str, Any]], config: RunConfig) -> Iterator[dict[str, Any]]:
        for record in Raw().run(lines, config):
            if "prompt" in record and int(record["turn"]) % 10 == 0:
                listed = [{"level": "llm", "attempts": 2, "fallback": False, "tokens_in": 900, "tokens_out": 100}]
                record["events"] = [{"ms": 0.1}, {"replay": {"summaries": listed}}]
            yield record


def test_the_scorer_and_the_tables_carry_the_tally(tmp_path: Path) -> None:
    path = tmp_path / "chatty-50.jsonl"
    lines, answers = generate("chatty", 50, 1)
    write_session(path, lines, answers)
    row = run_one(_Reporting(), Workload.load("chatty-50", path), RunConfig(32_000, "oracle")).as_dict()
    tally = row["report"]["model_summaries"]
    assert (tally["summaries"], tally["model"], tally["fallback"], tally["attempts"]) == (5, 5, 0, 10)
    assert (tally["tokens_in"], tally["tokens_out"]) == (4_500, 500)
    text = render_cell({"results": [row]}, {"workload": "chatty-50", "window": 32_000, "summarizer": "oracle"})
    assert "reporting 5 model / 0 fallback of 5, 10 attempts, 4,500 in / 500 out" in text


@pytest.mark.slow  # 70 turns of the agent with its background summaries: ~8 s on two cores
def test_all_on_picked_cells_reports_myrm_summaries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chat.json"
    argv = [
        "--workloads=chatty-70",
        "--turns=70",
        "--windows=14000",
        "--summarizers=oracle",
        "--contenders=myrm,opencode-policy",
        "--no-cli-check",
        "--no-adversarial",
        "--quiet",
        f"--out={out}",
    ]
    assert grid.main(argv, mode="all") == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["cells"] == [{"workload": "chatty-70", "window": 14_000, "summarizer": "oracle"}]
    assert document["b1_cell"] is None
    rows = {r["contender"]: r for r in document["results"]}
    assert set(rows) == {"myrm", "opencode-policy"}
    tally = rows["myrm"]["report"]["model_summaries"]
    assert tally["available"] and tally["summaries"] > 0
    assert tally["model"] + tally["fallback"] == tally["summaries"]
    assert tally["model"] > 0  # the stand-in's answers pass the auditor
    assert tally["attempts"] >= tally["summaries"]
    # The tally's tokens are the summarizer spend the cost already bills.
    assert tally["tokens_in"] + tally["tokens_out"] == rows["myrm"]["report"]["cost"]["summarizer_tokens"] > 0
    assert rows["opencode-policy"]["report"]["model_summaries"] == {"available": False}
    text = capsys.readouterr().out
    assert f"myrm {tally['model']} model / {tally['fallback']} fallback of {tally['summaries']}" in text
    summary_row = next(line for line in text.splitlines() if line.startswith("| chatty-70 14k `oracle` |"))
    assert summary_row.endswith(f"| {tally['model']} / {tally['fallback']} / {tally['attempts']} |")
