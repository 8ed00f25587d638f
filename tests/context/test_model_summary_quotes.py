"""Beside model-written summaries: no quote block, and the economic target holds across events.

Why: a body a model wrote (accepted by the auditor) already carries the user's stated values and
the decisions word for word; a quote block of `quote_ratio` beside it repeated them and kept the
summary area over its fold pressure line (more model folds per event). And whether the session's
summaries are model-written must not flip with leaves no model was asked about (a chunk too small
for a call, extracted at the event) or with model leaves folded into deeper nodes: that flip made
the economic target jump back to the emergency's 35 % after most events of a chat.
"""

from __future__ import annotations

from dataclasses import replace

from myrm_tui.context.compaction.dag import SummaryDag
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.summary.quotes import QUOTES_HEADER
from myrm_tui.context.summary.schema import StructuredSummary
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens
from tests.context.engine_helpers import info
from tests.context.test_model_folds import MODEL, CarefulModel, compact, feed


def _count(message: dict) -> int:
    return count_message_tokens(message, MODEL)


def _count_text(text: str) -> int:
    return count_text_tokens(text, MODEL)


def test_leaves_no_model_was_asked_about_and_folded_model_leaves_keep_the_session_model_written(store):
    session = store.create_session(MODEL).id
    feed(store, session, 6)
    rows = store.messages(session)
    dag = SummaryDag(store, session)
    assert not dag.model_written(), "nothing summarized yet"
    written = dag.prepare(rows[:8], StructuredSummary(user_goal="fix every module"), _count, model="openai/careful")
    assert dag.model_written()
    # The event's extractive leaf for the few rows after it (no model was asked): newer, model "".
    dag.leaf(rows[8:12], rows[12].id, 1, _count, _count_text)
    assert dag.model_written(), "a leaf no model was asked about says nothing either way"
    store.set_summary_status(session, written["handle"], "folded")
    assert dag.model_written(), "a model's leaf folded into a deeper node still stands for its rows"
    # A model was asked and failed: the extractive body stands in, and that is what counts now.
    dag.prepare(rows[12:16], StructuredSummary(user_goal="fix"), _count, model="extractive")
    assert not dag.model_written()


def test_a_model_leaf_folded_into_a_deeper_node_still_counts(store):
    session = store.create_session(MODEL).id
    feed(store, session, 4)
    rows = store.messages(session)
    dag = SummaryDag(store, session)
    written = dag.prepare(rows[:8], StructuredSummary(user_goal="fix every module"), _count, model="openai/careful")
    store.set_summary_status(session, written["handle"], "folded")
    assert dag.model_written()


def test_extractive_leaves_alone_never_count_as_model_written(store):
    session = store.create_session(MODEL).id
    feed(store, session, 4)
    rows = store.messages(session)
    dag = SummaryDag(store, session)
    dag.leaf(rows[:8], rows[8].id, 1, _count, _count_text)
    assert not dag.model_written()


def _summary_texts(store, session) -> list[str]:
    return [n["rendered"] for n in store.summaries(session) if n["status"] == "active"]


async def test_model_written_nodes_carry_no_quote_block_by_default(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    _, event = await compact(engine, CarefulModel())
    assert event is not None
    texts = _summary_texts(store, session)
    assert texts and all(QUOTES_HEADER not in t for t in texts), "model bodies already say what was said"


async def test_the_quote_share_beside_model_bodies_is_a_setting(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    config = replace(DEFAULT_CONFIG, model_quote_ratio=DEFAULT_CONFIG.quote_ratio)
    engine = ContextEngine(store, session, config=config, clock=lambda: 0.0)
    _, event = await compact(engine, CarefulModel())
    assert event is not None
    assert any(QUOTES_HEADER in t for t in _summary_texts(store, session))


def test_extractive_summaries_keep_their_quotes(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    event = engine.summarize_now(TurnInput("sys", [], info(16_000), 1024, now=0.0))
    assert event is not None
    texts = _summary_texts(store, session)
    assert texts and all(QUOTES_HEADER in t for t in texts), "no model: the quotes carry what was said"


def _prepared_leaves(store, session, dag, sizes: list[int]) -> None:
    """Prepared model leaves over consecutive rows after the anchor, bodies of about `size` words."""
    rows = store.messages(session)
    for i, size in enumerate(sizes):
        body = StructuredSummary(completed_actions=[f"step {i}: " + " ".join(f"word{j}" for j in range(size))])
        dag.prepare(rows[1 + 4 * i : 5 + 4 * i], body, _count, model="openai/careful")


def test_background_folds_wait_while_the_summary_area_is_over_its_pressure_line(store):
    session = store.create_session(MODEL).id
    feed(store, session, 8)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    prep = engine.preparation
    budget = prep.ready(TurnInput("sys", [], info(16_000), 1024, now=0.0))
    # Two leaves over the pressure line (8 % of B): the event would fold the pair.
    _prepared_leaves(store, session, prep.dag, [400, 400])
    assert prep._next_fold(budget) is not None, "the compact command still has the model fold them"
    assert prep._next_fold(budget, under_pressure=False) is None, "in the background the event merges them"


def test_background_folds_of_a_full_fanout_under_the_pressure_line_still_go_to_the_model(store):
    session = store.create_session(MODEL).id
    feed(store, session, 8)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    prep = engine.preparation
    budget = prep.ready(TurnInput("sys", [], info(16_000), 1024, now=0.0))
    _prepared_leaves(store, session, prep.dag, [5, 5, 5, 5])
    fold = prep._next_fold(budget, under_pressure=False)
    assert fold is not None and len(fold[0]) == 4 and fold[1] == 1


async def test_maintain_in_a_slow_model_summarized_chat_asks_for_folds_only_below_the_pressure_line(store, monkeypatch):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    prep = engine.preparation
    asked: list[dict] = []

    def next_fold(budget, **kwargs):
        asked.append(kwargs)
        return None

    monkeypatch.setattr(prep, "_removal_chunks", lambda removed, chain: [])  # no leaf to write
    monkeypatch.setattr(prep, "_next_fold", next_fold)
    turn = TurnInput("sys", [], info(8_000), 1024, now=0.0)  # 40 turns: over the full threshold
    for slow, written in ((True, True), (False, True), (True, False)):
        monkeypatch.setattr(engine.compactor.interval, "slow", lambda slow=slow: slow)
        monkeypatch.setattr(prep.dag, "model_written", lambda written=written: written)
        await engine.maintain(turn, model="openai/careful", window=6_000, call=CarefulModel())
    # A slow chat with model summaries waits below the line; tool-heavy sessions, and sessions
    # whose model fails, keep their folds under pressure.
    assert asked == [{"under_pressure": False}, {"under_pressure": True}, {"under_pressure": True}]
