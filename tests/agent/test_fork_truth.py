"""Fork with summary tells the truth.

A live session through the scripted provider, real store, real tools and a real bash: the user
denies `rm -rf build` and an edit of config.py, interrupts an endless loop, lets a write
through. The fork's summary must not call the denied or interrupted calls done, must not call
the unchanged file modified, and must not call an answered request pending.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalRequest, StepStarted, ToolFinished, ToolOutputChunk
from myrm_tui.agent.fork import FORK_SUMMARY, SYNTHETIC_KEY, fork_with_summary
from myrm_tui.context.summary.extractive import MAX_BLOCKED, extractive_summary
from myrm_tui.context.summary.outcomes import span_facts
from myrm_tui.store.tool_status import STATUS_KEY, stored_status
from tests.agent.agent_helpers import drive, make_agent
from tests.hypothesis_profiles import examples

LOOP = "while true; do echo tick; sleep 0.1; done"


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def sections(text: str) -> dict[str, list[str]]:
    """The rendered summary as {label: items} (a `Label: value` line is a one-item list)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("- ") and current is not None:
            out[current].append(line[2:])
        elif re.match(r"^[A-Z][^:]{0,40}:", line):
            label, _, rest = line.partition(":")
            current = label
            out[current] = [rest.strip()] if rest.strip() else []
        else:
            current = None
    return out


def approve(request: ApprovalRequest) -> bool:
    """The user: no to rm -rf and to editing config.py, yes to the rest."""
    return not ("rm -rf" in request.summary or request.tool == "file_edit")


async def interrupt_when_running(agent: Agent, text: str) -> list:
    seen: list = []

    async def consume():
        async for event in agent.turn(text):
            seen.append(event)
            if isinstance(event, ApprovalRequest):
                assert event.decision is not None
                event.decision.set_result(approve(event))

    task = asyncio.create_task(consume())
    for _ in range(500):
        if any(isinstance(e, ToolOutputChunk) and "tick" in e.text for e in seen):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return seen


@pytest.fixture
async def lived(store, workspace, script):
    """The session of the issue, lived through the real agent."""
    (workspace / "build").mkdir()
    (workspace / "build" / "out.bin").write_text("artifact")
    (workspace / "config.py").write_text("DEBUG = False\n")
    model = script(
        {"tool_calls": [call("bash", "c1", command="rm -rf build")]},
        {"text": "I did not delete build: you declined."},
        {"tool_calls": [call("file_read", "c2", path="config.py")]},
        {"tool_calls": [call("file_edit", "c3", path="config.py", old="False", new="True")]},
        {"text": "config.py is unchanged: you declined the edit."},
        {"tool_calls": [call("bash", "c4", command=LOOP)]},
        {"tool_calls": [call("file_write", "c5", path="notes.txt", content="remember\n")]},
        {"text": "Wrote notes.txt."},
        {"text": "Next I would run the tests."},
        {"text": "That is all for now."},
    )
    agent = make_agent(store, workspace, model)
    await drive(agent, "clean the build folder", approve)
    await drive(agent, "turn on DEBUG in config.py", approve)
    await interrupt_when_running(agent, "tail the log forever")
    await drive(agent, "write a notes.txt with 'remember'", approve)
    await drive(agent, "what next?", approve)
    await drive(agent, "anything else?", approve)
    return agent


async def test_the_world_is_as_the_session_says(lived, workspace, store):
    # The premise: the denied calls really did not run, the write did.
    assert (workspace / "build" / "out.bin").exists()
    assert (workspace / "config.py").read_text() == "DEBUG = False\n"
    assert (workspace / "notes.txt").read_text() == "remember\n"
    statuses = {
        m["tool_call_id"]: m.get(STATUS_KEY)
        for m in (r.message for r in store.messages(lived.session_id))
        if m["role"] == "tool"
    }
    assert statuses == {"c1": "denied", "c2": "ok", "c3": "denied", "c4": "interrupted", "c5": "ok"}


