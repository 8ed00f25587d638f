"""`myrm run --output-format stream-json`: the real CLI in a subprocess, a scripted model.

Every stdout line is one JSON object with a `type` (docs/commands.md, Streamed JSON): `start`
first, `result` last with the exit code; text, steps, tool calls and results, usage and the
compaction of `--compact` in between, credentials scrubbed from tool lines.
"""

from __future__ import annotations

import json

from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import Store

AWS_KEY = "AKIA" + "Q3X7KZ2M4N8P6R5T"  # the shape redact.py knows; split so no scanner flags this file
SUMMARY = {
    "user_goal": "plan a vegetable garden",
    "active_task": "none",
    "completed_actions": ["answered the garden questions"],
    "narrative": "Weekly garden advice, summarized by the lite model.",
}
SEEDED = 20  # earlier exchanges: over the compact command's least span outside the latest exchange


def seeded_session(workspace, model: str) -> str:
    with Store.open(workspace) as store:
        session = store.create_session(model=model, title="garden").id
        for n in range(SEEDED):
            for message in (
                {"role": "user", "content": f"Question {n}: what should I do in the garden?"},
                {"role": "assistant", "content": f"Week {n}. Water early and mulch the beds. " * 8},
            ):
                store.append_message(session, message, count_message_tokens(message, model))
    return session


def test_stream_json_prints_one_event_per_line_ending_with_the_result(myrm, script, workspace):
    (workspace / "env.txt").write_text(f"AWS_ACCESS_KEY_ID={AWS_KEY}\n", encoding="utf-8")
    # The scripted provider answers the turn numbered by the assistant messages already sent.
    main = script(
        *[{"text": "earlier"}] * SEEDED,
        {"text": "Reading.", "tool_calls": [{"id": "r1", "name": "file_read", "arguments": {"path": "env.txt"}}]},
        {"text": "Done."},
        context_window=32_000,
    )
    lite = script({"text": json.dumps(SUMMARY)}, context_window=12_000)
    session = seeded_session(workspace, main)
    result = myrm(
        "run",
        "--session",
        session,
        "--compact",
        "--output-format",
        "stream-json",
        "--model",
        main,
        "read env.txt",
        env={"MYRM_LITE_MODEL": lite},
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "start" and lines[0]["session_id"] == session and lines[0]["schema_version"] == 1
    assert kinds[-1] == "result" and lines[-1]["exit_code"] == 0 and lines[-1]["text"] == "Reading.\n\nDone."
    assert "".join(line["text"] for line in lines if line["type"] == "text") == "Reading.Done."
    assert [line["step"] for line in lines if line["type"] == "step"] == [1, 2]
    (call,) = [line for line in lines if line["type"] == "tool_call"]
    (done,) = [line for line in lines if line["type"] == "tool_result"]
    assert call["id"] == done["id"] == "r1" and done["ok"] and done["status"] == "ok"
    assert "[REDACTED:aws_access_key]" in done["content"]
    assert AWS_KEY not in result.stdout  # neither in the tool line nor in the result's tool_calls
    assert kinds.count("usage") == 2 and kinds[-2] == "compaction"  # --compact's, before the result
    assert {"tokens_before", "tokens_after"} <= lines[-2].keys()  # the stored event's figures
    assert kinds.index("turn_finished") < kinds.index("compaction")


def test_stream_json_with_json_is_a_usage_error_reported_as_a_result_line(myrm, script):
    result = myrm("run", "--json", "--output-format", "stream-json", "--model", script({"text": "x"}), "hi")
    assert result.returncode == 2
    (line,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert line["type"] == "result" and line["exit_code"] == 2 and "not both" in line["error"]["message"]


def test_json_with_output_format_text_named_is_a_usage_error(myrm, script):
    """`--json` prints one JSON object, `--output-format text` streams text: given both, myrm
    must not pick one silently (the default text beside --json is no contradiction)."""
    result = myrm("run", "--json", "--output-format", "text", "--model", script({"text": "x"}), "hi")
    assert result.returncode == 2
    (line,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert line["exit_code"] == 2 and "--output-format text, not both" in line["error"]["message"]
    fine = myrm("run", "--json", "--model", script({"text": "x"}), "hi")
    assert fine.returncode == 0 and json.loads(fine.stdout)["text"] == "x"
