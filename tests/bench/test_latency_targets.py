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


def test_b1_rows_of_held_out_seeds_read_their_own_figures(capsys):
    """The held-out sessions are what says whether B1's figures generalize: each row must read
    its own replay (a row reading seed 1's figures would hide a miss)."""
    base = {
        "p50_ms": 1.0,
        "compaction_turns": 24,
        "compaction_mean_ms": 28.0,
        "idle_warm_mean_ms": 5.0,
        "idle_warm_max_ms": 90.0,
    }
    engine = {"defaults": {**base, "p95_ms": 9.0, "p99_ms": 20.0}}
    for n, seed in enumerate(latency_targets.B1_HELD_OUT_SEEDS):
        engine[f"seed_{seed}"] = {**base, "p95_ms": 19.0 + n, "p99_ms": 40.0 + n}
        engine[f"seed_{seed}_while_answering"] = {**base, "p95_ms": 5.0 + n, "p99_ms": 12.0 + n}
    latency_targets.report({"engine": engine})
    rows = [line for line in capsys.readouterr().out.splitlines() if line.count("|") >= 4]
    for n, seed in enumerate(latency_targets.B1_HELD_OUT_SEEDS):
        at = next(i for i, row in enumerate(rows) if f"(seed {seed}), defaults" in row)
        assert f"{19.0 + n:.1f} / {40.0 + n:.1f} ms" in rows[at] and rows[at].rstrip(" |").endswith("no")
        on = next(row for row in rows[at + 1 :] if "setting on" in row)
        assert f"{5.0 + n:.1f} / {12.0 + n:.1f} ms" in on and on.rstrip(" |").endswith("yes")
    assert latency_targets.B1_HELD_OUT_SEEDS, "B1 must be reported beside sessions it was not profiled on"
