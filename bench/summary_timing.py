"""When model summaries are written inside a turn: between steps, or right before an emergency.

The question: `myrm run` has no idle time after a turn, so a summary written
by a model must be prepared inside the turn. Two places can do it:

- between steps (default): after a step's tools, once the prompt is past the full threshold
  (70 %), the next chunk that removal will take is summarized (one call per step at most);
- before an emergency (`summary_wait`): when the next request would remove history, the chunks
  it is about to take are summarized first, all of them, while the user waits.

This program runs the same scripted session (the real agent, store and engine; a scripted main
model behind litellm that reads files and answers) under each policy, with a summarizer that
answers like a careful model (keeps the request's identifiers, so the auditor accepts it) after
a fixed latency, and reports what each policy costs the user: the time the turn stood still
waiting for summaries, the summarizer calls and tokens, and what it bought: the share of
removed messages that stand as model-written summaries, and summaries paid for but never used.

Run from the repository root: `python -m bench.summary_timing [--turns 60] [--latency 0.5]`.
Wait times scale linearly with `--latency` (each wait is a whole number of calls).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.turn.summary_work import SummaryWork
from myrm_tui.context.compaction.event import DONE, CompactionEvent
from myrm_tui.context.summary.auditor import extract_entities
from myrm_tui.context.summary.client import CallResult, SummaryModel
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store, event_kinds

POLICIES = ("none", "between", "before", "both")
WINDOW = 32_000
# Reads per user turn before the answer: a coding turn's typical tool rounds (bench/workload.py
# averages 2.3 requests per coding turn; 3 reads + the answer is a busy turn).
READS_PER_TURN = 3
FILES = 12
PARAGRAPH = (
    "The report describes how the team planned the garden, which beds get morning sun, how the "
    "soil was prepared and what the neighbours said about the fence. "
)
CHARS_PER_TOKEN = 4  # usage estimate of the fake summarizer (no tokenizer at the far end)


@dataclass
class CarefulSummarizer:
    """Answers after `latency` seconds with the request's identifiers in the right fields."""

    latency: float
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    async def __call__(self, messages: list[dict[str, Any]], max_output_tokens: int) -> CallResult:
        self.calls += 1
        await asyncio.sleep(self.latency)
        leaf = str(messages[0]["content"]).startswith("You compress")
        names = [e.value for e in extract_entities(str(messages[1]["content"]))][:30]
        answer = json.dumps(
            {
                "user_goal": "read the garden reports",
                "active_task": "continue reading",
                "completed_actions": names[:15] or ["read the reports"],
                "key_findings": names[15:23],
                "artifacts": names[23:30],
                "narrative": "" if leaf else "Reports read in order.",
            }
        )
        tokens_in = sum(len(str(m.get("content", ""))) for m in messages) // CHARS_PER_TOKEN
        self.tokens_in += tokens_in
        self.tokens_out += len(answer) // CHARS_PER_TOKEN
        return CallResult(answer, tokens_in, len(answer) // CHARS_PER_TOKEN)


@dataclass
class Waits:
    seconds: list[float] = field(default_factory=list)


class BenchSummaryWork(SummaryWork):
    """The real agent's summary work with the summarizer injected and one of the policies."""

    def __init__(self, agent: Agent, policy: str, careful: CarefulSummarizer, waits: Waits) -> None:
        super().__init__(agent)
        self.policy, self.careful, self.waits = policy, careful, waits

    def models(self) -> list[SummaryModel]:
        return [SummaryModel("bench/careful", 128_000, call=self.careful)] if self.policy != "none" else []

    async def maintain(self) -> dict[str, Any] | None:
        return await super().maintain() if self.policy in ("between", "both") else None

    async def between_steps(self, state):  # type: ignore[override]
        started = time.perf_counter()
        async for event in super().between_steps(state):
            yield event
        spent = time.perf_counter() - started
        if spent > self.careful.latency / 2:  # a wait for at least one call (else bookkeeping only)
            self.waits.seconds.append(spent)


def script(path: Path, turns: int, window: int) -> str:
    steps = []
    for turn in range(turns):
        for read in range(READS_PER_TURN):
            name = f"report_{(turn * READS_PER_TURN + read) % FILES}.txt"
            steps.append({"tool_calls": [{"name": "file_read", "arguments": {"path": name}}]})
        steps.append({"text": f"Read three more reports (turn {turn})."})
    path.write_text(json.dumps({"turns": steps, "context_window": window}))
    return f"scripted/{path}"


async def run(policy: str, turns: int, latency: float, window: int = WINDOW) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        for i in range(FILES):
            (workspace / f"report_{i}.txt").write_text(f"Report {i}.\n" + PARAGRAPH * 40)
        model = script(Path(tmp) / "main.json", turns, window)
        with Store.open(workspace) as store:
            session = store.create_session(model=model).id
            settings = Settings().with_values(
                model=model, approval="yolo", sandbox="off", summary_wait=policy in ("before", "both")
            )
            agent = Agent(store=store, session_id=session, settings=settings, workspace=workspace)
            work = BenchSummaryWork(agent, policy, CarefulSummarizer(latency), Waits())
            agent.summary_work = work
            started = time.perf_counter()
            for turn in range(turns):
                async for _ in agent.turn(f"Read the next three reports ({turn})."):
                    pass
            wall = time.perf_counter() - started
            nodes = store.summaries(session)
            events = [
                c
                for c in (CompactionEvent.from_dict(e.data) for e in store.events(session, event_kinds.COMPACTION))
                if c.state == DONE
            ]
            asked = [e.data for e in store.events(session, event_kinds.SUMMARY) if e.data.get("attempts")]
        leaves = [n for n in nodes if n["depth"] == 0]
        used = [n for n in leaves if n["status"] != "prepared"]
        removed = sum(n["covered_count"] for n in used)
        by_model = sum(n["covered_count"] for n in used if not n["fallback"])
        waits = work.waits.seconds
        return {
            "policy": policy,
            "calls": work.careful.calls,
            "tokens_in": work.careful.tokens_in,
            "tokens_out": work.careful.tokens_out,
            "waits": len(waits),
            "wait_s": sum(waits),
            "wait_p50": statistics.median(waits) if waits else 0.0,
            "wait_max": max(waits, default=0.0),
            "removals": sum(1 for e in events if e.ops.get("remove")),
            "removed": removed,
            "model_share": by_model / removed if removed else 0.0,
            "unused": sum(1 for n in leaves if n["status"] == "prepared" and not n["fallback"]),
            "folds": sum(1 for r in asked if r["kind"] == "fold"),
            "fold_used": sum(1 for n in nodes if n["children"] and n["model"] and n["status"] != "prepared"),
            "wall_s": wall,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per summarizer call")
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    args = parser.parse_args()
    print(
        f"{args.turns} turns × ({READS_PER_TURN} reads + answer), window {args.window:,}, "
        f"summarizer latency {args.latency:.2f} s per call"
    )
    print(
        "| policy | summarizer calls (folds) | tokens in / out | turn waits | waited s (total / p50 / max) "
        "| removals | removed msgs as model summaries | model folds used | leaves never used | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for policy in args.policies:
        r = asyncio.run(run(policy, args.turns, args.latency, args.window))
        print(
            f"| {r['policy']} | {r['calls']} ({r['folds']}) | {r['tokens_in']:,} / {r['tokens_out']:,} | "
            f"{r['waits']} | {r['wait_s']:.1f} / {r['wait_p50']:.1f} / {r['wait_max']:.1f} | {r['removals']} | "
            f"{r['model_share']:.0%} of {r['removed']} | {r['fold_used']} of {r['folds']} | {r['unused']} | "
            f"{r['wall_s']:.1f} |"
        )


if __name__ == "__main__":
    main()
