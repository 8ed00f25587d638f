"""Outgoing-prompt hygiene: inline reasoning, signed blocks across a model switch, lone surrogates."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.compaction.breaker import StageBreakers
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.report import StageClock
from myrm_tui.context.rows.family import ANTHROPIC, OPENAI, REASONING_TOOLS
from myrm_tui.context.stages.encode_safe import encode_safe, encode_safe_messages, encode_safe_text
from myrm_tui.context.stages.inline_thinking import strip_inline_thinking, strip_leading_thinking
from myrm_tui.context.stages.thinking_cleanup import REASONING_OMITTED, clean_thinking, same_signer
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store, event_kinds

SIGNED = {"type": "thinking", "thinking": "let me see", "signature": "c2lnbmVk"}


# ---------------------------------------------------------------- inline <think>
def test_a_leading_think_block_goes_and_the_answer_stays():
    assert strip_leading_thinking("<think>plan\nsteps</think>\n\nThe answer.") == "The answer."
    assert strip_leading_thinking("  <thinking>a</thinking><think>b</think> done") == "done"
    assert strip_leading_thinking("<THINK>x</THINK>ok") == "ok"


def test_an_unclosed_leading_think_drops_to_the_end():
    assert strip_leading_thinking("<think>the stream was cut off here") == ""
    assert strip_leading_thinking("<think>a</think>answer") == "answer"


def test_tags_later_in_the_text_are_the_answer_and_stay():
    text = "Models emit <think>...</think> blocks; strip them."
    assert strip_leading_thinking(text) is text
    assert strip_leading_thinking("plain") == "plain"


def test_list_content_loses_only_the_leading_text_parts_reasoning():
    message = {"role": "assistant", "content": [{"type": "text", "text": "<think>x</think>hi"}]}
    assert strip_inline_thinking(message)["content"] == [{"type": "text", "text": "hi"}]


def test_user_and_tool_text_are_never_touched():
    for role in ("user", "tool", "system"):
        message = {"role": role, "content": "<think>keep me</think>", "tool_call_id": "c1"}
        assert clean_thinking(message, OPENAI, True) is message


def test_every_assistant_message_loses_inline_reasoning_whatever_the_family_or_turn():
    message = {"role": "assistant", "content": "<think>hmm</think>Sure."}
    for family in (ANTHROPIC, OPENAI, REASONING_TOOLS):
        for before_last_user in (True, False):
            assert clean_thinking(message, family, before_last_user)["content"] == "Sure."
    assert message["content"] == "<think>hmm</think>Sure.", "the stored message is not changed"


def test_a_reply_that_was_all_reasoning_still_says_something():
    out = clean_thinking({"role": "assistant", "content": "<think>only this"}, ANTHROPIC, True)
    assert out["content"] == REASONING_OMITTED
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    with_calls = clean_thinking(
        {"role": "assistant", "content": "<think>x</think>", "tool_calls": calls}, OPENAI, False
    )
    assert with_calls["content"] == "" and with_calls["tool_calls"] == calls


def test_a_message_without_inline_reasoning_is_the_same_object():
    message = {"role": "assistant", "content": "hello"}
    assert clean_thinking(message, OPENAI, True) is message


# ---------------------------------------------------------------- signed blocks
def test_signed_blocks_go_only_to_the_family_that_signed_them():
    message = {"role": "assistant", "content": "", "thinking_blocks": [SIGNED], "tool_calls": [{"id": "c"}]}
    assert clean_thinking(message, ANTHROPIC, False, ANTHROPIC)["thinking_blocks"] == [SIGNED]
    assert "thinking_blocks" not in clean_thinking(message, ANTHROPIC, False, OPENAI)
    assert "thinking_blocks" not in clean_thinking(message, ANTHROPIC, False, REASONING_TOOLS)
    # Unknown signer (a row from before the agent recorded it): the rule it always had.
    assert clean_thinking(message, ANTHROPIC, False, None)["thinking_blocks"] == [SIGNED]
    assert same_signer(ANTHROPIC, ANTHROPIC) and not same_signer(OPENAI, ANTHROPIC) and same_signer(None, OPENAI)


def _model(name: str) -> ModelInfo:
    return ModelInfo(name=name, provider="x", context_window=64_000, max_output_tokens=1024, supports_tools=True)


def test_after_a_model_switch_blocks_signed_by_the_other_family_are_dropped(tmp_path):
    """Mid-turn (the tool results are still being answered): the current turn's blocks would be
    replayed to Anthropic, but only while they were signed by an Anthropic model."""
    with Store.open(tmp_path) as store:
        session = store.create_session("claude-sonnet-4").id
        call = {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
        rows: list[dict[str, Any]] = [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": "", "tool_calls": [call], "thinking_blocks": [SIGNED]},
            {"role": "tool", "tool_call_id": "c1", "name": "glob", "content": "a.py"},
        ]
        ids = [store.append_message(session, m, count_message_tokens(m, "gpt-4o")).id for m in rows]
        engine = ContextEngine(store, session, clock=lambda: 0.0)

        def sent_blocks(model: str) -> object:
            prompt = engine.assemble(TurnInput("sys", [], _model(model), 512, now=0.0))
            [reply] = [m for m in prompt.messages if m["role"] == "assistant"]
            return reply.get("thinking_blocks")

        # Nothing recorded who wrote the reply: replayed as before.
        assert sent_blocks("claude-sonnet-4") == [SIGNED]
        # The agent records the writer; a Gemini model signed it, then the user switched to Claude.
        store.append_event(session, event_kinds.REPLY_FIGURES, {"message_id": ids[1], "model": "gemini/gemini-2.5"})
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        assert sent_blocks("claude-sonnet-4") is None
        assert store.messages(session)[1].message["thinking_blocks"] == [SIGNED], "the store keeps them"

    (tmp_path / "b").mkdir()
    with Store.open(tmp_path / "b") as store:
        session = store.create_session("claude-sonnet-4").id
        ids = [store.append_message(session, m, count_message_tokens(m, "gpt-4o")).id for m in rows]
        store.append_event(session, event_kinds.REPLY_FIGURES, {"message_id": ids[1], "model": "claude-opus-4"})
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        assert sent_blocks("claude-sonnet-4") == [SIGNED], "same family: replayed"
        assert sent_blocks("gpt-4o") is None, "switched to another family: dropped"


# ---------------------------------------------------------------- lone surrogates
def test_lone_surrogates_become_the_replacement_character_anywhere():
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a\udc80b"}],
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": '{"p": "\ud800"}'}}],
    }
    out = encode_safe(message)
    assert out["content"][0]["text"] == "a\ufffdb"
    assert out["tool_calls"][0]["function"]["arguments"] == '{"p": "\ufffd"}'
    assert message["content"][0]["text"] == "a\udc80b", "the input is not changed"
    messages, changed = encode_safe_messages(
        [{"role": "user", "content": "fine"}, {"role": "tool", "content": "\udcff"}]
    )
    assert changed == 1 and messages[1]["content"] == "\ufffd"


json_like = st.recursive(
    st.text() | st.integers() | st.none() | st.booleans(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=12,
)


@given(json_like)
def test_encode_safe_output_always_encodes_and_clean_input_is_untouched(value):
    out = encode_safe(value)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # never raises
    if _has_no_surrogate(value):
        assert out is value


@given(st.text())
def test_encode_safe_text_keeps_everything_but_surrogates(text):
    out = encode_safe_text(text)
    out.encode("utf-8")
    assert len(out) == len(text)
    assert all(a == b or (0xD800 <= ord(a) <= 0xDFFF and b == "\ufffd") for a, b in zip(text, out, strict=True))


def _has_no_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return all(_has_no_surrogate(v) for v in value.values())
    if isinstance(value, list):
        return all(_has_no_surrogate(v) for v in value)
    return True


# ---------------------------------------------------------------- stage times, breaker notices
def test_the_clock_times_nested_stages_exclusively():
    clock = StageClock()
    with clock.time("compress"):
        with clock.time("summarize"):
            pass
        clock.add("normalize", 5.0)
    assert clock.ms["normalize"] == 5.0
    assert clock.ms["compress"] < 5.0, "time of the nested stages is not the outer one's"
    assert list(clock.figures(("summarize", "compress", "normalize"))) == ["summarize", "compress", "normalize"]


def test_a_tripped_breaker_is_told_once():
    breakers = StageBreakers(threshold=2)

    def boom() -> None:
        raise ValueError("bad row")

    for _ in range(3):
        breakers.run("smart_filter", boom, None)
    [notice] = breakers.take_trips()
    assert "smart_filter" in notice and "ValueError: bad row" in notice and "off for this session" in notice
    assert breakers.take_trips() == []
