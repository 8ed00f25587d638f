"""Scans done ahead of a compaction event (`context/summary_warmup.py`): ordinary turns scan the
outputs, the event's mask stubs and extractive summaries then hit the memo, and nothing the
event writes may differ from an event that scanned everything itself."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.filters import notable
from myrm_tui.context.summary import quotes
from myrm_tui.context.summary.quotes import MAX_QUOTE_CHARS, QUOTES_HEADER, _clip
from myrm_tui.context.summary.schema import neutralize
from myrm_tui.context.summary_area import SummaryArea
from myrm_tui.context.summary_warmup import ScanWarmup
from myrm_tui.context.tokens import count_message_tokens
from myrm_tui.llm.model_info import ModelInfo
from myrm_tui.redact import redact
from myrm_tui.store import Store
from myrm_tui.store.records import MessageRecord


@pytest.fixture(autouse=True)
def empty_memo():
    notable._memo.clear()
    quotes.finished_text.cache_clear()
    yield
    notable._memo.clear()
    quotes.finished_text.cache_clear()


def _model(window: int = 8_000) -> ModelInfo:
    return ModelInfo(
        name="gpt-4o", provider="openai", context_window=window, max_output_tokens=512, supports_tools=True
    )


def _add(store: Store, session: str, message: dict[str, Any]) -> None:
    store.append_message(session, message, count_message_tokens(message, "gpt-4o"))


def request_log(n: int, lines: int = 60) -> str:
    out = [f"INFO GET /items/{i} status=200 duration_ms={i % 97}" for i in range(lines)]
    out.insert(lines // 2, f"WARN override applied queue_shard=eu-{n}")
    return "\n".join(out)


def _turn(store: Store, session: str, n: int, output: str) -> None:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "log {n}"}}'}}
    _add(store, session, {"role": "user", "content": f"step {n}: look at the log"})
    _add(store, session, {"role": "assistant", "content": "", "tool_calls": [call]})
    _add(store, session, {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": output})
    _add(store, session, {"role": "assistant", "content": f"Read log {n}."})


def _row(i: int, role: str, content: str = "") -> MessageRecord:
    message: dict[str, Any] = {"role": role, "content": content or f"out {i}\n" * 3}
    return MessageRecord(id=i + 1, session_id="s", seq=i, role=role, message=message, tokens=5, created_at=0.0)


def test_each_row_is_done_once_in_order_a_few_per_turn(monkeypatch):
    done: list[str] = []
    monkeypatch.setattr("myrm_tui.context.summary_warmup.notable_lines", lambda text, limit: done.append(text))
    monkeypatch.setattr(
        "myrm_tui.context.summary_warmup.warm_quotes", lambda messages, ids: done.append(messages[0]["content"])
    )
    roles = ["user", "assistant", "tool", "system"] * 3  # system rows are skipped, not counted
    rows = [_row(i, role, f"{role} {i}") for i, role in enumerate(roles)]
    warmup = ScanWarmup(per_turn=4)
    assert warmup.step(rows) == 4
    assert done == ["user 0", "assistant 1", "tool 2", "user 4"]
    assert warmup.step(rows) == 4 and warmup.step(rows) == 1 and warmup.step(rows) == 0, "each row once"
    assert len(done) == 9 and "system 3" not in done
    rows.append(_row(12, "tool", "tool 12"))
    assert warmup.step(rows) == 1 and done[-1] == "tool 12"
    assert warmup.step(rows[:3]) == 3, "a history reloaded shorter is walked again"


def _ordinary_turns(store, session: str) -> tuple[ContextEngine, TurnInput]:
    """16 turns with no event: outputs small for a 32k window, so the arrival filter leaves them
    whole (and unscanned), and only the warmup can have scanned them before the event."""
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    inp = TurnInput("sys", [], _model(32_000), 512, now=0.0)
    for n in range(16):
        _turn(store, session, n, request_log(n, 30))
        engine.assemble(inp)
    assert engine.stats.events == 0, "ordinary turns only (else the event scanned them)"
    return engine, inp


def test_an_event_after_ordinary_turns_scans_no_output_again(tmp_path, monkeypatch):
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine, inp = _ordinary_turns(store, session)
        output_lines = {line for n in range(16) for line in request_log(n, 30).split("\n")}
        rescanned: list[str] = []
        keys = notable._keys
        monkeypatch.setattr(
            notable, "_keys", lambda line: (line in output_lines and rescanned.append(line)) or keys(line)
        )
        engine.compact(inp, tier="full")
        assert engine.stats.events == 1 and engine.views, "the event masked or removed older outputs"
        assert not rescanned


def test_an_event_after_ordinary_turns_redacts_no_quoted_message_again(tmp_path, monkeypatch):
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine, inp = _ordinary_turns(store, session)
        redacted: list[str] = []
        real = quotes.redact
        monkeypatch.setattr(quotes, "redact", lambda text, *a: redacted.append(text) or real(text, *a))
        engine.summarize_now(inp)
        assert engine.history.synthetic and QUOTES_HEADER in str(engine.history.synthetic[0].message)
        assert not redacted, "every quote was finished on an ordinary turn"


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab =:/.\n>AKIA0123456789sk-"), max_size=700))
def test_a_remembered_quote_text_is_the_fresh_one(raw):
    fresh = neutralize(_clip(redact(raw).text, MAX_QUOTE_CHARS))
    assert quotes.finished_text(raw) == fresh == quotes.finished_text(raw)


def _session(store: Store, outputs: list[str]) -> str:
    session = store.create_session("gpt-4o").id
    for n, output in enumerate(outputs):
        _turn(store, session, n, output)
    return session


def _run(store: Store, session: str, turns: int) -> list[Any]:
    """Assemble once per stored turn (the ordinary turns), then a compaction; what it sent."""
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    inp = TurnInput("sys", [], _model(), 512, now=0.0)
    prompts = [engine.assemble(inp).messages for _ in range(turns)]
    engine.compact(inp, tier="full")
    prompts.append(engine.assemble(inp).messages)
    return [*prompts, [(v.kind, v.message) for v in engine.history.synthetic]]


OUTPUT_LINES = st.sampled_from(
    ["INFO a=1 b=2", "INFO a=3 b=4", "WARN override port=4821", '"id": 7,', "plain line", "", "status=200"]
)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.lists(OUTPUT_LINES, min_size=1, max_size=60).map("\n".join), min_size=3, max_size=8))
def test_an_event_after_the_warmup_writes_what_a_cold_event_writes(tmp_path_factory, outputs):
    with Store.open(tmp_path_factory.mktemp("warm")) as store:
        notable._memo.clear()
        quotes.finished_text.cache_clear()
        warm = _run(store, _session(store, outputs), len(outputs))
    with Store.open(tmp_path_factory.mktemp("cold")) as store, pytest.MonkeyPatch.context() as patch:
        notable._memo.clear()
        quotes.finished_text.cache_clear()
        patch.setattr(SummaryArea, "warm_up", lambda self: None)
        cold = _run(store, _session(store, outputs), len(outputs))
    assert warm == cold
