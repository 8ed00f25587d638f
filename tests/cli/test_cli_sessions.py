"""`myrm sessions list|show|export` on a real store file, through the real entry point."""

from __future__ import annotations

import json
from typing import Any

import pytest

from myrm_tui.store.store import Store

ARGS = {"command": "ls -la ```weird``` dir"}
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "List the files please"},
    {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": json.dumps(ARGS)}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "bash", "content": "a.txt\nb.txt"},
    {"role": "assistant", "content": "There are two files: a.txt and b.txt."},
]


@pytest.fixture
def stored(workspace):
    store = Store.open(workspace)
    try:
        older = store.create_session(model="scripted/older", title="an older session")
        store.append_message(older.id, {"role": "user", "content": "hi"}, tokens=1)
        session = store.create_session(model="openai/gpt-4o", title="List the files please")
        for message in MESSAGES:
            store.append_message(session.id, message, tokens=5)
        return store.get_session(session.id), older
    finally:
        store.close()


def test_list_table_is_plain_when_piped(myrm, stored):
    session, older = stored
    result = myrm("sessions", "list")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "MODEL", "MSGS", "TITLE"]
    assert len(lines) == 3
    newest = lines[1].split()
    assert newest[0] == session.id[:12] and "openai/gpt-4o" in newest and "4" in newest
    assert lines[1].endswith("List the files please")
    assert lines[2].startswith(older.id[:12]) and lines[2].endswith("an older session")


def test_list_json(myrm, stored):
    session, older = stored
    result = myrm("sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == [session.id, older.id]
    assert rows[0]["messages"] == 4 and rows[0]["model"] == "openai/gpt-4o"
    assert rows[1]["messages"] == 1 and rows[1]["title"] == "an older session"


def test_list_empty_workspace_says_how_to_start(myrm):
    result = myrm("sessions", "list")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "myrm run" in result.stderr


def test_show_prints_the_transcript_by_prefix(myrm, stored):
    session, _ = stored
    result = myrm("sessions", "show", session.id[:6])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for text in (
        "List the files please",
        "Looking.",
        "→ tool call bash [call_1]",
        '"command": "ls -la',
        "tool result bash [call_1]",
        "a.txt\nb.txt",
        "There are two files",
    ):
        assert text in out
    assert out.index("Looking.") < out.index("a.txt\nb.txt") < out.index("There are two files")


def test_unknown_session_is_a_usage_error(myrm, stored):
    result = myrm("sessions", "show", "zzzz")
    assert result.returncode == 2
    assert "no session 'zzzz'" in result.stderr
    assert "Traceback" not in result.stderr


def test_export_markdown_fences_tool_calls_and_results(myrm, stored):
    session, _ = stored
    result = myrm("sessions", "export", session.id, "--format", "md")
    assert result.returncode == 0, result.stderr
    md = result.stdout
    assert md.startswith("# List the files please\n")
    assert "## User\n\nList the files please" in md
    assert "**Tool call:** `bash` (`call_1`)" in md
    # the arguments contain a ``` run, so the fence must be longer than it
    assert '````json\n{\n  "command": "ls -la ```weird``` dir"\n}\n````' in md
    assert "### Tool result: bash (`call_1`)\n\n```\na.txt\nb.txt\n```" in md
    assert md.rstrip().endswith("There are two files: a.txt and b.txt.")


def test_export_json_is_exactly_what_is_stored(myrm, stored, workspace, tmp_path):
    session, _ = stored
    out = tmp_path / "export.json"
    result = myrm("sessions", "export", session.id, "--format", "json", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and str(out) in result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["session"]["id"] == session.id and data["session"]["model"] == "openai/gpt-4o"
    assert [m["message"] for m in data["messages"]] == MESSAGES
    store = Store.open(workspace)
    try:
        rows = store.messages(session.id)
    finally:
        store.close()
    assert [m["id"] for m in data["messages"]] == [r.id for r in rows]
    assert data["messages"][2]["tool_call_id"] == "call_1"


def test_export_rejects_unknown_format(myrm, stored):
    session, _ = stored
    result = myrm("sessions", "export", session.id, "--format", "html")
    assert result.returncode == 2
    assert "html" in result.stderr


def test_export_redacts_secrets_but_the_store_keeps_them(myrm, script, workspace):
    key = "sk-ant-api03-" + "Ab3dEf9hIj" * 9
    model = script({"text": "noted"})
    assert myrm("run", "--model", model, f"my key is {key} and mail me at dev@example.org").returncode == 0
    for fmt in ("md", "json"):
        result = myrm("sessions", "export", "--format", fmt, _only_session(workspace))
        assert result.returncode == 0, result.stderr
        assert key not in result.stdout and "dev@example.org" not in result.stdout
        assert "[REDACTED:" in result.stdout and "redacted:" in result.stderr
    store = Store.open(workspace)
    try:
        assert key in store.messages(store.list_sessions()[0].id)[0].message["content"]
    finally:
        store.close()


def _only_session(workspace):
    store = Store.open(workspace)
    try:
        return store.list_sessions()[0].id
    finally:
        store.close()
