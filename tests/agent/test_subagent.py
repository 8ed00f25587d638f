"""The task tool through the live agent: a scripted parent delegates to a scripted child.

The scripted provider answers by the number of assistant messages in the request, so parent and
child each get their own script: the child's model is swapped on the runner (`subagents.model`),
everything else (store, settings, sandbox, approval, cache key) is the parent's.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from myrm_tui.agent.events import ToolFinished, ToolOutputChunk
from myrm_tui.agent.subagent.child import SUBAGENT_EVENT, Bounds
from myrm_tui.agent.subagent.progress import parse_progress
from myrm_tui.agent.subagent.result import MAX_RESULT_TOKENS
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.context.window.tokens import count_text_tokens
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent
from tests.agent.process_helpers import all_gone, token_seconds, wait_until_running

NEEDLE = "OSPREY-7712 flaky fixture in conftest"
HANDOVER = (
    "<handover>\ncompleted:\n- ran the suite\npending:\n- fix test_cache\nrisks:\n- order-dependent\n"
    "files:\n- tests/test_cache.py\n</handover>"
)


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def task_call(call_id: str = "t1", **arguments) -> dict:
    return {"tool_calls": [call("task", call_id, prompt="triage the failing tests", **arguments)]}


def tool_result(store, session_id: str, call_id: str) -> str:
    return next(r.message["content"] for r in store.messages(session_id) if r.message.get("tool_call_id") == call_id)


def child_session(store, parent_id: str) -> str:
    [event] = [e for e in store.events(parent_id, SUBAGENT_EVENT) if "task" in e.data]
    return event.data["child"]


def parent_with_child(store, workspace, script, parent_turns, child_turns, **child_top):
    agent = make_agent(store, workspace, script(*parent_turns), approval="yolo")
    agent.subagents.model = script(*child_turns, **child_top)
    return agent


async def test_a_big_result_goes_to_the_vault_with_head_tail_handle_and_handover(store, workspace, script):
    # ~50k tokens of findings with the needle alone in the middle.
    lines = [f"finding {i}: test_module_{i} passed after retry" for i in range(9_000)]
    lines.insert(4_500, NEEDLE)
    big = "\n".join(lines)
    assert count_text_tokens(big) > 50_000
    agent = parent_with_child(
        store,
        workspace,
        script,
        [
            task_call(),
            {"tool_calls": [call("ctx_search", "s1", query="OSPREY-7712")]},
            {"text": "the fixture is flaky"},
        ],
        [{"text": f"{big}\n{HANDOVER}", "chunk_size": 1_000_000}],
    )
    log = await drive(agent, "why do the tests fail?")

    result = tool_result(store, agent.session_id, "t1")
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == "t1"]
    assert finished.vault_handle and finished.vault_handle in result
    assert count_text_tokens(result) <= MAX_RESULT_TOKENS
    assert "finding 0:" in result and "finding 8999:" in result  # head and tail
    assert NEEDLE not in result  # the middle is only in the vault
    assert "ctx_expand" in result and "file_read" in result  # how to read the rest
    # Tier 3: the handover is parsed, shown apart, and its tag is gone from the raw part.
    assert "pending: fix test_cache" in result and "files: tests/test_cache.py" in result
    assert "<handover>" not in result
    # The needle from the middle is found by the parent's ctx_search and read back by ctx_expand.
    search = tool_result(store, agent.session_id, "s1")
    assert "OSPREY-7712" in search and finished.vault_handle in search, search
    assert NEEDLE in ctx_expand(store, agent.session_id, finished.vault_handle, query="OSPREY-7712")
    # The child lived in its own session of the same store, linked both ways.
    child = child_session(store, agent.session_id)
    assert store.messages(child)[0].message["content"] == "triage the failing tests"
    assert [e.data["parent"] for e in store.events(child, SUBAGENT_EVENT)] == [agent.session_id]


async def test_a_small_result_passes_whole(store, workspace, script):
    answer = "Two tests fail: test_a (off by one in parse) and test_b (missing fixture)."
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(), {"text": "ok"}],
        [
            {"tool_calls": [call("file_read", "r1", path="notes.txt")]},
            {"text": f"{answer}\n{HANDOVER}"},
        ],
    )
    (workspace / "notes.txt").write_text("hello\n")
    log = await drive(agent, "triage")
    result = tool_result(store, agent.session_id, "t1")
    assert answer in result and "vault://" not in result
    assert result.startswith("[subagent done: 2 model calls, 1 tool calls")
    assert "completed: ran the suite" in result
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == "t1"]
    assert finished.ok and finished.vault_handle is None
    # The child's work streamed to the parent as progress lines (the TUI's nested block).
    progress = parse_progress("".join(e.text for e in log.of(ToolOutputChunk) if e.call_id == "t1"))
    kinds = [p.kind for p in progress]
    assert kinds[0] == "session" and "call" in kinds and kinds[-1] == "end"
    assert any(p.kind == "call" and "file_read" in p.text for p in progress)


async def test_a_missing_handover_is_derived_from_the_childs_calls(store, workspace, script):
    (workspace / "a.py").write_text("x = 1\n")
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(), {"text": "ok"}],
        [{"tool_calls": [call("file_read", "r1", path="a.py")]}, {"text": "a.py sets x."}],
    )
    await drive(agent, "look")
    result = tool_result(store, agent.session_id, "t1")
    assert "wrote none" in result and "files: a.py" in result


async def test_the_step_bound_gives_a_clear_partial_result(store, workspace, script):
    steps = [{"text": f"step {i}", "tool_calls": [call("bash", f"b{i}", command=f"echo run{i}")]} for i in range(10)]
    agent = parent_with_child(store, workspace, script, [task_call(max_steps=2), {"text": "ok"}], steps)
    log = await drive(agent, "triage")
    result = tool_result(store, agent.session_id, "t1")
    assert result.startswith("[subagent partial: 2 model calls")
    assert "stopped early: it made 2 model calls (limit 2)" in result
    assert "bash command=echo run0" in result and "bash command=echo run1" in result
    assert "partial work" in result
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == "t1"]
    assert finished.status == "error"


async def test_the_time_bound_stops_the_child_and_kills_its_command(store, workspace, script):
    token = token_seconds()
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(), {"text": "ok"}],
        [{"text": "running", "tool_calls": [call("bash", "b1", command=f"sleep {token}")]}],
    )
    agent.subagents.bounds = Bounds(max_seconds=1.5)
    log = await drive(agent, "triage")
    result = tool_result(store, agent.session_id, "t1")
    assert "stopped early: it ran for 2s (limit)" in result or "stopped early: it ran for 1s (limit)" in result
    assert "running" in result
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == "t1"]
    assert finished.status == "timeout"
    assert await all_gone(token)
    child = child_session(store, agent.session_id)
    assert tool_result(store, child, "b1").startswith("interrupted by user")


async def test_interrupting_the_parent_cancels_the_child_and_its_processes(store, workspace, script):
    token = token_seconds()
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(), {"text": "never"}],
        [{"tool_calls": [call("bash", "b1", command=f"sleep {token}")]}, {"text": "never"}],
    )

    async def consume():
        async for _ in agent.turn("triage"):
            pass

    task = asyncio.create_task(consume())
    await wait_until_running(token)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await all_gone(token)
    assert tool_result(store, agent.session_id, "t1").startswith("interrupted by user")
    child = child_session(store, agent.session_id)
    assert tool_result(store, child, "b1").startswith("interrupted by user")
    assert store.events(child, event_kinds.INTERRUPTED)


async def test_a_child_has_no_task_tool_and_shares_the_parents_cache_key(store, workspace, script):
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(), {"text": "ok"}],
        [{"tool_calls": [call("task", "t9", prompt="recurse")]}, {"text": "could not delegate"}],
    )
    assert "task" in agent.build.tools.names
    child = agent.subagents._spawn("x", Bounds())
    assert "task" not in child.build.tools.names and "bash" in child.build.tools.names
    assert not child.subagents.enabled
    assert child.call_settings().prompt_cache_key == agent.session_id != child.session_id
    assert "<handover>" in child.system_prompt and child.system_prompt.startswith(agent.system_prompt[:200])
    await drive(agent, "triage")
    inner = child_session(store, agent.session_id)
    assert "no tool named 'task'" in tool_result(store, inner, "t9")


async def test_a_small_window_child_compacts_with_system_first_and_pairs_intact(store, workspace, script, tmp_path):
    (workspace / "notes.txt").write_text("\n".join(f"note {i}: the cache warms on first read" for i in range(150)))
    reads = [{"tool_calls": [call("file_read", f"r{i}", path="notes.txt")]} for i in range(24)]
    record = tmp_path / "child_requests.jsonl"
    agent = parent_with_child(
        store,
        workspace,
        script,
        [task_call(max_steps=24), {"text": "ok"}],
        [*reads, {"text": f"read it many times\n{HANDOVER}"}],
        context_window=16_000,
        record=record.name,
    )
    await drive(agent, "triage")
    child = child_session(store, agent.session_id)
    removals = [e for e in store.events(child, event_kinds.COMPACTION) if e.data.get("ops", {}).get("remove")]
    assert removals, "the small window forced the child to remove history"
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    # The summarizer's own calls (same scripted model) are recorded too; the child's are these.
    conversation = [m for m in requests if m[0]["role"] == "system" and "<subagent>" in m[0]["content"]]
    assert len(conversation) == 24
    for messages in conversation:
        assert messages[1]["role"] == "user", "never an assistant right after the system prompt"
        open_ids: set[str] = set()
        for message in messages:
            if message["role"] == "assistant":
                assert not open_ids, "every call is answered before the next assistant message"
                open_ids = {c["id"] for c in message.get("tool_calls") or ()}
            elif message["role"] == "tool":
                assert message["tool_call_id"] in open_ids, "a tool result follows its call"
                open_ids.discard(message["tool_call_id"])
    assert "subagent partial" in tool_result(store, agent.session_id, "t1")


async def test_the_token_bound_stops_the_child_with_a_partial_result(store, workspace, script):
    steps = [{"text": f"step {i}", "tool_calls": [call("bash", f"b{i}", command=f"echo run{i}")]} for i in range(10)]
    agent = parent_with_child(store, workspace, script, [task_call(), {"text": "ok"}], steps)
    agent.subagents.bounds = Bounds(max_tokens=1)
    await drive(agent, "triage")
    result = tool_result(store, agent.session_id, "t1")
    assert result.startswith("[subagent partial: 1 model calls") and "(limit 1)" in result
    child = child_session(store, agent.session_id)
    messages = [r.message for r in store.messages(child)]
    asked = {c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()}
    assert asked == {m["tool_call_id"] for m in messages if m["role"] == "tool"}  # closed mid-step, nothing dangling


@pytest.mark.parametrize("allow", [True, False])
async def test_a_childs_call_that_must_ask_is_asked_of_the_person_as_the_task_call(store, workspace, script, allow):
    agent = make_agent(store, workspace, script(task_call(), {"text": "ok"}), approval="ask")
    agent.subagents.model = script(
        {"tool_calls": [call("file_write", "w1", path="fix.txt", content="fixed\n")]},
        {"text": f"wrote it\n{HANDOVER}"},
    )
    log = await drive(agent, "fix it", approve=allow)
    [asked] = log.approvals
    assert asked.call_id == "t1" and asked.tool == "file_write" and asked.summary.startswith("subagent: ")
    assert (workspace / "fix.txt").exists() is allow
    child = child_session(store, agent.session_id)
    assert tool_result(store, child, "w1").startswith("denied by user") is not allow
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == "t1"]
    assert finished.ok and "wrote it" in finished.content