async def test_fork_summary_is_truthful(lived, store):
    child = lived.fork_with_summary()
    rows = store.messages(child.id)
    [summary_row] = [r for r in rows if r.message.get(SYNTHETIC_KEY) == FORK_SUMMARY]
    text = summary_row.message["content"]
    found = sections(text)

    done = "\n".join(found.get("Done", []))
    assert "rm -rf" not in done, "a denied command is not done"
    assert "while true" not in done, "an interrupted command is not done"
    assert "file_edit" not in done, "a denied edit is not done"
    assert "file_read path=config.py" in done and "file_write path=notes.txt" in done

    blocked = "\n".join(found.get("Blocked", []))
    assert re.search(r"denied, not run: bash command=rm -rf build", blocked)
    assert re.search(r"denied, not run: file_edit path=config.py", blocked)
    assert re.search(r"interrupted, did not finish: bash command=while true", blocked)

    assert found.get("Files modified") == ["notes.txt — write"], "config.py was read and its edit denied"
    assert "config.py (edit denied)" in text and "notes.txt (write)" in text  # the footer says the same

    pending = "\n".join(found.get("Pending user asks", []))
    assert "tail the log forever" in pending, "interrupted before any reply: really pending"
    for answered in ("turn on DEBUG", "write a notes.txt"):
        assert answered not in pending
        assert any(answered in item for item in found.get("Resolved questions", []))
    assert "Active task" not in found, "the newest summarized ask was answered"

    # It names no handle the fork cannot expand, and says where the originals are.
    assert "ctx_expand" not in text and "msg:" not in text
    assert f"myrm sessions show {lived.session_id}" in text


async def test_fork_keeps_the_last_turns_and_the_model_sees_the_summary_unmarked(lived, store, workspace, script):
    child = lived.fork_with_summary()
    rows = store.messages(child.id)
    users = [r.message["content"] for r in rows if r.role == "user"]
    assert users[0] == "clean the build folder" and users[-2:] == ["what next?", "anything else?"]
    model = script({"text": "ok"})
    agent = Agent(
        store=store, session_id=child.id, settings=lived.settings.with_values(model=model), workspace=workspace
    )
    prompt = agent.engine.assemble(agent.turn_input())
    summary = [m for m in prompt.messages if "fork with summary" in json.dumps(m) or "[summary parent" in json.dumps(m)]
    assert summary and all(SYNTHETIC_KEY not in m and STATUS_KEY not in m for m in prompt.messages)


async def test_a_fork_of_a_fork_does_not_take_the_summary_for_the_anchor(lived, store, workspace):
    child = lived.fork_with_summary()
    grandchild = fork_with_summary(store, child.id, model=lived.model_name, keep_user_turns=1)
    first_user = next(r for r in store.messages(grandchild.id) if r.role == "user")
    assert first_user.message["content"] == "clean the build folder"


# ------------------------------------------------------------------ the rules, as invariants

STATUSES = ("ok", "error", "timeout", "denied", "interrupted", None)  # None: no result stored
TOOLS = ("file_write", "file_edit", "file_read", "bash")


@st.composite
def spans(draw):
    """A random span: asks, calls with random outcomes, replies (some cut off)."""
    messages: list[dict] = []
    for n in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(("ask", "call", "reply", "cut")))
        if kind == "ask":
            messages.append({"role": "user", "content": f"ask number {n}"})
        elif kind == "call":
            tool = draw(st.sampled_from(TOOLS))
            status = draw(st.sampled_from(STATUSES))
            args = {"path": f"file{n}.py"} if tool != "bash" else {"command": f"cmd{n}"}
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
                    ],
                }
            )
            if status is not None:
                messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}", STATUS_KEY: status})
        elif kind == "reply":
            messages.append({"role": "assistant", "content": f"reply {n}"})
        else:
            messages.append({"role": "assistant", "content": f"partial {n}\n\n[answer cut off: interrupted by user]"})
    return messages


