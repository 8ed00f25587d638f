"""`myrm run` end to end: real entry point, real Agent and store, scripted model through litellm.

Most tests run the command in this process (tests/cli/conftest.py); the streamed answer, the exit
status of a failed turn, a prompt read from a real stdin pipe, Ctrl+C and the embedded model are
checked in a real `python -m myrm_tui` process (`myrm.process`, `myrm.popen`)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from myrm_tui.store.store import Store


def stored_messages(workspace, session_id):
    store = Store.open(workspace)
    try:
        return [m.message for m in store.messages(session_id)]
    finally:
        store.close()


@pytest.mark.slow
def test_text_reply_streams_to_stdout(myrm, script, workspace):
    model = script({"text": "Hello from the script, streamed in pieces."})
    result = myrm.process("run", "--model", model, "say hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the script, streamed in pieces.\n"
    assert "error" not in result.stderr.lower()
    store = Store.open(workspace)
    try:
        (session,) = store.list_sessions()
        messages = [m.message for m in store.messages(session.id)]
    finally:
        store.close()
    assert session.title == "say hello"
    assert messages[0] == {"role": "user", "content": "say hello"}
    assert messages[-1]["role"] == "assistant"


def test_json_output_is_one_parseable_object(myrm, script):
    model = script({"text": "forty-two", "usage": {"prompt_tokens": 123, "completion_tokens": 4}})
    result = myrm("run", "--json", "--model", model, "what is the answer?")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing else on stdout
    assert data["text"] == "forty-two"
    assert data["finish_reason"] == "stop" and data["error"] is None and data["tool_calls"] == []
    assert data["usage"]["prompt_tokens"] == 123 and data["usage"]["completion_tokens"] == 4
    assert len(data["session_id"]) >= 8


def test_denied_tool_call_is_reported_and_model_answers(myrm, script, workspace):
    model = script(
        {"text": "Writing it.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
        {"text": "I was not allowed to write the file."},
    )
    result = myrm("run", "--json", "--approve", "deny", "--model", model, "make a file")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["text"].endswith("I was not allowed to write the file.")
    (call,) = data["tool_calls"]
    assert call["name"] == "bash" and call["status"] == "denied" and call["ok"] is False
    assert not (workspace / "made.txt").exists()
    assert "✗ bash denied" in result.stderr
    messages = stored_messages(workspace, data["session_id"])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]


def test_policy_ask_is_denied_headless_with_a_hint(myrm, script, workspace):
    model = script(
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
        {"text": "Fine, not writing."},
    )
    result = myrm("run", "--model", model, "make a file")  # default policy: ask
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Fine, not writing."
    assert "not run: echo hi > made.txt" in result.stderr
    assert "the approval policy is ask" in result.stderr and "--approve yolo allows it" in result.stderr
    assert "auto-edit" not in result.stderr, "auto-edit would not allow a bash call: never suggest it"
    assert not (workspace / "made.txt").exists()


def test_yolo_runs_the_tool(myrm, script, workspace):
    model = script(
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
        {"text": "Done."},
    )
    result = myrm("run", "--approve", "yolo", "--model", model, "make a file")
    assert result.returncode == 0, result.stderr
    assert (workspace / "made.txt").read_text() == "hi\n"
    assert "→ bash echo hi > made.txt" in result.stderr and "✓ bash ok" in result.stderr


@pytest.mark.slow
def test_error_turn_exits_1_with_a_readable_line(myrm, script):
    model = script({"error": "auth"})
    result = myrm.process("run", "--model", model, "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "API key" in lines[0]
    assert "Traceback" not in result.stderr
    as_json = myrm("run", "--json", "--model", model, "hello")
    assert as_json.returncode == 1
    error = json.loads(as_json.stdout)["error"]
    assert error["error_class"] == "AuthenticationError" and error["hint"]


def test_continue_appends_to_the_latest_session(myrm, script, workspace):
    model = script({"text": "first answer"}, {"text": "second answer"})
    first = myrm("run", "--json", "--model", model, "one")
    assert first.returncode == 0, first.stderr
    second = myrm("run", "--json", "--continue", "--model", model, "two")
    assert second.returncode == 0, second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["session_id"] == b["session_id"]
    assert b["text"] == "second answer"  # the model saw the first exchange
    messages = stored_messages(workspace, a["session_id"])
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"] == "two"
    third = myrm("run", "--json", "--session", a["session_id"][:5], "--model", model, "three")
    assert json.loads(third.stdout)["session_id"] == a["session_id"]
    fresh = myrm("run", "--json", "--model", model, "new topic")
    assert json.loads(fresh.stdout)["session_id"] != a["session_id"]


def test_usage_errors_exit_2(myrm, script):
    model = script({"text": "x"})
    unknown = myrm("run", "--session", "nope", "--model", model, "hi")
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr
    both = myrm("run", "--session", "x", "--continue", "--model", model, "hi")
    assert both.returncode == 2 and "either --session" in both.stderr
    bad_choice = myrm("run", "--approve", "sometimes", "--model", model, "hi")
    assert bad_choice.returncode == 2 and "sometimes" in bad_choice.stderr


@pytest.mark.slow
def test_prompt_from_stdin(myrm, script, workspace):
    model = script({"text": "got it"})
    result = myrm.process("run", "--json", "--model", model, "-", input="a prompt\nfrom stdin\n")
    assert result.returncode == 0, result.stderr
    messages = stored_messages(workspace, json.loads(result.stdout)["session_id"])
    assert messages[0]["content"] == "a prompt\nfrom stdin\n"


def test_config_problems_warn_and_the_command_goes_on(myrm, script, workspace):
    model = script({"text": "still works"})
    (workspace / ".myrm").mkdir()
    bad = workspace / ".myrm" / "config.toml"
    bad.write_text('theme = "x"\nmax_steps = = 2\n')
    (myrm.config_dir / "config.toml").write_text(f'model = "{model}"\nopenai_api_key = "sk-x"\n')
    result = myrm("run", "hello", env={"MYRM_MAX_STEPS": "many"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still works\n"
    assert f"warning: {bad}:2: not valid TOML" in result.stderr
    assert "config.toml:2: `openai_api_key` looks like an API key" in result.stderr
    assert "warning: env: MYRM_MAX_STEPS='many'" in result.stderr
    assert "sk-x" not in result.stderr


@pytest.mark.slow
def test_ctrl_c_cancels_the_turn_stores_synthetic_result_and_exits_130(myrm, script, workspace):
    model = script(
        {"text": "running it", "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60"}}]},
        {"text": "never reached"},
    )
    proc = myrm.popen("run", "--json", "--approve", "yolo", "--model", model, "wait a minute")
    try:
        deadline = time.monotonic() + 120
        seen = ""
        while "→ bash" not in seen:  # stderr line printed when the tool starts
            assert time.monotonic() < deadline, seen
            line = proc.stderr.readline()
            assert line or proc.poll() is None, seen
            seen += line
        time.sleep(0.5)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 20  # not waiting for `sleep 60`
    data = json.loads(out)
    assert data["finish_reason"] == "interrupted"
    messages = stored_messages(workspace, data["session_id"])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert "interrupted" in messages[2]["content"]
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"]


@pytest.mark.llama
@pytest.mark.slow
def test_run_on_the_embedded_local_model(myrm):
    result = myrm.process(
        "run",
        "--json",
        "--model",
        "local/smollm2",
        "--max-steps",
        "2",
        "Reply with one short friendly sentence.",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["text"].strip(), data
    assert data["error"] is None


def test_compact_flag_masks_old_outputs_after_the_turn(myrm, script, workspace):
    (workspace / "big.txt").write_text("\n".join(f"row {i} of a long file" for i in range(2500)))
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"cat big.txt # pass {i}"}}]} for i in range(5)
    ] + [{"text": "Read it five times."}]
    model = script(*turns, context_window=32_000)
    result = myrm("run", "--approve", "yolo", "--compact", "--model", model, "read big.txt five times")
    assert result.returncode == 0, result.stderr
    compacted = [line for line in result.stderr.splitlines() if line.startswith("compacted: ")]
    assert compacted and "→" in compacted[0], result.stderr
    before, after = (int(x.replace(",", "")) for x in compacted[0].split()[1:4:2])
    assert after < before
