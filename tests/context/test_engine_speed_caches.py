"""The engine's per-turn speed caches: they may only save time, never change a prompt byte.

Covered: the short-text token count (per tokenizer), the redacted placeholder source, and the
per-entry encode-safe form of the rendered history (kept on the entry, dropped with it).
"""

from __future__ import annotations

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.rows.integrity import repair_pairs
from myrm_tui.context.rows.views import _scrubbed_clip, masked_text
from myrm_tui.context.stages.encode_safe import encode_safe_messages
from myrm_tui.context.window import tokens
from myrm_tui.context.window.tokens import COUNT_CACHE_MAX_CHARS, count_message_tokens, count_text_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store
from tests.hypothesis_profiles import examples

# Counts differ between o200k (gpt-4o) and cl100k (everything else) for this text.
MIXED = "Привет, мир! こんにちは世界 — naïve café résumé 12345 ΑΒΓΔ"


def _fresh(encoding: str, text: str) -> int:
    return len(tiktoken.get_encoding(encoding).encode(text, disallowed_special=()))


# ---------------------------------------------------------------- token counts
def test_a_short_text_is_counted_once_and_then_remembered():
    text = '[tool output masked: read path=src/a.py → 1,234 tokens hidden · ctx_expand("msg:7")] cache-hit-1'
    first = count_text_tokens(text, "gpt-4o")
    hits = tokens._count_short.cache_info().hits
    assert count_text_tokens(text, "gpt-4o") == first == _fresh("o200k_base", text)
    assert tokens._count_short.cache_info().hits == hits + 1


