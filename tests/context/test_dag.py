"""The summary DAG in the engine: leaves, prepared summaries, folding, recall of S handles."""

from __future__ import annotations

import json
import re

import pytest

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.recall.answers import ctx_expand, ctx_inspect
from myrm_tui.context.summary.client import CallResult
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.fake_providers.replay_summarizers import null_summarizer
from tests.context.engine_helpers import info

MODEL = "gpt-4o"


def feed(store, session, turns, start=1):
    for n in range(start, start + turns):
        cid = f"c{n}"
        for message in (
            {"role": "user", "content": f"step {n}: fix module_{n}.py please"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {
                            "name": "file_edit",
                            "arguments": json.dumps({"path": f"src/module_{n}.py", "old": "a", "new": "b"}),
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": cid,
                "name": "file_edit",
                "content": f"edited src/module_{n}.py\n" + "\n".join(f"context line {i}" for i in range(120)),
            },
            {"role": "assistant", "content": f"Fixed module_{n}. Decision: keep the API of module_{n}."},
        ):
            store.append_message(session, message, count_message_tokens(message, MODEL))


def summaries_in(prompt):
    return [
        m["content"]
        for m in prompt.messages
        if str(m.get("content", "")).startswith("<context-note") and "[summary S" in str(m.get("content"))
    ]


def test_removed_history_becomes_a_leaf_summary_that_expands_to_the_originals(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    prompt = engine.assemble(TurnInput("sys", [], info(8_000), 1024, now=0.0))
    shown = summaries_in(prompt)
    assert shown, "removal produced summary nodes"
    first = shown[0]
    handle = first.split("[summary ", 1)[1].split(" ", 1)[0]
    node = store.get_summary(session, handle)
    assert node["status"] == "active" and node["fallback"] and node["depth"] >= 0
    assert "trust=untrusted" in first and f'ctx_expand("{handle}")' in first
    assert "src/module_" in first  # the deterministic footer names the files touched
    expanded = ctx_expand(store, session, handle, query="module_1.py")
    assert "step 1: fix module_1.py" in expanded or "S" in expanded
    assert handle in ctx_inspect(store, session, handle)


def test_summaries_fold_into_a_deeper_node_when_they_pile_up(store):
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    for block in range(12):
        feed(store, session, 8, start=1 + block * 8)
        engine.assemble(TurnInput("sys", [], info(6_000), 1024, now=0.0))
    nodes = store.summaries(session)
    assert any(n["depth"] >= 1 and n["children"] for n in nodes)
    folded = [n for n in nodes if n["status"] == "folded"]
    assert folded and all(n["depth"] == 0 or n["children"] for n in nodes)
    deep = next(n for n in nodes if n["children"] and n["status"] == "active")
    assert deep["children"][0] in ctx_expand(store, session, deep["handle"])


async def test_a_summary_prepared_in_the_background_replaces_the_extractive_one(store):
    session = store.create_session(MODEL).id
    feed(store, session, 14)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    calls = []

    async def call(messages, max_output_tokens):
        """A model that read the chunk: it names the modules the chunk edited, no others (the
        auditor rejects an identifier the chunk does not have)."""
        calls.append(messages)
        asked = " ".join(str(m.get("content", "")) for m in messages)
        done = sorted({int(n) for n in re.findall(r"src/module_(\d+)\.py", asked)})
        last = done[-1]  # its step may still be open at the chunk's end (no final reply yet)
        answer = {
            "user_goal": "fix every module",
            "active_task": "none" if f"Fixed module_{last}." in asked else f"step {last}: fix module_{last}.py please",
            "completed_actions": [f"edited src/module_{i}.py (module_{i}.py)" for i in done],
            "files_modified": [{"path": f"src/module_{done[0]}.py", "change": "a → b"}],
            "decisions": [f"keep the API of module_{done[0]}"],
            "next_steps": ["continue with the next module"],
        }
        return CallResult(json.dumps(answer), 1000, 100, 0.0)

    # 5k: an emergency now would remove the oldest turns (at 10k masking alone would do, and
    # nothing is prepared for a removal that is not coming).
    turn = TurnInput("sys", [], info(5_000), 1024, now=0.0)
    record = await engine.maintain(turn, model="openai/gpt-4o-mini", window=128_000, call=call)
    assert calls and record is not None and record.get("handle"), record
    prepared = store.get_summary(session, record["handle"])
    assert prepared["status"] == "prepared" and not prepared["fallback"]
    feed(store, session, 30, start=15)
    prompt = engine.assemble(TurnInput("sys", [], info(9_000), 1024, now=0.0))
    assert prompt.report["event"]["ops"].get("remove")
    # Used (and possibly already folded into a deeper node, which carries its goal on).
    assert store.get_summary(session, record["handle"])["status"] in ("active", "folded")
    assert any("fix every module" in text for text in summaries_in(prompt))


async def test_a_chunk_the_model_failed_on_is_settled_once_not_retried_after_every_turn(store):
    """A rejected answer costs the model calls once per chunk: the chunk keeps the extractive
    summary, and the next idle step moves on instead of paying for the same chunk again."""
    session = store.create_session(MODEL).id
    feed(store, session, 14)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    calls = []

    async def call(messages, max_output_tokens):
        calls.append(messages)
        return CallResult("not a summary at all", 1000, 5, 0.0)

    turn = TurnInput("sys", [], info(5_000), 1024, now=0.0)  # a removal is ahead (see above)
    first = await engine.maintain(turn, model="openai/gpt-4o-mini", window=128_000, call=call)
    assert first is not None and first["fallback"] and first["attempts"] > 0 and first.get("handle")
    asked = len(calls)
    node = store.get_summary(session, first["handle"])
    assert node["status"] == "prepared" and node["fallback"]
    second = await engine.maintain(turn, model="openai/gpt-4o-mini", window=128_000, call=call)
    assert second is None or second["first_id"] > first["last_id"], "the settled chunk is not asked again"
    assert second is not None or len(calls) == asked


async def test_maintain_pays_only_for_what_the_next_removal_takes(store):
    """Past the full threshold, but masking alone would make room: no call. Once an emergency
    would remove turns, the oldest of them are summarized, and that emergency uses it."""
    session = store.create_session(MODEL).id
    feed(store, session, 14)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    calls = []

    async def call(messages, max_output_tokens):
        calls.append(messages)
        return CallResult("not a summary at all", 1000, 5, 0.0)

    roomy = TurnInput("sys", [], info(10_000), 1024, now=0.0)
    budget = engine.preparation.ready(roomy)
    assert engine.preparation.prompt_tokens(roomy) >= budget.prompt_limit * engine.config.full_ratio
    assert await engine.maintain(roomy, model="openai/gpt-4o-mini", window=128_000, call=call) is None
    assert not calls and not engine.rows_removed_next(roomy, if_emergency_now=True)
    tight = TurnInput("sys", [], info(5_000), 1024, now=0.0)
    ahead = engine.rows_removed_next(tight, if_emergency_now=True)
    record = await engine.maintain(tight, model="openai/gpt-4o-mini", window=128_000, call=call)
    assert record is not None and calls
    assert (
        engine.history.index_of_id(record["first_id"]) == ahead[0]
        and engine.history.index_of_id(record["last_id"]) <= ahead[-1]
    )
    prompt = engine.assemble(TurnInput("sys", [], info(5_000), 1024, now=0.0, force_tier="emergency"))
    assert prompt.report["event"]["ops"].get("remove")
    assert store.get_summary(session, record["handle"])["status"] in ("active", "folded")


async def test_maintain_without_a_usable_model_does_nothing(store):
    session = store.create_session(MODEL).id
    feed(store, session, 14)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    assert await engine.maintain(TurnInput("sys", [], info(16_000), 1024, now=0.0), model=None, window=8_192) is None
    assert store.summaries(session) == []


def test_session_notes_survive_removal_and_folding(store):
    session = store.create_session(MODEL).id
    note = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "n1",
                "type": "function",
                "function": {
                    "name": "session_note",
                    "arguments": json.dumps({"text": "user prefers tabs; deploy target is staging-3"}),
                },
            }
        ],
    }
    store.append_message(session, {"role": "user", "content": "start"}, 2)
    store.append_message(session, note, count_message_tokens(note, MODEL))
    store.append_message(session, {"role": "tool", "tool_call_id": "n1", "name": "session_note", "content": "noted"}, 3)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    for block in range(10):
        feed(store, session, 8, start=1 + block * 8)
        prompt = engine.assemble(TurnInput("sys", [], info(6_000), 1024, now=0.0))
        blob = json.dumps(prompt.messages)
        assert "deploy target is staging-3" in blob, f"note lost after block {block}"
    assert any(n["depth"] >= 1 for n in store.summaries(session))


