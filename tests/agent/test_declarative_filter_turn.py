"""A user's declarative filter through the live agent: a real bash call, the scripted model, and
what the provider actually received on the next request (the `record` file)."""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.settings.config_files.filter_files import load_filter_files, user_filters_dir
from tests.agent.agent_helpers import drive, filtered_agent

COMMAND = "seq 1 4000"


def sent_tool_results(record: Path) -> list[str]:
    requests = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return [m["content"] for m in requests[-1] if m.get("role") == "tool"]


async def test_bash_output_reaches_the_provider_filtered_with_its_handle(store, workspace, script, tmp_path):
    user_dir = tmp_path / "user-config"
    user_filters_dir(user_dir).mkdir(parents=True)
    (user_filters_dir(user_dir) / "sevens.toml").write_text(
        "match.prefix = 'seq'\nkeep = ['777$']\nhead = 1\ntail = 1\n", encoding="utf-8"
    )
    found = load_filter_files(workspace, user_dir, workspace_trusted=False)
    assert not found.problems
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": COMMAND}}]},
        {"text": "seen"},
        context_window=32_000,
        record=str(record),
    )
    agent = filtered_agent(store, workspace, model, found.applied)
    await drive(agent, "count")
    [sent] = sent_tool_results(record)
    header, body = sent.split("\n", 1)
    assert "(filter sevens excerpt)" in header and "full: msg:" in header
    handle = header.split("full: ", 1)[1].split(" ", 1)[0]
    shown = [line for line in body.split("\n") if not line.startswith("… ")]
    assert shown == ["1", "777", "1777", "2777", "3777", "[exit code 0]"]  # the tool's own last line is the tail
    # The stored row behind the handle is the whole output: nothing was lost, only the view is filtered.
    [row] = [m for m in store.messages(agent.session_id) if m.role == "tool"]
    assert row.message["content"].splitlines()[:4000] == [str(i) for i in range(1, 4001)]
    assert handle == f"msg:{row.id}"


async def test_a_bash_output_over_the_spill_cap_is_filtered_by_its_command_too(store, workspace, script, tmp_path):
    """Above tool_output_cap bash spills the output itself; the excerpt it keeps inline is chosen
    by the command like any other tool's (and like the replay), so the user's filter decides it."""
    user_dir = tmp_path / "user-config"
    user_filters_dir(user_dir).mkdir(parents=True)
    (user_filters_dir(user_dir) / "sevens.toml").write_text(
        "match.prefix = 'seq'\nkeep = ['^7777$', '^17777$']\n", encoding="utf-8"
    )
    found = load_filter_files(workspace, user_dir, workspace_trusted=False)
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "seq 1 40000"}}]},
        {"text": "seen"},
        context_window=32_000,
        record=str(record),
    )
    agent = filtered_agent(store, workspace, model, found.applied)
    await drive(agent, "count far")
    [sent] = sent_tool_results(record)
    assert len("\n".join(str(i) for i in range(1, 40001))) > 30_000, "over the default spill cap"
    assert "filter sevens" in sent and "vault://" in sent
    lines = sent.split("\n")
    assert "7777" in lines and "17777" in lines and "12345" not in lines
