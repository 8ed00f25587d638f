"""Oversized tool-call arguments in the fresh tail are cut before any older turn is removed.

Found when `myrm replay` started driving the real agent (bench adversarial case "huge-tool-args"):
a 500 KB `file_write` arrived mid-turn, inside the fresh tail; the emergency's first pass
removed every older turn, and only the in-tail pass then cut the arguments, so the session lost
all its history (R_verbatim 1.0 → 0.0) to make room for a file body that was already on disk.
"""

from __future__ import annotations

import json
import random

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.models.info import ModelInfo

MODEL = "gpt-4o"
WINDOW = 32_000


def turn_input() -> TurnInput:
    model = ModelInfo(
        name=MODEL,
        provider="openai",
        context_window=WINDOW,
        max_output_tokens=4096,
        supports_tools=True,
        supports_prompt_caching=True,
    )
    return TurnInput("sys", [], model, 4096, now=0.0)


def add(store, session, message) -> int:
    return store.append_message(session, message, count_message_tokens(message, MODEL)).id


def source(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(f"TABLE_{rng.randrange(10**6)} = [{', '.join(str(rng.randrange(10**4)) for _ in range(12))}]")
    return "\n".join(lines)


def history(store, session, turns: int) -> list[int]:
    ids = []
    for n in range(turns):
        ids.append(add(store, session, {"role": "user", "content": f"Question {n}: the staging port is {4800 + n}?"}))
        ids.append(add(store, session, {"role": "assistant", "content": f"Yes, staging uses port {4800 + n}."}))
    return ids


def write(store, session, path: str, body: str, call_id: str) -> tuple[int, int]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "file_write", "arguments": json.dumps({"path": path, "content": body})},
    }
    asked = add(store, session, {"role": "assistant", "content": "Writing the module.", "tool_calls": [call]})
    done = add(
        store, session, {"role": "tool", "tool_call_id": call_id, "name": "file_write", "content": f"Wrote {path}."}
    )
    return asked, done


def shown(prompt) -> str:
    return "\n".join(json.dumps(m) for m in prompt.messages)


def test_a_500_kb_write_in_the_tail_is_cut_and_every_older_turn_stays(store):
    session = store.create_session(MODEL).id
    older = history(store, session, 20)
    add(store, session, {"role": "user", "content": "Regenerate the lookup tables module."})
    body = source(500_000, 1)
    asked, _ = write(store, session, "src/generated/tables.py", body, "w1")
    prompt = ContextEngine(store, session, clock=lambda: 0.0).assemble(turn_input())
    event = prompt.report["event"] or {}
    assert not event.get("ops", {}).get("remove"), event
    text = shown(prompt)
    for message_id in older:
        assert (
            store.get_message(message_id).message["content"] in text
            or json.dumps(store.get_message(message_id).message["content"])[1:-1] in text
        )
    call = next(m for m in prompt.messages if m.get("tool_calls"))
    arguments = json.loads(call["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "src/generated/tables.py"
    assert len(arguments["content"]) < 1_000 and f'ctx_expand("msg:{asked}")' in arguments["content"]
    last_line = body.splitlines()[-1]
    assert last_line in ctx_expand(store, session, f"msg:{asked}", query=last_line[:40]), (
        "the original is one call away"
    )
    assert prompt.tokens <= prompt.budget.prompt_limit


def test_an_emergency_cuts_large_arguments_in_the_tail_before_removing_older_turns(store):
    """Each write is under the per-item allowance (35 % of B), so nothing is cut on arrival;
    together they push the prompt over budget, and the newest one sits in the fresh tail."""
    session = store.create_session(MODEL).id
    older = history(store, session, 30)
    add(store, session, {"role": "user", "content": "Regenerate the four table modules."})
    for i, chars in enumerate((11_000, 11_000, 11_000, 13_000)):  # ~6.6k-7.8k tokens each, 24-29 % of B
        write(store, session, f"src/generated/tables_{i}.py", source(chars, i), f"w{i}")
    prompt = ContextEngine(store, session, clock=lambda: 0.0).assemble(turn_input())
    event = prompt.report["event"]
    assert event is not None and event["tier"] == "emergency", prompt.report["ladder"]
    assert event["ops"].get("shrink_args") == 4 and not event["ops"].get("remove"), event["ops"]
    text = shown(prompt)
    assert all(f"staging uses port {4800 + n}" in text for n in range(30)), "no older turn was removed"
    assert len(older) == 60 and prompt.tokens <= prompt.budget.prompt_limit
