"""A secret in the turns `/compact` summarizes never reaches the model through the summary.

Why the extractive path: with no model able to summarize (the default when the main model's
answer is not a summary), `/compact` writes extractive summaries, which quote the user's words;
`redact_summary` is what stands between a pasted key and every later request.
"""

from __future__ import annotations

import json

from myrm_tui.context.window.tokens import count_message_tokens
from tests.agent.agent_helpers import compact_any_span, drive, make_agent

SECRET = "AKIA" + "Q7ZK3M9T2XW4P8LB"  # an AWS access key id shape (split: no scanner flags the file)


async def test_compact_summary_of_a_pasted_key_reaches_the_model_redacted(store, workspace, script, tmp_path):
    record = tmp_path / "requests.jsonl"
    model = script(*[{"text": "not a summary"}] * 30, record=str(record))
    agent = make_agent(store, workspace, model)
    command = {"command": f"AWS_ACCESS_KEY_ID={SECRET} aws s3 cp build.tar s3://staging/"}
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json.dumps(command)}}
    for message in (
        {"role": "user", "content": "upload the build to staging"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "upload: build.tar to s3://staging/build.tar"},
        {"role": "assistant", "content": "Uploaded."},
    ):
        store.append_message(agent.session_id, message, count_message_tokens(message, model))
    for n, (user, answer) in enumerate(
        [
            ("start a deployment checklist for the staging stack", "Started the checklist."),
            (f"the deploy key is {SECRET}, use it for the staging upload", "Understood, staging upload."),
            ("also add the database migration step", "Added the migration step."),
            ("and the smoke tests after it", "Added the smoke tests."),
        ]
    ):
        for message in ({"role": "user", "content": user}, {"role": "assistant", "content": f"{answer} ({n})"}):
            store.append_message(agent.session_id, message, count_message_tokens(message, model))
    event = await compact_any_span(agent).compact_now()
    assert event is not None and event["ops"].get("remove", 0) > 0
    summaries = [n for n in store.summaries(agent.session_id) if n["status"] == "active"]
    assert summaries and all(n["fallback"] for n in summaries), "extractive summaries, as when no model can write one"
    # The stored node is what `ctx_expand`, exports and forks read back: redacted there too.
    assert not any(SECRET in json.dumps(n, default=str) for n in store.summaries(agent.session_id))
    await drive(agent, "what is next?")
    request = json.loads(record.read_text(encoding="utf-8").splitlines()[-1])
    summary_texts = [str(m["content"]) for m in request if "[summary S" in str(m.get("content"))]
    assert summary_texts and any("staging upload" in t for t in summary_texts), summary_texts
    assert not any(SECRET in t for t in summary_texts)
    assert any("[REDACTED" in t for t in summary_texts)
