"""B4's 12 adversarial cases: small sessions built around one hostile event each, every contender.

    python -m bench adversarial [--contenders myrm,raw] [--turns N] [--out FILE] [--markdown FILE]

Why separate sessions: the normal workloads hide a hostile event among hundreds of ordinary
turns; here each session (20-30 turns, window 32k) exists for one event, so a crash, an
over-budget prompt or a broken tool pairing is attributable to it. Needles are planted before the
event and probed after it, so "the engine survived but lost everything" shows up as a low R_1.

Every case is a pure function of (turns, seed): same arguments, same bytes. Two cases swap the
fake summarizer for a hostile one ("raises", "inflate"), registered at run time in
`myrm_tui.llm.fake_providers.replay_summarizers.SUMMARIZERS`. The peers' `SharedSummarizer` calls them directly
and does not catch what they raise, so a peer that does not handle it shows exceptions; myrm
reaches them as its summarizer model (`replay-summarizer/<name>`, through the summary client),
where a raise is a failed model call.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import platform
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import content as C
from bench.needles import NeedleFactory, probe_lines
from bench.png import data_url, screenshot_png
from bench.workload import ACKS, CONSTRAINTS, NEEDLE_USER_TEMPLATES, REQUESTS, SUMMARIES, TASKS, _fill
from myrm_tui.messages import content_text

GENERATOR_VERSION = 1
SEED = 1
WINDOW = 32_000  # the smaller grid window: every case overflows it several times
# Probe lags (turns after planting): short, after the hostile event, near the session's end.
LAGS = (3, 10, 25)
MIN_TURNS = 12  # the hostile events sit at fixed fractions of the session; fewer turns squeeze them out
RESULTS_DIR = Path(__file__).resolve().parent / "results"
# Per-run wall caps (s). The sessions are small, so a run past these is stuck, not slow; litellm's
# own tokenizer is O(n^2) (see bench.grid) and its defaults row gets a short cap so the whole
# adversarial grid stays under two minutes.
CAP_S = 6.0
# myrm drives its real agent per turn (a litellm call per request, background summaries).
CAP_OVERRIDES = {"litellm": 2.0, "litellm@budget": 10.0, "myrm": 120.0}
# litellm's defaults row DNFs within its cap on every case (its tokenizer, not the case, stops it):
# it runs on four cases only, which keeps `python -m bench adversarial` with peers under two minutes.
ONLY_IN = {"litellm": ("mb-output", "images", "duplicate-ids", "broken-history")}

MB = 1_048_576
FIRST_MESSAGE_CHARS = 700_000  # pasted Python at ~4.3 chars/token: about 160k tokens (test checks >= 150k)
HUGE_ARGS_CHARS = 500_000
BINARY_CHUNK = 60_000
LONG_LINE_CHARS = 250_000
INFLATE_FILLER = "Additional context retained for safety. " * 50  # ~2,000 chars on top of the doubled input
# The repeat is capped like a model's output limit (~8k tokens, a common max_tokens): an uncapped
# double of a summary that already holds the previous summary grows exponentially, and the grid
# would time string copies, not context managers.
INFLATE_REPEAT_CHARS = 32_000
RAISE_MESSAGE = "adversarial summarizer: upstream model returned HTTP 500 (simulated)"


# --------------------------------------------------------------------------- hostile summarizers

SUMMARIZER_CALLS: Counter = Counter()


def _text_of(message: dict[str, Any]) -> str:
    text = content_text(message.get("content"), image=None, keep_empty=True)
    calls = [str((c.get("function") or {}).get("arguments", "")) for c in message.get("tool_calls") or ()]
    return "\n".join([text, *calls]) if calls else text


def raising_summarizer(messages: Sequence[dict[str, Any]]) -> str:
    """A summarization call that always fails (provider outage, rate limit, bad key)."""
    SUMMARIZER_CALLS["raises"] += 1
    raise RuntimeError(RAISE_MESSAGE)


def inflating_summarizer(messages: Sequence[dict[str, Any]]) -> str:
    """A summary longer than its input: the input, again (up to 32k chars), plus filler (a model that echoes)."""
    SUMMARIZER_CALLS["inflate"] += 1
    text = "\n".join(_text_of(m) for m in messages)
    return f"{text}\n{text[:INFLATE_REPEAT_CHARS]}\n{INFLATE_FILLER}"


HOSTILE_SUMMARIZERS = {"raises": raising_summarizer, "inflate": inflating_summarizer}


def register_summarizers() -> None:
    """Add the hostile fakes to the fake summarizers' table (idempotent): the peers' shared
    summarizer finds them there, and myrm reaches them as the model `replay-summarizer/<name>`."""
    from myrm_tui.llm.fake_providers.replay_summarizers import SUMMARIZERS

    SUMMARIZERS.update(HOSTILE_SUMMARIZERS)


# --------------------------------------------------------------------------- session builder


class _Script:
    """Collects one case's turns; calls get unique ids unless a case supplies its own."""

    def __init__(self, case: str, turns: int, seed: int = SEED) -> None:
        if turns < MIN_TURNS:
            raise ValueError(f"{case}: turns must be at least {MIN_TURNS} (got {turns}).")
        self.case = case
        self.total = turns
        self.seed = seed
        self.rng = random.Random(f"adversarial:{case}:{seed}")
        self.project = C.FakeProject.create(seed)
        self.factory = NeedleFactory(random.Random(f"adversarial-needles:{case}:{seed}"))
        self.turns: list[list[dict[str, Any]]] = []
        self.hostile: dict[str, Any] = {}
        self.constraint: dict[str, Any] | None = None
        self._next_id = 0

    @property
    def turn(self) -> int:
        """The number of the turn being built next."""
        return len(self.turns) + 1

    def at(self, share: float) -> int:
        return max(3, round(self.total * share))

    def call_id(self) -> str:
        self._next_id += 1
        return f"call_{self.seed:02d}{self._next_id:06d}"

    def fill(self, template: str, **extra: str) -> str:
        return _fill(self.rng, template, self.project, **extra)

    # Messages.
    @staticmethod
    def user(text: str, images: Sequence[str] = ()) -> dict[str, Any]:
        if not images:
            return {"role": "user", "content": text}
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                *({"type": "image_url", "image_url": {"url": u}} for u in images),
            ],
        }

    def block(
        self,
        calls: list[tuple[str, dict[str, Any], Any]],
        text: str | None = None,
        ids: list[str] | None = None,
        answered: int | None = None,
    ) -> list[dict[str, Any]]:
        """An assistant message with parallel calls, then the results of the first `answered` of them."""
        ids = ids or [self.call_id() for _ in calls]
        out: list[dict[str, Any]] = [
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": i,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                    }
                    for i, (name, args, _) in zip(ids, calls, strict=True)
                ],
            }
        ]
        shown = answered if answered is not None else len(calls)
        for i, (name, _, output) in list(zip(ids, calls, strict=True))[:shown]:
            out.append({"role": "tool", "tool_call_id": i, "name": name, "content": output})
        return out

    @staticmethod
    def say(text: str | None) -> dict[str, Any]:
        return {"role": "assistant", "content": text}

    def add(self, messages: list[dict[str, Any]]) -> int:
        self.turns.append(messages)
        return len(self.turns)

    # Ordinary tool actions (medium outputs: a few thousand tokens each).
    def action(self) -> tuple[str, dict[str, Any], str]:
        rng, project = self.rng, self.project
        roll = rng.random()
        if roll < 0.4:
            path = rng.choice(sorted(project.files))
            return "file_read", {"path": path}, C.file_read_output(path, project.files[path])
        if roll < 0.6:
            return (
                "bash",
                {"command": "python -m pytest -v tests"},
                C.pytest_log(rng, project, failing=rng.random() < 0.5),
            )
        if roll < 0.8:
            return "bash", {"command": "git diff"}, C.git_diff(rng, project)
        if roll < 0.9:
            pattern = rng.choice(C.NOUNS)
            return "grep", {"pattern": pattern, "glob": "*.py"}, C.grep_output(rng, project, pattern)
        return "bash", {"command": "tail -n 60 logs/app.log"}, C.log_text(rng, lines=60)

    def request(self) -> str:
        return self.fill(self.rng.choice(REQUESTS))

    def normal_turn(
        self,
        user_text: str | None = None,
        *,
        actions: tuple[int, int] = (1, 3),
        ids: Callable[[int], list[str]] | None = None,
    ) -> int:
        rng = self.rng
        calls = [self.action() for _ in range(rng.randrange(*actions))]
        messages = [self.user(user_text or self.request())]
        messages += self.block(calls, rng.choice(ACKS), ids=ids(len(calls)) if ids else None)
        messages.append(self.say(self.fill(rng.choice(SUMMARIES))))
        return self.add(messages)

    def needle_sentence(self, carrier: int = 1) -> tuple[Any, str]:
        needle = self.factory.new(carrier, self.turn)
        return needle, self.rng.choice(NEEDLE_USER_TEMPLATES).format(needle=needle.text)

    def opening(self, until_share: float = 0.0) -> None:
        """The usual start: the task, a turn planting a user-sentence needle, then normal turns
        until `until_share` of the session (where a case puts its hostile event)."""
        self.normal_turn(self.fill(self.rng.choice(TASKS)))
        self.needle_turn()
        while self.turn < self.at(until_share):
            self.normal_turn()

    def needle_turn(self, **kwargs: Any) -> int:
        """A normal turn whose user message plants a needle (carrier 1: a user sentence)."""
        _, sentence = self.needle_sentence()
        return self.normal_turn(f"{self.request()} {sentence}", **kwargs)

    def fill_to_end(self, **kwargs: Any) -> None:
        while self.turn <= self.total:
            self.normal_turn(**kwargs)

    def finish(self, doc: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        last = len(self.turns)
        for needle in self.factory.needles:
            needle.schedule_probes(last, LAGS)
        probes = probe_lines(self.factory.needles)
        lines: list[dict[str, Any]] = []
        for turn, messages in enumerate(self.turns, 1):
            lines.append({"turn": turn, "messages": messages})
            lines += probes.get(turn, [])
        answers: dict[str, Any] = {
            "generator": "bench.adversarial",
            "version": GENERATOR_VERSION,
            "case": self.case,
            "models": doc,
            "turns": last,
            "seed": self.seed,
            "lags": list(LAGS),
            "hostile": self.hostile,
            "needles": [n.as_answer() for n in self.factory.needles],
        }
        if self.constraint:
            answers["constraint"] = self.constraint
        return lines, answers


def _doc(function: Callable[..., Any]) -> str:
    return (function.__doc__ or "").strip().splitlines()[0]


# --------------------------------------------------------------------------- content helpers


def _minified_json(rng: random.Random, target: int, note: str) -> str:
    records, size = [], 0
    while size < target:
        record = C._record(rng, len(records))
        records.append(record)
        size += len(json.dumps(record, separators=(",", ":"))) + 1
    records[len(records) // 2]["note"] = note
    return json.dumps({"data": records, "total": len(records)}, separators=(",", ":"))


def _pasted_source(rng: random.Random, target: int) -> str:
    parts, size, index = [], 0, 0
    while size < target:
        module = f"{rng.choice(C.MODULES)}_{index}"
        body = f"# ---- file: src/vendor_dump/{module}.py ----\n" + C.python_source(rng, module)
        parts.append(body)
        size += len(body)
        index += 1
    return "".join(parts)


def _binary_garbage(rng: random.Random, chars: int) -> str:
    """Random bytes as a tool decodes them with errors="replace": NULs, control chars, U+FFFD."""
    return rng.randbytes(chars).decode("utf-8", errors="replace")


def _ansi_test_output(rng: random.Random, project: C.FakeProject, needle_text: str | None) -> str:
    """npm/pytest-style colored output with carriage-return progress bars and backspaces."""
    colors = ("\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1;34m", "\x1b[2m")
    lines = []
    for i in range(rng.randrange(150, 300)):
        bar = "".join(f"\r[{'#' * k}{'.' * (20 - k)}] {k * 5}%" for k in range(0, 21, 4))
        lines.append(f"{rng.choice(colors)}{C.log_line(rng, 36000 + i)}\x1b[0m{bar}\x08\x08\x07")
    if needle_text:
        lines.insert(len(lines) // 2, f"\x1b[33mWARN\x1b[0m config override \x1b[1m{needle_text}\x1b[0m (source=env)")
    return "\n".join(lines)


def _replaced_surrogates(rng: random.Random, chars: int) -> str:
    """Text whose lone surrogates (from a Windows filename dump) were replaced by U+FFFD on output."""
    out, size = [], 0
    while size < chars:
        name = f"{rng.choice(C.NOUNS)}_{rng.randrange(1000)}"
        raw = name + "".join(chr(rng.randrange(0xD800, 0xE000)) for _ in range(rng.randrange(1, 4))) + ".txt"
        line = f"C:\\Users\\{rng.choice(C.NAMES)}\\Documents\\" + raw.encode("utf-8", "surrogatepass").decode(
            "utf-8", "replace"
        )
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


COMMON_CJK = (
    "的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多天而能好都然没"
    "日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明"
    "配置错误测试运行文件函数返回调用数据库连接超时重试缓存日志版本部署服务器请求响应参数变量模块类型"
)
EMOJI = (
    "😀",
    "😂",
    "🥲",
    "🤔",
    "🚀",
    "🔥",
    "✅",
    "❌",
    "⚠️",
    "📦",
    "🐛",
    "🧪",
    "👩‍💻",
    "👨‍👩‍👧‍👦",
    "🏳️‍🌈",
    "🇯🇵",
    "🇫🇷",
    "💾",
    "🧵",
    "🎉",
    "👍🏽",
    "🤷‍♀️",
    "🛠️",
    "📈",
)


def _cjk(rng: random.Random, chars: int) -> str:
    out = []
    for _ in range(chars):
        roll = rng.random()
        if roll < 0.08:
            out.append(rng.choice(EMOJI))
        elif roll < 0.15:
            out.append(chr(rng.randrange(0x4E00, 0x9FA5)))  # rarer characters: several tokens each
        elif roll < 0.2:
            out.append(rng.choice("，。、：；！？\n"))
        else:
            out.append(rng.choice(COMMON_CJK))
    return "".join(out)


def _dense_output(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    kind = rng.randrange(3)
    if kind == 0:
        path = f"docs/设计说明_{rng.randrange(100)}.md"
        return "file_read", {"path": path}, f"[{path}]\n" + _cjk(rng, rng.randrange(3000, 6000))
    if kind == 1:
        blob = base64.b64encode(rng.randbytes(rng.randrange(4000, 8000))).decode("ascii")
        wrapped = "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76))
        return "bash", {"command": "base64 build/artifact.bin"}, wrapped
    lines = [
        f"{rng.choice(EMOJI)} {_cjk(rng, rng.randrange(20, 60))} {rng.getrandbits(64):016x}{rng.choice(EMOJI)}"
        for _ in range(rng.randrange(60, 120))
    ]
    return "grep", {"pattern": "错误", "glob": "*.log"}, "\n".join(lines)


# --------------------------------------------------------------------------- the 12 cases


def mb_output(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A 1 MB multi-line server log read in one tool call (`cat` of a crash log)."""
    s = _Script("mb-output", turns, seed)
    s.opening(0.25)
    needle = s.factory.new(2, s.turn)
    lines = C.log_text(s.rng, min_chars=MB).split("\n")
    lines.insert(
        len(lines) // 2, f"2025-03-14T11:02:07.412Z WARN  [config.loader] override applied {needle.text} (source=env)"
    )
    log = "\n".join(lines)
    turn = s.add(
        [
            s.user("The server crashed overnight; read the whole log and tell me why."),
            *s.block([("bash", {"command": "cat logs/server-2025-03-14.log"}, log)], "Reading the full log."),
            s.say("The crash follows a burst of retries in the job runner; details below."),
        ]
    )
    s.hostile = {"turn": turn, "chars": len(log), "lines": len(lines)}
    s.fill_to_end()
    return s.finish(_doc(mb_output))


def mb_one_line(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """1 MB of minified JSON on a single line (an API dump with no newlines to cut at)."""
    s = _Script("mb-one-line", turns, seed)
    s.opening(0.25)
    needle = s.factory.new(2, s.turn)
    body = _minified_json(s.rng, MB, needle.text)
    turn = s.add(
        [
            s.user("Fetch the full orders export and check the totals."),
            *s.block([("bash", {"command": "curl -s http://localhost:8000/api/v1/orders/export"}, body)]),
            s.say("The export has the expected record count; totals match."),
        ]
    )
    s.hostile = {"turn": turn, "chars": len(body), "newlines": body.count("\n")}
    s.fill_to_end()
    return s.finish(_doc(mb_one_line))


def first_message_150k(turns: int = 20, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The first user message pastes a whole file (~150k tokens), larger than the window, constraint first."""
    s = _Script("first-message-150k", turns, seed)
    needle = s.factory.new(6, 1, "limit", str(s.rng.randrange(2, 10)))
    constraint = f"Constraint: {s.rng.choice(CONSTRAINTS)}. {needle.text}"
    s.constraint = {"id": needle.id, "needle": needle.text, "text": constraint}
    pasted = _pasted_source(s.rng, FIRST_MESSAGE_CHARS)
    text = f"{constraint}\n\n{s.fill(s.rng.choice(TASKS))}\n\nHere is the whole module dump:\n```python\n{pasted}```"
    s.add([s.user(text), s.say("That is a large paste; I'll work from the parts relevant to the task.")])
    s.hostile = {"turn": 1, "chars": len(text)}
    s.needle_turn()
    s.fill_to_end()
    return s.finish(_doc(first_message_150k))


def parallel_across_cut(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Turns of 8-12 parallel tool calls with large results, so any cut falls inside a group."""
    s = _Script("parallel-across-cut", turns, seed)
    widths = []
    while s.turn <= s.total:
        rng = s.rng
        calls = []
        for _ in range(rng.randrange(8, 13)):
            if rng.random() < 0.5:
                path = rng.choice(s.project.source_paths())
                body = s.project.files[path].splitlines()[: rng.randrange(60, 160)]
                calls.append(
                    (
                        "file_read",
                        {"path": path, "start_line": 1, "end_line": len(body)},
                        f"[{path} · lines 1-{len(body)}]\n" + "\n".join(body),
                    )
                )
            else:
                calls.append(
                    (
                        "bash",
                        {"command": f"tail -n 80 logs/worker-{rng.randrange(9)}.log"},
                        C.log_text(rng, lines=rng.randrange(30, 80)),
                    )
                )
        widths.append(len(calls))
        user = s.request()
        if s.turn == 2:
            _, sentence = s.needle_sentence()
            user += " " + sentence
        decision = ""
        if s.turn == 3:
            needle = s.factory.new(5, s.turn)
            decision = f"\n\nDecision: keep {needle.text} because the worker pool depends on it."
        s.add(
            [
                s.user(user),
                *s.block(calls, "Reading everything relevant in parallel."),
                s.say(s.fill(rng.choice(SUMMARIES)) + decision),
            ]
        )
    s.hostile = {"parallel_widths": widths}
    return s.finish(_doc(parallel_across_cut))


def images(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Screenshots pasted by the user (image_url parts) and returned by tools (list content)."""
    s = _Script("images", turns, seed)
    count = 0
    while s.turn <= s.total:
        rng = s.rng
        pasted = [data_url(screenshot_png(rng)) for _ in range(2)]
        user_text = s.request() + " Screenshots attached."
        if s.turn == 2:
            user_text += " " + s.needle_sentence()[1]
        shot = f"screenshots/step_{s.turn}.png"
        tool_image = [
            {"type": "text", "text": f"[{shot} · PNG image]"},
            {"type": "image_url", "image_url": {"url": data_url(screenshot_png(rng))}},
        ]
        count += 3
        s.add(
            [
                s.user(user_text, pasted),
                *s.block([("file_read", {"path": shot}, tool_image), s.action()]),
                s.say(s.fill(rng.choice(SUMMARIES))),
            ]
        )
    s.hostile = {"images": count}
    return s.finish(_doc(images))


def duplicate_ids(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Tool call ids restart at call_0 in every assistant message (some models and proxies do this)."""
    s = _Script("duplicate-ids", turns, seed)

    def restart(n: int) -> list[str]:
        return [f"call_{i}" for i in range(n)]

    s.normal_turn(s.fill(s.rng.choice(TASKS)), ids=restart)
    s.needle_turn(ids=restart)
    while s.turn <= s.total:
        if s.turn % 3 == 0:  # two assistant messages in one turn, both numbering from call_0
            calls1, calls2 = [s.action()], [s.action(), s.action()]
            s.add(
                [
                    s.user(s.request()),
                    *s.block(calls1, ids=restart(1)),
                    *s.block(calls2, ids=restart(2)),
                    s.say(s.fill(s.rng.choice(SUMMARIES))),
                ]
            )
        else:
            s.normal_turn(ids=restart)
    s.hostile = {"ids": "call_0.. restarted in every assistant message"}
    return s.finish(_doc(duplicate_ids))


def _explanation(s: _Script) -> str:
    """A long closing answer (~4k chars): conversation text an engine cannot mask, only remove
    (and so summarize) - the summarizer cases must reach the summarizer within 30 turns."""
    return "\n\n".join(" ".join(s.fill(s.rng.choice(SUMMARIES)) for _ in range(6)) for _ in range(6))


def _coding(case: str, turns: int, seed: int, doc: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    s = _Script(case, turns, seed)
    s.opening()
    while s.turn <= s.total:
        if s.turn == 5:
            needle = s.factory.new(5, s.turn)
            s.add(
                [
                    s.user(s.request()),
                    *s.block([s.action(), s.action()]),
                    s.say(f"Decision: use {needle.text} because the rollout script reads it."),
                ]
            )
        else:
            s.add(
                [
                    s.user(s.request()),
                    *s.block([s.action() for _ in range(s.rng.randrange(2, 4))]),
                    s.say(_explanation(s)),
                ]
            )
    return s.finish(doc)


def summarizer_raises(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A normal coding session while every summarization call fails (run with the "raises" summarizer)."""
    lines, answers = _coding("summarizer-raises", turns, seed, _doc(summarizer_raises))
    answers["hostile"] = {"summarizer": "raises"}
    return lines, answers


def summarizer_inflates(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A normal coding session whose summaries are longer than their input (the "inflate" summarizer)."""
    lines, answers = _coding("summarizer-inflates", turns, seed, _doc(summarizer_inflates))
    answers["hostile"] = {"summarizer": "inflate"}
    return lines, answers


def binary_output(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Tool output from binaries and terminals: NULs, control chars, ANSI, U+FFFD, 250k-char lines."""
    s = _Script("binary-output", turns, seed)
    s.opening()
    kinds: list[str] = []
    while s.turn <= s.total:
        rng = s.rng
        if s.turn % 3 != 0:
            s.normal_turn()
            continue
        kind = ("binary", "ansi", "surrogates", "long-line")[(s.turn // 3) % 4]
        kinds.append(kind)
        if kind == "binary":
            call = ("bash", {"command": "cat build/app.bin"}, _binary_garbage(rng, BINARY_CHUNK))
        elif kind == "ansi":
            needle = s.factory.new(2, s.turn) if "ansi" not in kinds[:-1] else None
            call = (
                "bash",
                {"command": "npm test --color=always"},
                _ansi_test_output(rng, s.project, needle.text if needle else None),
            )
        elif kind == "surrogates":
            call = ("bash", {"command": "dir /s C:\\Users"}, _replaced_surrogates(rng, BINARY_CHUNK))
        else:
            line = "".join(f"{rng.getrandbits(32):08x}" for _ in range(LONG_LINE_CHARS // 8))
            call = ("bash", {"command": "xxd -p -c 0 build/app.bin"}, line)
        s.add([s.user(s.request()), *s.block([call, s.action()]), s.say(s.fill(rng.choice(SUMMARIES)))])
    s.hostile = {"kinds": kinds}
    return s.finish(_doc(binary_output))


def huge_tool_args(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The assistant writes ~500 KB files (file_write arguments), several times."""
    s = _Script("huge-tool-args", turns, seed)
    s.opening()
    written = []
    while s.turn <= s.total:
        if s.turn % 7 != 4:
            s.normal_turn()
            continue
        path = f"src/generated/tables_{s.turn}.py"
        body = _pasted_source(s.rng, HUGE_ARGS_CHARS)
        written.append(s.turn)
        s.add(
            [
                s.user("Regenerate the lookup tables module from the spec."),
                *s.block(
                    [("file_write", {"path": path, "content": body}, f"Wrote {path} ({body.count(chr(10))} lines).")],
                    "Writing the regenerated module.",
                ),
                s.say(f"Regenerated {path}."),
            ]
        )
    s.hostile = {"write_turns": written, "chars": HUGE_ARGS_CHARS}
    return s.finish(_doc(huge_tool_args))


def broken_history(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A history damaged by a killed process: unanswered calls, orphan results, user-user, empty assistant."""
    s = _Script("broken-history", turns, seed)
    s.opening()
    damage: dict[str, list[int]] = {
        "dangling_call": [],
        "orphan_result": [],
        "user_user": [],
        "empty_assistant": [],
        "partial_parallel": [],
    }
    while s.turn <= s.total:
        step = s.turn % 8
        if step == 5:  # killed while the tool ran: the call has no result, the next turn starts with the user
            damage["dangling_call"].append(s.add([s.user(s.request()), *s.block([s.action()], answered=0)]))
        elif step == 1 and s.turn > 8:  # killed mid-parallel: 2 of 3 results recorded
            damage["partial_parallel"].append(
                s.add([s.user(s.request()), *s.block([s.action(), s.action(), s.action()], answered=2)])
            )
        elif step == 7:  # the assistant message was lost, its tool result was not
            name, _, output = s.action()
            damage["orphan_result"].append(
                s.add(
                    [
                        s.user(s.request()),
                        {"role": "tool", "tool_call_id": f"call_lost_{s.turn}", "name": name, "content": output},
                        s.say(s.fill(s.rng.choice(SUMMARIES))),
                    ]
                )
            )
        elif step == 3:  # the user sent twice before the answer
            damage["user_user"].append(
                s.add(
                    [
                        s.user(s.request()),
                        s.user("also: " + s.request()),
                        *s.block([s.action()]),
                        s.say(s.fill(s.rng.choice(SUMMARIES))),
                    ]
                )
            )
        elif step == 0:  # an interrupted stream: empty assistant text, no calls
            damage["empty_assistant"].append(
                s.add([s.user(s.request()), *s.block([s.action()]), {"role": "assistant", "content": ""}])
            )
        else:
            s.normal_turn()
    s.hostile = damage
    return s.finish(_doc(broken_history))


def token_dense(turns: int = 30, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """CJK, emoji and base64 text at well under 4 characters per token (chars/4 estimates undercount)."""
    s = _Script("token-dense", turns, seed)
    while s.turn <= s.total:
        rng = s.rng
        user = f"请检查这个问题 {rng.choice(EMOJI)} {_cjk(rng, rng.randrange(40, 200))} "
        if s.turn == 2:
            needle = s.factory.new(1, s.turn)
            user += f"记住这个值 {needle.text} 部署时要用。"
        calls = [_dense_output(rng) for _ in range(rng.randrange(1, 3))]
        s.add([s.user(user), *s.block(calls, "好的，我先看看。"), s.say(_cjk(rng, rng.randrange(100, 400)))])
    s.hostile = {"scripts": "CJK, emoji, base64"}
    return s.finish(_doc(token_dense))


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[..., tuple[list[dict[str, Any]], dict[str, Any]]]
    summarizer: str = "null"

    @property
    def doc(self) -> str:
        return _doc(self.build)


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case("mb-output", mb_output),
        Case("mb-one-line", mb_one_line),
        Case("first-message-150k", first_message_150k),
        Case("parallel-across-cut", parallel_across_cut),
        Case("images", images),
        Case("duplicate-ids", duplicate_ids),
        Case("summarizer-raises", summarizer_raises, "raises"),
        Case("summarizer-inflates", summarizer_inflates, "inflate"),
        Case("binary-output", binary_output),
        Case("huge-tool-args", huge_tool_args),
        Case("broken-history", broken_history),
        Case("token-dense", token_dense),
    )
}


def generate(name: str, turns: int | None = None, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One case's session lines and answers; `turns` None = the case's default length."""
    if name not in CASES:
        raise ValueError(f"unknown adversarial case {name!r}; choose from {', '.join(CASES)}.")
    build = CASES[name].build
    return build(seed=seed) if turns is None else build(turns, seed=seed)


# --------------------------------------------------------------------------- running


def write_cases(folder: Path, names: Sequence[str] | None = None, turns: int | None = None) -> dict[str, Any]:
    from bench.harness import Workload
    from bench.sessionio import write_session

    loaded = {}
    for name in names or CASES:
        path = folder / f"adv-{name}.jsonl"
        lines, answers = generate(name, turns)
        write_session(path, lines, answers)
        loaded[name] = Workload.load(name, path)
    return loaded


_TRACEBACKS: dict[str, str] = {}


def _traced(cls: type) -> type:
    """The contender class with the traceback of an escaping exception kept (the harness keeps one line)."""

    class Traced(cls):  # type: ignore[misc, valid-type]
        def run(self, lines: Any, config: Any) -> Any:
            try:
                yield from super().run(lines, config)
            except Exception:
                _TRACEBACKS["last"] = traceback.format_exc()
                raise

    Traced.__name__ = Traced.__qualname__ = cls.__name__
    return Traced


def run_cases(
    contenders: Sequence[type],
    workloads: dict[str, Any],
    *,
    window: int = WINDOW,
    progress: bool = True,
    caps: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Every contender on every case (the case's own summarizer); one row per run, never raises."""
    from bench.contenders.base import OUTPUT_RESERVE, RunConfig
    from bench.harness import run_one

    register_summarizers()
    caps = CAP_OVERRIDES if caps is None else caps
    rows = []
    for name, workload in workloads.items():
        summarizer = CASES[name].summarizer
        for cls in contenders:
            contender = _traced(cls)()
            if contender.name in ONLY_IN and name not in ONLY_IN[contender.name]:
                continue
            _TRACEBACKS.pop("last", None)
            calls_before = sum(SUMMARIZER_CALLS.values())
            # Peers print their summarizer failures (aider: to stdout); keep stdout for the tables.
            with contextlib.redirect_stdout(sys.stderr):
                result = run_one(
                    contender,
                    workload,
                    RunConfig(window, summarizer, OUTPUT_RESERVE),
                    cap_s=caps.get(contender.name, CAP_S),
                )
            row = result.as_dict()
            row["case"] = name
            if summarizer in HOSTILE_SUMMARIZERS:
                row["summarizer_calls"] = sum(SUMMARIZER_CALLS.values()) - calls_before
            if result.status == "error" and "last" in _TRACEBACKS:
                row["traceback"] = _TRACEBACKS.pop("last")[-4000:]
            rows.append(row)
            if progress:
                print(
                    f"  {name:>20} {contender.name:<22} {row['status']:<13} {row['wall_s']:6.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return rows


def section(
    contenders: Sequence[type],
    folder: Path,
    *,
    turns: int | None = None,
    progress: bool = True,
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The adversarial part of a results document (also embedded by `python -m bench all`)."""
    started = time.perf_counter()
    workloads = write_cases(folder, names, turns)
    rows = run_cases(contenders, workloads, progress=progress)
    return {
        "window": WINDOW,
        "turns": turns,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "cases": {
            name: {
                "doc": CASES[name].doc,
                "summarizer": CASES[name].summarizer,
                "turns": w.turns,
                "sha256": w.answers.get("session_sha256"),
                "hostile": _short(w.answers.get("hostile")),
                "needles": len(w.answers.get("needles", [])),
            }
            for name, w in workloads.items()
        },
        "results": rows,
    }


def _short(value: Any) -> Any:
    text = json.dumps(value, default=str)
    return value if len(text) < 400 else text[:400] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench adversarial", description=__doc__.split("\n\n")[0])
    parser.add_argument("--contenders", help="comma-separated names (default: all)")
    parser.add_argument("--cases", help=f"comma-separated case names (default: all 12: {', '.join(CASES)})")
    parser.add_argument("--turns", type=int, help=f"turns per case (default: each case's own, 20-30; min {MIN_TURNS})")
    parser.add_argument("--out", help=f"results JSON (default: {RESULTS_DIR}/adversarial.json)")
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--quiet", action="store_true", help="no per-run progress on stderr")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import myrm_tui  # noqa: F401  (offline litellm/tiktoken environment before any peer import)
    from bench.grid import _contenders, _versions, publish
    from bench.tables import render_adversarial

    names = args.cases.split(",") if args.cases else None
    unknown = [n for n in names or () if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    if args.turns is not None and args.turns < MIN_TURNS:
        parser.error(f"--turns must be at least {MIN_TURNS}")
    contenders = _contenders(args.contenders.split(",") if args.contenders else None)
    with tempfile.TemporaryDirectory(prefix="bench-adversarial-") as tmp:
        adversarial = section(contenders, Path(tmp), turns=args.turns, progress=not args.quiet, names=names)
    document = {
        "mode": "adversarial",
        "command": "python -m bench adversarial" + (" " + " ".join(argv) if argv else ""),
        "generated_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "elapsed_s": adversarial["elapsed_s"],
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "versions": _versions(),
        "seed": SEED,
        "adversarial": adversarial,
    }
    publish(
        document,
        Path(args.out) if args.out else RESULTS_DIR / "adversarial.json",
        render_adversarial(document),
        args.markdown,
        adversarial["elapsed_s"],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
