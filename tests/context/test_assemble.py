from __future__ import annotations

import pytest

from myrm_tui.context.assemble import AssemblyInput, ContextExhausted, assemble
from myrm_tui.context.tokens import count_message_tokens, count_text_tokens, encoding_name_for
from myrm_tui.llm.model_info import ModelInfo
from myrm_tui.store.records import MessageRecord


def record(i, message, model="gpt-4o"):
    return MessageRecord(id=i, session_id="s", seq=i, role=message["role"], message=message,
                         tokens=count_message_tokens(message, model), created_at=0.0)


MODEL = ModelInfo(name="gpt-4o", provider="openai", context_window=4000, max_output_tokens=1000,
                  supports_tools=True)


def test_prompt_is_system_then_history_and_counts_tokens():
    history = [record(1, {"role": "user", "content": "hello there"}),
               record(2, {"role": "assistant", "content": "hi"})]
    out = assemble(AssemblyInput("s", "SYS", history, [], MODEL, 500))
    assert out.messages[0] == {"role": "system", "content": "SYS"}
    assert out.messages[1:] == [r.message for r in history]
    expected = sum(r.tokens for r in history) + count_message_tokens({"role": "system", "content": "SYS"}, "gpt-4o")
    assert out.tokens == expected
    assert out.report["tokens"] == expected


def test_same_rows_give_byte_identical_prompt():
    history = [record(1, {"role": "user", "content": "x" * 100})]
    a = assemble(AssemblyInput("s", "SYS", history, [{"type": "function"}], MODEL, 500))
    b = assemble(AssemblyInput("s", "SYS", history, [{"type": "function"}], MODEL, 500))
    assert a.messages == b.messages and a.tokens == b.tokens


def test_over_budget_raises_with_numbers():
    history = [record(1, {"role": "user", "content": "word " * 5000})]
    with pytest.raises(ContextExhausted) as caught:
        assemble(AssemblyInput("s", "SYS", history, [], MODEL, 1000))
    text = caught.value.user_text()
    assert "gpt-4o" in text and f"{caught.value.tokens:,}" in text
    assert caught.value.tokens > caught.value.budget.prompt_limit


def test_tokenizer_family_choice():
    assert encoding_name_for("openai/gpt-4o-mini") == "o200k_base"
    assert encoding_name_for("anthropic/claude-sonnet-4-5") == "cl100k_base"
    assert count_text_tokens("hello world", "gpt-4o") == 2
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:," + "A" * 100000}}]}
    assert count_message_tokens(image) < 1000