def test_a_long_text_is_counted_but_not_kept():
    text = "word " * (COUNT_CACHE_MAX_CHARS // 5 + 10)
    size = tokens._count_short.cache_info().currsize
    assert count_text_tokens(text, "gpt-4o") == _fresh("o200k_base", text)
    assert tokens._count_short.cache_info().currsize == size


def test_model_families_never_share_a_remembered_count():
    assert _fresh("o200k_base", MIXED) != _fresh("cl100k_base", MIXED), "the text must tell them apart"
    for _ in range(2):  # the second round is served from the cache, in either order
        assert count_text_tokens(MIXED, "gpt-4o") == _fresh("o200k_base", MIXED)
        assert count_text_tokens(MIXED, "claude-sonnet-4") == _fresh("cl100k_base", MIXED)
        assert count_text_tokens(MIXED, "openai/gpt-4.1-mini") == _fresh("o200k_base", MIXED)


@settings(max_examples=examples(60), deadline=None)
@given(st.text(max_size=300), st.sampled_from(["gpt-4o", "claude-sonnet-4", "gemini/gemini-2.5-pro", ""]))
def test_a_remembered_count_is_the_tokenizer_count(text, model):
    encoding = tokens.encoding_name_for(model)
    expected = _fresh(encoding, text) if text else 0
    assert count_text_tokens(text, model) == expected
    assert count_text_tokens(text, model) == expected


# ---------------------------------------------------------------- placeholders
def test_a_placeholder_source_is_redacted_the_same_way_every_time():
    secret = "sk-ant-api03-" + "A" * 90
    hits = _scrubbed_clip.cache_info().hits
    texts = [masked_text("bash", "command=env", 40, "msg:3", f"KEY={secret}", "output masked") for _ in range(3)]
    assert texts[0] == texts[1] == texts[2]
    assert secret not in texts[0] and "[REDACTED:" in texts[0]
    assert _scrubbed_clip.cache_info().hits >= hits + 2


# ---------------------------------------------------------------- encode-safe per entry
def _model() -> ModelInfo:
    return ModelInfo(
        name="gpt-4o", provider="openai", context_window=64_000, max_output_tokens=512, supports_tools=True
    )


def _add(store: Store, session: str, message: dict) -> None:
    store.append_message(session, message, count_message_tokens(message, "gpt-4o"))


def _turn(store: Store, session: str, n: int, output: str) -> None:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "cat x"}'}}
    _add(store, session, {"role": "user", "content": f"step {n}"})
    _add(store, session, {"role": "assistant", "content": "", "tool_calls": [call]})
    _add(store, session, {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": output})


def test_the_wire_is_encode_safe_on_every_request_and_follows_a_compaction(tmp_path):
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput("sys", [], _model(), 512, now=0.0)
        _turn(store, session, 0, "bad byte \udc80 here\n" + "line of output\n" * 200)
        for n in range(1, 10):
            _turn(store, session, n, "".join(f"output {n} line {i}\n" for i in range(200)))
            wire = engine.assemble(inp).messages
            assert "bad byte \ufffd here" in wire[3]["content"]
            wire[3]["content"].encode("utf-8")  # sendable
        assert "\udc80" in store.messages(session)[2].message["content"], "the store keeps the original"
        # A compaction re-renders the older rows: the wire shows the new views, not a remembered scan.
        engine.compact(inp, tier="full")
        wire = engine.assemble(inp).messages
        assert engine.views, "the compaction replaced older outputs"
        assert wire[3]["content"].startswith("[superseded bash"), "the new view, not the remembered scan"
        rendered = [{"role": "system", "content": "sys"}, *[e.message for e in engine.history.entries]]
        assert wire == encode_safe_messages(rendered)[0]
        assert all("\udc80" not in str(m) for m in wire)


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(st.sampled_from(["plain text", "a \ud800 b", "ünïcödé", "x" * 300]), min_size=1, max_size=6))
def test_the_remembered_form_equals_a_fresh_scan(tmp_path_factory, outputs):
    with Store.open(tmp_path_factory.mktemp("s")) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput("sys", [], _model(), 512, now=0.0)
        for n, output in enumerate(outputs):
            _turn(store, session, n, output)
            first = engine.assemble(inp).messages
            again = engine.assemble(inp).messages
            rendered = [{"role": "system", "content": "sys"}, *[e.message for e in engine.history.entries]]
            expected, _changed = encode_safe_messages(rendered)
            assert first == again == expected


# ---------------------------------------------------------------- redaction
def test_a_remembered_redaction_returns_its_own_counts():
    from myrm_tui.redact import CREDENTIALS_ONLY, redact

    text = "mail me at someone@example.com, key sk-ant-api03-" + "B" * 90
    first = redact(text)
    first.counts["email"] = 99  # a caller may change what it got
    again = redact(text)
    assert again.text == first.text and again.counts.get("email") == 1
    assert "someone@example.com" in redact(text, CREDENTIALS_ONLY).text, "policies are remembered apart"


# ---------------------------------------------------------------- integrity repair per request
_message = st.one_of(
    st.just({"role": "user", "content": "ask"}),
    st.just({"role": "system", "content": "note"}),
    st.lists(st.sampled_from("abc"), min_size=1, max_size=2).map(
        lambda ids: {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids],
        }
    ),
    st.sampled_from("abcd").map(lambda i: {"role": "tool", "tool_call_id": i, "name": "f", "content": f"out {i}"}),
    st.just({"role": "assistant", "content": "done"}),
)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.lists(_message, min_size=1, max_size=4), min_size=1, max_size=6))
def test_repairing_after_the_clean_prefix_equals_repairing_everything(tmp_path_factory, requests):
    """Dangling calls, orphan results, reused ids, a session that starts with a reply: what each
    request sends is what repairing the whole rendered history gives."""
    with Store.open(tmp_path_factory.mktemp("s")) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput("sys", [], _model(), 512, now=0.0)
        for batch in requests:
            for message in batch:
                _add(store, session, message)
            sent = engine.assemble(inp).messages[1:]
            rendered = [e.message for e in engine.history.entries]
            expected, report = repair_pairs(rendered)
            assert sent == expected
            history, again, _delta = engine.history.valid_history("gpt-4o")
            assert history == expected and again == report
