"""Smoke tests of the TUI and local-model benchmarks: each CLI runs end to end in its smallest
mode and writes the JSON the docs are built from. No timing is asserted (a shared 2-core box);
what is asserted is the structure, the order of the start-up milestones, and the one gate that
is not a timing: importing the app module must not import litellm."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Generous: each child waits for the engine warm-up (the litellm import takes seconds here).
TIMEOUT_S = 240


def run_module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args, "--silent"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


@pytest.mark.slow
def test_tui_bench_quick_writes_every_figure(tmp_path: Path):
    out = tmp_path / "tui.json"
    proc = run_module(
        "bench.tui_bench",
        "--quick",
        "--runs",
        "1",
        "--stream-seconds",
        "0.5",
        "--sizes",
        "0,20",
        "--samples",
        "3",
        "--no-peers",
        "--no-what-if",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert "T1 start" in proc.stdout and "T2 long sessions" in proc.stdout

    imports = result["imports"]
    assert {"python -c pass", "import textual.app", "import myrm_tui.tui.app"} <= set(imports)
    assert imports["import myrm_tui.tui.app"]["n"] == 1
    assert "litellm" not in imports["heavy_modules_after_import"]  # the hard rule, checked for real

    [myrm] = [row for row in result["start"] if row["app"] == "myrm"]
    assert myrm["status"] == "ok", myrm["status"]
    [run] = myrm["runs"]
    milestones = [run[m] for m in ("t_spawn", "t_main", "t_imported", "t_first_frame", "t_input", "t_warm")]
    assert milestones == sorted(milestones)  # spawn → main → imported → painted → focused → warm
    assert run["first_screen"] == "ChatScreen" and run["model_resolved"].startswith("scripted/")
    assert myrm["ms"]["t_first_frame"]["n"] == 1 and myrm["ms"]["t_first_frame"]["median"] > 0

    stream = result["stream"]
    assert stream["shown_chars"] == stream["reply_chars"] > 0  # the whole reply reached the screen
    assert stream["loop_lateness_ms"]["n"] > 0 and stream["frames"] > 0
    assert stream["gc_pause_ms"].keys() == {"gen0", "gen1", "gen2"}
    assert stream["target_tok_per_s"] == pytest.approx(200)

    sizes = {row["messages"]: row for row in result["sessions"]}
    assert set(sizes) == {0, 20}
    for row in sizes.values():
        assert row["status"] == "ok", row["status"]
        assert row["key_to_text_ms"]["n"] + row["keys_lost"] == 3
        assert row["rss_mb"] > 0
    assert sizes[20]["mounted_turns"] == 10 and sizes[20]["hidden_turns"] == 0  # 20 messages = 10 turns
    assert sizes[0]["key_to_frame_vs_empty"] == pytest.approx(1.0)


@pytest.mark.slow
def test_local_latency_quick_reports_the_four_cases(tmp_path: Path):
    from myrm_tui.llm.local.provider import local_available

    out = tmp_path / "l1.json"
    proc = run_module("bench.local_latency", "--quick", "--tokens", "120", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    if not local_available():
        assert result["status"].startswith("skipped")
        return
    assert result["status"] == "ok" and result["repeats"] == 1
    cases = result["cases"]
    assert set(cases) == {"cold", "warm", "last_changed", "first_changed"}
    for case in cases.values():
        assert case["ttft_ms"]["n"] == 1 and case["prompt_tokens"] > 50
    assert cases["cold"]["vs_cold"] == pytest.approx(1.0)
    assert result["warm_over_cold"] == cases["warm"]["vs_cold"]
    assert "L1 time to first token" in proc.stdout
