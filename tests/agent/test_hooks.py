"""User hooks through the live agent (scripted model, real store, real commands): they run with
their context on stdin, their failures are warnings that never end the turn, long output goes to
the vault, and a hung hook is stopped at its timeout."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import Notice, ToolFinished, TurnFinished
from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.settings.sections.hooks import HookSpec
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, settings_for


def call(name: str, call_id: str = "c1", **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def hooked_agent(store, workspace: Path, model: str, *hooks: HookSpec) -> Agent:
    settings = dataclasses.replace(settings_for(model, sandbox="off", approval="auto"), hooks=hooks)
    session = store.create_session(model=model)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)


def bash_turn(script) -> str:
    return script({"text": "", "tool_calls": [call("bash", command="echo hi")]}, {"text": "done"})


def hook_events(store, session_id: str) -> list[dict]:
    return [e.data for e in store.events(session_id, event_kinds.HOOK)]


async def test_post_tool_hook_gets_the_call_as_json_on_stdin(store, workspace, script, tmp_path):
    out = tmp_path / "seen.json"
    agent = hooked_agent(
        store,
        workspace,
        bash_turn(script),
        HookSpec("post_tool", f"cat > {out}", tools=("bash",)),
        HookSpec("post_tool", f"echo never > {tmp_path / 'other'}", tools=("file_*",)),
    )
    log = await drive(agent, "say hi")

    seen = json.loads(out.read_text())
    assert seen["event"] == "post_tool" and seen["session_id"] == agent.session_id
    assert seen["tool_name"] == "bash" and seen["tool_arguments"] == {"command": "echo hi"}
    assert seen["tool_status"] == "ok" and seen["call_id"] == "c1"
    assert not (tmp_path / "other").exists()  # its tools pattern does not match bash
    assert log.events[-1] == TurnFinished("stop", 2)
    [event] = hook_events(store, agent.session_id)
    assert event["status"] == "ok" and event["exit_code"] == 0


async def test_a_failing_hook_is_a_warning_and_the_turn_still_finishes(store, workspace, script):
    agent = hooked_agent(store, workspace, bash_turn(script), HookSpec("post_tool", "echo broken >&2; exit 3"))
    log = await drive(agent, "say hi")

    [finished] = log.of(ToolFinished)
    assert finished.status == "ok"
    [warning] = [n for n in log.of(Notice) if "hook" in n.text]
    assert warning.level == "warning"
    assert warning.text == "post_tool hook `echo broken >&2; exit 3` failed (exit code 3): broken"
    assert log.events[-1] == TurnFinished("stop", 2)
    [event] = hook_events(store, agent.session_id)
    assert event["status"] == "failed" and event["exit_code"] == 3


async def test_long_hook_output_goes_to_the_vault(store, workspace, script):
    model = script({"text": "hello"})
    agent = hooked_agent(store, workspace, model, HookSpec("session_start", "python3 -c \"print('x' * 50000)\""))
    await drive(agent, "hi")

    [event] = hook_events(store, agent.session_id)
    assert event["handle"] and event["handle"] in event["output"]
    assert len(event["output"]) < 12_000
    assert store.vault.read_bytes(event["handle"]).decode().strip() == "x" * 50000


async def test_a_hung_hook_is_stopped_at_its_timeout(store, workspace, script):
    agent = hooked_agent(store, workspace, script({"text": "hello"}), HookSpec("session_start", "sleep 30", 0.5))
    started = time.monotonic()
    log = await drive(agent, "hi")

    assert time.monotonic() - started < 10
    [warning] = [n for n in log.of(Notice) if "hook" in n.text]
    assert "session_start hook `sleep 30` timed out after 0.5s" in warning.text
    assert log.events[-1] == TurnFinished("stop", 1)
    [event] = hook_events(store, agent.session_id)
    assert event["status"] == "timeout"


async def test_session_hooks_run_once_per_session(store, workspace, script, tmp_path):
    starts, ends = tmp_path / "starts", tmp_path / "ends"
    agent = hooked_agent(
        store,
        workspace,
        script({"text": "one"}, {"text": "two"}),
        HookSpec("session_start", f"echo start >> {starts}"),
        HookSpec("session_end", f"cat >> {ends}; exit 1"),
    )
    await drive(agent, "first")
    await drive(agent, "second")
    assert starts.read_text() == "start\n"

    await agent.aclose()
    await agent.aclose()  # the session ended once
    assert json.loads(ends.read_text())["event"] == "session_end"
    [notice] = agent.take_hook_notices()
    assert notice.level == "warning" and "session_end hook" in notice.text and "exit code 1" in notice.text


async def test_a_session_runtime_runs_the_start_hook_once_across_agent_rebuilds(store, workspace, script, tmp_path):
    """The lifecycle belongs to the session (agent/session_parts.py): a settings change that
    rebuilds the agent must not announce a new session, and closing the runtime ends it once."""
    starts, ends = tmp_path / "starts", tmp_path / "ends"
    model = script({"text": "one"}, {"text": "two"})
    hooks = (HookSpec("session_start", f"echo start >> {starts}"), HookSpec("session_end", f"echo end >> {ends}"))
    settings = dataclasses.replace(settings_for(model, sandbox="off", approval="auto"), hooks=hooks)
    session = store.create_session(model=model)
    runtime = SessionRuntime(store=store, session_id=session.id, workspace=workspace)
    first = [event async for event in runtime.send("first", settings)]
    agent = runtime.current
    second = [event async for event in runtime.send("second", settings.with_values(prompt_mode="lean"))]
    assert runtime.current is not agent and runtime.rebuilds == 2  # a new agent, the same session
    assert first[-1] == TurnFinished("stop", 1) and second[-1] == TurnFinished("stop", 1)
    assert starts.read_text() == "start\n"
    await runtime.aclose()
    await runtime.aclose()
    assert ends.read_text() == "end\n"


def test_pre_compact_hook_runs_inside_the_engine(store, workspace, tmp_path):
    out = tmp_path / "compact.json"
    agent = hooked_agent(store, workspace, "scripted/none", HookSpec("pre_compact", f"cat > {out}"))
    hook = agent.engine.compactor.pre_compact
    assert hook is not None
    hook({"tier": "emergency", "tokens": 1234})
    seen = json.loads(out.read_text())
    assert seen["event"] == "pre_compact" and seen["tokens"] == 1234 and seen["tier"] == "emergency"
    # An agent rebuilt without hooks leaves the shared engine without one.
    plain = Agent(
        store=store,
        session_id=agent.session_id,
        settings=settings_for("scripted/none"),
        workspace=workspace,
        parts=agent.parts,
    )
    assert plain.engine is agent.engine and agent.engine.compactor.pre_compact is None
