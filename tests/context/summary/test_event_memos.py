"""The memos a compaction event leans on (`filters/notable.py` scans, `summary/quotes.py`
finished quote texts, `observations/fact_context.py` names, call keys and line sets) may make
the event cheaper, never different: an event whose memos are warm from an earlier identical
session writes what an event with empty memos writes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.filters import notable
from myrm_tui.context.observations import fact_context
from myrm_tui.context.summary import quotes
from myrm_tui.context.summary.quotes import MAX_QUOTE_CHARS, _clip
from myrm_tui.context.summary.schema import neutralize
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.redact import redact
from myrm_tui.store import Store
from tests.hypothesis_profiles import examples


@pytest.fixture(autouse=True)
def empty_memo():
    notable.clear_memo()
    quotes.finished_text.cache_clear()
    fact_context.clear_memos()
    yield
    notable.clear_memo()
    quotes.finished_text.cache_clear()
    fact_context.clear_memos()


def _model(window: int = 8_000) -> ModelInfo:
    return ModelInfo(
        name="gpt-4o", provider="openai", context_window=window, max_output_tokens=512, supports_tools=True
    )


def _add(store: Store, session: str, message: dict[str, Any]) -> None:
    store.append_message(session, message, count_message_tokens(message, "gpt-4o"))


def _turn(store: Store, session: str, n: int, output: str) -> None:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "log {n}"}}'}}
    _add(store, session, {"role": "user", "content": f"step {n}: look at the log"})
    _add(store, session, {"role": "assistant", "content": "", "tool_calls": [call]})
    _add(store, session, {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": output})
    _add(store, session, {"role": "assistant", "content": f"Read log {n}."})


@settings(max_examples=examples(80), deadline=None)
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


@settings(max_examples=examples(12), deadline=None)
@given(st.lists(st.lists(OUTPUT_LINES, min_size=1, max_size=60).map("\n".join), min_size=3, max_size=8))
def test_an_event_on_warm_memos_writes_what_an_event_on_empty_memos_writes(tmp_path_factory, outputs):
    notable.clear_memo()
    quotes.finished_text.cache_clear()
    fact_context.clear_memos()
    with Store.open(tmp_path_factory.mktemp("cold")) as store:
        cold = _run(store, _session(store, outputs), len(outputs))
    with Store.open(tmp_path_factory.mktemp("warm")) as store:
        warm = _run(store, _session(store, outputs), len(outputs))
    assert warm == cold
