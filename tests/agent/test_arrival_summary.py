"""The opt-in model summary of a big unstructured tool output (agent/turn/arrival_summary.py), through
the live agent: the main model and the summarizer (the lite model) are scripted providers behind
litellm, each recording the requests it got."""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.turn import arrival_summary as A
from myrm_tui.context.rows.ingest import spilled_output
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent

SECRET = "AKIA" + "Q7WX2ZKD4M9PLR3T"  # an AWS key id: redact() must catch it
LINES = 900
# Prose lines no filter understands; a secret in the middle, a failure near the end.
SCRIPT = (
    "import sys\n"
    f"for i in range({LINES}):\n"
    "    print(f'the quick brown fox number {i} jumps over the lazy dog and keeps going today')\n"
    f"    if i == 400: print('deploy credentials {SECRET} loaded')\n"
    "print('FATAL: the migration step could not reach the database')\n"
)
SUMMARY = "The run printed 900 fox lines; it ended with FATAL: the migration could not reach the database."


def _scripted(tmp_path: Path, name: str, turns: list[dict]) -> tuple[str, Path]:
    record = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": turns, "record": record.name}), encoding="utf-8")
    return f"scripted/{path}", record


def _requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def _setup(store, workspace, tmp_path, summarizer_turn: dict, **values):
    (workspace / "noisy.py").write_text(SCRIPT, encoding="utf-8")
    call = {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "python3 noisy.py"}}]}
    main, main_record = _scripted(tmp_path, "main", [call, {"text": "I read it."}])
    lite, lite_record = _scripted(tmp_path, "lite", [summarizer_turn])
    agent = make_agent(store, workspace, main, approval="yolo", lite_model=lite, **values)
    return agent, main_record, lite_record


def _full_output() -> str:
    out = []
    for i in range(LINES):
        out.append(f"the quick brown fox number {i} jumps over the lazy dog and keeps going today")
        if i == 400:
            out.append(f"deploy credentials {SECRET} loaded")
    out.append("FATAL: the migration step could not reach the database")
    return "\n".join(out) + "\n"


async def test_the_model_summary_reaches_the_provider_with_the_handle_and_the_raw_stays_in_the_vault(
    store, workspace, tmp_path
):
    agent, main_record, lite_record = _setup(store, workspace, tmp_path, {"text": SUMMARY}, arrival_summary=True)
    log = await drive(agent, "run the noisy script")

    (asked,) = _requests(lite_record)
    sent = json.dumps(asked)
    assert SECRET not in sent, "secrets are redacted before the summarizer call"
    assert "FATAL: the migration step" in sent and len(asked[1]["content"]) <= A.INPUT_CHARS + 200, "bounded"
    (finished,) = log.of(ToolFinished)
    size, handle = spilled_output(finished.content) or (0, "")
    assert finished.vault_handle == handle and size == len(_full_output())
    assert store.vault.read_text(handle) == _full_output(), "the raw output stays whole in the vault"
    assert f"{A.KIND} excerpt shown" in finished.content.splitlines()[0]
    to_main = json.dumps(_requests(main_record)[1])
    assert SUMMARY in to_main and handle in to_main and "fox number 0 " in to_main, "summary, head and handle"
    purposes = [e.data.get("purpose") for e in store.events(agent.session_id, kind=event_kinds.USAGE)]
    assert A.PURPOSE in purposes, "the summarizer call is priced with the session"


async def test_a_failing_summarizer_falls_back_to_the_plain_excerpt(store, workspace, tmp_path):
    agent, main_record, lite_record = _setup(
        store, workspace, tmp_path, {"text": "x", "error": "server"}, arrival_summary=True
    )
    log = await drive(agent, "run the noisy script")
    assert len(_requests(lite_record)) == 1, "the summarizer was asked (once: no retries) and failed"
    (finished,) = log.of(ToolFinished)
    assert A.KIND not in finished.content and SUMMARY not in finished.content
    to_main = json.dumps(_requests(main_record)[1])
    assert "FATAL: the migration step" in to_main and SUMMARY not in to_main, "the plain excerpt went instead"


async def test_off_by_default_no_summarizer_call(store, workspace, tmp_path):
    agent, _, lite_record = _setup(store, workspace, tmp_path, {"text": SUMMARY})
    log = await drive(agent, "run the noisy script")
    assert _requests(lite_record) == [] and A.KIND not in log.of(ToolFinished)[0].content


def test_only_unstructured_output_is_sent():
    assert A.unstructured(_full_output(), "bash", {"command": "python3 noisy.py"})
    as_json = json.dumps([{"id": i, "name": f"item {i}"} for i in range(2_000)])
    assert not A.unstructured(as_json, "bash", {"command": "cat items.json"})


async def test_a_slow_summarizer_times_out_to_the_plain_excerpt(store, workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(A, "TIMEOUT_S", 0.3)
    agent, main_record, _ = _setup(
        store, workspace, tmp_path, {"text": SUMMARY, "delay_ms": 3_000}, arrival_summary=True
    )
    log = await drive(agent, "run the noisy script")
    assert A.KIND not in log.of(ToolFinished)[0].content
    assert SUMMARY not in json.dumps(_requests(main_record)[1])


async def test_a_big_file_read_is_never_summarized(store, workspace, tmp_path):
    (workspace / "notes.txt").write_text(_full_output(), encoding="utf-8")
    call = {"tool_calls": [{"id": "c1", "name": "file_read", "arguments": {"path": "notes.txt"}}]}
    main, _ = _scripted(tmp_path, "main", [call, {"text": "read"}])
    lite, lite_record = _scripted(tmp_path, "lite", [{"text": SUMMARY}])
    agent = make_agent(store, workspace, main, approval="yolo", lite_model=lite, arrival_summary=True)
    log = await drive(agent, "read the notes")
    assert _requests(lite_record) == [] and A.KIND not in log.of(ToolFinished)[0].content
