"""What an old output keeps once it leaves the prompt, whatever the format of its facts: through
`myrm replay` (the recorded session through the real agent, engine and store).

- A line that breaks its output's shape (a record of a one-line JSON array with an extra key, a
  log line at another level) stays in the masked stub and in the summary that replaces the turn.
- A file read again keeps its change against the previous read; a command run again keeps, in
  the superseded pointer, what the newer run no longer shows; a line of an old output that a
  later message names is kept in its stub.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from myrm_tui.replay import ReplayOptions, replay


def call(cid: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def step(turn: int, ask: str, name: str, args: dict[str, Any], output: str, note: str = "ok") -> dict[str, Any]:
    cid = f"c{turn}"
    return {
        "turn": turn,
        "messages": [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": None, "tool_calls": [call(cid, name, **args)]},
            {"role": "tool", "tool_call_id": cid, "name": name, "content": output},
            {"role": "assistant", "content": note},
        ],
    }


def filler(turn: int) -> dict[str, Any]:
    """About 1,500 tokens of source text nobody refers to again."""
    body = "\n".join(f"def helper_{turn}_{i}(value):\n    return value * {i} + {turn}\n" for i in range(90))
    return step(turn, f"Read src/mod_{turn}.py.", "file_read", {"path": f"src/mod_{turn}.py"}, body)


def packages(extra: bool) -> str:
    records = [{"name": f"pkg{i:03d}", "version": f"1.{i}.0"} for i in range(120)]
    if extra:
        records[60]["pinned_by"] = "OPS-4471-relay"
    return json.dumps(records)  # one line, as `pip list --format json` prints it


def index_log(warning: bool) -> str:
    lines = [f"2026-01-01 00:00:{i % 60:02d},{i:03d} INFO index: file_{i}.py {i + 10} lines" for i in range(90)]
    if warning:
        lines.insert(45, "2026-01-01 00:00:45,999 WARNING relay: lease window fell back to heron-relay-17.internal")
    return "\n".join(lines)


def prompt_text(record: dict[str, Any]) -> str:
    return json.dumps(record["prompt"], ensure_ascii=False)


def replayed(lines: list[dict[str, Any]], window: int) -> list[dict[str, Any]]:
    return [r for r in replay(lines, ReplayOptions(window=window)) if "prompt" in r]


@pytest.mark.slow
def test_shape_breaks_of_any_format_survive_the_mask_and_the_summary():
    lines = [
        step(1, "List the installed packages as JSON.", "bash", {"command": "pip list --format json"}, packages(True)),
        step(2, "Run the indexer.", "bash", {"command": "python tools/index.py"}, index_log(True)),
    ]
    lines += [filler(t) for t in range(3, 31)]
    turns = replayed(lines, 16_000)
    masked = next(r for r in turns if "[old output masked: bash command=pip list" in prompt_text(r))
    assert "OPS-4471-relay" in prompt_text(masked), "the record with the extra key stays in the stub"
    assert "heron-relay-17.internal" in prompt_text(masked), "the warning among info lines stays in the stub"
    last = turns[-1]
    assert '"tool_call_id": "c1"' not in prompt_text(last), "by the end the turn itself is summarized"
    assert "OPS-4471-relay" in prompt_text(last) and "heron-relay-17.internal" in prompt_text(last)


def test_a_reread_keeps_its_change_a_rerun_what_it_lost_and_a_named_line_stays():
    config = "\n".join(f"setting_{i}: value-{i}" for i in range(30))
    listing = "\n".join(f"-rw-r--r-- 1 root root {100 + i} Dec  2 05:10 tool-{i}-shim" for i in range(60))
    listing = listing.replace("tool-31-shim", "quota-gate-shim")
    lines = [
        step(1, "Read deploy/app.yaml.", "file_read", {"path": "deploy/app.yaml"}, config + "\nlease_window: 40s"),
        step(
            2,
            "I edited deploy/app.yaml; read it again.",
            "file_read",
            {"path": "deploy/app.yaml"},
            config + "\nlease_window: heron-95s",
        ),
        step(3, "Run the indexer.", "bash", {"command": "python tools/index.py"}, index_log(True)),
        step(4, "Run it again.", "bash", {"command": "python tools/index.py"}, index_log(False)),
        step(5, "List the tools folder.", "bash", {"command": "ls -la tools"}, listing),
        {
            "turn": 6,
            "messages": [
                {"role": "user", "content": "Remember the quota-gate-shim entry; we need it for the deploy."},
                {"role": "assistant", "content": "Noted."},
            ],
        },
    ]
    lines += [filler(t) for t in range(7, 17)]
    turns = replayed(lines, 24_000)
    shown = {m.get("tool_call_id"): m["content"] for m in turns[-1]["prompt"] if m.get("role") == "tool"}
    # the re-read shows the file's current version, so it is protected whole (file_protection.py)
    assert shown["c2"] == config + "\nlease_window: heron-95s", "the current read stays whole"
    assert shown["c3"].startswith("[superseded bash command=python tools/index.py")
    assert "heron-relay-17.internal" in shown["c3"], "the superseded run keeps the warning the newer run lost"
    assert shown["c5"].startswith(("[stale status output dropped", "[output ", "[old output masked"))
    assert "quota-gate-shim" in shown["c5"], "the line a later message named"
