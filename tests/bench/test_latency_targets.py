"""`python -m bench latency`'s targets table: a part not run says so, a figure over its target
says "no" (an old figure or a silent pass would make the table lie)."""

from __future__ import annotations

from bench import latency_targets


def test_parts_not_run_say_not_run_and_misses_say_no(capsys):
    latency_targets.report(
        {
            "engine": {
                "p50_ms": 2.1,
                "p95_ms": 31.0,
                "p99_ms": 60.0,
                "compaction_turns": 23,
                "compaction_mean_ms": 55.0,
                "idle_warm_mean_ms": 4.0,
                "idle_warm_max_ms": 80.0,
            },
            "frames": {"failure": "RuntimeError: no terminal"},
        }
    )
    out = capsys.readouterr().out
    lines = {line.split("|")[1].strip(): line for line in out.splitlines() if line.count("|") >= 4}
    chat = next(v for k, v in lines.items() if k.startswith("first chat message"))
    b1 = next(v for k, v in lines.items() if k.startswith("B1"))
    frames = next(v for k, v in lines.items() if k.startswith("frames over"))
    assert "not run" in chat and "not run" in frames
    assert "31.0 / 60.0 ms" in b1 and b1.rstrip(" |").endswith("no")


def test_figures_within_their_targets_say_yes(capsys):
    latency_targets.report(
        {
            "chat": {"chat_first_token_s": 1.0, "run_first_token_s": 1.0, "ratio": 1.0},
            "frames": {"frames": 240, "frames_over_50ms": 0, "key_to_frame_p99_ms": 41.0, "rate_pct": 100.0},
        }
    )
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "first chat message" in line or "frames over" in line]
    assert len(rows) == 2 and all(row.rstrip(" |").endswith("yes") for row in rows), rows
