"""Folds written by a model, and folds without one that keep what is still open.

The model is an injected summarizer call that answers like a careful model: it reads the
request's transcript and keeps its identifiers (so the auditor accepts it), and records every
request so the tests can read the prompts it was given.
"""

from __future__ import annotations

import json

from myrm_tui.context.compaction.dag import _merged_content
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.context.summary.auditor import extract_entities
from myrm_tui.context.summary.client import CallResult, SummaryModel
from myrm_tui.context.summary.condense import open_items
from myrm_tui.context.summary.schema import StructuredSummary
from myrm_tui.context.window.tokens import count_message_tokens
from tests.context.engine_helpers import info

MODEL = "gpt-4o"
LEAF_OPENING = "You compress part of"
FOLD_NARRATIVE = "Model-written timeline: modules fixed one after another."


def feed(store, session, turns):
    for n in range(1, turns + 1):
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
                "content": f"edited src/module_{n}.py\n" + "\n".join(f"context line {i}" for i in range(40)),
            },
            {"role": "assistant", "content": f"Fixed module_{n}. Decision: keep the API of module_{n}."},
        ):
            store.append_message(session, message, count_message_tokens(message, MODEL))


class CarefulModel:
    """Answers every summary request with the request's identifiers in the right fields."""

    def __init__(self, fold_ok: bool = True):
        self.requests: list[list[dict]] = []
        self.fold_ok = fold_ok

    async def __call__(self, messages, max_output_tokens):
        self.requests.append(messages)
        leaf = messages[0]["content"].startswith(LEAF_OPENING)
        if not leaf and not self.fold_ok:
            return CallResult("I would rather not.", 100, 5)
        names = [e.value for e in extract_entities(messages[1]["content"])][:30]
        answer = {
            "user_goal": "fix every module",
            "active_task": "continue with the next module",
            "completed_actions": names[:15],
            "key_findings": names[15:23],
            "artifacts": names[23:30],
            "narrative": "" if leaf else FOLD_NARRATIVE,
        }
        return CallResult(json.dumps(answer), 1000, 200)

    def folds(self) -> list[list[dict]]:
        return [r for r in self.requests if not r[0]["content"].startswith(LEAF_OPENING)]


async def compact(engine, model, *, window=16_000, summarizer_window=6_000):
    turn = TurnInput("sys", [], info(window), 1024, now=0.0)
    chain = [SummaryModel("openai/careful", summarizer_window, call=model)]
    records = await engine.prepare_for_compact(turn, models=chain, breaker=engine.summary_breaker)
    return records, engine.summarize_now(turn)


async def test_the_compact_command_folds_with_the_model_using_the_prompt_of_each_depth(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    model = CarefulModel()
    records, event = await compact(engine, model)

    folds = [r for r in records if r["kind"] == "fold"]
    assert folds and all(not r["fallback"] for r in folds), records
    assert len(model.folds()) == len(folds), "each fold asked the model once"
    nodes = {n["handle"]: n for n in store.summaries(session)}
    for record in folds:
        node = nodes[record["handle"]]
        assert node["status"] in ("active", "folded") and node["model"] == "openai/careful"
        assert node["children"] == record["children"] and node["depth"] == record["depth"]
        assert all(nodes[c]["status"] == "folded" for c in node["children"])
    request = model.folds()[0]
    depth = folds[0]["depth"]
    style = {1: "chronological timeline", 2: "one trajectory", 3: "durable memory"}[min(depth, 3)]
    assert style in request[0]["content"]
    assert "drop each one a later summary shows resolved" in request[0]["content"]
    body = request[1]["content"]
    assert "Summary S" in body and "trust=untrusted" not in body and "Said (verbatim" not in body, (
        "the children's fields are sent, not their headers and quotes"
    )
    assert event is not None and event["summaries"]["fallback"] == 0
    top = [n for n in nodes.values() if n["status"] == "active"]
    prompt = engine.assemble(TurnInput("sys", [], info(16_000), 1024, now=0.0))
    shown = "\n".join(str(m["content"]) for m in prompt.messages)
    assert any(n["children"] for n in top) and FOLD_NARRATIVE in shown
    deep = next(n for n in top if n["children"])
    assert deep["children"][0] in ctx_expand(store, session, deep["handle"])


async def test_a_fold_the_model_cannot_write_is_merged_at_the_event_and_not_asked_again(store):
    session = store.create_session(MODEL).id
    feed(store, session, 40)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    model = CarefulModel(fold_ok=False)
    turn = TurnInput("sys", [], info(16_000), 1024, now=0.0)
    chain = [SummaryModel("openai/careful", 6_000, call=model)]
    records = await engine.prepare_for_compact(turn, models=chain)
    failed = [r for r in records if r["kind"] == "fold"]
    assert len(failed) == 1 and failed[0]["fallback"] and "handle" not in failed[0]
    asked = len(model.requests)
    again = await engine.prepare_for_compact(turn, models=chain)  # e.g. the user pressed compact twice
    assert again == [] and len(model.requests) == asked, "prepared leaves and a failed fold cost nothing twice"
    event = engine.summarize_now(turn)
    nodes = store.summaries(session)
    assert event is not None and any(
        n["children"] == failed[0]["children"] and n["status"] == "active" and n["model"] == "" for n in nodes
    ), "the event folded them by merging"


def test_a_fold_without_a_model_keeps_open_blockers_and_drops_what_later_children_settled():
    older = StructuredSummary(
        blocked_items=["tests fail in test_auth.py: FOO_TOKEN is missing"],
        next_steps=["update the install section of README.md", "rerun the failing tests"],
    )
    middle = StructuredSummary(
        completed_actions=["set FOO_TOKEN; test_auth.py passes now"],
        errors_and_fixes=["flaky deploy_check.sh -> unresolved"],
        blocked_items=["waiting for a review of deploy_check.sh"],
    )
    newer = StructuredSummary(completed_actions=["rerun the failing tests: all green"], next_steps=["tag the release"])
    blocked, steps = open_items([older, middle, newer])
    assert blocked == ["waiting for a review of deploy_check.sh"]
    assert steps == ["update the install section of README.md", "tag the release"]
    merged = _merged_content([older, middle, newer], None)
    assert merged.blocked_items == blocked and merged.next_steps == steps
    # An "-> unresolved" fix settles nothing.
    assert open_items(
        [
            StructuredSummary(blocked_items=["deploy_check.sh is flaky"]),
            StructuredSummary(errors_and_fixes=["deploy_check.sh flaky -> unresolved"]),
        ]
    )[0] == ["deploy_check.sh is flaky"]
