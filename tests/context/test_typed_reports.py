"""The engine's typed records write the stored JSON unchanged and read it back (and older, smaller
records) without losing a figure."""

from __future__ import annotations

import json

from myrm_tui.context.assemble_report import AssembleReport
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.stages.cache_optimize import CacheBreak
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store, event_kinds

MODEL = "gpt-4o"


def test_reports_and_events_round_trip_through_their_stored_json(tmp_path):
    model = ModelInfo(name=MODEL, provider="openai", context_window=4_000, max_output_tokens=512, supports_tools=True)
    with Store.open(tmp_path) as store:
        session = store.create_session(MODEL).id
        for n in range(30):
            for message in (
                {"role": "user", "content": f"question {n} " + "word " * 60},
                {"role": "assistant", "content": f"answer {n} " + "word " * 60},
            ):
                store.append_message(session, message, count_message_tokens(message, MODEL))
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        turn = TurnInput("sys", [], model, 512, now=0.0)
        first = engine.assemble(turn).report
        store.append_message(session, {"role": "user", "content": "one more"}, 3)
        second = engine.assemble(TurnInput("changed sys", [], model, 512, now=0.0)).report
        stored = [e.data for e in store.events(session, event_kinds.COMPACTION)]

    for report in (first, second):
        data = report.to_dict()
        assert dict(report) == data, "the mapping view is the stored JSON"
        again = AssembleReport.from_dict(json.loads(json.dumps(data)))
        assert json.dumps(again.to_dict()) == json.dumps(data)
    assert first.event is not None and first.event.tier and first.event.saved == first["event"]["saved"]
    assert second.cache_break is not None and second.cache_break.position == 0
    done = [d for d in stored if d["state"] == "done"]
    assert done and all(json.dumps(CompactionEvent.from_dict(d).to_dict()) == json.dumps(d) for d in done)


def test_older_and_smaller_records_read_as_missing_figures():
    early = AssembleReport.from_dict({"tokens": 120, "prompt_limit": 900, "window": 1000})
    assert (early.tokens, early.budget.prompt_limit, early.budget.window) == (120, 900, 1000)
    assert early.event is None and early.breakers is None and early.stages == ()
    odd = AssembleReport.from_dict(
        {"tokens": True, "stages": [{"stage": "sync"}, "junk"], "event": {"tokens_before": 9}}
    )
    assert odd.tokens is None and [s.ms for s in odd.stages] == [None]
    assert odd.event is not None and (odd.event.tier, odd.event.saved) == ("?", None)
    assert CacheBreak.from_dict({}).reason == "unknown"