@pytest.mark.slow
def test_what_the_user_said_stays_verbatim_in_the_summary_after_removal(store):
    # One request, then a long agentic run of tool steps (no other user message): when the
    # fact's turn leaves the prompt, the user's sentence is quoted word for word.
    session = store.create_session(MODEL).id
    feed(store, session, 2)
    fact = {"role": "user", "content": "For the record: NEEDLE-77aa88bb99 port=4821 (from the runbook)."}
    store.append_message(session, fact, count_message_tokens(fact, MODEL))
    store.append_message(session, {"role": "assistant", "content": "Noted."}, 4)
    go = {"role": "user", "content": "Now run every build step."}  # the latest user message stays
    store.append_message(session, go, count_message_tokens(go, MODEL))
    # The constant-line summarizer: only the quotes can carry the user's words.
    engine = ContextEngine(store, session, clock=lambda: 0.0, summarizer=null_summarizer)
    for n in range(3, 400):
        cid = f"s{n}"
        for message in (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": f"make step{n}"})},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": cid,
                "name": "bash",
                "content": "\n".join(f"step {n} output line {i}" for i in range(80)),
            },
        ):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        prompt = engine.assemble(TurnInput("sys", [], info(16_000), 1024, now=0.0))
        assert prompt.tokens <= 16_000 - 1024
        if fact not in prompt.messages:
            break
    else:
        raise AssertionError("the fact's turn was never removed")
    holders = [s for s in summaries_in(prompt) if fact["content"] in s]
    assert holders, "the user's sentence is quoted word for word in a summary node"


