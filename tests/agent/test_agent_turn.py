"""Agent.turn end to end: scripted model through the real litellm path, real Store, real tools."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import (
    ApprovalRequest,
    Notice,
    StepStarted,
    ToolFinished,
    ToolOutputChunk,
    TurnError,
    TurnFinished,
)
from myrm_tui.llm.events import TextDelta, UsageEvent
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import TOOL_ORDER, drive, make_agent, pid_gone, settings_for
from tests.agent.process_helpers import all_gone, token_seconds


def call(name: str, call_id: str = "c1", **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def stored(store, session_id: str) -> list[dict]:
    return [r.message for r in store.messages(session_id)]


def tool_results(store, session_id: str) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in stored(store, session_id) if m["role"] == "tool"}


def assert_no_dangling(store, session_id: str) -> None:
    messages = stored(store, session_id)
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(calls) == sorted(answered)


async def wait_for_file(path: Path, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def gone_soon(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while not pid_gone(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return pid_gone(pid)


async def test_file_edit_approved_end_to_end(store, workspace, script):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(
        {"text": "I'll fix it.", "tool_calls": [call("file_edit", path="app.py", old="hello", new="bye")]},
        {"text": "Done: app.py now says bye."},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "change hello to bye")

    [request] = log.approvals
    assert request.tool == "file_edit" and request.summary == "edit app.py (line 1)"
    assert request.diff is not None
    assert "-print('hello')" in request.diff and "+print('bye')" in request.diff
    assert (workspace / "app.py").read_text() == "print('bye')\n"
    [finished] = log.of(ToolFinished)
    assert finished.status == "ok" and finished.content == "edited app.py: replaced 1 occurrence at line 1"
    assert log.events[-1] == TurnFinished("stop", 2)
    assert "".join(e.text for e in log.of(TextDelta)).endswith("Done: app.py now says bye.")
    messages = stored(store, agent.session_id)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "file_edit",
        "content": finished.content,
        "myrm_status": "ok",
    }
    assert messages[3]["content"] == "Done: app.py now says bye."
    # order of the event stream: stored facts are announced after they are committed
    kinds = [type(e).__name__ for e in log.events if not isinstance(e, (TextDelta, UsageEvent))]
    assert kinds == [
        "UserMessageStored",
        "StepStarted",
        "AssistantMessageStored",
        "ToolStarted",
        "ApprovalRequest",
        "ToolFinished",
        "StepStarted",
        "AssistantMessageStored",
        "TurnFinished",
    ]
    assert len(store.events(agent.session_id, kind=event_kinds.USAGE)) == 2


async def test_denied_call_leaves_file_and_model_continues(store, workspace, script):
    (workspace / "keep.txt").write_text("original\n")
    model = script(
        {"tool_calls": [call("file_write", path="keep.txt", content="clobbered")]},
        {"text": "Understood, I left it alone."},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "overwrite keep.txt", approve=False)
    assert (workspace / "keep.txt").read_text() == "original\n"
    [finished] = log.of(ToolFinished)
    assert finished.status == "denied" and not finished.ok
    assert tool_results(store, agent.session_id)["c1"] == "denied by user: overwrite keep.txt (1 lines)"
    assert "".join(e.text for e in log.of(TextDelta)) == "Understood, I left it alone."
    assert log.events[-1] == TurnFinished("stop", 2)


async def test_bash_timeout_kills_group_and_stores_result(store, workspace, script):
    token = token_seconds()  # finds the child from the host side (the sandbox has its own pids)
    model = script(
        {"tool_calls": [call("bash", command=f"sleep {token} & echo up; wait", timeout=1)]}, {"text": "It timed out."}
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    started = time.monotonic()
    log = await drive(agent, "run it")
    assert time.monotonic() - started < 10
    [finished] = log.of(ToolFinished)
    assert finished.status == "timeout"
    assert tool_results(store, agent.session_id)["c1"] == "up\n[timed out after 1s: process group killed]"
    assert await all_gone(token)
    assert "up\n" in "".join(e.text for e in log.of(ToolOutputChunk))


async def test_interrupt_mid_bash(store, workspace, script):
    token = token_seconds()  # finds the child from the host side (the sandbox has its own pids)
    model = script(
        {
            "text": "running two things",
            "tool_calls": [
                call("bash", "c1", command=f"sleep {token} & echo started > child.pid; echo partial-output; wait"),
                call("bash", "c2", command="echo never"),
            ],
        },
        {"text": "after the interrupt"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    seen: list = []

    async def consume():
        async for event in agent.turn("go"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await wait_for_file(workspace / "child.pid")
    # let the partial output reach the agent
    for _ in range(100):
        if any(isinstance(e, ToolOutputChunk) for e in seen):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await all_gone(token)
    results = tool_results(store, agent.session_id)
    assert results["c1"].startswith("interrupted by user")
    assert "partial-output" in results["c1"]  # output seen before the interrupt is kept
    assert results["c2"].startswith("interrupted by user")
    assert_no_dangling(store, agent.session_id)
    [event] = store.events(agent.session_id, kind=event_kinds.INTERRUPTED)
    assert event.data["repaired_call_ids"] == ["c1", "c2"]
    assert not (workspace / "never").exists()

    # the next turn starts clean: nothing to repair, and the model answers
    log = await drive(agent, "what happened?")
    assert not [n for n in log.of(Notice) if "unfinished" in n.text]
    assert store.events(agent.session_id, kind=event_kinds.REPAIR) == []
    assert "".join(e.text for e in log.of(TextDelta)) == "after the interrupt"


async def test_interrupt_while_waiting_for_approval(store, workspace, script):
    model = script({"tool_calls": [call("file_write", path="x.txt", content="x")]})
    agent = make_agent(store, workspace, model)

    async def consume():
        async for event in agent.turn("write x"):
            if isinstance(event, ApprovalRequest):
                pending.set_result(event)

    pending: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(consume())
    await asyncio.wait_for(pending, 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tool_results(store, agent.session_id)["c1"].startswith("interrupted by user")
    assert not (workspace / "x.txt").exists()
    assert_no_dangling(store, agent.session_id)


async def test_interrupt_mid_stream_keeps_the_text_seen(store, workspace, script):
    model = script({"text": "a long answer that streams slowly " * 3, "chunk_size": 4, "delay_ms": 30})
    agent = make_agent(store, workspace, model)
    deltas: list[str] = []

    async def consume():
        async for event in agent.turn("talk"):
            if isinstance(event, TextDelta):
                deltas.append(event.text)

    task = asyncio.create_task(consume())
    for _ in range(500):
        if len(deltas) >= 3:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = stored(store, agent.session_id)[-1]
    assert last["role"] == "assistant"
    assert last["content"].startswith("".join(deltas)) and "[answer cut off: interrupted by user]" in last["content"]


async def test_huge_bash_output_spills_to_vault(store, workspace, script):
    command = "python3 -c \"print('B' * 2_000_000)\""
    model = script({"tool_calls": [call("bash", command=command)]}, {"text": "big"})
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "make noise")
    [finished] = log.of(ToolFinished)
    handle = finished.vault_handle
    assert handle and handle.startswith("vault://")
    content = tool_results(store, agent.session_id)["c1"]
    assert content == finished.content and len(content) < 31_000
    # The handle leads (so the model sees first where the rest is), then a real excerpt.
    assert content.startswith("[output 2,000,001 chars") and f"full: {handle}" in content.splitlines()[0]
    assert "BBBB" in content and content.endswith("[exit code 0]")
    assert store.vault.read_text(handle) == "B" * 2_000_000 + "\n"
    assert log.events[-1] == TurnFinished("stop", 2)


async def test_file_read_of_vault_handle_through_the_agent(store, workspace, script):
    handle = store.vault.put("".join(f"row{i}\n" for i in range(1, 51)))
    model = script({"tool_calls": [call("file_read", path=handle, start_line=10, end_line=12)]}, {"text": "ok"})
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "read it")
    assert not log.approvals  # reads never ask
    assert tool_results(store, agent.session_id)["c1"] == f"[{handle} · lines 10-12 of 50]\nrow10\nrow11\nrow12"


async def test_outside_paths_refused_through_the_agent(store, workspace, script, tmp_path):
    (tmp_path / "secret.txt").write_text("s3cret")
    (workspace / "escape").symlink_to(tmp_path)
    model = script(
        {
            "tool_calls": [
                call("file_read", "c1", path="../secret.txt"),
                call("file_read", "c2", path="/etc/passwd"),
                call("file_read", "c3", path="escape/secret.txt"),
            ]
        },
        {"text": "refused"},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "read secrets")
    results = tool_results(store, agent.session_id)
    for call_id, why in (("c1", "outside the workspace"), ("c2", "outside the workspace"), ("c3", "symbolic link")):
        assert results[call_id].startswith("error: ") and why in results[call_id]
        assert "s3cret" not in results[call_id] and "root:" not in results[call_id]
    assert [f.status for f in log.of(ToolFinished)] == ["error"] * 3


async def test_edit_errors_are_results_and_do_not_ask(store, workspace, script):
    (workspace / "f.txt").write_text("a = 1\nb = 2\na = 1\n")
    model = script(
        {
            "tool_calls": [
                call("file_edit", "c1", path="f.txt", old="c = 3", new="x"),
                call("file_edit", "c2", path="f.txt", old="a = 1", new="a = 2"),
            ]
        },
        {"text": "will retry"},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "edit")
    assert log.approvals == []
    results = tool_results(store, agent.session_id)
    assert results["c1"].startswith("error: `old` was not found in f.txt")
    assert results["c2"].startswith("error: `old` matches 2 places in f.txt (lines 1, 3)")
    assert (workspace / "f.txt").read_text() == "a = 1\nb = 2\na = 1\n"
    assert log.events[-1] == TurnFinished("stop", 2)


async def test_destructive_command_asks_even_in_yolo(store, workspace, script):
    (workspace / "build").mkdir()
    model = script({"tool_calls": [call("bash", command="rm -rf build")]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "clean", approve=False)
    [request] = log.approvals
    assert request.destructive and request.summary == "rm -rf build"
    assert (workspace / "build").is_dir()
    assert tool_results(store, agent.session_id)["c1"] == "denied by user: rm -rf build"


async def test_yolo_runs_ordinary_bash_without_asking(store, workspace, script):
    model = script({"tool_calls": [call("bash", command="echo hi > out.txt")]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "go")
    assert log.approvals == [] and (workspace / "out.txt").read_text() == "hi\n"


async def test_deny_policy_never_asks(store, workspace, script):
    model = script(
        {
            "tool_calls": [
                call("file_write", "c1", path="new.txt", content="x"),
                call("bash", "c2", command="touch made.txt"),
                call("bash", "c3", command="rm -rf /tmp/whatever"),
                call("glob", "c4", pattern="*"),
            ]
        },
        {"text": "ok"},
    )
    agent = make_agent(store, workspace, model, approval="deny")
    log = await drive(agent, "try things", approve=lambda r: pytest.fail("deny must not ask"))
    assert log.approvals == []
    assert not (workspace / "new.txt").exists() and not (workspace / "made.txt").exists()
    statuses = {f.call_id: f.status for f in log.of(ToolFinished)}
    assert statuses == {"c1": "denied", "c2": "denied", "c3": "denied", "c4": "ok"}
    assert tool_results(store, agent.session_id)["c1"].startswith("refused: create new.txt")


async def test_max_steps_limit(store, workspace, script):
    loop_turn = {"tool_calls": [call("glob", pattern="*")]}
    model = script(loop_turn, loop_turn, loop_turn, {"text": "never reached"})
    agent = make_agent(store, workspace, model, max_steps=2)
    log = await drive(agent, "loop")
    assert log.events[-1] == TurnFinished("tool_limit", 2)
    assert any("max_steps" in n.text for n in log.of(Notice))
    assert len(log.of(StepStarted)) == 2
    assert_no_dangling(store, agent.session_id)


async def test_llm_error_keeps_the_user_message(store, workspace, script):
    model = script({"error": "auth"})
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "hello?")
    [error] = log.of(TurnError)
    assert error.error_class == "AuthenticationError" and error.message and error.hint
    assert log.events[-1] == TurnFinished("error", 1)
    assert stored(store, agent.session_id) == [{"role": "user", "content": "hello?"}]
    [event] = store.events(agent.session_id, kind=event_kinds.ERROR)
    assert event.data["error_class"] == "AuthenticationError" and event.data["message"] == error.message


async def test_provider_context_window_error_is_a_turn_error(store, workspace, script):
    agent = make_agent(store, workspace, script({"error": "context_window"}))
    log = await drive(agent, "hi")
    [error] = log.of(TurnError)
    assert error.error_class == "ContextWindowExceededError"
    assert log.events[-1].reason == "error"


async def test_context_exhausted_is_a_turn_error(store, workspace, script):
    model = script({"text": "never"})
    session = store.create_session(model=model)
    settings = Settings(settings_for(model).values, models={model: {"context_window": 600}})
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
    log = await drive(agent, "hi")
    [error] = log.of(TurnError)
    assert error.error_class == "ContextExhausted" and "prompt tokens" in error.message
    assert stored(store, session.id) == [{"role": "user", "content": "hi"}]
    assert store.events(session.id, kind=event_kinds.ERROR)


async def test_dropped_stream_keeps_partial_text(store, workspace, script):
    model = script({"text": "first half and then the second half", "error": "drop_mid_stream"})
    agent = make_agent(store, workspace, model, llm_max_attempts=1)
    log = await drive(agent, "talk")
    assert log.of(TurnError)
    shown = "".join(e.text for e in log.of(TextDelta))
    last = stored(store, agent.session_id)[-1]
    assert shown and last["role"] == "assistant" and last["content"].startswith(shown)


async def test_dangling_call_repaired_at_next_turn_start(store, workspace, script):
    model = script({"text": "resumed"}, {"text": "resumed"})
    agent = make_agent(store, workspace, model)
    store.append_message(agent.session_id, {"role": "user", "content": "old"}, 5)
    store.append_message(
        agent.session_id,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "dead1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "sleep 9"}'}}
            ],
        },
        20,
    )
    log = await drive(agent, "continue")
    assert any("unfinished" in n.text for n in log.of(Notice))
    messages = stored(store, agent.session_id)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert messages[2]["tool_call_id"] == "dead1"
    assert store.events(agent.session_id, kind=event_kinds.REPAIR)[0].data["repaired_call_ids"] == ["dead1"]


async def test_bad_arguments_and_unknown_tool_become_error_results(store, workspace, script):
    model = script(
        {
            "tool_calls": [
                {"id": "c1", "name": "bash", "arguments": "{not json"},
                call("teleport", "c2", where="mars"),
                call("file_read", "c3", file="x"),
            ]
        },
        {"text": "sorry"},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "go")
    results = tool_results(store, agent.session_id)
    assert "not a valid JSON object" in results["c1"]
    assert "no tool named 'teleport'" in results["c2"] and "file_read" in results["c2"]
    assert "needs the argument(s) path" in results["c3"]
    assert log.approvals == [] and log.events[-1] == TurnFinished("stop", 2)


async def test_tool_less_model_runs_as_plain_chat(store, workspace, script):
    from myrm_tui.llm.stream import stream

    sent_tools: list = []

    def spy(model, messages, tools, settings):
        sent_tools.append(tools)
        return stream(model, messages, tools, settings)

    model = script({"text": "just chatting"}, {"text": "still chatting"})
    session = store.create_session(model=model)
    settings = Settings(settings_for(model).values, models={model: {"supports_tools": False}})
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, stream_fn=spy)
    first = await drive(agent, "hi")
    second = await drive(agent, "again")
    assert sent_tools == [None, None]
    assert [n.text for n in first.of(Notice)] == [f"{model} has no tool calling; running as plain chat"]
    assert second.of(Notice) == []
    assert "cannot run commands" in agent.system_prompt


async def test_call_settings_passed_to_the_provider(store, workspace, script):
    from myrm_tui.llm.stream import stream

    seen = []

    def spy(model, messages, tools, settings):
        seen.append((messages[0], [t["function"]["name"] for t in tools], settings))
        return stream(model, messages, tools, settings)

    model = script({"text": "x"})
    session = store.create_session(model=model)
    settings = settings_for(model, llm_timeout=12.0, llm_max_attempts=2, max_output_tokens=1000)
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, stream_fn=spy)
    await drive(agent, "hi")
    [(system, tool_names, call_settings)] = seen
    assert system == {"role": "system", "content": agent.system_prompt}
    assert tool_names == list(TOOL_ORDER)
    assert (call_settings.timeout_s, call_settings.max_attempts) == (12.0, 2)
    assert call_settings.prompt_cache_key == session.id and call_settings.max_output_tokens <= 1000


async def test_consumer_closing_the_generator_counts_as_interrupt(store, workspace, script):
    token = token_seconds()  # finds the child from the host side (the sandbox has its own pids)
    model = script({"tool_calls": [call("bash", command=f"sleep {token} & echo started > child.pid; echo tick; wait")]})
    agent = make_agent(store, workspace, model, approval="yolo")
    events = agent.turn("go")
    async for event in events:
        if isinstance(event, ToolOutputChunk):
            break
    await wait_for_file(workspace / "child.pid")
    await events.aclose()
    assert await all_gone(token)
    assert tool_results(store, agent.session_id)["c1"].startswith("interrupted by user")
    assert_no_dangling(store, agent.session_id)


async def test_one_turn_at_a_time(store, workspace, script):
    agent = make_agent(store, workspace, script({"text": "slow", "delay_ms": 50}))
    first = agent.turn("one")
    await first.__anext__()
    with pytest.raises(RuntimeError, match="already running"):
        await agent.turn("two").__anext__()
    async for _ in first:
        pass
    log = await drive(agent, "three")
    assert log.events[-1].reason == "stop"


async def test_reused_call_ids_get_session_unique_names_and_results_pair_with_their_call(store, workspace, script):
    # Some local servers number calls per response ("c1" every time), even twice in one message.
    model = script(
        {"tool_calls": [call("bash", "c1", command="echo first"), call("bash", "c1", command="echo second")]},
        {"tool_calls": [call("bash", "c1", command="echo third")]},
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "run three things")
    assert log.of(TurnFinished)[-1].reason == "stop"
    messages = stored(store, agent.session_id)
    ids = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    assert len(ids) == 3 and len(set(ids)) == 3, ids
    commands = {
        c["id"]: c["function"]["arguments"]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    }
    for call_id, output in tool_results(store, agent.session_id).items():
        word = output.strip().splitlines()[0]
        assert word in commands[call_id], (call_id, output, commands[call_id])
    assert_no_dangling(store, agent.session_id)
