"""Seed mechanisms the audit found implemented but unpinned (docs/seed-audit.md), through the live
agent: real tools, the scripted model, a real store, and what the provider actually received on
each request (the script's `record` file).

Why through the agent and not the planner alone: each of these is a promise about the request
the model reads (a failed call's output still there after compaction, a duplicate pointing at
its twin, a reread that is user-role, a file read sent whole), and only the request shows it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.agent.setup.prompts import PROMPT_MODES
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.shell.bash import Bash
from myrm_tui.context.rows.views import pointer_text
from myrm_tui.context.window.arrival_budget import arrival_allowances
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import compact_any_span, drive, make_agent

# A window where the fresh tail (10 %) holds one big file read and the arrival allowances leave
# the ~1k-token bash outputs below whole: what is outside the tail is up to the forced event.
WINDOW = 64_000
MASKED_PREFIX = "[old output masked"
REREAD_TITLE = "re-read after compaction"


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command}}]}


def read(call_id: str, path: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "file_read", "arguments": {"path": path}}]}


def requests(record: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def sent_tool_results(request: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in request if m.get("role") == "tool"]


def only(texts: list[str], needle: str) -> str:
    found = [t for t in texts if needle in t]
    assert len(found) == 1, (needle, found)
    return found[0]


def write_filler(path: Path, word: str, lines: int = 400) -> None:
    """A file whose read takes ~3.5k tokens: more than half the fresh tail of WINDOW."""
    path.write_text("".join(f"{word} filler line {i:04d} with a few words\n" for i in range(lines)))


def echo_loop(text: str, count: int = 150) -> str:
    """A shell loop printing `count` numbered lines (~1.2k tokens at 150): under the arrival
    allowance of WINDOW, so it reaches the history whole."""
    return f'for i in $(seq 1 {count}); do echo "{text} $i"; done'


# -- Layer 0: a failed call's output is kept for the retry ---------------------------------


async def test_a_full_event_masks_an_older_success_but_spares_the_current_turns_failed_output(
    store, workspace, script, tmp_path
):
    write_filler(workspace / "one.txt", "first")
    write_filler(workspace / "two.txt", "second")
    failing = "echo 'Traceback (most recent call last):'; " + echo_loop("  build frame failed to link at") + "; exit 1"
    record = tmp_path / "requests.jsonl"
    model = script(
        bash("o1", echo_loop("old record is fine and complete")),
        {"text": "listed"},
        bash("a1", failing),
        bash("b1", echo_loop("new record is fine and complete")),
        read("r1", "one.txt"),
        read("r2", "two.txt"),
        {"text": "the build fails"},
        {"text": "retrying"},
        context_window=WINDOW,
        record=str(record),
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "list the old records")
    await drive(agent, "run the build")
    event = agent.engine.compact(agent.turn_input(), tier="full")
    assert event is not None and event["tier"] == "full" and event["ops"].get("mask", 0) >= 2
    await drive(agent, "what now")
    sent = sent_tool_results(requests(record)[-1])
    # The older turn's successful output and the current turn's other output (same priority,
    # same age class as the failure) are masked; the failed output is what a retry needs.
    assert only(sent, "old record is fine").startswith(MASKED_PREFIX)
    assert only(sent, "new record is fine").startswith(MASKED_PREFIX)
    failed = only(sent, "build frame failed to link at 150")
    assert failed.startswith("Traceback (most recent call last):") and failed.endswith("[exit code 1]")


# -- Layer 3: dedup of exact duplicates ------------------------------------------------------


async def test_two_identical_outputs_leave_the_older_as_a_pointer_that_expands_to_the_whole_text(
    store, workspace, script, tmp_path
):
    data = "".join(f"row {i:03d}: the same report line\n" for i in range(120))
    (workspace / "data.txt").write_text(data)
    write_filler(workspace / "one.txt", "first")
    write_filler(workspace / "two.txt", "second")
    record = tmp_path / "requests.jsonl"
    # Two different commands (so `superseded` does not take it) with byte-identical output.
    turns = [
        bash("d1", "cat data.txt"),
        bash("d2", "cat ./data.txt"),
        read("r1", "one.txt"),
        read("r2", "two.txt"),
        {"text": "read twice"},
        {"text": "noted"},
    ]
    model = script(*turns, context_window=WINDOW, record=str(record))
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "show the report")
    older, newer = [r for r in store.messages(agent.session_id) if r.role == "tool"][:2]
    assert older.message["content"] == newer.message["content"] == data + "[exit code 0]"
    event = agent.engine.compact(agent.turn_input(), tier="light")
    assert event is not None and event["ops"].get("dedup") == 1
    await drive(agent, "and?")
    sent = sent_tool_results(requests(record)[-1])
    pointer = pointer_text("duplicate output", f"msg:{older.id}", f"identical result msg:{newer.id}")
    assert pointer in sent
    assert sent.count(newer.message["content"]) == 1, "the newer output stays whole"
    # The model follows the pointer: ctx_expand of the older handle gives the whole text back.
    script_path = Path(model.split("/", 1)[1])
    spec = json.loads(script_path.read_text())
    spec["turns"] += [{"tool_calls": [{"id": "x1", "name": "ctx_expand", "arguments": {"handle": f"msg:{older.id}"}}]}]
    spec["turns"] += [{"text": "got it back"}]
    script_path.write_text(json.dumps(spec))
    await drive(agent, "show me the older one")
    expanded = sent_tool_results(requests(record)[-1])[-1]
    assert data in expanded


# -- Layer 4.5: the post-compaction reread is user-role --------------------------------------


async def test_the_post_compaction_reread_reaches_the_provider_as_a_user_message(store, workspace, script, tmp_path):
    write_filler(workspace / "one.txt", "first")
    write_filler(workspace / "two.txt", "second")
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "w1", "name": "file_write", "arguments": {"path": "app.py", "content": "v = 1\n"}}]},
        read("r1", "one.txt"),
        {"text": "wrote it"},
        read("r2", "two.txt"),
        {"text": "read it"},
        {"text": "carry on"},
        context_window=WINDOW,
        record=str(record),
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "write app.py")
    (workspace / "app.py").write_text("v = 2  # changed after the write\n")
    await drive(agent, "read the second file")
    assert agent.engine.compact(agent.turn_input(), tier="full") is not None
    await drive(agent, "go on")
    request = requests(record)[-1]
    [reread] = [m for m in request if REREAD_TITLE in str(m.get("content"))]
    assert reread["role"] == "user"
    assert "v = 2  # changed after the write" in reread["content"]  # the file as it is now
    systems = [m for m in request if m["role"] == "system"]
    assert [m["content"] for m in systems] == [agent.system_prompt], "the cached system prompt is untouched"


# -- System prompt: summaries are data, not instructions, in every mode -----------------------


@pytest.mark.parametrize("mode", PROMPT_MODES)
async def test_every_prompt_mode_that_can_show_a_summary_says_summaries_are_data(
    mode, store, workspace, script, tmp_path
):
    """Compaction does not depend on the prompt mode, so a summary can reach the model in each
    of them; each one's system prompt, as sent, tells the model that summaries are data."""
    record = tmp_path / "requests.jsonl"
    turns = [{"text": f"answer {i} " + "words " * 300} for i in range(4)]
    model = script(*turns, context_window=32_000, record=str(record))
    agent = make_agent(store, workspace, model, prompt_mode=mode)
    for i in range(3):
        await drive(agent, f"question {i} about the project")
    event = await compact_any_span(agent).compact_now()
    assert event is not None and event["ops"].get("remove", 0) > 0
    await drive(agent, "last question")
    request = requests(record)[-1]
    assert any("[summary S" in str(m.get("content")) for m in request), "a summary reached the model"
    system = request[0]["content"]
    assert request[0]["role"] == "system"
    assert re.search(r"summaries[^.]*\bdata, not\b[^.]*instructions", system, re.IGNORECASE), system
    assert "newer evidence" in system, "a summary is lossy: the prompt says newer evidence wins"


