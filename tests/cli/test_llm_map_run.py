"""llm_map under `myrm run`: its progress on stderr, and a map that survives a kill of the
process and resumes in the next run without asking for the items it had finished."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def map_call(items: list[str], **extra) -> dict:
    args = {"prompt": "Count the words.", "output_schema": SCHEMA, "items": items, **extra}
    return {"tool_calls": [{"name": "llm_map", "arguments": args}]}


def item_model(tmp_path: Path, **turn) -> tuple[str, Path]:
    record = tmp_path / "items.jsonl"
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"turns": [{"text": '{"n": 3}', **turn}], "record": record.name}), encoding="utf-8")
    return f"scripted/{path}", record


def items_asked(record: Path) -> list[str]:
    if not record.exists():
        return []
    return [json.loads(line)[1]["content"] for line in record.read_text().splitlines()]


def finished_items(workspace: Path) -> int:
    db = workspace / ".myrm" / "sessions.db"
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
        try:
            return conn.execute("SELECT count(*) FROM events WHERE kind = 'map_item'").fetchone()[0]
        except sqlite3.OperationalError:  # the schema is still being created
            return 0


def test_run_prints_the_map_progress_on_stderr(myrm, script, tmp_path):
    lite, _ = item_model(tmp_path)
    model = script(map_call([f"item {i}" for i in range(5)]), {"text": "Done."})
    result = myrm("run", "--model", model, "count them", env={"MYRM_LITE_MODEL": lite})
    assert result.returncode == 0, result.stderr
    assert "⟫map llm_map: 5 of 5 · 0 failed" in result.stderr


@pytest.mark.slow  # two `myrm` processes, each importing litellm
def test_a_map_killed_mid_way_resumes_in_the_next_run(myrm, script, workspace, tmp_path):
    lite, record = item_model(tmp_path, delay_ms=40)
    items = [f"line {i} of the log" for i in range(80)]
    model = script(map_call(items, concurrency=2), map_call(items, concurrency=2), {"text": "Done."})
    env = {"MYRM_LITE_MODEL": lite}
    proc = myrm.popen("run", "--approve", "yolo", "--model", model, "count them", env=env)
    try:
        deadline = time.monotonic() + 120
        while finished_items(workspace) < 10:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept = finished_items(workspace)
    first = items_asked(record)
    assert 10 <= kept < 80 and len(first) < 80

    again = myrm("run", "--continue", "--approve", "yolo", "--model", model, "go on", env=env)
    assert again.returncode == 0, again.stderr
    second = items_asked(record)[len(first) :]
    assert len(second) == 80 - kept, "the finished items are not asked again"
    assert f"({kept} from an earlier run)" in again.stderr and "80 of 80" in again.stderr
