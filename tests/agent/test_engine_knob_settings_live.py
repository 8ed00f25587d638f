"""The `prefix_anchor_turns`, `removal_focus_band` and `file_read_exempt` settings through the live
agent: the scripted provider records each request, and a non-default value changes what it receives.

Why through the agent: a setting is only a promise about the prompt once it flows from Settings
through `Agent.turn_input` into the engine per request; an engine built with the knob in its
config (tests/context/test_seed_engine_rows.py) does not show that path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.window.arrival_budget import arrival_allowances
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent

FILLER = " ".join(f"w{i}" for i in range(120))


def requests(record: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def texts(request: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content") or "") for m in request]


def test_each_settings_default_is_the_engine_configs():
    """The defaults reproduce the engine's behaviour (the replay digests depend on it)."""
    for key in ("prefix_anchor_turns", "removal_focus_band", "file_read_exempt"):
        assert SPECS_BY_KEY[key].default == getattr(DEFAULT_CONFIG, key), key
        assert SPECS_BY_KEY[key].from_workspace == "free", "it shapes the prompt, like eviction_order"


# ---------------------------------------------------------------- prefix_anchor_turns
@pytest.mark.slow
@pytest.mark.parametrize("turns", [1, 2])
async def test_prefix_anchor_turns_keeps_the_second_turn_through_the_compact_command(
    store, workspace, script, tmp_path, turns
):
    record = tmp_path / "requests.jsonl"
    answers = [{"text": f"answer {n}: {FILLER}"} for n in range(10)]
    model = script(*answers, context_window=32_000, record=str(record))
    agent = make_agent(store, workspace, model, prefix_anchor_turns=turns)
    for n in range(8):
        await drive(agent, f"request {n}: {FILLER}")
    assert await agent.compact_now() is not None
    await drive(agent, "what is left?")
    sent = texts(requests(record)[-1])
    assert any(t.startswith("request 0: ") for t in sent), "the first request is always an anchor"
    assert any(t.startswith("request 1: ") for t in sent) == (turns == 2)
    assert any(t.startswith("answer 1: ") for t in sent) == (turns == 2), "with its closing answer"
    assert not any(t.startswith("request 4: ") for t in sent), "the turns after the anchors were summarized"


# ---------------------------------------------------------------- removal_focus_band
LONG_FILLER = " ".join(f"w{i}" for i in range(360))


async def focus_session(store, workspace, script, tmp_path, band: int, turns: int) -> list[str]:
    """`turns` turns alternating between unrelated chat and src/billing.py, then a request about
    src/billing.py (the intent's focus) and an emergency forced as a provider overflow does (down
    to the emergency target, oldest first: `eviction_order` recency); what the next request sends."""
    record = tmp_path / f"band{band}-{turns}.jsonl"
    answers = [{"text": f"answer {n}: {LONG_FILLER}"} for n in range(turns + 4)]
    model = script(*answers, context_window=64_000, record=str(record))
    agent = make_agent(
        store, workspace, model, removal_focus_band=band, eviction_order="recency", max_output_tokens=512
    )
    for n in range(turns):
        topic = "fix the rounding in src/billing.py" if n % 2 else "tell me about the weather"
        await drive(agent, f"request {n}: {topic} {LONG_FILLER}")
    await drive(agent, "request last: is src/billing.py done?")
    event = agent.engine.assemble(agent.turn_input(force_tier="emergency", trigger="overflow")).report.event
    assert event is not None and event.ops.get("remove"), "the emergency removed turns"
    await drive(agent, "thanks")
    return texts(requests(record)[-1])


def kept_requests(sent: list[str]) -> set[int]:
    return {
        int(t.split(":", 1)[0].split()[1])
        for t in sent
        if t.startswith("request ") and not t.startswith("request last")
    }


@pytest.mark.slow
async def test_removal_focus_band_keeps_a_focus_turn_that_oldest_first_removes(store, workspace, script, tmp_path):
    # Bands of 4 removal groups (one message each): the focus request sits second in its band, so
    # the two orders differ only when removal stops within a band past it; the stop moves by two
    # groups per turn, so one of two consecutive session lengths shows it.
    for turns in (20, 21):
        plain = await focus_session(store, workspace, script, tmp_path, 0, turns)
        banded = await focus_session(store, workspace, script, tmp_path, 4, turns)
        if plain != banded:
            break
    assert plain != banded, "the setting changed what the provider received"
    deferred = kept_requests(banded) - kept_requests(plain)
    assert deferred and all(n % 2 for n in deferred), "only src/billing.py requests are kept longer"
    assert kept_requests(plain) - kept_requests(banded), "removal still reaches its target: another turn goes"


# ---------------------------------------------------------------- file_read_exempt
async def test_file_read_exempt_sends_a_read_whole_that_the_default_excerpts(store, workspace, script, tmp_path):
    (workspace / "big.txt").write_text("".join(f"entry {i:04d}: a line of the big file\n" for i in range(950)))
    call = {"tool_calls": [{"id": "c1", "name": "file_read", "arguments": {"path": "big.txt"}}]}
    sent: dict[bool, str] = {}
    for exempt in (False, True):
        record = tmp_path / f"exempt{exempt}.jsonl"
        model = script(call, {"text": "seen"}, context_window=32_000, record=str(record))
        agent = make_agent(store, workspace, model, file_read_exempt=exempt, max_output_tokens=1024)
        await drive(agent, "read big.txt")
        [row] = [r for r in store.messages(agent.session_id) if r.role == "tool"]
        [sent[exempt]] = [m["content"] for m in requests(record)[-1] if m.get("role") == "tool"]
        budget = store.events(agent.session_id, event_kinds.ASSEMBLE)[-1].data["budget"]
        limit, before = budget["prompt_limit"], budget["fixed_tokens"]
        assert arrival_allowances(limit, before, DEFAULT_CONFIG).file_read < row.tokens, "over the 30 % share"
    assert sent[True] == row.message["content"], "exempt: the read passed whole"
    assert "excerpt" in sent[False].split("\n", 1)[0] and len(sent[False]) < len(sent[True])
