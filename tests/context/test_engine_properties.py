"""Property tests: the engine's invariants (docs/context-engine.md, "Invariants") over generated sessions.

Sessions are arbitrary interleavings of user turns, assistants with parallel tool calls,
interrupted calls (no result), orphan results, reused call ids, images, huge messages, run
against random windows through a real store. After every turn the assembled prompt must be
provider-valid, within budget, lossless (every stored message reachable by a handle), keep
its anchors, and be byte-identical when a fresh engine assembles the same store state.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.prompt import ContextExhausted
from myrm_tui.context.rows.ingest import ingest_message
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store
from tests.hypothesis_profiles import examples

MODEL = "gpt-4o"
SYSTEM = "You are a test agent."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "run",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()
WORDS = ["alpha", "beta", "gamma", "delta", "pytest", "error", "src/app.py", "config.toml", "NEEDLE"]


@st.composite
def output_text(draw):
    size = draw(st.sampled_from([0, 1, 3, 20, 200, 2000]))
    lines = [f"{draw(st.sampled_from(WORDS))} line {i} " + "x" * draw(st.integers(0, 40)) for i in range(size)]
    return "\n".join(lines)


@st.composite
def turn(draw, index: int):
    """The messages one turn adds."""
    messages: list[dict[str, Any]] = []
    text = f"turn {index}: " + " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
    if draw(st.integers(0, 9)) == 0:
        text += " " + "huge " * draw(st.sampled_from([2_000, 12_000]))
    if draw(st.integers(0, 7)) == 0:
        messages.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": PNG}}],
            }
        )
    else:
        messages.append({"role": "user", "content": text})
    for step in range(draw(st.integers(0, 3))):
        n_calls = draw(st.integers(1, 3))
        ids = [draw(st.sampled_from([f"c{index}_{step}_{k}", "dup"])) for k in range(n_calls)]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": f"cmd {k % 2}"})},
                    }
                    for k, cid in enumerate(ids)
                ],
            }
        )
        for cid in ids:
            fate = draw(st.integers(0, 11))
            if fate == 0:
                continue  # interrupted: no result
            messages.append({"role": "tool", "tool_call_id": cid, "name": "bash", "content": draw(output_text())})
            if fate == 1:
                messages.append({"role": "tool", "tool_call_id": "orphan-" + cid, "content": "stray"})
    if draw(st.booleans()):
        messages.append({"role": "assistant", "content": f"done {index} " + draw(st.sampled_from(WORDS))})
    return messages


@st.composite
def sessions(draw):
    n = draw(st.integers(2, 14))
    return [draw(turn(i)) for i in range(n)], draw(st.sampled_from([16_000, 24_000, 64_000]))


def model_info(window: int) -> ModelInfo:
    return ModelInfo(
        name=MODEL,
        provider="openai",
        context_window=window,
        max_output_tokens=2048,
        supports_tools=True,
        supports_vision=True,
        supports_prompt_caching=True,
    )


def assert_provider_valid(messages):
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    i = 1
    while i < len(messages):
        message = messages[i]
        assert message["role"] != "tool", f"tool result at {i} does not follow its call"
        i += 1
        if message["role"] == "assistant" and message.get("tool_calls"):
            expected = [c["id"] for c in message["tool_calls"]]
            got = []
            while i < len(messages) and messages[i]["role"] == "tool":
                got.append(messages[i]["tool_call_id"])
                i += 1
            assert got == expected


def text_of(message) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


def reachable_ids(prompt, store=None, session_id=None) -> set[int]:
    """Message ids the prompt names: handles, ranges covered by omission markers, and the
    ranges of the summary nodes (S12) it shows, which ctx_expand walks back to."""
    blob = json.dumps(prompt, ensure_ascii=False)
    ids = {int(m) for m in re.findall(r"msg:(\d+)", blob)}
    for first, last in re.findall(r"msg:(\d+) … msg:(\d+)", blob):
        ids.update(range(int(first), int(last) + 1))
    for handle in re.findall(r"\[summary (S\d+)", blob):
        node = store.get_summary(session_id, handle)
        assert node is not None and node["status"] == "active", f"{handle} is shown but not an active node"
        ids.update(range(node["first_id"], node["last_id"] + 1))
    return ids


def run_session(turns, window, check):
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp)) as store:
        session = store.create_session(MODEL).id
        clock = {"now": 0.0}
        engine = ContextEngine(store, session, clock=lambda: clock["now"])
        info = model_info(window)
        for index, messages in enumerate(turns):
            clock["now"] = index * 60.0
            for message in messages:
                row = ingest_message(message, store.vault, cap_chars=100_000)
                store.append_message(session, row, count_message_tokens(row, MODEL))
            try:
                prompt = engine.assemble(TurnInput(SYSTEM, TOOLS, info, 2048, now=clock["now"]))
            except ContextExhausted:
                # Allowed only when the anchors alone cannot fit.
                assert len(messages[0].get("content") or "") > 10_000 or window < 20_000
                return
            engine.note_provider_call(clock["now"])
            check(store, session, engine, prompt, info, clock["now"])


@pytest.mark.slow
@given(sessions())
@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
def test_every_prompt_is_valid_within_budget_and_lossless(session):
    turns, window = session

    def check(store, session_id, engine, prompt, info, now):
        assert_provider_valid(prompt.messages)
        assert prompt.tokens + prompt.budget.output_reserve <= window
        # Our count is the count of what is sent (images at their flat cost).
        recount = sum(count_message_tokens(m, MODEL) for m in prompt.messages)
        assert (
            abs(recount - prompt.tokens)
            <= max(64, prompt.tokens // 50) + sum(1 for _ in TOOLS) * 0 + engine_fixed_tools_tokens()
        )
        rows = store.messages(session_id)
        wire = json.dumps(prompt.messages)
        texts = "\n".join(text_of(m) for m in prompt.messages)
        named = reachable_ids(prompt.messages, store, session_id)

        def shown(row) -> bool:
            content = text_of(row.message)
            return row.message in prompt.messages or bool(content and json.dumps(content)[1:-1] in wire)

        call_ids = {c["id"] for r in rows for c in r.message.get("tool_calls") or ()}
        for row in rows:
            if row.role == "tool" and row.tool_call_id not in call_ids:
                continue  # an orphan result (no call): dropped for validity, still found by ctx_search
            assert shown(row) or row.id in named, (
                f"msg:{row.id} ({row.role}) is neither shown nor reachable in:\n"
                + "\n".join(f"{m['role']}: {text_of(m)[:100]!r}" for m in prompt.messages)
            )
        # Anchors: the first and the latest user messages are shown (verbatim or as their own
        # excerpt, which names its own handle).
        users = [r for r in rows if r.role == "user"]
        for anchor in {users[0].id, users[-1].id}:
            row = store.get_message(anchor)
            assert shown(row) or f'ctx_expand("msg:{anchor}"' in texts

    run_session(turns, window, check)


def engine_fixed_tools_tokens() -> int:
    from myrm_tui.context.window.tokens import count_tools_tokens

    return count_tools_tokens(TOOLS, MODEL)


@pytest.mark.slow
@given(sessions())
@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
def test_assembly_is_deterministic_across_engines(session):
    turns, window = session

    def check(store, session_id, engine, prompt, info, now):
        fresh = ContextEngine(store, session_id, clock=lambda: now)
        fresh.cache.last_call_at = now
        again = fresh.assemble(TurnInput(SYSTEM, TOOLS, info, 2048, now=now))
        assert again.messages == prompt.messages
        assert again.tokens == prompt.tokens

    run_session(turns, window, check)


@pytest.mark.slow
@given(sessions())
@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
def test_between_events_the_prompt_only_grows_at_the_end(session):
    turns, window = session
    previous: dict[str, list] = {}

    def check(store, session_id, engine, prompt, info, now):
        report = prompt.report
        before = previous.get("messages")
        previous["messages"] = prompt.messages
        if before is None or report["event"] is not None:
            return
        if report["cache_break"] is not None:
            # Only the documented re-renders may break the prefix without an event.
            assert "re-rendered" in report["cache_break"]["reason"]
            return
        assert prompt.messages[: len(before)] == before

    run_session(turns, window, check)
