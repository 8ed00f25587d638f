"""System prompt stability, workspace rules, fingerprint sensitivity, SessionRuntime rebuilds."""

from __future__ import annotations

import os
import subprocess
import sys

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.agent.setup.fingerprint import execution_fingerprint
from myrm_tui.agent.setup.prompts import base_prompt, build_system_prompt
from myrm_tui.agent.tools.registry import default_tools
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import TOOL_ORDER, settings_for


def test_system_prompt_identical_across_builds(workspace):
    (workspace / "AGENTS.md").write_text("Use tabs.\r\nRun make test.   \n")
    first = build_system_prompt("full", workspace).text
    second = build_system_prompt("full", workspace).text
    assert first == second
    assert first.startswith(base_prompt("full"))
    assert first.endswith('<workspace_rules source="AGENTS.md">\nUse tabs.\nRun make test.\n</workspace_rules>')


def test_rules_order_agents_then_claude(workspace):
    (workspace / "CLAUDE.md").write_text("claude rule")
    (workspace / "AGENTS.md").write_text("agents rule")
    text = build_system_prompt("lean", workspace).text
    assert text.index("agents rule") < text.index("claude rule")


def test_modes_differ_and_are_static(workspace):
    full, lean, naked = (base_prompt(m) for m in ("full", "lean", "naked"))
    assert len(full) > len(lean) > len(naked)
    assert "<tools>" in full and "<rules>" in lean and "<" not in naked
    chat = base_prompt("full", tools_enabled=False)
    assert "cannot run commands" in chat and "file_edit" not in chat


def test_prompt_is_the_same_bytes_in_another_process(workspace):
    """Nothing dynamic (date, pid, cwd, env): a fresh process at another moment builds the same."""
    (workspace / "AGENTS.md").write_text("rule one\n")
    code = (
        "import sys; from pathlib import Path; from myrm_tui.agent.setup.prompts import build_system_prompt;"
        "sys.stdout.write(build_system_prompt(sys.argv[1], Path(sys.argv[2])).text)"
    )
    for mode in ("full", "lean", "naked"):
        out = subprocess.run(
            [sys.executable, "-c", code, mode, str(workspace)],
            capture_output=True,
            text=True,
            check=True,
            cwd="/",
            env={**os.environ, "TZ": "Pacific/Kiritimati"},
        )
        assert out.stdout == build_system_prompt(mode, workspace).text


def test_tool_list_order_is_stable():
    first = [t["function"]["name"] for t in default_tools().schemas()]
    assert first == list(TOOL_ORDER)
    assert default_tools().schemas() == default_tools().schemas()
    registry = default_tools()
    schemas = registry.schemas()
    schemas[0]["function"]["description"] = "mutated by a caller"
    assert registry.schemas()[0]["function"]["description"] != "mutated by a caller"


def test_fingerprint_tracks_agent_shaping_settings_only(workspace):
    base = settings_for("scripted/a.json")
    fp = build_agent(base, workspace).fingerprint
    assert build_agent(base, workspace).fingerprint == fp
    assert build_agent(base.with_values(theme="other-theme", animations=False), workspace).fingerprint == fp
    for change in (
        {"model": "scripted/b.json"},
        {"approval": "yolo"},
        {"prompt_mode": "lean"},
        {"max_steps": 3},
        {"bash_timeout": 5.0},
        {"tool_output_cap": 100},
        {"allow_outside_workspace": True},
        {"max_output_tokens": 100},
        {"api_base": "http://127.0.0.1:1"},
    ):
        assert build_agent(base.with_values(**change), workspace).fingerprint != fp, change


def test_fingerprint_covers_model_overrides_and_rules(workspace):
    base = settings_for("scripted/a.json")
    fp = build_agent(base, workspace).fingerprint
    with_override = Settings(base.values, models={"scripted/a.json": {"context_window": 4096}})
    assert build_agent(with_override, workspace).fingerprint != fp
    other_model_override = Settings(base.values, models={"scripted/zzz.json": {"context_window": 4096}})
    assert build_agent(other_model_override, workspace).fingerprint == fp
    (workspace / "AGENTS.md").write_text("new rule")
    assert build_agent(base, workspace).fingerprint != fp
    schemas = default_tools().schemas()
    assert execution_fingerprint(base, schemas, "p") != execution_fingerprint(base, schemas[::-1], "p")


def test_agent_cache_rebuilds_on_fingerprint_change_and_records_model_switch(store, workspace, script):
    model_a = script({"text": "a"})
    model_b = script({"text": "b"}, context_window=32000)
    session = store.create_session(model=model_a)
    runtime = SessionRuntime(store=store, session_id=session.id, workspace=workspace)
    settings = settings_for(model_a)
    agent = runtime.agent_for(settings)
    assert isinstance(agent, Agent)
    assert runtime.agent_for(settings.with_values(theme="light")) is agent
    lean = runtime.agent_for(settings.with_values(prompt_mode="lean"))
    assert lean is not agent and runtime.rebuilds == 2
    assert store.events(session.id, kind=event_kinds.MODEL_SWITCH) == []
    switched = runtime.agent_for(settings.with_values(prompt_mode="lean", model=model_b))
    assert switched.model_name == model_b
    [event] = store.events(session.id, kind=event_kinds.MODEL_SWITCH)
    assert event.data["old"] == model_a and event.data["new"] == model_b
    assert event.data["new_window"] == 32000
    assert store.get_session(session.id).model == model_b
