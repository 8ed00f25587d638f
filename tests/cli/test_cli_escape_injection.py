"""Terminal escape injection through the CLI, written as the attacker would do it.

The attacker controls a file in the workspace (a cloned repository), so they control what a
tool reads and prints, what the model repeats, the arguments it passes to tools, and (through
a prompt piped from that file) the session title. Every byte the CLI writes for a terminal
(`myrm run` stdout and stderr, `sessions list/show/export`) must be inert; the store
and the JSON outputs must still hold the exact bytes.
"""

from __future__ import annotations

import json

from myrm_tui.store.store import Store
from myrm_tui.terminal_text import for_terminal
from tests.escape_attacks import ATTACKS, inert

PAYLOAD = "".join(ATTACKS.values())
# The visible forms a user must see in place of the attack.
VISIBLE = ("\\x1b]52;c;", "\\x1b]0;pwned-title\\x07", "\\x9b2J", "\\u202e", "\\x1bP1$qm")
TITLE_ATTACK = "\x1b]0;pwned-title\x07\x9b2J\u202e fix the login bug"


def assert_inert(output: str, *must_show: str) -> None:
    assert inert(output), [c for c in output if not inert(c)][:10]
    for visible in must_show:
        assert visible in output, (visible, output[-2000:])


def stored_rows(workspace, session_id=None):
    store = Store.open(workspace)
    try:
        session = store.get_session(session_id) if session_id else store.list_sessions()[0]
        return session, [r.message for r in store.messages(session.id)]
    finally:
        store.close()


def attack_session(myrm, script, workspace) -> str:
    """A session in which every channel carries the payload: a poisoned file the model reads
    and cats, the model's own text and reasoning, its tool arguments, and the title (the prompt
    was piped from a poisoned issue file). Returns the session id."""
    (workspace / "README.md").write_text(f"Build notes {PAYLOAD} end of notes\n", encoding="utf-8")
    model = script(
        {
            "text": f"Reading the notes {PAYLOAD}",
            "tool_calls": [
                {"id": "read1", "name": "file_read", "arguments": {"path": "README.md"}},
                {"id": "cat1", "name": "bash", "arguments": {"command": f"cat README.md # {PAYLOAD}"}},
            ],
        },
        {"text": f"The notes say: {PAYLOAD} done."},
    )
    result = myrm("run", "--json", "--approve", "yolo", "--model", model, "-", input=TITLE_ATTACK)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["session_id"]


def test_model_text_on_run_stdout_is_shown_not_obeyed(myrm, script, workspace):
    text = f"Sure. {PAYLOAD} That is all."
    result = myrm("run", "--model", script({"text": text}), "hello")
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout, *VISIBLE)
    assert result.stdout == for_terminal(text) + "\n"
    _, rows = stored_rows(workspace)
    assert rows[-1]["content"] == text  # the store keeps the exact bytes


def test_a_sequence_split_across_streamed_deltas_stays_inert(myrm, script):
    text = f"a{ATTACKS['OSC 52 clipboard write']}b{ATTACKS['C1 8-bit CSI']}c\r\nd"
    result = myrm("run", "--model", script({"text": text, "chunk_size": 1}), "hello")
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout, "\\x1b]52;c;", "\\x9b2J")
    # One delta per character: CR and LF arrive apart, so the CR shows (documented).
    assert result.stdout == "a\\x1b]52;c;cm0gLXJmIH4K\\x07b\\x9b2Jc\\x0d\nd\n"


def test_run_json_carries_the_exact_text_as_inert_json(myrm, script):
    text = f"Sure. {PAYLOAD}\ud83d That is all."  # and half an emoji, as a model's JSON can send
    result = myrm("run", "--json", "--model", script({"text": text}), "hello")
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout, "\\u001b]52;c;", "\\u009b2J", "\\u202e", "\\ud83d")
    assert json.loads(result.stdout)["text"] == text


