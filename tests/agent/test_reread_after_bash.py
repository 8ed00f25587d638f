"""The post-compaction reread also shows files a bash command changed (in a git workspace).

The path the user runs: a turn whose bash call edits a file (real bash, real git snapshot around
it), more turns, the user's `/compact` (`Agent.compact_now`), then the next request. The scripted
provider records that request; the reread in it must carry the file as it is now.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from myrm_tui.store.changed_files import CHANGED_FILES_KEY
from tests.agent.agent_helpers import compact_any_span, drive, make_agent

REREAD_TITLE = "re-read after compaction"


def git_init(workspace: Path) -> None:
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
        ["add", "-A"],
        ["commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


async def test_a_file_bash_changed_is_reread_after_compact(store, workspace, script, tmp_path):
    (workspace / "settings.ini").write_text("port = 8000\n")
    (workspace / "untouched.txt").write_text("never changed\n")
    git_init(workspace)
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "sed -i s/8000/9090/ settings.ini"}}]},
        {"text": "changed the port"},
        {"text": "noted " + "words " * 200},
        {"text": "and noted " + "words " * 200},
        {"text": "carry on"},
        record=str(record),
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "set the port to 9090")
    assert (workspace / "settings.ini").read_text() == "port = 9090\n", "the premise: bash changed the file"
    [result] = [r.message for r in store.messages(agent.session_id) if r.role == "tool"]
    assert result[CHANGED_FILES_KEY] == ["settings.ini"], "only the file the call changed is named"
    await drive(agent, "tell me about it")
    await drive(agent, "and more")
    event = await compact_any_span(agent).compact_now()
    assert event is not None and event["ops"].get("remove", 0) > 0

    await drive(agent, "go on")

    requests = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    [reread] = [m for m in requests[-1] if REREAD_TITLE in str(m.get("content"))]
    assert reread["role"] == "user"
    assert "--- settings.ini (current content) ---\nport = 9090" in reread["content"]
    assert "untouched.txt" not in reread["content"]
    assert not any(CHANGED_FILES_KEY in m for request in requests for m in request), "never sent to the provider"
