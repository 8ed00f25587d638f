"""The quick benchmark harness end to end, on myrm and the baselines (no peers, no timings).

Runs `python -m bench quick` in a real subprocess, then checks the JSON and the markdown it
wrote, and that myrm's figures are the ones its design promises: within budget, provider-valid,
nothing lost that one recall call cannot bring back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.contenders.base import Contender, RunConfig
from bench.harness import Workload, run_one
from bench.sessionio import write_session
from bench.tables import render_cell
from bench.workload import generate

ROOT = Path(__file__).resolve().parents[2]
CONTENDERS = ("myrm", "raw", "naive-truncation")


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> tuple[dict, str]:
    folder = tmp_path_factory.mktemp("bench-quick")
    out, markdown = folder / "quick.json", folder / "quick.md"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "quick",
            "--contenders",
            ",".join(CONTENDERS),
            "--out",
            str(out),
            "--markdown",
            str(markdown),
            "--quiet",
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text(encoding="utf-8")), markdown.read_text(encoding="utf-8")


def by_name(document: dict) -> dict[str, dict]:
    return {r["contender"]: r for r in document["results"]}


@pytest.mark.slow
def test_quick_document_shape(quick):
    document, _ = quick
    assert document["mode"] == "quick"
    assert [c["workload"] for c in document["cells"]] == ["coding-100"]
    rows = by_name(document)
    assert set(rows) == set(CONTENDERS)
    for row in rows.values():
        assert row["status"] == "ok", row
        report = row["report"]
        assert report["turns"] == 100 and report["missing_turn_count"] == 0
        for key in ("budget", "structure", "prefix", "retention", "cost", "timing"):
            assert key in report
        assert report["retention"]["probes"] > 0


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_quick_markdown_has_one_row_per_contender(quick):
    _, text = quick
    assert "### coding-100, window 32k, summarizer `null`" in text
    table_rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| contender")]
    for name in CONTENDERS:
        assert sum(row.startswith(f"| {name} |") for row in table_rows) == 2, name  # main table + B1 table


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_myrm_figures_are_sane(quick):
    document, _ = quick
    report = by_name(document)["myrm"]["report"]
    assert report["budget"]["over_budget_turns"] == 0
    assert report["structure"]["turns_with_errors"] == 0
    assert report["structure"]["system_prompt_changes"] == 0
    assert report["exceptions"] == 0 and report["silent_noops"] == 0
    retention = report["retention"]
    assert retention["r_1"] >= retention["r_verbatim"]
    assert retention["latest_user_share"] == 1.0
    # myrm manages where raw does not: raw must exceed the 32k window on a 100-turn coding session.
    assert by_name(document)["raw"]["report"]["budget"]["over_budget_turns"] > 0
    assert report["cost"]["prompt_tokens"] < by_name(document)["raw"]["report"]["cost"]["prompt_tokens"]


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_baselines_have_no_recall(quick):
    document, _ = quick
    for name in ("raw", "naive-truncation"):
        retention = by_name(document)[name]["report"]["retention"]
        assert retention["r_1"] == retention["r_verbatim"]


class _Absent(Contender):
    name = "absent-peer"
    family = "peer"

    def missing(self) -> str | None:
        return "not installed (ModuleNotFoundError: No module named 'absent'); run bash bench/setup.sh"


def test_missing_peer_is_a_not_installed_row_not_a_crash(tmp_path):
    path = tmp_path / "s.jsonl"
    lines, answers = generate("chatty", 50, 1)
    write_session(path, lines, answers)
    result = run_one(_Absent(), Workload.load("chatty-50", path), RunConfig(32_000, "null"))
    assert result.status == "not installed" and "setup.sh" in result.detail
    assert result.report == {}
    document = {"results": [result.as_dict()]}
    text = render_cell(document, {"workload": "chatty-50", "window": 32_000, "summarizer": "null"})
    assert "| absent-peer | not installed" in text
