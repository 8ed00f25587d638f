"""Seeded synthetic sessions in the replay format, with needles planted in six carriers.

Why scripted sessions: the assistant's text and tool calls are fixed, so every contender sees
exactly the same history and only its context management differs (docs/benchmarks.md, "Workloads").
A session is a pure function of (kind, turns, seed): same arguments, same bytes.

Sessions carry no system message: each contender adds its own fixed system prompt (as `myrm
replay` does), and the scorer checks that it never changes.

    python -m bench.workload --kind coding --turns 400 --seed 1 --out /tmp/coding.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from bench import content as C
from bench.needles import PROBE_LAGS, Needle, NeedleFactory, probe_lines
from bench.png import data_url, screenshot_png
from bench.sessionio import write_session

GENERATOR_VERSION = 1
KINDS = ("coding", "chatty", "tool-storm")
MIN_TURNS, MAX_TURNS = 50, 800
# Cadences of docs/benchmarks.md, "Workloads".
BIG_JSON_EVERY = 25
BIG_JSON_CHARS = 200_000
SCREENSHOT_EVERY = 37
BIG_LOG_CHARS = 1_048_576  # "a 1 MB log once"
STORM_WIDTH = 8  # parallel calls per tool-storm turn
# One generic needle every 8 turns plus one per other big JSON: about 30 per 200 turns.
NEEDLE_EVERY = 8
NEEDLE_OFFSET = 4
# Carrier 4: the file is edited and re-read this many turns after the first read.
REREAD_DELAY = (2, 4)
# Chance that a file_read picks a file read before (identical output unless it was edited).
REREAD_CHANCE = 0.4

# Idle gaps (`--idle`): a user pause every IDLE_EVERY turns, longer than every provider's short
# cache lifetime (context/window/config.py CACHE_TTL_S: 5 min Anthropic, 10 min OpenAI): three coffee
# breaks (12, 15, 20 min), then a meeting (2 h: past even the 1 h caches and past the keep-alive's
# cap), in turn. A fixed cycle rather than a draw, so every 100 turns hold each kind once.
IDLE_EVERY = 25
IDLE_OFFSET = 12  # off the big-JSON turns (multiples of 25), so the two effects stay apart
IDLE_CYCLE_S = (720, 900, 1200, 7200)

# Carriers placed on the rotating schedule, per kind (3 rides on big-JSON turns, 6 on turn 1).
ROTATING_CARRIERS = {"coding": (1, 2, 4, 5), "tool-storm": (1, 2, 4, 5), "chatty": (1, 5)}

CONSTRAINTS = (
    "never touch the vendor/ folder",
    "never modify files under tests/fixtures/",
    "do not add new third-party dependencies",
    "keep the public API of the api module unchanged",
    "never run migrations against the shared staging database",
)
TASKS = (
    "The nightly CI job for {pkg} has been red since Tuesday; find out why and fix it.",
    "We need retries with backoff in the {mod} module before the release; please implement them.",
    "Refactor {mod} so the {noun} handling is testable, then add tests.",
    "Users report slow {noun} loading in {pkg}; profile and speed it up.",
)
REQUESTS = (
    "Can you look at why test_{ident} fails on CI?",
    "Please add a `{noun}_limit` option to {ident} in {path}.",
    "Why does {mod} keep retrying when the {noun} service is down?",
    "Run the tests again and tell me what is still failing.",
    "Show me what changed in {path} since the last commit.",
    "Clean up the logging in {path}; it is too noisy at INFO.",
    "Is {ident} still used anywhere? If not, remove it.",
    "The {noun} cache seems stale after a deploy - check {path}.",
    "ok, continue",
    "Looks good. Next, handle the empty {noun} case in {ident}.",
    "Rename {ident} to something clearer and update the callers.",
    "What does {mod} do with a {noun} that has no {attr}?",
)
ACKS = (
    "I'll start by reading the relevant code.",
    "Let me check the current state first.",
    None,
    None,
    "Running the tests to see where we are.",
    "Looking at the diff and the failing test together.",
)
SUMMARIES = (
    "I updated {path}: {ident} now checks the {noun} before using it, and the tests pass locally.",
    "The failure comes from {ident} returning a stale {noun}; I changed it to reload on a cache miss.",
    "Nothing else references {ident}, so I removed it and its test.",
    "The remaining failures are in test_{mod}; they need the {noun} fixture that the previous change renamed.",
    "I added the option with a default of {n}, documented it in the docstring, and covered it with two tests.",
    "The diff only touches {path}; the behaviour change is limited to the empty-{noun} path.",
)
NEEDLE_USER_TEMPLATES = (
    "By the way, ops told me the value to use is {needle} - keep that in mind.",
    "For the record: {needle} (from the runbook, do not guess it).",
    "Note {needle}, we'll need it when we deploy.",
    "Before I forget, the staging setting is {needle}, please use it for the smoke test.",
)
DECISION_TEMPLATES = (
    "Decision: we keep {needle} for now, because changing it would break the {noun} migration.",
    "Decision: use {needle} because the {mod} service already depends on it.",
    "Decision: pin {needle} - the alternative made test_{mod} flaky.",
)
CHAT_TOPICS = (
    "How should I structure {noun} validation in a Python service?",
    "What's the difference between a {noun} queue and a {noun} log?",
    "Can you explain why {ident} would be slow with a large {noun}?",
    "Give me a short checklist for reviewing a pull request that touches {mod}.",
    "Is it better to {verb} the {noun} eagerly or lazily?",
    "thanks! and what about error handling there?",
    "Summarize the trade-offs we discussed so far.",
)


def _fill(rng: random.Random, template: str, project: C.FakeProject, **extra: str) -> str:
    mod = rng.choice(C.MODULES)
    values = {
        "pkg": project.package,
        "mod": mod,
        "noun": rng.choice(C.NOUNS),
        "verb": rng.choice(C.VERBS),
        "ident": C.ident(rng),
        "attr": rng.choice(C.ATTRS),
        "path": f"src/{project.package}/{mod}.py",
        "n": str(rng.randrange(2, 100)),
        **extra,
    }
    return template.format(**values)


class _Turn:
    """Collects the messages one turn adds, pairing every call with its result."""

    def __init__(self, builder: _Builder) -> None:
        self.builder = builder
        self.messages: list[dict[str, Any]] = []

    def user(self, text: str, images: list[str] = ()) -> None:
        if images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
            parts += [{"type": "image_url", "image_url": {"url": url}} for url in images]
            self.messages.append({"role": "user", "content": parts})
        else:
            self.messages.append({"role": "user", "content": text})

    def calls(self, calls: list[tuple[str, dict[str, Any], str]], text: str | None = None) -> None:
        ids = [self.builder.call_id() for _ in calls]
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                    for call_id, (name, args, _) in zip(ids, calls, strict=True)
                ],
            }
        )
        for call_id, (name, _, output) in zip(ids, calls, strict=True):
            self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": output})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})


class _Builder:
    def __init__(self, kind: str, turns: int, seed: int) -> None:
        self.kind = kind
        self.turns = turns
        self.seed = seed
        self.rng = random.Random(f"workload:{kind}:{seed}")
        self.project = C.FakeProject.create(seed)
        self.factory = NeedleFactory(random.Random(f"needles:{kind}:{seed}"))
        self._call_ids: set[str] = set()
        self.recent_reads: list[str] = []
        self.recent_ranges: list[tuple[str, int, int]] = []
        self.reread_updates: dict[int, list[tuple[Needle, str]]] = {}
        self.config_files = 0
        self.constraint_text = ""
        self.big_log_turn = self.rng.randrange(max(2, turns * 2 // 5), max(3, turns * 3 // 5))

    # ------------------------------------------------------------------ helpers

    def call_id(self) -> str:
        while True:
            call_id = f"call_{self.rng.getrandbits(96):024x}"
            if call_id not in self._call_ids:
                self._call_ids.add(call_id)
                return call_id

    def fill(self, template: str, **extra: str) -> str:
        return _fill(self.rng, template, self.project, **extra)

    def read(self, path: str | None = None) -> tuple[str, dict[str, Any], str]:
        rng = self.rng
        if path is None:
            if self.recent_reads and rng.random() < REREAD_CHANCE:
                path = rng.choice(self.recent_reads[-12:])
            else:
                path = rng.choice(sorted(self.project.files))
        if path not in self.recent_reads[-12:]:
            self.recent_reads.append(path)
        return "file_read", {"path": path}, C.file_read_output(path, self.project.files[path])

    def read_range(self) -> tuple[str, dict[str, Any], str]:
        """A ranged read (tool-storm keeps outputs small); re-reads repeat the same range exactly."""
        rng = self.rng
        if self.recent_ranges and rng.random() < REREAD_CHANCE:
            path, first, last = rng.choice(self.recent_ranges[-16:])
        else:
            path = rng.choice(self.project.source_paths())
            total = self.project.files[path].count("\n")
            first = rng.randrange(1, max(2, total - 20))
            last = min(total, first + rng.randrange(20, 80))
            self.recent_ranges.append((path, first, last))
        lines = self.project.files[path].splitlines()
        total = len(lines)
        last = min(last, total)
        first = min(first, last)
        body = "\n".join(lines[first - 1 : last])
        return (
            "file_read",
            {"path": path, "start_line": first, "end_line": last},
            f"[{path} · lines {first}-{last} of {total:,}]\n{body}",
        )

    def pytest(self) -> tuple[str, dict[str, Any], str]:
        failing = self.rng.random() < 0.5
        target = self.rng.choice(("tests", f"tests/test_{self.rng.choice(C.MODULES)}.py", "tests -x"))
        return (
            "bash",
            {"command": f"python -m pytest -v {target}"},
            C.pytest_log(self.rng, self.project, failing=failing),
        )

    def diff(self) -> tuple[str, dict[str, Any], str]:
        return (
            "bash",
            {"command": self.rng.choice(("git diff", "git diff HEAD~1", "git diff --stat -p"))},
            C.git_diff(self.rng, self.project),
        )

    def grep(self) -> tuple[str, dict[str, Any], str]:
        pattern = self.rng.choice((C.ident(self.rng), self.rng.choice(C.NOUNS), "logger.warning", "raise ValueError"))
        return "grep", {"pattern": pattern, "glob": "*.py"}, C.grep_output(self.rng, self.project, pattern)

    def glob(self) -> tuple[str, dict[str, Any], str]:
        prefix = self.rng.choice((f"src/{self.project.package}/", "tests/", "config/"))
        return "glob", {"pattern": prefix + "**/*"}, C.glob_output(self.project, prefix)

    def edit(self) -> tuple[str, dict[str, Any], str]:
        rng = self.rng
        path = rng.choice(self.project.source_paths())
        lines = self.project.files[path].splitlines()
        candidates = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(('"""', "#"))]
        index = rng.choice(candidates)
        old = lines[index]
        new = (
            old + f"  # {rng.choice(C.VERBS)}: {rng.choice(C.NOUNS)}"
            if rng.random() < 0.5
            else old.replace(old.strip(), f"{old.strip()}  # TODO {rng.choice(C.NAMES)}")
        )
        lines[index] = new
        self.project.files[path] = "\n".join(lines) + "\n"
        return (
            "file_edit",
            {"path": path, "old": old.strip(), "new": new.strip()},
            f"Edited {path}: 1 replacement at line {index + 1}.",
        )

    def write(self) -> tuple[str, dict[str, Any], str]:
        rng = self.rng
        module = f"{rng.choice(C.NOUNS)}_{rng.choice(C.VERBS)}"
        path = f"src/{self.project.package}/{module}.py"
        body = C.python_source(rng, module)
        self.project.files[path] = body
        return "file_write", {"path": path, "content": body}, f"Wrote {path} ({body.count(chr(10))} lines)."

    def misc(self) -> tuple[str, dict[str, Any], str]:
        rng = self.rng
        roll = rng.randrange(3)
        if roll == 0:
            return "bash", {"command": "git status"}, C.git_status(rng, self.project)
        if roll == 1:
            return "bash", {"command": "git log --oneline -n 20"}, C.git_log_oneline(rng, 20)
        return "bash", {"command": "tail -n 40 logs/app.log"}, C.log_text(rng, lines=40)

    def normal_action(self) -> tuple[str, dict[str, Any], str]:
        roll = self.rng.random()
        for threshold, action in (
            (0.35, self.read),
            (0.50, self.pytest),
            (0.62, self.diff),
            (0.74, self.grep),
            (0.79, self.glob),
            (0.91, self.edit),
            (0.94, self.write),
        ):
            if roll < threshold:
                return action()
        return self.misc()

    def small_action(self) -> tuple[str, dict[str, Any], str]:
        """Tool-storm calls: many, each short."""
        roll = self.rng.random()
        for threshold, action in ((0.45, self.read_range), (0.65, self.grep), (0.75, self.glob), (0.85, self.edit)):
            if roll < threshold:
                return action()
        return self.misc()

    # ------------------------------------------------------------------ special carriers

    def big_json(self, needle: Needle | None) -> tuple[str, dict[str, Any], str]:
        page = self.rng.randrange(1, 40)
        body = C.big_json(self.rng, BIG_JSON_CHARS, note=needle.text if needle else None)
        return "bash", {"command": f"curl -s 'http://localhost:8000/api/v1/orders?page={page}&limit=500' | jq ."}, body

    def big_log(self) -> tuple[str, dict[str, Any], str]:
        return "bash", {"command": "cat logs/server-2025-03-14.log"}, C.log_text(self.rng, min_chars=BIG_LOG_CHARS)

    def long_output(self, needle: Needle) -> tuple[str, dict[str, Any], str]:
        lines = C.build_log(self.rng, self.project, self.rng.randrange(200, 401)).split("\n")
        middle = len(lines) // 2
        lines.insert(
            middle,
            f"2025-03-14T10:{middle % 60:02d}:07.412Z WARN  [config.loader] "
            f"override applied {needle.text} (source=env)",
        )
        return "bash", {"command": f"make ci PACKAGE={self.project.package} 2>&1"}, "\n".join(lines)

    def config_body(self, needle_line: str) -> str:
        rng = self.rng
        lines = [
            "[server]",
            'host = "0.0.0.0"',
            f"workers = {rng.randrange(1, 17)}",
            "",
            "[database]",
            f"pool_size = {rng.randrange(2, 40)}",
            f"timeout_s = {rng.randrange(1, 60)}",
            "",
        ]
        for section in rng.sample(C.NOUNS, rng.randrange(2, 6)):
            lines.append(f"[{section}]")
            lines += [f"{rng.choice(C.ATTRS)} = {rng.randrange(1000)}" for _ in range(rng.randrange(2, 6))]
            lines.append("")
        lines.insert(len(lines) // 2, f"# {needle_line}  (pinned by ops; change only with a ticket)")
        return "\n".join(lines) + "\n"

    def plant_reread(self, turn: int, needle: Needle) -> tuple[str, dict[str, Any], str]:
        self.config_files += 1
        path = f"config/{self.rng.choice(C.NOUNS)}_{self.config_files}.toml"
        self.project.files[path] = self.config_body(needle.text)
        new_value = self.factory.changed_value(needle)
        update_turn = min(self.turns, turn + self.rng.randrange(REREAD_DELAY[0], REREAD_DELAY[1] + 1))
        if update_turn > turn:
            self.reread_updates.setdefault(update_turn, []).append((needle, path))
            needle.old_value, needle.value, needle.updated_turn = needle.value, new_value, update_turn
        return self.read(path)

    def update_reread(self, needle: Needle, path: str) -> list[tuple[str, dict[str, Any], str]]:
        old, new = needle.old_text, needle.text
        self.project.files[path] = self.project.files[path].replace(old, new)
        edit = ("file_edit", {"path": path, "old": old, "new": new}, f"Edited {path}: 1 replacement.")
        return [edit, self.read(path)]

    # ------------------------------------------------------------------ turns

    def needles_for(self, turn: int) -> tuple[dict[int, Needle], Needle | None]:
        """Needles planted this turn, by carrier; plus the JSON needle (carrier 3) if any."""
        planted: dict[int, Needle] = {}
        if turn == 1:
            planted[6] = self.factory.new(6, 1, "limit", str(self.rng.randrange(2, 10)))
        elif turn % NEEDLE_EVERY == NEEDLE_OFFSET:
            rotation = ROTATING_CARRIERS[self.kind]
            carrier = rotation[(turn // NEEDLE_EVERY) % len(rotation)]
            planted[carrier] = self.factory.new(carrier, turn)
        json_needle = None
        if self.kind != "chatty" and turn % BIG_JSON_EVERY == 0 and turn % (2 * BIG_JSON_EVERY) == BIG_JSON_EVERY:
            json_needle = self.factory.new(3, turn)
        return planted, json_needle

    def user_text(self, turn: int, planted: dict[int, Needle], templates: tuple[str, ...]) -> str:
        if turn == 1:
            constraint = planted[6]
            self.constraint_text = f"Constraint: {self.rng.choice(CONSTRAINTS)}. {constraint.text}"
            return f"{self.constraint_text}\n\n{self.fill(self.rng.choice(TASKS))}"
        text = self.fill(self.rng.choice(templates))
        if 1 in planted:
            text += " " + self.rng.choice(NEEDLE_USER_TEMPLATES).format(needle=planted[1].text)
        return text

    def final_text(self, planted: dict[int, Needle], templates: tuple[str, ...]) -> str:
        text = self.fill(self.rng.choice(templates))
        if 5 in planted:
            text += "\n\n" + self.fill(self.rng.choice(DECISION_TEMPLATES), needle=planted[5].text)
        return text

    def specials(
        self, turn: int, planted: dict[int, Needle], json_needle: Needle | None
    ) -> list[tuple[str, dict[str, Any], str]]:
        calls = []
        if turn % BIG_JSON_EVERY == 0:
            calls.append(self.big_json(json_needle))
        if turn == self.big_log_turn:
            calls.append(self.big_log())
        if 2 in planted:
            calls.append(self.long_output(planted[2]))
        if 4 in planted:
            calls.append(self.plant_reread(turn, planted[4]))
        for needle, path in self.reread_updates.pop(turn, []):
            calls += self.update_reread(needle, path)
        return calls

    def coding_turn(self, turn: int) -> list[dict[str, Any]]:
        rng = self.rng
        planted, json_needle = self.needles_for(turn)
        t = _Turn(self)
        images = [data_url(screenshot_png(rng))] if turn % SCREENSHOT_EVERY == 0 else []
        text = self.user_text(turn, planted, REQUESTS)
        if images:
            text += " Here is a screenshot of what I see."
        t.user(text, images)
        first = self.specials(turn, planted, json_needle) + [self.normal_action() for _ in range(rng.randrange(1, 4))]
        t.calls(first, rng.choice(ACKS))
        if rng.random() < 0.35:
            t.calls([self.normal_action() for _ in range(rng.randrange(1, 3))])
        t.say(self.final_text(planted, SUMMARIES))
        return t.messages

    def storm_turn(self, turn: int) -> list[dict[str, Any]]:
        planted, json_needle = self.needles_for(turn)
        t = _Turn(self)
        t.user(self.user_text(turn, planted, REQUESTS))
        calls = self.specials(turn, planted, json_needle)
        calls += [self.small_action() for _ in range(max(0, STORM_WIDTH - len(calls)))]
        t.calls(calls, "Gathering context in parallel.")
        t.say(self.final_text(planted, SUMMARIES))
        return t.messages

    def chat_answer(self) -> str:
        rng = self.rng
        paragraphs = []
        for _ in range(rng.randrange(1, 5)):
            sentences = [self.fill(rng.choice(SUMMARIES)) for _ in range(rng.randrange(2, 6))]
            paragraphs.append(" ".join(sentences))
        if rng.random() < 0.3:
            snippet = "\n".join(
                C.python_source(rng, rng.choice(C.MODULES)).splitlines()[10 : 10 + rng.randrange(8, 30)]
            )
            paragraphs.append(f"```python\n{snippet}\n```")
        return "\n\n".join(paragraphs)

    def chatty_turn(self, turn: int) -> list[dict[str, Any]]:
        planted, _ = self.needles_for(turn)
        t = _Turn(self)
        t.user(self.user_text(turn, planted, CHAT_TOPICS))
        answer = self.chat_answer()
        if 5 in planted:
            answer += "\n\n" + self.fill(self.rng.choice(DECISION_TEMPLATES), needle=planted[5].text)
        t.say(answer)
        return t.messages

    def build(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        make_turn = {"coding": self.coding_turn, "chatty": self.chatty_turn, "tool-storm": self.storm_turn}[self.kind]
        turn_lines = [{"turn": turn, "messages": make_turn(turn)} for turn in range(1, self.turns + 1)]
        for needle in self.factory.needles:
            needle.schedule_probes(self.turns)
        probes = probe_lines(self.factory.needles)
        lines: list[dict[str, Any]] = []
        for line in turn_lines:
            lines.append(line)
            lines += probes.get(line["turn"], [])
        constraint = next(n for n in self.factory.needles if n.carrier == 6)
        answers = {
            "generator": "bench.workload",
            "version": GENERATOR_VERSION,
            "kind": self.kind,
            "turns": self.turns,
            "seed": self.seed,
            "lags": list(PROBE_LAGS),
            "constraint": {"id": constraint.id, "needle": constraint.text, "text": self.constraint_text},
            "needles": [n.as_answer() for n in self.factory.needles],
        }
        return lines, answers


def idle_gaps(turns: int) -> dict[int, int]:
    """turn → seconds of pause before it (IDLE_* above). The messages of an idle session are
    those of the plain one with the same arguments: only the clock differs."""
    return {
        turn: IDLE_CYCLE_S[index % len(IDLE_CYCLE_S)]
        for index, turn in enumerate(range(IDLE_OFFSET, turns + 1, IDLE_EVERY))
    }


def generate(kind: str, turns: int, seed: int, *, idle: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The session lines (turn and probe objects, in order) and the answers sidecar content.
    `idle` adds `gap_s` pauses (idle_gaps) to some turn lines; the messages stay the same."""
    if kind not in KINDS:
        raise ValueError(f"unknown workload kind {kind!r}; choose one of {', '.join(KINDS)}.")
    if not MIN_TURNS <= turns <= MAX_TURNS:
        raise ValueError(f"turns must be between {MIN_TURNS} and {MAX_TURNS} (got {turns}).")
    lines, answers = _Builder(kind, turns, seed).build()
    if idle:
        gaps = idle_gaps(turns)
        lines = [
            {"turn": line["turn"], "gap_s": gaps[line["turn"]], "messages": line["messages"]}
            if "messages" in line and line["turn"] in gaps
            else line
            for line in lines
        ]
        answers["idle_gaps"] = {str(turn): gap for turn, gap in gaps.items()}
    return lines, answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.workload", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=KINDS, default="coding")
    parser.add_argument("--turns", type=int, default=200, help=f"{MIN_TURNS}-{MAX_TURNS}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--idle", action="store_true", help="add user pauses longer than the cache TTL (gap_s)")
    parser.add_argument("--out", required=True, help="session path; the answers go to <out>.answers.json")
    args = parser.parse_args(argv)
    try:
        lines, answers = generate(args.kind, args.turns, args.seed, idle=args.idle)
    except ValueError as exc:
        parser.error(str(exc))
    sidecar = write_session(args.out, lines, answers)
    probes = sum(len(n["probes"]) for n in answers["needles"])
    print(f"wrote {args.out} ({args.turns} turns, {len(answers['needles'])} needles, {probes} probes) and {sidecar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
