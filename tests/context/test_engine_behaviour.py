"""The engine's decisions, one behaviour at a time, on a real store."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.context.rows.ingest import ingest_message
from myrm_tui.context.stages.thinking_cleanup import clean_thinking
from myrm_tui.context.window import ladder
from myrm_tui.context.window.budget import budget_for
from myrm_tui.context.window.config import DEFAULT_CONFIG, EngineConfig
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store
from tests.context.engine_helpers import info as shared_info

MODEL = "gpt-4o"
SYSTEM = "system prompt"


def info(window=16_000, model=MODEL, caching=True, vision=True) -> ModelInfo:
    """The shared engine-test model, with vision on: these tests paste images."""
    return shared_info(window, model, caching, vision)


class Session:
    """A store session fed turn by turn, with a virtual clock."""

    def __init__(self, store, **engine_kwargs):
        self.store = store
        self.id = store.create_session(MODEL).id
        self.now = 0.0
        self.engine = ContextEngine(store, self.id, clock=lambda: self.now, **engine_kwargs)
        self.calls = 0

    def add(self, *messages):
        ids = []
        for message in messages:
            row = ingest_message(message, self.store.vault, cap_chars=100_000)
            ids.append(self.store.append_message(self.id, row, count_message_tokens(row, MODEL)).id)
        return ids

    def turn(self, n: int, output_chars: int = 4_000, command: str | None = None):
        self.calls += 1
        cid = f"call{self.calls}"
        cmd = command or f"python step{n}.py"
        return self.add(
            {"role": "user", "content": f"step {n}: run the next thing"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": cmd})},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": cid,
                "name": "bash",
                "content": "\n".join(f"output {n}.{i} " + "z" * 30 for i in range(output_chars // 45)),
            },
            {"role": "assistant", "content": f"step {n} done"},
        )

    def assemble(self, model=None, **kw):
        prompt = self.engine.assemble(TurnInput(SYSTEM, [], model or info(), 1024, now=self.now, **kw))
        return prompt


# -- ladder ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "share, tier", [(0.1, "none"), (0.45, "monitor"), (0.55, "light"), (0.75, "full"), (0.95, "emergency")]
)
def test_ladder_tiers_are_proportional_to_the_budget(share, tier):
    budget = budget_for(64_000, 4_096)
    decision = ladder.decide(
        tokens=int(share * budget.prompt_limit),
        budget=budget,
        config=DEFAULT_CONFIG,
        cache_warm=False,
        force_tier=None,
        recent_savings={},
    )
    assert decision.tier == tier
    assert (decision.run is not None) == (tier in ("light", "full", "emergency"))


def test_ladder_defers_below_emergency_while_the_cache_is_warm():
    budget = budget_for(64_000, 4_096)
    warm = ladder.decide(
        tokens=int(0.75 * budget.prompt_limit),
        budget=budget,
        config=DEFAULT_CONFIG,
        cache_warm=True,
        force_tier=None,
        recent_savings={},
    )
    assert warm.run is None and warm.deferred == "full"
    emergency = ladder.decide(
        tokens=int(0.92 * budget.prompt_limit),
        budget=budget,
        config=DEFAULT_CONFIG,
        cache_warm=True,
        force_tier=None,
        recent_savings={},
    )
    assert emergency.run == "emergency"


def test_ladder_skips_a_tier_that_keeps_saving_nothing():
    budget = budget_for(64_000, 4_096)
    decision = ladder.decide(
        tokens=int(0.6 * budget.prompt_limit),
        budget=budget,
        config=DEFAULT_CONFIG,
        cache_warm=False,
        force_tier=None,
        recent_savings={"light": [10, 5]},
    )
    assert decision.run is None and "skipped" in decision.why


# -- thinking cleanup -------------------------------------------------------------------------


def test_thinking_cleanup_per_family():
    message = {
        "role": "assistant",
        "content": "answer",
        "reasoning_content": "hmm",
        "thinking_blocks": [{"type": "thinking", "thinking": "hmm", "signature": "s"}],
    }
    anthropic_now = clean_thinking(message, "anthropic", before_last_user=False)
    assert "reasoning_content" not in anthropic_now and anthropic_now["thinking_blocks"]
    assert "thinking_blocks" not in clean_thinking(message, "anthropic", before_last_user=True)
    old_text = clean_thinking(message, "reasoning-tools", before_last_user=True)
    assert "reasoning_content" not in old_text
    tool_turn = {**message, "tool_calls": [{"id": "a", "function": {"name": "x", "arguments": "{}"}}]}
    assert clean_thinking(tool_turn, "reasoning-tools", before_last_user=True)["reasoning_content"] == "hmm"
    switched = {"role": "assistant", "content": None, "tool_calls": tool_turn["tool_calls"], "thinking_blocks": []}
    assert clean_thinking(switched, "reasoning-tools", before_last_user=False)["reasoning_content"] == ""
    assert not {"reasoning_content", "thinking_blocks"} & set(clean_thinking(message, "openai", False))


# -- engine ---------------------------------------------------------------------------------


def test_warm_cache_defers_compaction_and_cold_cache_runs_it(store):
    s = Session(store)
    for n in range(1, 15):
        s.turn(n, output_chars=8_000)
    s.now = 100.0
    s.engine.note_provider_call(at=95.0)
    prompt = s.assemble(model=info(16_000))
    assert prompt.report["ladder"]["deferred"] in ("light", "full") and prompt.report["event"] is None
    s.now = 100.0 + 3600  # idle past every provider's cache lifetime
    cold = s.assemble(model=info(16_000))
    assert cold.report["event"] is not None and cold.tokens < prompt.tokens


def test_compaction_keeps_the_tail_and_anchors_and_everything_stays_recoverable(store):
    s = Session(store)
    first = s.turn(1, output_chars=6_000)
    for n in range(2, 12):
        s.turn(n, output_chars=6_000)
    last = s.turn(12, output_chars=1_000)
    prompt = s.assemble(model=info(12_000))
    assert prompt.report["event"] is not None
    blob = json.dumps(prompt.messages, ensure_ascii=False)
    assert prompt.messages[1]["content"] == "step 1: run the next thing"  # the human anchor
    assert prompt.messages[-1]["content"] == "step 12 done"  # the fresh tail is verbatim
    assert "output 12.0 " in blob
    # The first turn's output is gone from the prompt, but one call gives it back.
    assert "output 1.40 " not in blob
    assert "output 1.40 " in ctx_expand(store, s.id, f"msg:{first[2]}")
    assert prompt.tokens + prompt.budget.output_reserve <= 12_000
    del last


def test_same_command_again_supersedes_the_older_output(store):
    s = Session(store)
    old = s.turn(1, output_chars=3_000, command="pytest -q")
    for n in range(2, 6):
        s.turn(n, output_chars=3_000)
    s.turn(6, output_chars=3_000, command="pytest -q")
    for n in range(7, 10):
        s.turn(n, output_chars=500)
    prompt = s.assemble(model=info(8_000), force_tier="light")
    texts = [m.get("content") or "" for m in prompt.messages]
    old_result = next(t for t in texts if f"msg:{old[2]}" in t)
    assert old_result.startswith("[superseded bash command=pytest -q")


def test_manual_compact_with_focus_spares_the_focus(store):
    s = Session(store)
    s.add({"role": "user", "content": "we are working on src/keep.py"})
    for n in range(1, 12):
        cmd = "cat src/keep.py" if n == 2 else f"cat other{n}.py"
        s.turn(n, output_chars=5_000, command=cmd)
    model = info(24_000)
    before = s.assemble(model=model)
    event = s.engine.compact(TurnInput(SYSTEM, [], model, 1024, now=s.now), tier="full", focus="src/keep.py")
    assert event is not None and event["trigger"] == "manual"
    after = s.assemble(model=model)
    assert after.tokens < before.tokens
    results = {m["tool_call_id"]: m["content"] for m in after.messages if m["role"] == "tool"}
    assert not results["call2"].startswith("[old output masked")  # the focus file's output survived
    assert results["call3"].startswith("[old output masked")


def test_a_smaller_model_rescales_the_budget_on_the_next_assemble(store):
    s = Session(store)
    for n in range(1, 9):
        s.turn(n, output_chars=4_000)
    big = s.assemble(model=info(128_000))
    assert big.report["event"] is None
    small = s.assemble(model=info(8_000))
    assert small.report["event"] is not None
    assert small.tokens + small.budget.output_reserve <= 8_000 < big.tokens


def test_a_failing_stage_is_disabled_for_the_session_and_the_turn_goes_on(store, monkeypatch):
    s = Session(store)
    s.turn(1, output_chars=200)
    from myrm_tui.context import arrival_filter

    def boom(*args, **kwargs):
        raise RuntimeError("filter bug")

    monkeypatch.setattr(arrival_filter, "filter_output", boom)
    for n in range(2, 6):
        s.turn(n, output_chars=40_000)  # over the ingest allowance: the smart filter runs
        prompt = s.assemble(model=info(64_000))
        assert prompt.messages[-1]["content"] == f"step {n} done"
    assert s.engine.breakers.states().get("smart_filter") == "open"
    other = Session(store)  # another session in the same process is not affected
    assert other.engine.breakers.states() == {}


def test_cache_break_detector_explains_a_compaction(store):
    s = Session(store)
    for n in range(1, 4):
        s.turn(n, output_chars=500)
    s.assemble(model=info(64_000))
    for n in range(4, 30):
        s.turn(n, output_chars=3_000)
    prompt = s.assemble(model=info(20_000))
    assert prompt.report["event"] is not None
    assert prompt.report["cache_break"]["reason"].startswith("compaction")


def test_post_compaction_reread_injects_the_latest_content_of_modified_files(store, tmp_path):
    (tmp_path / "app.py").write_text("print('current version')\n")
    s = Session(store, file_reader=lambda p: (tmp_path / p).read_text() if (tmp_path / p).exists() else None)
    s.add(
        {"role": "user", "content": "edit app.py"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "w1",
                    "type": "function",
                    "function": {"name": "file_write", "arguments": json.dumps({"path": "app.py", "content": "old"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "w1", "name": "file_write", "content": "wrote app.py"},
    )
    for n in range(1, 14):
        s.turn(n, output_chars=5_000)
    prompt = s.assemble(model=info(16_000))
    assert prompt.report["event"] is not None
    reread = [m for m in prompt.messages if "re-read after compaction" in str(m.get("content"))]
    assert reread and "print('current version')" in reread[0]["content"]


def test_images_live_in_the_vault_and_only_the_newest_two_are_sent(store):
    s = Session(store)
    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes(range(200))).decode()
    for n in range(3):
        s.add(
            {
                "role": "user",
                "content": [{"type": "text", "text": f"look {n}"}, {"type": "image_url", "image_url": {"url": png}}],
            },
            {"role": "assistant", "content": f"seen {n}"},
        )
    rows = store.messages(s.id)
    assert "base64" not in json.dumps([r.message for r in rows])  # stored by handle
    prompt = s.assemble()
    images = [
        p
        for m in prompt.messages
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]
    assert len(images) == 2 and all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in images)
    placeholder = prompt.messages[1]["content"][1]["text"]
    assert placeholder.startswith("[image omitted") and "vault://" in placeholder
    blind = s.assemble(model=info(vision=False))
    assert not any(
        p.get("type") == "image_url" for m in blind.messages if isinstance(m.get("content"), list) for p in m["content"]
    )


def test_views_survive_a_restart_byte_for_byte(store, tmp_path):
    s = Session(store)
    for n in range(1, 14):
        s.turn(n, output_chars=5_000)
    prompt = s.assemble(model=info(16_000))
    assert prompt.report["event"] is not None
    reopened = Store.open(Path(tmp_path))
    try:
        fresh = ContextEngine(reopened, s.id, clock=lambda: s.now)
        fresh.cache.last_call_at = s.now
        again = fresh.assemble(TurnInput(SYSTEM, [], info(16_000), 1024, now=s.now))
        assert again.messages == prompt.messages
    finally:
        reopened.close()


def test_config_ladder_is_ordered():
    c = EngineConfig()
    assert c.monitor_ratio < c.light_ratio < c.full_ratio < c.emergency_ratio
    assert c.removal_target_ratio <= c.target_ratio <= c.light_ratio