def test_tool_lines_on_run_stderr_are_inert(myrm, script, workspace):
    (workspace / "notes.txt").write_text(f"{PAYLOAD}\n", encoding="utf-8")
    model = script(
        {
            "tool_calls": [
                {"id": "a", "name": "bash", "arguments": {"command": f"cat notes.txt; exit 3 # {PAYLOAD}"}},
                {"id": "b", "name": f"evil{ATTACKS['OSC 2 window title (ST)']}", "arguments": {}},
                {"id": "c", "name": "file_read", "arguments": {"path": f"missing{ATTACKS['CSI clear screen + home']}"}},
            ]
        },
        {"text": "done"},
    )
    result = myrm("run", "--approve", "yolo", "--model", model, "look")
    assert result.returncode == 0, result.stderr
    assert_inert(
        result.stderr,
        "→ bash cat notes.txt; exit 3 # \\x1b]52;c;",  # the call's preview
        "✗ bash error (",  # its failure line quotes the poisoned file's bytes
        "evil\\x1b]2;pwned-title\\x1b\\",  # a tool name the model made up
        "→ file_read missing\\x1b[2J\\x1b[H",
    )
    assert "error" in result.stderr and result.stderr.count("\\x1b]52;c;") >= 2


def test_approval_denial_line_is_inert(myrm, script):
    model = script({"tool_calls": [{"name": "bash", "arguments": {"command": f"make {PAYLOAD}"}}]}, {"text": "ok"})
    result = myrm("run", "--model", model, "build it")  # policy ask: denied headless
    assert result.returncode == 0, result.stderr
    # the call's preview and the denial both quote the command, as text (wording aside)
    assert_inert(result.stderr, "→ bash make \\x1b]52;c;", "denied")
    assert result.stderr.count("make \\x1b]52;c;") >= 2


def test_sessions_list_shows_a_poisoned_title_as_text(myrm, script, workspace):
    session_id = attack_session(myrm, script, workspace)
    session, _ = stored_rows(workspace, session_id)
    assert session.title.startswith("\x1b]0;pwned-title\x07")  # stored as given
    table = myrm("sessions", "list")
    assert table.returncode == 0, table.stderr
    assert_inert(table.stdout, "\\x1b]0;pwned-title\\x07\\x9b2J\\u202e fix")
    as_json = myrm("sessions", "list", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout, "\\u001b]0;pwned-title\\u0007\\u009b2J\\u202e fix")
    assert json.loads(as_json.stdout)[0]["title"] == session.title


def test_sessions_show_prints_every_channel_inert(myrm, script, workspace):
    session_id = attack_session(myrm, script, workspace)
    shown = myrm("sessions", "show", session_id[:10])
    assert shown.returncode == 0, shown.stderr
    assert_inert(shown.stdout, *VISIBLE)
    assert "Build notes \\x1b]52;c;" in shown.stdout  # the file's bytes, as the tool returned them
    assert "The notes say: \\x1b]52;c;" in shown.stdout  # the model's text


def test_markdown_export_is_inert_on_stdout_and_in_the_file(myrm, script, workspace, tmp_path):
    session_id = attack_session(myrm, script, workspace)
    printed = myrm("sessions", "export", session_id, "--format", "md")
    assert printed.returncode == 0, printed.stderr
    assert_inert(printed.stdout, *VISIBLE)
    assert printed.stdout.startswith("# \\x1b]0;pwned-title\\x07")
    out = tmp_path / "export.md"
    written = myrm("sessions", "export", session_id, "--format", "md", "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert_inert(out.read_text(encoding="utf-8"), *VISIBLE)


def test_json_export_is_inert_and_lossless(myrm, script, workspace):
    session_id = attack_session(myrm, script, workspace)
    exported = myrm("sessions", "export", session_id, "--format", "json")
    assert exported.returncode == 0, exported.stderr
    assert_inert(exported.stdout, "\\u001b]52;c;", "\\u009b2J", "\\u202e")
    data = json.loads(exported.stdout)
    session, rows = stored_rows(workspace, session_id)
    assert data["session"]["title"] == session.title
    assert [m["message"] for m in data["messages"]] == rows