# -- Layer 1: file reads get the larger arrival allowance ---------------------------------------


async def test_a_file_read_between_the_two_allowances_is_sent_whole_and_the_same_bash_output_is_excerpted(
    store, workspace, script, tmp_path
):
    (workspace / "notes.txt").write_text("".join(f"note {i:04d}: a line of the notes file\n" for i in range(450)))
    sent: dict[str, str] = {}
    rows = {}
    limits = set()
    for tool, turn in (("file_read", read("c1", "notes.txt")), ("bash", bash("c1", "cat notes.txt"))):
        record = tmp_path / f"{tool}.jsonl"
        model = script(turn, {"text": "seen"}, context_window=WINDOW, record=str(record))
        agent = make_agent(store, workspace, model, approval="yolo")
        await drive(agent, "look at the notes")
        [sent[tool]] = sent_tool_results(requests(record)[-1])
        [rows[tool]] = [r for r in store.messages(agent.session_id) if r.role == "tool"]
        limits.add(store.events(agent.session_id, event_kinds.ASSEMBLE)[-1].data["budget"]["prompt_limit"])
    [prompt_limit] = limits
    # With the prompt nearly empty the room left does not shrink either allowance.
    allowances = arrival_allowances(prompt_limit, 0, DEFAULT_CONFIG)
    for tool in sent:
        assert allowances.output < rows[tool].tokens < allowances.file_read, (tool, rows[tool].tokens, allowances)
    assert rows["bash"].tokens <= rows["file_read"].tokens  # the bash output is not the bigger one
    assert sent["file_read"] == rows["file_read"].message["content"], "the file read passed whole"
    assert "note 0449" in sent["file_read"] and "excerpt" not in sent["file_read"].split("\n", 1)[0]
    header = sent["bash"].split("\n", 1)[0]
    assert "excerpt" in header and f"full: msg:{rows['bash'].id}" in header
    assert len(sent["bash"]) < len(rows["bash"].message["content"]) / 2


# -- Layer 1.5, L4: no vault, head-truncated with a notice ----------------------------------------


async def test_bash_without_a_vault_keeps_the_head_with_a_notice_and_no_handle(workspace):
    cap = 30_000
    ctx = ToolContext(workspace=workspace, settings=Settings().with_values(tool_output_cap=cap), vault=None)
    result = await Bash().run({"command": "seq 1 40000"}, ctx)
    assert result.status == "ok" and result.vault_handle is None
    first, *rest = result.content.split("\n")
    assert "no vault available for the rest" in first and "vault://" not in result.content
    assert rest[:5] == ["1", "2", "3", "4", "5"], "the head of the output is kept"
    assert rest[-1] == "[exit code 0]"
    assert len(result.content) <= cap
