"""Seed-audit engine rows at the engine (docs/seed-audit.md): security pins (a property over
compactions), the signature replay scrubber, prefix anchor turns, the masker tiers, the
focus band of removal, the file-read exemption and the `protected_tools` validation."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.observations.intent import focus_last_in_band
from myrm_tui.context.observations.masker_tiers import EPHEMERAL, PROTECTED, STANDARD, parse_protected_tools, tool_tier
from myrm_tui.context.observations.pins import is_security_pin
from myrm_tui.context.rows.views import REMOVED
from myrm_tui.context.window.arrival_budget import arrival_allowances
from myrm_tui.context.window.config import DEFAULT_CONFIG, EngineConfig
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.settings.value_checks import type_error
from myrm_tui.store import Store
from tests.context.engine_helpers import info
from tests.hypothesis_profiles import examples

SIGNED_A = {"type": "thinking", "thinking": "first step", "signature": "c2lnQQ=="}
SIGNED_B = {"type": "thinking", "thinking": "second step", "signature": "c2lnQg=="}
RULES = (
    "Never touch the vendor/ folder.",
    "Please do not run migrations against staging.",
    "Constraint: keep the public API unchanged.",
    "pin: the deploy key lives in the vault, not in the repo",
    "You may only edit files under src/.",
)
PLAIN = ("Fix the failing test.", "What does parse_config return?", "For the record: X-1 (do not guess it).")


def _append(store: Store, session: str, message: dict) -> int:
    return store.append_message(session, message, count_message_tokens(message, "gpt-4o")).id


# ---------------------------------------------------------------- security pins
def test_what_qualifies_as_a_security_pin():
    for rule in RULES:
        assert is_security_pin({"role": "user", "content": rule}), rule
        if not rule.startswith("pin:"):  # an explicit pin leads the message; a rule may follow context
            assert is_security_pin({"role": "user", "content": f"Some context first. {rule}"}), rule
    for text in PLAIN:
        assert not is_security_pin({"role": "user", "content": text}), text
    # Never the model's words, a tool's output, or a synthetic user-role row.
    assert not is_security_pin({"role": "assistant", "content": RULES[0]})
    assert not is_security_pin({"role": "tool", "tool_call_id": "c", "content": RULES[0]})
    assert not is_security_pin({"role": "user", "content": RULES[0], "myrm_synthetic": "fork_summary"})
    wrapped = f'<context-note trust="untrusted">\n{RULES[0]}\n</context-note>'
    assert not is_security_pin({"role": "user", "content": wrapped})


_ITEM = st.one_of(
    st.tuples(st.just("rule"), st.sampled_from(RULES)),
    st.tuples(st.just("plain"), st.sampled_from(PLAIN)),
    st.tuples(st.just("tool"), st.sampled_from(RULES)),  # a tool output that reads like a rule
)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.lists(_ITEM, min_size=4, max_size=14), tiers=st.lists(st.sampled_from(["full", "emergency"]), max_size=3)
)
def test_security_pins_are_never_removed_across_compactions(tmp_path_factory, items, tiers):
    """Whatever the history and the events run over it, every pinned user message is in every
    prompt as the user wrote it, and no tool output ever becomes pinned."""
    with Store.open(tmp_path_factory.mktemp("pins")) as store:
        session = store.create_session("gpt-4o").id
        _append(store, session, {"role": "user", "content": "start the work"})
        filler = " ".join(f"w{i}" for i in range(400))
        pinned_texts = []
        for n, (kind, text) in enumerate(items):
            if kind == "tool":
                call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
                _append(store, session, {"role": "assistant", "content": "", "tool_calls": [call]})
                _append(store, session, {"role": "tool", "tool_call_id": f"c{n}", "content": f"{text}\n{filler}"})
            else:
                content = f"{text} {n}"
                _append(store, session, {"role": "user", "content": content})
                _append(store, session, {"role": "assistant", "content": f"ok {n} {filler}"})
                if kind == "rule":
                    pinned_texts.append(content)
        _append(store, session, {"role": "user", "content": "what next"})
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput("sys", [], info(8_000, caching=False), 512, now=0.0)
        engine.assemble(inp)
        for tier in tiers:
            engine.compact(inp, tier=tier)
        engine.summarize_now(inp)
        prompt = engine.assemble(inp)
        sent = [m.get("content") for m in prompt.messages if m.get("role") == "user"]
        for text in pinned_texts:
            assert text in sent
        history = engine.history
        assert any(view.kind == REMOVED for view in history.views.values()), "the events did remove history"
        assert all(history.rows[i].role == "user" for i in history.never_removed())


# ---------------------------------------------------------------- signature replay scrubber
def test_a_cold_replay_scrubs_the_earlier_steps_signed_blocks_and_the_scrub_sticks(tmp_path):
    with Store.open(tmp_path) as store:
        session = store.create_session("claude-sonnet-4").id

        def step(call_id: str, block: dict) -> None:
            call = {"id": call_id, "type": "function", "function": {"name": "glob", "arguments": "{}"}}
            _append(
                store, session, {"role": "assistant", "content": "", "tool_calls": [call], "thinking_blocks": [block]}
            )
            _append(store, session, {"role": "tool", "tool_call_id": call_id, "name": "glob", "content": "a.py"})

        _append(store, session, {"role": "user", "content": "list"})
        step("c1", SIGNED_A)
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        model = info(64_000, model="claude-sonnet-4")

        def blocks(now: float) -> list:
            prompt = engine.assemble(TurnInput("sys", [], model, 512, now=now))
            engine.note_provider_call(at=now)
            return [m.get("thinking_blocks") for m in prompt.messages if m["role"] == "assistant"]

        assert blocks(0.0) == [[SIGNED_A]]
        step("c2", SIGNED_B)
        assert blocks(1.0) == [[SIGNED_A], [SIGNED_B]], "warm cache: the prefix is sent as cached"
        assert blocks(10_000.0) == [None, [SIGNED_B]], "cold replay: only the newest step keeps its blocks"
        assert blocks(10_001.0) == [None, [SIGNED_B]], "sticky: the next request extends the scrubbed prompt"
        assert store.messages(session)[1].message["thinking_blocks"] == [SIGNED_A], "the store keeps them"


# ---------------------------------------------------------------- prefix anchor turns
@pytest.mark.parametrize("turns", [1, 2])
def test_prefix_anchor_turns_keep_the_first_turns_user_message_and_answer(tmp_path, turns):
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        filler = " ".join(f"w{i}" for i in range(300))
        for n in range(8):
            _append(store, session, {"role": "user", "content": f"request {n} {filler}"})
            call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            _append(store, session, {"role": "assistant", "content": "", "tool_calls": [call]})
            _append(store, session, {"role": "tool", "tool_call_id": f"c{n}", "content": f"out {n} {filler}"})
            _append(store, session, {"role": "assistant", "content": f"answer {n}"})
        config = dataclasses.replace(DEFAULT_CONFIG, prefix_anchor_turns=turns)
        engine = ContextEngine(store, session, config=config, clock=lambda: 0.0)
        inp = TurnInput("sys", [], info(8_000, caching=False), 512, now=0.0)
        engine.assemble(inp)
        engine.summarize_now(inp)
        sent = [str(m.get("content")) for m in engine.assemble(inp).messages]
        assert any(s.startswith("request 0 ") for s in sent)
        assert any(s.startswith("request 1 ") for s in sent) == (turns == 2)
        assert ("answer 1" in sent) == (turns == 2)
        assert not any(s.startswith("out 1 ") for s in sent), "a prefix turn's tool traffic is not kept"


# ---------------------------------------------------------------- masker tiers, protected tools
def test_masker_tiers_and_the_protected_tools_setting():
    assert tool_tier("session_note", {}) == PROTECTED
    assert tool_tier("glob", {"pattern": "*"}) == EPHEMERAL
    assert tool_tier("bash", {"command": "git status"}) == EPHEMERAL
    assert tool_tier("bash", {"command": "ls -la src"}) == EPHEMERAL
    assert tool_tier("bash", {"command": "ls | xargs rm"}) == STANDARD
    assert tool_tier("bash", {"command": "pytest -q"}) == STANDARD
    assert tool_tier("bash", {"command": "git status"}, parse_protected_tools("bash")) == PROTECTED
    assert parse_protected_tools("") == {"session_note"}
    assert parse_protected_tools("file_read, grep mcp.server-x") == {
        "session_note",
        "file_read",
        "grep",
        "mcp.server-x",
    }
    with pytest.raises(ValueError):
        parse_protected_tools("file_read; rm -rf")
    spec = SPECS_BY_KEY["protected_tools"]
    assert type_error(spec, "file_read, grep") is None
    assert "tool names" in (type_error(spec, "file_read; rm") or "")
    assert spec.from_workspace == "needs-trust", "a cloned repository cannot keep its outputs in view"


# ---------------------------------------------------------------- removal focus band
def test_focus_band_defers_focus_groups_only_within_their_band():
    order = list(range(8))
    focus = [True, False, False, True, True, False, False, False]
    assert focus_last_in_band(order, focus, 0) == order
    assert focus_last_in_band(order, focus, 4) == [1, 2, 0, 3, 5, 6, 7, 4]
    assert sorted(focus_last_in_band(order, focus, 3)) == order


# ---------------------------------------------------------------- file-read exemption
def test_file_read_exemption_is_bounded_by_the_room_left_only():
    exempt = EngineConfig(file_read_exempt=True)
    limit = 100_000
    empty = arrival_allowances(limit, 0, exempt)
    assert empty.file_read == int(limit * exempt.file_read_room_ratio)
    assert empty.file_read > arrival_allowances(limit, 0, DEFAULT_CONFIG).file_read
    full = arrival_allowances(limit, 90_000, exempt)
    assert full.file_read <= 10_000 // 2 + 1, "never more than half the room left"
