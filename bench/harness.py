"""Runs contenders on workloads and scores them in process, with bench.score's definitions.

Why in process: writing each run's OUT file (about 100 MB for a 400-turn session) and reading it
back would dominate the run time; the scorer is fed the same lines instead (`bench.score._Scorer`,
the same code `python -m bench score` runs on files). Only the `measure` step is memoized per
message, which changes no figure.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.contenders import BY_NAME
from bench.contenders.base import OUTPUT_RESERVE, Contender, RunConfig, identity_key
from bench.score import _Scorer, default_count, default_count_tools
from bench.sessionio import Session, read_answers, read_jsonl, read_session

# A contender that needs longer than this on one session is stopped and reported as DNF at the
# turn it reached (litellm's own tokenizer is O(n^2) per turn; 1.6-20 s per turn measured on 2 cores).
DEFAULT_CAP_S = 60.0


@dataclass
class Workload:
    name: str
    path: Path
    lines: list[dict[str, Any]]
    answers: dict[str, Any]
    session: Session
    turns: int = 0
    _raw_tokens: dict[int, int] | None = None

    def raw_tokens(self, count: Any) -> dict[int, int]:
        """Tokens of the whole unmanaged history (without system prompt and tools) at each turn."""
        if self._raw_tokens is None:
            total, self._raw_tokens = 0, {}
            for turn in sorted(self.session.turns):
                total += sum(count(m) for m in self.session.turns[turn])
                self._raw_tokens[turn] = total
        return self._raw_tokens

    @classmethod
    def load(cls, name: str, path: Path) -> Workload:
        lines = [obj for _, obj in read_jsonl(path)]
        answers = read_answers(str(path) + ".answers.json")
        session = read_session(path)
        return cls(name, path, lines, answers, session, turns=session.last_turn)


class MemoScorer(_Scorer):
    """The scorer with `measure` memoized by the identity of each message's strings."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._memo: dict[Any, tuple[dict[str, Any], str, int, list[Any]]] = {}
        self._tools_memo: dict[int, tuple[int, Any]] = {}
        count_tools = self.count_tools

        def tools(value: list[dict[str, Any]]) -> int:
            hit = self._tools_memo.get(id(value))
            if hit is None or hit[1] is not value:
                hit = self._tools_memo[id(value)] = (count_tools(value), value)
            return hit[0]

        self.count_tools = tools

    def measure(self, prompt: list[Any]) -> tuple[list[dict[str, Any]], list[str], list[int]]:
        normalized, keys, tokens = [], [], []
        for message in prompt:
            if not isinstance(message, dict):
                n, k, t = super().measure([message])
                normalized += n
                keys += k
                tokens += t
                continue
            leaves: list[Any] = []
            key = identity_key(message, leaves)
            hit = self._memo.get(key)
            if hit is None:
                n, k, t = super().measure([message])
                hit = self._memo[key] = (n[0], k[0], t[0], leaves)
            normalized.append(hit[0])
            keys.append(hit[1])
            tokens.append(hit[2])
        return normalized, keys, tokens


@dataclass
class RunResult:
    contender: str
    family: str
    note: str
    workload: str
    window: int
    summarizer: str
    status: str = "ok"  # ok | not installed | dnf | error
    detail: str = ""
    wall_s: float = 0.0
    report: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "contender": self.contender,
            "family": self.family,
            "note": self.note,
            "workload": self.workload,
            "window": self.window,
            "summarizer": self.summarizer,
            "status": self.status,
            "detail": self.detail,
            "wall_s": round(self.wall_s, 2),
            "report": self.report,
        }


_COUNTERS: dict[str, Any] = {}


def _shared_counters() -> tuple[Any, Any]:
    if not _COUNTERS:
        _COUNTERS["count"] = default_count()
        _COUNTERS["tools"] = default_count_tools
    return _COUNTERS["count"], _COUNTERS["tools"]


def run_one(contender: Contender, workload: Workload, config: RunConfig, *, cap_s: float = DEFAULT_CAP_S) -> RunResult:
    """One contender on one workload: stream its OUT lines into the scorer; never raises."""
    result = RunResult(
        contender.name, contender.family, contender.note, workload.name, config.window, config.summarizer
    )
    why = contender.missing()
    if why:
        result.status, result.detail = "not installed", why
        return result
    count, count_tools = _shared_counters()
    scorer = MemoScorer(
        workload.path,
        workload.answers,
        window=config.window,
        output_reserve=config.reserve,
        count=count,
        count_tools=count_tools,
        refetch_penalty=2000,
        session=workload.session,
    )
    exceptions: list[str] = []
    silent = 0
    last_turn = 0
    # A clean heap before timing, then freeze what survives (workloads, caches): later full
    # collections skip it, so this costs milliseconds instead of 0.25 s per run on a big heap.
    gc.collect()
    gc.freeze()
    started = time.perf_counter()
    try:
        for line in contender.run(workload.lines, config):
            if "prompt" in line:
                scorer.add_turn(line, f"{contender.name}:{line.get('turn')}")
                last_turn = int(line["turn"])
                if line.get("exception"):
                    exceptions.append(f"turn {last_turn}: {line['exception']}")
                # A silent no-op: the whole unmanaged history sent unchanged while over budget.
                if (
                    contender.family != "baseline"
                    and scorer.over_budget
                    and scorer.over_budget[-1] == last_turn
                    and len(line["prompt"]) == scorer.history_size.get(last_turn, -1) + 1
                ):
                    raw = workload.raw_tokens(count).get(last_turn, -1)
                    if sum(scorer.measure(line["prompt"][1:])[2]) == raw:
                        silent += 1
            else:
                scorer.add_probe(line)
            if time.perf_counter() - started > cap_s:
                result.status, result.detail = "dnf", f"DNF at turn {last_turn} of {workload.turns} ({cap_s:.0f} s cap)"
                break
    except Exception as exc:  # noqa: BLE001 - one contender's crash must not end the grid
        result.status, result.detail = "error", f"{type(exc).__name__}: {exc}"[:400]
    result.wall_s = time.perf_counter() - started
    report = scorer.report() if scorer.turns_seen else {}
    if report:
        report["exceptions"] = len(exceptions)
        report["exception_samples"] = exceptions[:3]
        report["silent_noops"] = silent
    result.report = report
    return result


def run_named(
    name: str, workload: Workload, window: int, summarizer: str, *, cap_s: float = DEFAULT_CAP_S
) -> RunResult:
    return run_one(BY_NAME[name](), workload, RunConfig(window, summarizer, OUTPUT_RESERVE), cap_s=cap_s)