@settings(max_examples=examples(150), deadline=None)
@given(spans())
def test_summary_rules_hold_for_any_span(messages):
    results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    summary = extractive_summary(messages, source_tokens=10**6, ends_turn=True)
    not_run: list[str] = []
    for m in messages:
        for c in m.get("tool_calls") or ():
            args = json.loads(c["function"]["arguments"])
            label = args.get("path") or args.get("command")
            status = stored_status(results[c["id"]]) if c["id"] in results else "unknown"
            in_done = any(f"={label}" in a for a in summary.completed_actions)
            assert in_done == (status == "ok"), (status, summary.completed_actions)
            if status in ("denied", "interrupted", "unknown"):
                not_run.append(label)
    # The list is capped (a summary, not a log): the most recent blockers are the ones kept.
    for label in not_run[-MAX_BLOCKED:]:
        assert any(f"={label}" in b for b in summary.blocked_items), (label, summary.blocked_items)
    written = {
        json.loads(c["function"]["arguments"])["path"]
        for m in messages
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] in ("file_write", "file_edit") and results.get(c["id"], {}).get(STATUS_KEY) == "ok"
    }
    assert {f.path for f in summary.files_modified} == written
    facts = span_facts(messages, ends_turn=True)
    for ask in facts.asks:
        text = messages[ask.index]["content"]
        replied = any(
            m["role"] == "assistant" and not m.get("tool_calls") and "cut off" not in m["content"]
            for m in messages[
                ask.index + 1 : next(
                    (j for j in range(ask.index + 1, len(messages)) if messages[j]["role"] == "user"), len(messages)
                )
            ]
        )
        listed = any(p.startswith(text + " ") for p in summary.pending_user_asks)
        if replied:  # an answered ask is never pending (lists are capped, so unanswered may be cut)
            assert not listed and any(r.startswith(text + " ") for r in summary.resolved_questions)
        elif text == summary.active_task:
            assert not listed


def test_legacy_rows_without_a_stored_status_are_read_from_our_own_wording():
    def tool(content):
        return {"role": "tool", "tool_call_id": "x", "content": content}

    assert stored_status(tool("denied by user: rm -rf build")) == "denied"
    assert stored_status(tool("not run: rm -rf build needs a person's approval")) == "denied"
    assert stored_status(tool("interrupted by user: the call was stopped")) == "interrupted"
    assert stored_status(tool("[interrupted: the session stopped before this tool call finished]")) == "interrupted"
    assert stored_status(tool("FAILED test_x\n[exit code 1]")) == "error"
    assert stored_status(tool("all good\n[exit code 0]")) == "ok"
    assert stored_status(tool("tick\n[timed out after 2 s: process group killed]")) == "timeout"
    # A stored status wins over whatever the (untrusted) output says.
    assert stored_status({**tool("denied by user: forged"), STATUS_KEY: "ok"}) == "ok"


async def test_tool_finished_status_matches_the_stored_one(store, workspace, script):
    model = script({"tool_calls": [call("bash", "c1", command="exit 3")]}, {"text": "it failed"})
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "run it")
    [finished] = log.of(ToolFinished)
    [row] = [r.message for r in store.messages(agent.session_id) if r.role == "tool"]
    assert finished.status == row[STATUS_KEY] == stored_status(row) == "error"


async def test_a_fork_records_the_model_its_parent_talks_to_now(lived, store, tmp_path):
    """The parent switched model for this session only (`/model`): its row still names the old
    one until its next turn, and a fork must not fall back to it (or to the saved default)."""
    path = tmp_path / "switched.json"
    path.write_text(json.dumps({"turns": [{"text": "from the switched model"}] * 20}), encoding="utf-8")
    switched = f"scripted/{path}"
    assert store.get_session(lived.session_id).model == lived.model_name != switched
    child = fork_with_summary(store, lived.session_id, model=switched)
    assert child.model == switched and store.get_session(child.id).model == switched
    settings = lived.settings.with_values(model=child.model)
    agent = Agent(store=store, session_id=child.id, settings=settings, workspace=lived.workspace)
    log = await drive(agent, "who answers?", approve)
    assert [step.model for step in log.of(StepStarted)] == [switched], "the request goes to the fork's model"
    assert store.messages(child.id)[-1].message["content"] == "from the switched model"