def test_a_summarizer_that_returns_more_than_it_got_is_refused_and_the_prompt_stays_in_budget(store):
    from myrm_tui.context.observations.intent import compaction_text

    session = store.create_session(MODEL).id
    feed(store, session, 60)

    def echo_twice(messages):
        text = "\n".join(compaction_text(m) for m in messages)
        return text + "\n" + text

    engine = ContextEngine(store, session, clock=lambda: 0.0, summarizer=echo_twice)
    prompt = engine.assemble(TurnInput("sys", [], info(16_000), 1024, now=0.0))
    assert prompt.tokens <= 16_000 - 1024
    nodes = [store.get_summary(session, s.split("[summary ", 1)[1].split(" ", 1)[0]) for s in summaries_in(prompt)]
    assert nodes and all(n["fallback"] for n in nodes), "oversized summaries fell back to the extractive one"
    assert all(n["tokens"] < 16_000 * 0.2 for n in nodes)


def test_a_long_session_of_dense_text_stays_in_a_small_window(store):
    # CJK text costs about one token per character: quotes capped by characters alone once
    # filled the summary area past the budget (ContextExhausted at turn ~100 of 200 at 16k).
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    for n in range(200):
        for message in (
            {"role": "user", "content": f"第{n}步：请把缓存的过期时间改成三十分钟，并且检查所有调用者。" * 6},
            {"role": "assistant", "content": f"完成第{n}步。决定：保留接口不变，因为迁移脚本依赖它。" * 6},
        ):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        prompt = engine.assemble(TurnInput("sys", [], info(16_000), 1024, now=float(n)))
        assert prompt.tokens <= 16_000 - 1024
    summary_tokens = sum(count_message_tokens({"role": "user", "content": s}, MODEL) for s in summaries_in(prompt))
    assert summary_tokens <= 0.4 * (16_000 - 1024), summary_tokens
