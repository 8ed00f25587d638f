"""`python -m bench latency`'s targets table: a part not run says so, a figure over its target
says "no" (an old figure or a silent pass would make the table lie)."""

from __future__ import annotations

from bench import latency_targets


def test_parts_not_run_say_not_run_and_misses_say_no(capsys):
    latency_targets.report(
        {
            "engine": {
                "defaults": {
                    "p50_ms": 2.1,
                    "p95_ms": 31.0,
                    "p99_ms": 60.0,
                    "compaction_turns": 23,
                    "compaction_mean_ms": 55.0,
                    "idle_warm_mean_ms": 4.0,
                    "idle_warm_max_ms": 80.0,
                },
                "while_answering": {"failure": "Killed"},
            },
            "frames": {"failure": "RuntimeError: no terminal"},
        }
    )
    out = capsys.readouterr().out
    lines = {line.split("|")[1].strip(): line for line in out.splitlines() if line.count("|") >= 4}
    chat = next(v for k, v in lines.items() if k.startswith("first chat message"))
    b1 = next(v for k, v in lines.items() if k.startswith("B1"))
    answering = next(v for k, v in lines.items() if "compact_while_answering" in k)
    frames = next(v for k, v in lines.items() if k.startswith("frames over"))
    assert "not run" in chat and "not run" in frames and "not run" in answering
    assert "31.0 / 60.0 ms" in b1 and b1.rstrip(" |").endswith("no")


def test_b1_with_the_event_while_answering_reads_its_own_figures(capsys):
    defaults = {
        "p50_ms": 1.0,
        "p95_ms": 13.8,
        "p99_ms": 22.1,
        "compaction_turns": 23,
        "compaction_mean_ms": 17.7,
        "idle_warm_mean_ms": 5.0,
        "idle_warm_max_ms": 96.0,
    }
    answering = {**defaults, "p95_ms": 4.7, "p99_ms": 9.5, "compaction_turns": 0, "answering_events": 23}
    answering["answering_mean_ms"] = 19.6
    latency_targets.report({"engine": {"defaults": defaults, "while_answering": answering}})
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.count("|") >= 4]
    b1 = next(r for r in rows if "B1 engine CPU" in r)
    on = next(r for r in rows if "compact_while_answering" in r)
    assert "13.8 / 22.1 ms" in b1 and b1.rstrip(" |").endswith("no")
    assert "4.7 / 9.5 ms" in on and on.rstrip(" |").endswith("yes")
    assert "23 events while the model answered, mean 19.6 ms" in out
    assert "23 events inside a request, mean 17.7 ms" in out


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
