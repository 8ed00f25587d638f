"""Subagent token savings on a delegated test-triage task: the parent's prompt tokens with
delegation (the `task` tool) vs the same work done inline by the parent.

The work, identical in both arms and played by the scripted provider through the live Agent:
run a failing pytest suite whose output is large (captured stdout of many failing tests), read
the failing test file, rerun one test verbosely, conclude. Then the conversation goes on for a
few short follow-up turns, where every parent request carries whatever the triage left in its
context. Inline, that is the spilled pytest excerpt, the file and the rerun; delegated, it is the
child's distilled result (capped, with a handover).

Prompt tokens are the engine's own count of each assembled prompt (the ASSEMBLE event's
`tokens`), for the parent and for the child alike, so both arms are measured the same way.

Run from the repository root: `python -m bench.subagent_savings [--followups 5] [--window 128000]`.
Prints a table and writes bench/results/subagent_savings.json. Nothing here is a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import myrm_tui  # noqa: F401  (offline env before litellm)

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results" / "subagent_savings.json"
# 24 failing tests printing 120 lines each: ~150k characters of pytest output, the size of a
# real "run the suite and see what broke" that overflows the inline cap and gets spilled.
FAILING_TESTS = 24
LINES_PER_TEST = 120
# Follow-up turns after the triage: the conversation goes on, carrying the triage's leftovers.
FOLLOWUPS = 5
TRIAGE = (
    "Triage: 24 tests in tests_triage/test_cache.py fail the same way: `warm()` returns the stale "
    "entry because `Cache.ttl` is compared in ms against seconds. Fix: convert in `Cache.expired`."
)
HANDOVER = (
    "<handover>\ncompleted:\n- ran the suite (24 failed)\n- read tests_triage/test_cache.py\n"
    "- reran test_warm_0 verbosely\npending:\n- fix Cache.expired unit mismatch\nrisks:\n- other callers of ttl\n"
    "files:\n- tests_triage/test_cache.py\n- tests_triage/cache.py\n</handover>"
)


def _write_suite(workspace: Path) -> None:
    suite = workspace / "tests_triage"
    suite.mkdir()
    (suite / "cache.py").write_text(
        "import time\n\nclass Cache:\n    def __init__(self, ttl):\n        self.ttl = ttl\n        self.at = {}\n"
        "    def expired(self, key):\n"
        "        return time.time() - self.at.setdefault(key, time.time()) > self.ttl * 1000\n"
        "    def warm(self, key):\n        return 'stale' if not self.expired(key) else 'fresh'\n"
    )
    tests = ["import sys\nsys.path.insert(0, __file__.rsplit('/', 1)[0])\nfrom cache import Cache\n"]
    for i in range(FAILING_TESTS):
        tests.append(
            f"\ndef test_warm_{i}():\n    c = Cache(ttl=1)\n"
            f"    for n in range({LINES_PER_TEST}):\n"
            f"        print(f'probe {i}.{{n}}: cache entry state warm=stale ttl=1 at=0')\n"
            f"    assert c.warm('k{i}') == 'fresh'\n"
        )
    (suite / "test_cache.py").write_text("".join(tests))


def _work_calls(prefix: str) -> list[dict[str, Any]]:
    py = sys.executable
    return [
        {
            "tool_calls": [
                {
                    "id": f"{prefix}1",
                    "name": "bash",
                    "arguments": {"command": f"{py} -m pytest -q -p no:cacheprovider tests_triage"},
                }
            ]
        },
        {
            "tool_calls": [
                {"id": f"{prefix}2", "name": "file_read", "arguments": {"path": "tests_triage/test_cache.py"}}
            ]
        },
        {
            "tool_calls": [
                {
                    "id": f"{prefix}3",
                    "name": "bash",
                    "arguments": {
                        "command": f"{py} -m pytest -vv -p no:cacheprovider tests_triage/test_cache.py::test_warm_0"
                    },
                }
            ]
        },
    ]


def _followups() -> list[dict[str, Any]]:
    return [{"text": f"Follow-up {i}: yes, that is the next step."} for i in range(FOLLOWUPS)]


def _script(path: Path, turns: list[dict[str, Any]], window: int) -> str:
    path.write_text(json.dumps({"turns": turns, "context_window": window}))
    return f"scripted/{path}"


def _prompt_tokens(store: Any, session_id: str) -> list[int]:
    from myrm_tui.store import event_kinds

    return [int(e.data["tokens"]) for e in store.events(session_id, event_kinds.ASSEMBLE)]


async def _run(arm: str, window: int) -> dict[str, Any]:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store import Store

    with tempfile.TemporaryDirectory(prefix=f"subagent-{arm}-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / ".git").mkdir()
        _write_suite(workspace)
        if arm == "inline":
            parent_turns = [*_work_calls("w"), {"text": TRIAGE}, *_followups()]
        else:
            task = {"prompt": "Run the tests in tests_triage, find why they fail, report the cause and files."}
            parent_turns = [{"tool_calls": [{"id": "t1", "name": "task", "arguments": task}]}, {"text": TRIAGE}]
            parent_turns += _followups()
        model = _script(root / "parent.json", parent_turns, window)
        store = Store.open(workspace)
        try:
            session = store.create_session(model=model)
            settings = Settings().with_values(model=model, approval="yolo")
            agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
            if arm == "delegated":
                agent.subagents.model = _script(
                    root / "child.json", [*_work_calls("c"), {"text": f"{TRIAGE}\n{HANDOVER}"}], window
                )
            for text in ["Why does the test suite fail?", *[f"follow-up question {i}" for i in range(FOLLOWUPS)]]:
                async for _ in agent.turn(text):
                    pass
            parent = _prompt_tokens(store, session.id)
            children = [e.data["child"] for e in store.events(session.id, "subagent") if "task" in e.data]
            child = [t for c in children for t in _prompt_tokens(store, c)]
            result = next((r.tokens for r in store.messages(session.id) if r.message.get("tool_call_id") == "t1"), None)
            await agent.aclose()
        finally:
            store.close()
    return {
        "arm": arm,
        "parent_calls": len(parent),
        "parent_prompt_tokens": parent,
        "parent_total": sum(parent),
        "parent_last": parent[-1],
        "child_calls": len(child),
        "child_total": sum(child),
        "task_result_tokens": result,
    }


def main(argv: list[str] | None = None) -> int:
    global FOLLOWUPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--followups", type=int, default=FOLLOWUPS)
    parser.add_argument("--window", type=int, default=128_000)
    args = parser.parse_args(argv)
    FOLLOWUPS = args.followups
    rows = [asyncio.run(_run(arm, args.window)) for arm in ("inline", "delegated")]
    inline, delegated = rows
    print(f"window {args.window:,}, {FOLLOWUPS} follow-up turns after the triage")
    print(
        f"{'arm':<10} {'parent calls':>12} {'parent prompt tok (sum)':>24} {'last prompt':>12} "
        f"{'child calls':>12} {'child prompt tok':>17}"
    )
    for row in rows:
        print(
            f"{row['arm']:<10} {row['parent_calls']:>12} {row['parent_total']:>24,} {row['parent_last']:>12,} "
            f"{row['child_calls']:>12} {row['child_total']:>17,}"
        )
    saved = 1 - delegated["parent_total"] / inline["parent_total"]
    last_saved = 1 - delegated["parent_last"] / inline["parent_last"]
    print(f"parent prompt tokens saved by delegating: {saved:.1%} (sum over calls), {last_saved:.1%} (last prompt)")
    print(f"task result stored in the parent: {delegated['task_result_tokens']} tokens")
    both = delegated["parent_total"] + delegated["child_total"]
    print(f"all prompt tokens, delegated (parent + child): {both:,} vs inline {inline['parent_total']:,}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"window": args.window, "followups": FOLLOWUPS, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
