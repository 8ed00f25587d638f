"""The ring's context health reaches the editor: a real `myrm acp` process, the SDK's client side,
the scripted model (with a price from the user's config) at the LLM boundary.

Per model call, one `usage_update` before it (the engine's count against the prompt limit) and
one after it (the provider's count, its cache-hit share, the session's cost so far).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import UsageUpdate

from tests.acp.test_acp_agent import SCRIPTED_WINDOW, STEP_TIMEOUT_S, RecordingClient, _myrm_acp
from tests.acp.test_acp_agent import workspace as workspace  # the fixture

PRICE_PER_TOKEN = 1e-6  # $1 per million prompt or completion tokens: costs that are easy to check
PROVIDER_PROMPT = (10_000, 12_000)  # the provider's prompt counts for the two calls
CACHED = (0, 9_000)  # of which read from its cache


@pytest.mark.slow
async def test_context_health_reaches_the_editor_after_each_model_call(workspace: Path, tmp_path: Path):
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    script = tmp_path / "script.json"
    usage = [
        {"prompt_tokens": p, "completion_tokens": 100, "cached_read_tokens": c}
        for p, c in zip(PROVIDER_PROMPT, CACHED, strict=True)
    ]
    turns = [
        {"tool_calls": [{"id": "r1", "name": "file_read", "arguments": {"path": "notes.txt"}}], "usage": usage[0]},
        {"text": "It says hello.", "usage": usage[1]},
    ]
    script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    model = f"scripted/{script}"
    config = tmp_path / "user-config"
    config.mkdir()
    prices = f"input_cost_per_token = {PRICE_PER_TOKEN}\noutput_cost_per_token = {PRICE_PER_TOKEN}\n"
    (config / "config.toml").write_text(f'[models."{model}"]\n{prices}', encoding="utf-8")

    client = RecordingClient("allow_once")
    async with _myrm_acp(client, workspace, model, tmp_path) as (conn, session_id):
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("what do the notes say?")]), STEP_TIMEOUT_S
        )
    assert reply.stop_reason == "end_turn"

    updates = client.of(UsageUpdate)
    assert len(updates) == 4, updates  # before and after each of the two calls
    assert all(u.size == SCRIPTED_WINDOW for u in updates)
    before, after = updates[0::2], updates[1::2]
    # before a call: the engine's count of the prompt, as a share of the prompt limit (the ring)
    for u in before:
        figures = (u.field_meta or {})["myrm"]
        assert 0 < u.used < figures["promptLimit"] < SCRIPTED_WINDOW
        assert figures["percent"] == round(u.used / figures["promptLimit"] * 100)
        assert "cacheHitShare" not in figures
    # after a call: the provider's count, its cache share and the session's cost so far
    assert [u.used for u in after] == list(PROVIDER_PROMPT)
    shares = [(u.field_meta or {})["myrm"]["cacheHitShare"] for u in after]
    assert shares == [0.0, 0.75]
    limit = (after[1].field_meta or {})["myrm"]["promptLimit"]
    assert (after[1].field_meta or {})["myrm"]["percent"] == round(12_000 / limit * 100)
    costs = [u.cost for u in after]
    assert all(c is not None and c.currency == "USD" for c in costs)
    first = (PROVIDER_PROMPT[0] + 100) * PRICE_PER_TOKEN
    assert costs[0] is not None and costs[0].amount == pytest.approx(first)
    total = first + (PROVIDER_PROMPT[1] + 100) * PRICE_PER_TOKEN
    assert costs[1] is not None and costs[1].amount == pytest.approx(total)
