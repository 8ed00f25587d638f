"""llm_map against the two ways an agent does "X to each of N items" without it: one ordinary
tool call per item, and one stuffed prompt. Tokens only (the scripted provider, no timings).

The work, identical in the three arms and played by the scripted provider through the live
Agent: N small log files in the workspace, each to be labelled with a JSON record.

- map: the parent calls `llm_map(files="logs/*.log", ...)` once; each item is one small call
  (instruction + schema + the file), then the parent answers.
- per-item: the parent reads each file with `file_read` and writes its record in the same reply
  that asks for the next file: N+1 parent calls, each carrying every earlier call and result.
- stuffed: every file pasted in one user message, one reply with all N records.

Parent prompt tokens are the engine's own count of each assembled prompt (the ASSEMBLE event's
`tokens`); an item call's prompt is its request as the provider got it, counted with the same
counter; completion tokens are the scripted answers, counted the same way.

Run from the repository root: `python -m bench.llm_map [--items 300]`.
Prints a table and writes bench/results/llm_map.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import myrm_tui  # noqa: F401  (offline env before litellm)

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results" / "llm_map.json"
ITEMS = 300
# The token counter every figure uses (the grid's: bench/README.md).
COUNTER_MODEL = "gpt-4o"
INSTRUCTION = "Label the log entry: its service, whether it reports an error, and the request id."
SCHEMA = {
    "type": "object",
    "properties": {"service": {"type": "string"}, "error": {"type": "boolean"}, "request": {"type": "string"}},
    "required": ["service", "error", "request"],
}
RECORD = {"service": "billing", "error": False, "request": "r-0000"}


def _entry(i: int) -> str:
    """One log file of ~100 tokens: the size of a log entry with its context lines."""
    return "".join(
        f"2026-12-02T10:{i % 60:02d}:{n:02d}Z billing-{i % 7} request r-{i:04d} step {n} "
        f"{'ERROR upstream timeout' if i % 13 == 0 and n == 2 else 'ok'} latency={(i * 7 + n) % 300}ms\n"
        for n in range(4)
    )


def _script(path: Path, turns: list[dict[str, Any]], record: str | None = None) -> str:
    body: dict[str, Any] = {"turns": turns}
    if record:
        body["record"] = record
    path.write_text(json.dumps(body))
    return f"scripted/{path}"


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def _turns(arm: str, n: int) -> tuple[list[dict[str, Any]], str]:
    """The parent's scripted turns and the user's message."""
    row = json.dumps(RECORD)
    if arm == "map":
        call = _call("m1", "llm_map", prompt=INSTRUCTION, output_schema=SCHEMA, files="logs/*.log")
        return [{"tool_calls": [call]}, {"text": f"All {n} entries are labelled; see the handle."}], INSTRUCTION
    if arm == "per-item":
        turns = [{"tool_calls": [_call("r0", "file_read", path="logs/entry-0000.log")]}]
        for i in range(1, n):
            turns.append({"text": row, "tool_calls": [_call(f"r{i}", "file_read", path=f"logs/entry-{i:04d}.log")]})
        turns.append({"text": row})
        return turns, f"{INSTRUCTION} Do it for every file in logs/, one at a time. Schema: {json.dumps(SCHEMA)}"
    stuffed = "\n".join(f"<item path='logs/entry-{i:04d}.log'>\n{_entry(i)}</item>" for i in range(n))
    answer = "[" + ",".join([row] * n) + "]"
    return [
        {"text": answer}
    ], f"{INSTRUCTION} Answer with a JSON array, one record per item. Schema: {json.dumps(SCHEMA)}\n{stuffed}"


def _completion_tokens(turns: list[dict[str, Any]]) -> int:
    from myrm_tui.context.window.tokens import count_text_tokens

    total = 0
    for turn in turns:
        text = turn.get("text", "") + "".join(json.dumps(c["arguments"]) for c in turn.get("tool_calls", []))
        total += count_text_tokens(text, COUNTER_MODEL)
    return total


async def _run(arm: str, n: int) -> dict[str, Any]:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store import Store, event_kinds

    with tempfile.TemporaryDirectory(prefix=f"llm-map-{arm}-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        (workspace / "logs").mkdir(parents=True)
        (workspace / ".git").mkdir()
        for i in range(n):
            (workspace / "logs" / f"entry-{i:04d}.log").write_text(_entry(i))
        turns, message = _turns(arm, n)
        model = _script(root / "parent.json", turns)
        lite = _script(root / "items.json", [{"text": json.dumps(RECORD)}], record="items.jsonl")
        store = Store.open(workspace)
        try:
            session = store.create_session(model=model)
            # The per-item arm needs N+1 model calls in one turn: the step limit is raised to let it
            # finish (at the default it stops part way, which would flatter it).
            settings = Settings().with_values(model=model, approval="yolo", lite_model=lite, max_steps=n + 10)
            agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
            async for _ in agent.turn(message):
                pass
            parent = [int(e.data["tokens"]) for e in store.events(session.id, event_kinds.ASSEMBLE)]
            result = next((r.tokens for r in store.messages(session.id) if r.message.get("tool_call_id") == "m1"), None)
            await agent.aclose()
        finally:
            store.close()
        recorded = root / "items.jsonl"
        requests = [json.loads(line) for line in recorded.read_text().splitlines()] if recorded.exists() else []
    item_prompt = sum(sum(count_message_tokens(m, COUNTER_MODEL) for m in req) for req in requests)
    item_completion = len(requests) * count_text_tokens(json.dumps(RECORD), COUNTER_MODEL)
    parent_completion = _completion_tokens(turns)
    return {
        "arm": arm,
        "items": n,
        "parent_calls": len(parent),
        "parent_first_prompt": parent[0],
        "parent_last_prompt": parent[-1],
        "parent_growth": parent[-1] - parent[0],
        "parent_prompt_total": sum(parent),
        "parent_completion": parent_completion,
        "item_calls": len(requests),
        "item_prompt_total": item_prompt,
        "item_completion": item_completion,
        "total": sum(parent) + parent_completion + item_prompt + item_completion,
        "map_result_tokens": result,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=ITEMS)
    args = parser.parse_args(argv)
    rows = [asyncio.run(_run(arm, args.items)) for arm in ("map", "per-item", "stuffed")]
    print(f"{args.items} items; tokens counted with {COUNTER_MODEL}'s encoding")
    head = (
        f"{'arm':<9} {'parent calls':>12} {'first prompt':>12} {'last prompt':>12} {'growth':>8} "
        f"{'parent prompt sum':>17} {'item calls':>10} {'item tokens':>11} {'total tokens':>12}"
    )
    print(head)
    for r in rows:
        print(
            f"{r['arm']:<9} {r['parent_calls']:>12} {r['parent_first_prompt']:>12,} {r['parent_last_prompt']:>12,} "
            f"{r['parent_growth']:>8,} {r['parent_prompt_total']:>17,} {r['item_calls']:>10} "
            f"{r['item_prompt_total'] + r['item_completion']:>11,} {r['total']:>12,}"
        )
    print(f"map result in the parent's prompt: {rows[0]['map_result_tokens']} tokens")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"items": args.items, "counter": COUNTER_MODEL, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
