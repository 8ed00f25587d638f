"""The safety net's event while the model answers (the `compact_while_answering` setting, off by
default: the figures for and against are in `EngineConfig`).

Why these tests: a request that crosses the emergency threshold but still fits goes out as it is,
and the event it set off runs afterwards (the agent runs it in a worker thread while the model
answers). That moves 10-35 ms of CPU out of the request (benchmark B1, docs/latency.md) and must
move nothing else: the event must run on the history the request was built from, whoever runs
it first (the agent, the next assemble, or any idle-step entry point that reads new rows), so
every later prompt is the one the event inside the request would have given; a prompt that does
not fit by the provider's own count, and an event someone asked for, still run inside.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.replay import ReplayOptions, replay
from myrm_tui.store import Store
from tests.context.engine_helpers import MODEL
from tests.context.test_event_warmup import _inp, _turn

TURNS = 40
OWED = "while the model answer"  # the request's ladder action, the event's trigger
ON = dataclasses.replace(DEFAULT_CONFIG, compact_while_answering=True)
INLINE = DEFAULT_CONFIG


def _owed(report) -> bool:
    return OWED in (report.ladder.action or "")


async def _pay(engine: ContextEngine, payer: str) -> None:
    """What reads the rows that arrived since the last request, besides the next assemble."""
    if payer == "last_row":
        engine.last_row()
    elif payer == "removed_next":
        engine.rows_removed_next(_inp(), if_emergency_now=True)
    elif payer == "warm_up":
        await engine.warm_next_event(_inp())
    elif payer == "compact_ahead":
        engine.compact_ahead(_inp())


async def _session(store: Store, payer: str, config=ON) -> tuple[list[list[dict]], list[tuple], list[int]]:
    """Every request's prompt, the events (tier, tokens before and after) and which requests went
    out owing one. `payer`: who runs an owed event: `agent` right after the request (as
    `Agent.turn` does while the model answers), else the named entry point once the next turn's
    rows are stored (or the next assemble, for `assemble`)."""
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, config=config, clock=lambda: 0.0)
    prompts, owed = [], []
    for n in range(1, TURNS + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        if n > 1:
            await _pay(engine, payer)
        out = engine.assemble(_inp())
        prompts.append(out.messages)
        if _owed(out.report):
            owed.append(n)
            assert out.tokens <= out.budget.prompt_limit, "a request owing its event must fit"
            assert engine.owes_event
        if payer == "agent":
            engine.pay_owed()
        engine.note_provider_call(0.0)  # the request went out: the provider's cache is warm
    engine.pay_owed()
    events = [
        (e.data["tier"], e.data["tokens_before"], e.data["tokens_after"])
        for e in store.events(session, kind="compaction")
        if e.data.get("state") == "done"
    ]
    return prompts, events, owed


def _grown(store: Store, turns: int) -> tuple[str, ContextEngine]:
    """A session of `turns` coding turns with the setting on, each request assembled and sent."""
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, config=ON, clock=lambda: 0.0)
    for n in range(1, turns + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        engine.assemble(_inp())
        engine.pay_owed()
        engine.note_provider_call(0.0)
    return session, engine


@pytest.mark.parametrize("payer", ["assemble", "last_row", "removed_next", "warm_up"])
async def test_whoever_runs_an_owed_event_runs_it_on_the_history_the_request_was_built_from(tmp_path, payer):
    (tmp_path / "agent").mkdir()
    (tmp_path / payer).mkdir()
    with Store.open(tmp_path / "agent") as first, Store.open(tmp_path / payer) as second:
        prompts, events, owed = await _session(first, "agent")
        other_prompts, other_events, other_owed = await _session(second, payer)
    assert len(owed) >= 3, "the session must cross the safety net several times"
    assert (other_prompts, other_events, other_owed) == (prompts, events, owed)


async def test_the_prompts_after_an_owed_event_are_those_the_event_inside_the_request_gave(tmp_path):
    (tmp_path / "while").mkdir()
    (tmp_path / "inside").mkdir()
    with Store.open(tmp_path / "while") as first, Store.open(tmp_path / "inside") as second:
        prompts, events, owed = await _session(first, "agent")
        inside_prompts, inside_events, inside_owed = await _session(second, "agent", INLINE)
    assert len(owed) >= 3 and inside_owed == []
    assert events == inside_events
    for n, (mine, theirs) in enumerate(zip(prompts, inside_prompts, strict=True), start=1):
        if n in owed:  # it went out whole; inside, the event had already cut it
            assert len(mine) > len(theirs)
        else:
            assert mine == theirs, n


async def test_a_prompt_the_provider_counts_over_the_limit_is_compacted_inside_its_request(store):
    """The fit is judged by the provider's own count (`usage_ratio`): our estimate fitting is not
    enough when the provider said the last prompt was larger than we counted."""
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, config=ON, clock=lambda: 0.0)
    inside = owed = 0
    for n in range(1, TURNS + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        # Every third turn the provider reported half as many prompt tokens again as we counted.
        engine.usage_ratio = 1.5 if n % 3 == 0 else 1.0
        ran = engine.stats.events
        out = engine.assemble(_inp())
        limit, event = out.budget.prompt_limit, out.report.event
        if _owed(out.report):
            owed += 1
            sent = _inp().fixed_tokens() + (out.report.budget.history_tokens or 0)
            assert sent * engine.usage_ratio <= limit
        elif engine.stats.events > ran and event is not None and event.tier == "emergency":
            inside += 1
            assert (event.tokens_before or 0) * engine.usage_ratio > limit, "it fitted"
        engine.pay_owed()
        engine.note_provider_call(0.0)
    assert owed >= 1 and inside >= 1, (owed, inside)


async def test_an_event_someone_asked_for_runs_inside_the_request(store):
    _, engine = _grown(store, 10)
    forced = TurnInput("You are a coding agent.", [], _inp().model, 512, now=0.0, force_tier="emergency")
    out = engine.assemble(forced)
    assert out.report.event is not None and not _owed(out.report) and not engine.owes_event


def test_through_the_agent_every_turn_after_an_owed_event_sends_what_the_event_inside_gave():
    """`myrm replay` runs each turn through `Agent.turn`: the agent pays the event while the
    (recorded) model answers, before the answer is stored."""
    lines = [{"turn": n, "messages": _turn(n)} for n in range(1, 61)]
    on = [r for r in replay(lines, ReplayOptions(window=12_000, config=ON)) if "prompt" in r]
    off = [r for r in replay(lines, ReplayOptions(window=12_000, config=INLINE)) if "prompt" in r]
    reports = lambda r: [e for e in r["events"] if isinstance(e, dict) and "ladder" in e]  # noqa: E731
    crossed = {r["turn"] for r in on if any(OWED in e["ladder"]["action"] for e in reports(r))}
    assert len(crossed) >= 3
    # The turns whose last request crossed sent more than the inside run; every other turn the same.
    last_crossed = {r["turn"] for r in on if OWED in reports(r)[-1]["ladder"]["action"]}
    for a, b in zip(on, off, strict=True):
        if a["turn"] in last_crossed:
            assert a["tokens"] > b["tokens"]
        else:
            assert a["prompt"] == b["prompt"], a["turn"]
    events = lambda rs: [  # noqa: E731
        (e["event"]["tier"], e["event"]["tokens_before"], e["event"]["tokens_after"])
        for r in rs
        for e in reports(r)
        if e.get("event")
    ]
    assert events(on) == events(off)
    owing = [e for r in on for e in reports(r) if OWED in e["ladder"]["action"]]
    assert len(owing) == sum(OWED in e["event"]["trigger"] for r in on for e in reports(r) if e.get("event"))
    limit = max(e["budget"]["prompt_limit"] for r in on for e in reports(r))
    assert all(e["tokens"] <= limit for r in on for e in reports(r))


async def test_a_request_the_repair_takes_over_the_limit_runs_the_event_inside_and_owes_nothing(tmp_path):
    """The fit is judged before the integrity repair (a dangling call gets a stand-in result);
    when the repaired prompt does not fit, the preflight runs the emergency inside the request
    and that event is the one owed: none is left to run again on the compacted history."""
    calls = [
        {"id": f"d{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": f"f{i}"})}}
        for i in range(30)
    ]
    seen = 0
    for pad in range(0, 3000, 100):
        (tmp_path / str(pad)).mkdir()
        with Store.open(tmp_path / str(pad)) as store:
            session, engine = _grown(store, 14)
            # An interrupted step: the user's long message, then a call nobody answered.
            for message in (
                {"role": "user", "content": "go on: " + " ".join(f"w{i}" for i in range(pad))},
                {"role": "assistant", "content": None, "tool_calls": calls},
            ):
                store.append_message(session, message, count_message_tokens(message, MODEL))
            out = engine.assemble(_inp())
            event = out.report.event
            if event is not None and event.trigger.startswith("preflight") and out.report.ladder.tier == "emergency":
                seen += 1
                assert not engine.owes_event, "an event is still owed after the preflight ran one"
                assert not _owed(out.report)
    assert seen >= 1, "no request was taken over the limit by its repair"


async def test_off_the_request_that_crosses_runs_its_event_inside(tmp_path):
    """The default: the event runs inside the request that crossed (the setting's cost)."""
    with Store.open(tmp_path) as store:
        prompts, events, owed = await _session(store, "agent", INLINE)
    assert owed == [] and len(events) >= 3


async def test_the_setting_overrides_the_engine_config_per_request(store):
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, config=INLINE, clock=lambda: 0.0)
    asked = dataclasses.replace(_inp(), compact_while_answering=True)
    owed = 0
    for n in range(1, TURNS + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        owed += _owed(engine.assemble(asked).report)
        engine.pay_owed()
        engine.note_provider_call(0.0)
    assert owed >= 3


def test_an_economic_event_still_runs_inside_its_request(store):
    """The economic trigger's event has its own floor and tail (`economic=True`); it is never owed."""
    from tests.context.test_compaction_interval import _slow_chat

    reports = _slow_chat(store, dataclasses.replace(ON, economic_trigger=True))
    economic = [r for r in reports if str(r["ladder"]["action"]).startswith("economic")]
    assert economic, "the slow chat never reached the economic trigger"
    assert all(r["event"] is not None and OWED not in str(r["ladder"]["action"]) for r in economic)
