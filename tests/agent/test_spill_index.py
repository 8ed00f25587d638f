"""Everything that leaves the prompt for the vault is searchable, whatever tool produced it.

The bug: a bash output of ~160k characters with a needle in the middle was in neither the inline
excerpt nor `ctx_search`, because bash spilled to the vault without indexing and the agent only
indexed outputs it spilled itself. Now the agent stores every result that names a vault handle
together with the handle's search index, in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.tools.base import Tool, ToolContext, ToolResult
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.store import Store
from myrm_tui.store.errors import StoreError, VaultError
from tests.agent.agent_helpers import drive, make_agent
from tests.hypothesis_profiles import examples

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 180
NEEDLE = "build step 4500.5 ok HERON-SIGNAL-7731"
# ~160k characters of `build step N ok` lines, the needle alone in the middle, shaped like its
# neighbours (a line that breaks the output's shape is lifted into the excerpt as a note; this
# one must only be found by search). The command assembles the needle from pieces, so only the
# output (not the stored call) contains it.
BIG_BASH = (
    "seq -f 'build step %g ok' 1 4500; printf 'build step 4500.5 ok HERON-%s-7731\\n' SIGNAL; "
    "seq -f 'build step %g ok' 4501 9000"
)


def _myrm(workspace: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env["MYRM_CONFIG_DIR"] = str(config)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def _stored(workspace: Path, session_id: str) -> list[dict[str, Any]]:
    store = Store.open(workspace)
    try:
        return [m.message for m in store.messages(session_id)]
    finally:
        store.close()


@pytest.mark.slow
def test_myrm_run_finds_a_needle_deep_in_a_big_bash_output(tmp_path: Path) -> None:
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".git").mkdir(parents=True)
    config.mkdir()
    script = tmp_path / "script.json"
    # The scripted model answers by the number of assistant messages in the request, so one file
    # serves both runs: run 1 = bash + "done", run 2 = ctx_search + "found".
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": BIG_BASH}}]},
                    {"text": "done"},
                    {"tool_calls": [{"id": "s1", "name": "ctx_search", "arguments": {"query": "HERON-SIGNAL-7731"}}]},
                    {"text": "found it"},
                ]
            }
        )
    )
    model = f"scripted/{script}"
    first = _myrm(workspace, config, "run", "--json", "--approve", "yolo", "--model", model, "build it")
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session_id"]
    second = _myrm(
        workspace,
        config,
        "run",
        "--json",
        "--continue",
        "--approve",
        "yolo",
        "--model",
        model,
        "what was the odd line in the build log?",
    )
    assert second.returncode == 0, second.stderr

    messages = _stored(workspace, session)
    bash = next(m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == "b1")
    assert "vault://" in bash["content"] and len(bash["content"]) < 40_000  # spilled, excerpt inline
    assert NEEDLE not in bash["content"]  # the needle is only in the part the prompt does not show
    search = next(m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == "s1")
    assert "no matches" not in search["content"]
    assert "HERON-SIGNAL-7731" in search["content"]  # the needle's line, quoted from the spilled output
    handle = bash["content"][bash["content"].index("vault://") :].split()[0]
    assert handle in search["content"]  # the hit is the spilled output itself


class _BigOutput(Tool):
    """A tool that returns more than the inline cap and never spills itself (the agent must)."""

    name = "big_report"
    description = "Returns a long report."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}
    output = ""

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(type(self).output)


def _report(needle_at: int, lines: int, needle: str) -> str:
    body = [f"row {i} nominal" for i in range(lines)]
    body.insert(needle_at, needle)
    return "\n".join(body)


async def test_output_the_agent_spills_is_searchable_with_its_result(store, workspace, script) -> None:
    _BigOutput.output = _report(1500, 3000, "row 1500 nominal PLOVER-3390")  # shaped like its rows
    model = script({"tool_calls": [{"id": "r1", "name": "big_report", "arguments": {}}]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, tool_output_cap=2_000)
    agent = type(agent)(
        store=store,
        session_id=agent.session_id,
        settings=agent.settings,
        workspace=workspace,
        extra_tools=[_BigOutput()],
    )
    log = await drive(agent, "make the report")
    [finished] = log.of(ToolFinished)
    assert finished.vault_handle and "PLOVER-3390" not in finished.content
    hits = store.search(agent.session_id, "PLOVER-3390")
    assert [h.handle for h in hits] == [finished.vault_handle]


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0, max_value=2_999), cap=st.integers(min_value=500, max_value=20_000))
def test_whatever_leaves_the_prompt_is_found(tmp_path_factory, position: int, cap: int) -> None:
    """Wherever the needle sits and whatever the cap: either the result shows it inline, or
    search finds it in the spilled artifact named by that result."""
    workspace = tmp_path_factory.mktemp("ws")
    script = workspace.parent / "s.json"
    script.write_text(
        json.dumps({"turns": [{"tool_calls": [{"id": "r1", "name": "big_report", "arguments": {}}]}, {"text": "ok"}]})
    )
    _BigOutput.output = _report(position, 3000, "odd row GANNET-5512")
    store = Store.open(workspace)
    try:
        agent = make_agent(store, workspace, f"scripted/{script}", tool_output_cap=cap)
        agent = type(agent)(
            store=store,
            session_id=agent.session_id,
            settings=agent.settings,
            workspace=workspace,
            extra_tools=[_BigOutput()],
        )
        log = asyncio.run(drive(agent, "report"))
        [finished] = log.of(ToolFinished)
        if "GANNET-5512" not in finished.content:
            assert finished.vault_handle is not None
            assert finished.vault_handle in [h.handle for h in store.search(agent.session_id, "GANNET-5512")]
    finally:
        store.close()


def test_a_handle_is_stored_with_its_index_or_not_at_all(store) -> None:
    session = store.create_session("m").id
    text = _report(700, 1500, "row 700 nominal WREN-0042")  # shaped like its rows
    inline, handle = spill_if_large(text, 1_000, store.vault, tool="bash")
    assert handle and "WREN-0042" not in inline
    before = len(store.messages(session))

    with pytest.raises(StoreError):  # no such session: neither the row nor the index is written
        store.append_message(
            "no-such-session", {"role": "tool", "tool_call_id": "x", "content": inline}, 10, artifacts={handle: text}
        )
    with pytest.raises(VaultError):  # a handle the vault does not hold: nothing is stored
        store.append_message(
            session,
            {"role": "tool", "tool_call_id": "x", "content": "see vault://00ff00ff00ff"},
            10,
            artifacts={"vault://00ff00ff00ff": None},
        )
    assert len(store.messages(session)) == before
    assert store.search(session, "WREN-0042") == []

    record = store.append_message(
        session, {"role": "tool", "tool_call_id": "x", "content": inline}, 10, artifacts={handle: None}
    )  # None: read back from the vault
    assert [h.handle for h in store.search(session, "WREN-0042")] == [handle]
    # A fork taken at the result sees the artifact its content names.
    fork = store.fork(session, at_message=record.id)
    assert [h.handle for h in store.search(fork.id, "WREN-0042")] == [handle]
