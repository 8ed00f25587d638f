"""G1: coding sessions of real command output, with facts in eight formats, probed by name.

Why: the seeded workload (`workload.py`) plants `NEEDLE-<hex> field=value` lines, a syntax an
engine can learn to keep; its figures graded the engine on the shape it was tuned for. These
sessions wrap output captured on this machine at run time (`pip list --format json`, `dpkg -l`,
`dpkg-query` rows, `/var/log/dpkg.log`, `ls -laR`, `git show` diffs, real source files and docs,
`pytest -v` runs, a logging program's run) and plant facts the way they occur in such output:
one record of a JSON or YAML list with an extra key (or a record like the others), a CSV row, a
log line at another level (or the same), a failing test's assertion, a line added to a real
diff, a comment in a real source file, a sentence in a real doc, a user's remark, an assistant's
decision, a setting changed between two reads of a file. No two facts share a syntax, none
carries a common marker, and each is probed by its natural identifier (a field or package name,
a phrase); the scorer checks that the value is verbatim in the prompt (`bench/score.py`: the
answers' `needle` is the value, which occurs nowhere else in the session).

Places (the answers' `carrier`): 1 a user sentence, 2 the middle of a long output, 3 a record
inside a JSON output, 4 a value changed in a re-read file, 5 an assistant decision. Some facts
are named later (by the field name, never the value) by the user or the assistant, as a
conversation refers back to what mattered (`named_turn`).

Measure on what you did not tune: `TUNING_SEED` is the development seed; figures of record are
on `HELD_OUT_SEEDS` (docs/benchmarks.md, G1).

    python -m bench.fact_sessions --out DIR [--seeds 0 1 2 3] [--turns 200] [--root REPO]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.content import file_read_output
from bench.needles import PROBE_LAGS
from bench.sessionio import write_session

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = "bench.fact_sessions"
TUNING_SEED = 0
HELD_OUT_SEEDS = (1, 2, 3)
DEFAULT_TURNS = 200
CAPTURE_TIMEOUT_S = 300
FORMATS = ("json", "yaml", "csv", "log", "trace", "diff", "comment", "prose")
PLACES = {1: "user-sentence", 2: "mid-output", 3: "json-output", 4: "reread-file", 5: "assistant-decision"}
# One fact planted every FACT_EVERY turns (from turn 2): ~66 in 200 turns, 7-9 per format.
FACT_EVERY = 3
# The (format, place) mix one cycle of plants draws from, shuffled per seed: every format in
# its natural places, long outputs most (they are most of a coding session's tokens).
FACT_MIX = (
    ("prose", 1),
    ("prose", 1),
    ("prose", 5),
    ("prose", 5),
    ("prose", 2),
    ("json", 3),
    ("json", 3),
    ("json", 3),
    ("json", 4),
    ("yaml", 2),
    ("yaml", 2),
    ("yaml", 4),
    ("csv", 2),
    ("csv", 2),
    ("csv", 4),
    ("log", 2),
    ("log", 2),
    ("log", 2),
    ("trace", 2),
    ("trace", 2),
    ("trace", 2),
    ("diff", 2),
    ("diff", 2),
    ("diff", 2),
    ("comment", 2),
    ("comment", 2),
    ("comment", 4),
)
# Share of the facts in tool output (places 2-4) that a later message names (never with the value).
NAMED_LATER_SHARE = 0.4
MENTION_DELAYS = (1, 2, 3)  # before the first probe (lag 5)
# JSON / YAML / CSV / log facts alternate between breaking their output's shape (an extra key,
# column or level) and looking like every other record or line of it; this is the chance the
# first of each format breaks it.
SHAPE_BREAK_SHARE = 0.5
REREAD_DELAYS = (4, 7)  # plant turns are 2 mod 3, so the re-read lands on a 0 mod 3 turn
LOG_FILES = 260  # files the logging program indexes per run: a ~270-line log
PYTEST_CASES = 48  # parametrised cases of the scratch test module

# Identifiers: two words joined, checked absent from every captured output.
_ID_FIRST = (
    "lease", "relay", "spool", "ledger", "quota", "shard", "beacon", "mirror", "ingest", "canary", "fanout",
    "drain", "warmup", "cohort", "tenant", "rollout", "backfill", "harvest", "courier", "sentinel", "anchor",
    "ballast", "cinder", "dynamo", "ember", "falcon", "glacier", "harbor", "kestrel", "lantern", "meridian",
)  # fmt: skip
_ID_SECOND = (
    "ttl", "host", "owner", "ring", "window", "ceiling", "floor", "budget", "dir", "quorum", "cadence", "channel",
    "limit", "pool", "epoch", "region", "tier", "slot", "grace", "stride", "backoff", "bucket", "shim", "gate",
)  # fmt: skip
_WORDS = (
    "heron", "osprey", "marten", "juniper", "quartz", "cobalt", "saffron", "tundra", "willow", "basalt", "fjord",
    "larch", "onyx", "puffin", "sorrel", "teal", "umber", "vireo", "yarrow", "zephyr", "alder", "bramble",
)  # fmt: skip
_PEOPLE = ("maya", "tomas", "ines", "kofi", "ruth", "yusuf", "lena", "arjun", "greta", "mateo", "sana", "oskar")
_SURNAMES = ("okafor", "lindqvist", "moreau", "tanaka", "haddad", "novak", "reyes", "brandt", "kowalski", "silva")
_PROJECTS = ("OPS", "INFRA", "REL", "SEC", "DATA", "PLAT")


def _value(rng: random.Random) -> str:
    """A value with letters and digits (never a bare number an engine's own counts could print)."""
    kind = rng.randrange(9)
    w1, w2 = rng.sample(_WORDS, 2)
    if kind == 0:
        return f"{w1}-{w2}-{rng.randrange(2, 99)}.internal"
    if kind == 1:
        return f"{rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 40)}+ops{rng.randrange(2, 99)}"
    if kind == 2:
        return f"{rng.choice(_PROJECTS)}-{rng.randrange(1000, 9999)}"
    if kind == 3:
        return f"{rng.randrange(1200, 98000)}ms"
    if kind == 4:
        return f"{rng.randrange(130, 9000)}MiB"
    if kind == 5:
        return f"/srv/{w1}/{w2}-{rng.randrange(2, 99)}"
    if kind == 6:
        return f"{rng.choice(_PEOPLE)}.{rng.choice(_SURNAMES)}{rng.randrange(2, 99)}"
    if kind == 7:
        return f"{w1}-{rng.getrandbits(24):06x}"
    return f"{w1}-{w2}-q{rng.randrange(2, 99)}"


# --------------------------------------------------------------------------- capture


@dataclass
class Captures:
    """Real outputs of this machine, captured once per run."""

    pip_records: list[dict[str, str]]
    dpkg_l: str
    dpkg_rows: list[str]
    dpkg_log: list[str]
    listings: list[tuple[str, str]]  # (command, output)
    diffs: list[tuple[str, str]]  # (command, output) of `git show HASH -- FILE`
    git_stat: str
    sources: list[tuple[str, str]]  # (path, text)
    docs: list[tuple[str, str]]
    pytest_pass: str
    index_log: str
    workdir: Path  # scratch folder of the programs run per fact
    root: Path

    def corpus(self) -> str:
        parts = [json.dumps(self.pip_records), self.dpkg_l, "\n".join(self.dpkg_rows), "\n".join(self.dpkg_log)]
        parts += [o for _, o in self.listings] + [o for _, o in self.diffs] + [self.git_stat]
        parts += [t for _, t in self.sources] + [t for _, t in self.docs] + [self.pytest_pass, self.index_log]
        return "\n".join(parts)


def _run(command: list[str], cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(
        command,
        check=False,
        cwd=cwd,
        input=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=CAPTURE_TIMEOUT_S,
        env={**os.environ, "PYTHONHASHSEED": "0", "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    output = proc.stdout.rstrip("\n")
    if proc.returncode:
        output += f"\n[exit code {proc.returncode}]"
    return output


# The logging program run per log / trace fact: it indexes real source files, one INFO line each,
# and at one file logs what it was asked to (a warning, an info line, or an exception with its
# traceback). Its output is the run's real stdout.
INDEX_PROGRAM = '''"""Index the sources of a tree: one log line per file."""
import hashlib
import logging
import sys
from pathlib import Path

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("index")


def ceiling(name, value):
    raise ValueError(f"{name} is above the relay ceiling ({value}); refusing to index further")


def check(name, value):
    return ceiling(name, value)


def main(root, limit, at, mode, message, name, value):
    files = sorted(p for p in Path(root).rglob("*.py") if "__pycache__" not in p.parts)[: int(limit)]
    for i, path in enumerate(files):
        data = path.read_bytes()
        log.info("%s %d lines sha1=%s", path.relative_to(root), data.count(b"\\n"), hashlib.sha1(data).hexdigest()[:10])
        if i != int(at):
            continue
        if mode == "warn":
            logging.getLogger("relay").warning(message)
        elif mode == "info":
            logging.getLogger("config").info(message)
        elif mode == "fail":
            try:
                check(name, value)
            except ValueError:
                log.exception("could not index %s", path.relative_to(root))


if __name__ == "__main__":
    main(*sys.argv[1:])
'''


def _pytest_module(cases: list[str], failing: tuple[str, str, str] | None) -> str:
    lines = [
        '"""Scratch checks of the installed package names."""',
        "import re",
        "",
        "import pytest",
        "",
        f"NAMES = {json.dumps(cases)}",
        "",
        "",
        '@pytest.mark.parametrize("name", NAMES)',
        "def test_name_is_normalised(name):",
        '    assert re.fullmatch(r"[A-Za-z0-9._-]+", name)',
    ]
    if failing is not None:
        name, expected, actual = failing
        lines += [
            "",
            "",
            f"SETTINGS = {{{json.dumps(name)}: {json.dumps(actual)}}}",
            "",
            "",
            f"def test_{name}_matches_the_runbook():",
            f"    assert SETTINGS[{json.dumps(name)}] == {json.dumps(expected)}",
        ]
    return "\n".join(lines) + "\n"


def run_pytest(workdir: Path, cases: list[str], failing: tuple[str, str, str] | None, tag: str) -> str:
    folder = workdir / f"pytest-{tag}"
    folder.mkdir(exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_packages.py").write_text(_pytest_module(cases, failing), encoding="utf-8")
    return _run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_packages.py"], folder)


def run_index(caps: Captures, at: int, mode: str, message: str = "", name: str = "", value: str = "") -> str:
    program = caps.workdir / "index_sources.py"
    if not program.exists():
        program.write_text(INDEX_PROGRAM, encoding="utf-8")
    args = [str(caps.root / "myrm_tui"), str(LOG_FILES), str(at), mode, message, name, value]
    return _run([sys.executable, str(program), *args], caps.workdir)


def capture(root: Path, workdir: Path) -> Captures:
    pip = json.loads(_run([sys.executable, "-m", "pip", "list", "--format", "json"], root).split("\n", 1)[0])
    dpkg_rows = _run(
        ["dpkg-query", "-W", "-f=${Package},${Version},${Architecture},${Installed-Size}\n"], root
    ).splitlines()
    dpkg_log_path = Path("/var/log/dpkg.log")
    dpkg_log = (
        dpkg_log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-900:]
        if dpkg_log_path.exists()
        else []
    )
    listings = [
        (f"ls -laR {d}", _run(["ls", "-laR", d], root)) for d in ("myrm_tui/context", "tests/context", "bench", "docs")
    ]
    hashes = _run(["git", "log", "--no-color", "--format=%H", "-n", "120"], root).split()
    diffs: list[tuple[str, str]] = []
    for commit in hashes:
        for row in _run(["git", "show", "--numstat", "--format=", commit], root).splitlines():
            added, removed, path = (row.split("\t") + ["", "", ""])[:3]
            if not (added.isdigit() and removed.isdigit()) or not path.endswith((".py", ".md")):
                continue
            if 20 <= int(added) + int(removed) <= 400:
                out = _run(["git", "show", "--no-color", commit, "--", path], root)
                diffs.append((f"git show {commit[:10]} -- {path}", out))
                break
        if len(diffs) >= 30:
            break
    sources = []
    for path in sorted((root / "myrm_tui").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if 120 <= text.count("\n") <= 700:
            sources.append((path.relative_to(root).as_posix(), text))
    docs = [
        (p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted((root / "docs").glob("*.md"))
        if 60 <= p.read_text(encoding="utf-8").count("\n") <= 700
    ]
    caps = Captures(
        pip_records=[{"name": str(r["name"]), "version": str(r["version"])} for r in pip],
        dpkg_l=_run(["dpkg", "-l"], root),
        dpkg_rows=dpkg_rows,
        dpkg_log=dpkg_log,
        listings=listings,
        diffs=diffs,
        git_stat=_run(["git", "log", "--stat", "--no-color", "-n", "15"], root),
        sources=sources,
        docs=docs,
        pytest_pass="",
        index_log="",
        workdir=workdir,
        root=root,
    )
    caps.pytest_pass = run_pytest(workdir, [r["name"] for r in caps.pip_records[:PYTEST_CASES]], None, "pass")
    caps.index_log = run_index(caps, -1, "none")
    return caps


# --------------------------------------------------------------------------- facts


@dataclass
class Fact:
    index: int
    format: str
    place: int
    name: str  # the natural identifier a probe searches for
    value: str
    planted_turn: int
    shape_break: bool | None = None  # JSON / YAML / CSV / log: breaks its output's shape
    updated_turn: int | None = None
    old_value: str | None = None
    named_turn: int | None = None
    named_by: str | None = None
    probes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def probe_base(self) -> int:
        return self.updated_turn if self.updated_turn is not None else self.planted_turn

    def as_answer(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "id": f"f{self.index:03d}",
            "needle": self.value,  # what must be verbatim in the prompt
            "field": self.name,
            "value": self.value,
            "carrier": self.place,
            "carrier_name": PLACES[self.place],
            "format": self.format,
            "shape_break": self.shape_break,
            "planted_turn": self.planted_turn,
            "named_turn": self.named_turn,
            "named_by": self.named_by,
        }
        if self.updated_turn is not None:
            answer.update(updated_turn=self.updated_turn, old_value=self.old_value, old_needle=self.old_value)
        answer["probes"] = self.probes
        return answer


class _Names:
    """Identifiers and values unique in the session and absent from every captured output."""

    def __init__(self, rng: random.Random, corpus: str) -> None:
        self.rng = rng
        self.corpus = corpus.lower()
        self.used: set[str] = set()

    def _fresh(self, make: Any) -> str:
        for _ in range(500):
            candidate = make()
            low = candidate.lower()
            if low not in self.corpus and not any(low in u or u in low for u in self.used):
                self.used.add(low)
                return candidate
        raise RuntimeError("could not draw a fresh identifier; the captured corpus is unusually large")

    def identifier(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(_ID_FIRST)}_{self.rng.choice(_ID_SECOND)}")

    def package(self) -> str:
        suffixes = ("shim", "agent", "tools", "sdk")
        return self._fresh(
            lambda: f"{self.rng.choice(_ID_FIRST)}-{self.rng.choice(_ID_SECOND)}-{self.rng.choice(suffixes)}"
        )

    def phrase(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(_ID_FIRST)} {self.rng.choice(_ID_SECOND)}")

    def value(self) -> str:
        return self._fresh(lambda: _value(self.rng))


# --------------------------------------------------------------------------- the session


USER_ASKS = {
    "pip_json": (
        "What is installed in the venv? Give me the package list as JSON.",
        "List the installed packages (JSON), I want to check versions.",
    ),
    "pip_pretty": (
        "Pretty-print the installed packages so we can read them.",
        "Show the package list again, formatted.",
    ),
    "pip_yaml": ("Show me build/pip-lock.yaml.", "What does the lock file say now?"),
    "dpkg_l": ("Which system packages are on this box?", "List the Debian packages, please."),
    "dpkg_csv": ("Export the system packages as CSV rows.", "Give me the dpkg package list in CSV."),
    "dpkg_log": ("What did apt/dpkg do recently? Check the dpkg log.", "Look at the tail of /var/log/dpkg.log."),
    "index_log": ("Run the indexer over the sources and show me its log.", "Re-run the source indexer."),
    "pytest": ("Run the package-name checks.", "Run the scratch tests again."),
    "git_show": ("Show me that commit's diff.", "What changed in this commit?"),
    "git_stat": ("Summarise the recent commits.", "What landed recently? Just the stats."),
    "listing": ("List that folder recursively.", "What files are in there?"),
    "source": ("Open {path}.", "Read {path}; I want to understand it before we change anything."),
    "doc": ("Read {path} and tell me what matters for us.", "What does {path} say?"),
    "config": ("Open {path}; we will need its settings later.", "Read {path}."),
    "reread": (
        "I edited {path} by hand - a few values changed. Read it again before we continue.",
        "Someone pushed a change to {path}; re-read it please.",
    ),
}
# Command lines of the steps that plant a JSON, YAML or CSV fact (fillers use the plain ones).
PIP_JSON_COMMANDS = (
    "python -m pip list --format json",
    "pip list --format=json",
    ".venv/bin/pip list --format json",
    "python3 -m pip list --format=json",
    "pip list --format json --disable-pip-version-check",
    "uv pip list --format json",
    "python -m pip list --format json | python -m json.tool",
    "pip list --format=json | python -m json.tool",
    ".venv/bin/pip list --format json | python -m json.tool",
    "python3 -m pip list --format=json | python3 -m json.tool",
    "uv pip list --format json | python -m json.tool",
    "pip list --format json --disable-pip-version-check | python -m json.tool",
)
LOCK_FILES = (
    "build/pip-lock.yaml",
    "build/requirements-lock.yaml",
    "deploy/lock/pip.yaml",
    "build/pip-lock-py311.yaml",
    "ci/lock/python.yaml",
    "build/venv-freeze.yaml",
)
DPKG_CSV_COMMANDS = (
    "dpkg-query --show --showformat='${Package},${Version},${Architecture},${Installed-Size}\\n'",
    "dpkg-query -W -f '${Package},${Version},${Architecture},${Installed-Size}\\n'",
    "dpkg-query -W --showformat='${Package},${Version},${Architecture},${Installed-Size}\\n'",
    "dpkg-query --show -f='${Package},${Version},${Architecture},${Installed-Size}\\n'",
    "sudo dpkg-query -W -f='${Package},${Version},${Architecture},${Installed-Size}\\n'",
)
ACKS = ("Let me look.", "Checking.", None, None, "On it.", None)
NOTES = (
    "That output is consistent with what we saw before.",
    "Nothing alarming here; moving on.",
    "Read it; I'll refer back to it when we get to the deploy.",
    "Noted. Nothing there blocks the task yet.",
    "OK, that gives us the picture for this part.",
    "Fine. Ready for the next step.",
)
USER_FACTS = (
    "By the way, the {name} for this project is {value} - ops confirmed it this morning.",
    "Also: the {name} is {value}; please don't guess it later.",
    "For the record, we use {value} as the {name} on staging.",
    "One thing I forgot to say: the {name} should be {value} everywhere.",
)
DECISIONS = (
    "Let's go with {value} for the {name}: the other option broke the nightly import.",
    "I'll keep the {name} at {value}, since the relay already depends on it.",
    "We settled on {value} as the {name}; changing it would invalidate the cached shards.",
    "Going forward the {name} is {value} - the previous choice made the tests flaky.",
)
DOC_FACTS = (
    "On this deployment the {name} is {value}, which the release scripts read at start-up.",
    "Note that the {name} was moved to {value} after the last incident review.",
    "The {name} defaults to {value} unless the operator overrides it.",
)
COMMENTS = (
    "# {name}: pinned to {value} until the relay migration lands",
    "# NOTE: {name} is {value} on staging; prod reads it from the secrets store",
    "# {name} must stay at {value} - lower values starve the ingest workers",
)
DIFF_LINES_PY = (
    '+{upper} = "{value}"  # agreed with ops',
    '+    "{name}": "{value}",',
)
DIFF_LINES_MD = ("+The {name} is now {value}.",)
LOG_WARN = ("{name} fell back to {value} after three slow responses", "{name} unreachable; using {value} instead")
LOG_INFO = ("resolved {name} to {value} from the environment", "{name} set to {value} by the deploy profile")
USER_MENTIONS = (
    "Did you notice the {name} entry in there? Keep it in mind.",
    "Earlier output had something about {name}; we'll need that.",
    "Remember the {name} thing from before - it matters for the deploy.",
)
ASSISTANT_MENTIONS = (
    "Worth remembering from that output: the {name} entry.",
    "One thing to keep: what it says about {name}.",
    "I'll note the {name} line; it may matter later.",
)


class _Session:
    def __init__(self, caps: Captures, turns: int, seed: int) -> None:
        self.caps = caps
        self.turns = turns
        self.seed = seed
        self.rng = random.Random(f"facts:{seed}")
        self.names = _Names(random.Random(f"fact-names:{seed}"), caps.corpus())
        self.facts: list[Fact] = []
        self._ids: set[str] = set()
        self.configs: dict[str, str] = {}  # path -> current text of files the session reads twice
        self.filler_cursor = self.rng.randrange(1000)
        self.breaks: dict[str, bool] = {}
        # Outputs that plant a fact come from their own half of each pool, under a command line
        # no other step uses: a later run of the same call without the fact would be a change
        # between runs (which the engine keeps, and which real sessions rarely show of a package
        # list or a commit), and would flatter the figures.
        self.filler_sources, self.fact_sources = caps.sources[0::2], caps.sources[1::2]
        self.filler_docs, self.fact_docs = caps.docs[0::2], caps.docs[1::2]
        self.filler_diffs, self.fact_diffs = caps.diffs[0::2], caps.diffs[1::2]
        self.used: set[str] = set()

    # -- helpers --------------------------------------------------------------------------
    def call_id(self) -> str:
        while True:
            value = f"call_{self.rng.getrandbits(96):024x}"
            if value not in self._ids:
                self._ids.add(value)
                return value

    def turn_messages(self, user: str, calls: list[tuple[str, dict[str, Any], str]], note: str) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        ids = [self.call_id() for _ in calls]
        messages.append(
            {
                "role": "assistant",
                "content": self.rng.choice(ACKS),
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                    for i, (n, a, _) in zip(ids, calls, strict=True)
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": i, "name": n, "content": out}
            for i, (n, _, out) in zip(ids, calls, strict=True)
        ]
        messages.append({"role": "assistant", "content": note})
        return messages

    def ask(self, kind: str, **values: str) -> str:
        return self.rng.choice(USER_ASKS[kind]).format(**values)

    def middle(self, n: int) -> int:
        return self.rng.randrange(max(1, n * 2 // 5), max(2, n * 3 // 5))

    # -- outputs --------------------------------------------------------------------------
    def pip_output(self, pretty: bool, extra: dict[str, str] | None = None, new: dict[str, str] | None = None) -> str:
        records = [dict(r) for r in self.caps.pip_records]
        at = self.middle(len(records))
        if extra:
            records[at].update(extra)
        if new:
            records.insert(at, new)
        return json.dumps(records, indent=4) if pretty else json.dumps(records)

    def pip_yaml(self, extra: dict[str, str] | None = None, new: dict[str, str] | None = None) -> str:
        records = [dict(r) for r in self.caps.pip_records]
        at = self.middle(len(records))
        if extra:
            records[at].update(extra)
        if new:
            records.insert(at, new)
        return yaml.safe_dump(records, sort_keys=False, default_flow_style=False).rstrip("\n")

    def dpkg_csv(self, row: str | None = None) -> str:
        rows = list(self.caps.dpkg_rows)
        if row is not None:
            rows.insert(self.middle(len(rows)), row)
        return "\n".join(rows)

    def filler(self, turn: int) -> tuple[str, list[tuple[str, dict[str, Any], str]]]:
        """An ordinary step: one real output, the kinds in rotation."""
        caps = self.caps
        kinds = ["pip_json", "dpkg_l", "listing", "git_show", "source", "pytest", "dpkg_log", "doc", "index_log"]
        kinds += ["git_stat", "pip_pretty", "dpkg_csv", "source", "git_show"]
        kind = kinds[(self.filler_cursor + turn) % len(kinds)]
        if kind == "dpkg_log" and not caps.dpkg_log:
            kind = "dpkg_l"
        if kind == "pip_json":
            return self.ask(kind), [("bash", {"command": "pip list --format json"}, self.pip_output(False))]
        if kind == "pip_pretty":
            command = "pip list --format json | python -m json.tool"
            return self.ask(kind), [("bash", {"command": command}, self.pip_output(True))]
        if kind == "dpkg_l":
            return self.ask(kind), [("bash", {"command": "dpkg -l"}, caps.dpkg_l)]
        if kind == "dpkg_csv":
            command = "dpkg-query -W -f='${Package},${Version},${Architecture},${Installed-Size}\\n'"
            return self.ask(kind), [("bash", {"command": command}, self.dpkg_csv())]
        if kind == "dpkg_log":
            return self.ask(kind), [("bash", {"command": "tail -n 900 /var/log/dpkg.log"}, "\n".join(caps.dpkg_log))]
        if kind == "listing":
            command, out = self.rng.choice(caps.listings)
            return self.ask(kind), [("bash", {"command": command}, out)]
        if kind == "git_show":
            command, out = self.rng.choice(self.filler_diffs)
            return self.ask(kind), [("bash", {"command": command}, out)]
        if kind == "git_stat":
            return self.ask(kind), [("bash", {"command": "git log --stat -n 15"}, caps.git_stat)]
        if kind == "source":
            path, text = self.rng.choice(self.filler_sources)
            return self.ask(kind, path=path), [("file_read", {"path": path}, file_read_output(path, text))]
        if kind == "doc":
            path, text = self.rng.choice(self.filler_docs)
            return self.ask(kind, path=path), [("file_read", {"path": path}, file_read_output(path, text))]
        if kind == "pytest":
            return self.ask(kind), [("bash", {"command": "python -m pytest -v test_packages.py"}, caps.pytest_pass)]
        return self.ask("index_log"), [("bash", {"command": "python tools/index_sources.py"}, caps.index_log)]

    # -- facts ----------------------------------------------------------------------------
    def fresh(self, options: Sequence[Any], key: Any = str) -> Any:
        """An option no step used yet (in seeded order); the least used once all are taken."""
        order = list(options)
        self.rng.shuffle(order)
        for option in order:
            if key(option) not in self.used:
                self.used.add(key(option))
                return option
        return order[0]

    def new_fact(self, fmt: str, place: int, turn: int, name: str) -> Fact:
        fact = Fact(len(self.facts), fmt, place, name, self.names.value(), turn)
        self.facts.append(fact)
        return fact

    def plant(self, fmt: str, place: int, turn: int) -> tuple[str, list[tuple[str, dict[str, Any], str]], str | None]:
        """(user ask, calls, assistant note or None) of the turn that plants a fact."""
        rng = self.rng
        names = self.names
        # Alternating per format (from a seeded start), so each format has both kinds.
        breaks = self.breaks.get(fmt, rng.random() < SHAPE_BREAK_SHARE)
        self.breaks[fmt] = not breaks
        if place == 1:
            fact = self.new_fact(fmt, place, turn, names.phrase())
            ask, calls = self.filler(turn)
            return f"{ask} {rng.choice(USER_FACTS).format(name=fact.name, value=fact.value)}", calls, None
        if place == 5:
            fact = self.new_fact(fmt, place, turn, names.phrase())
            ask, calls = self.filler(turn)
            return ask, calls, rng.choice(DECISIONS).format(name=fact.name, value=fact.value)
        if place == 4:
            return self.plant_reread(fmt, turn)
        if fmt == "json":
            command = self.fresh(PIP_JSON_COMMANDS)
            pretty = "json.tool" in command
            if breaks:
                fact = self.new_fact(fmt, place, turn, names.identifier())
                out = self.pip_output(pretty, extra={fact.name: fact.value})
            else:
                fact = self.new_fact(fmt, place, turn, names.package())
                out = self.pip_output(pretty, new={"name": fact.name, "version": fact.value})
            fact.shape_break = breaks
            return self.ask("pip_pretty" if pretty else "pip_json"), [("bash", {"command": command}, out)], None
        if fmt == "yaml":
            if breaks:
                fact = self.new_fact(fmt, place, turn, names.identifier())
                out = self.pip_yaml(extra={fact.name: fact.value})
            else:
                fact = self.new_fact(fmt, place, turn, names.package())
                out = self.pip_yaml(new={"name": fact.name, "version": fact.value})
            fact.shape_break = breaks
            command = f"cat {self.fresh(LOCK_FILES)}"
            return self.ask("pip_yaml"), [("bash", {"command": command}, out)], None
        if fmt == "csv":
            fact = self.new_fact(fmt, place, turn, names.package())
            size = rng.randrange(40, 9000)
            row = (
                f"{fact.name},1.{rng.randrange(0, 9)}-1,amd64,{size},{fact.value}"
                if breaks
                else f"{fact.name},{fact.value},amd64,{size}"
            )
            fact.shape_break = breaks
            command = self.fresh(DPKG_CSV_COMMANDS)
            return self.ask("dpkg_csv"), [("bash", {"command": command}, self.dpkg_csv(row))], None
        if fmt == "log":
            fact = self.new_fact(fmt, place, turn, names.identifier())
            template = rng.choice(LOG_WARN if breaks else LOG_INFO)
            out = run_index(
                self.caps,
                self.middle(LOG_FILES),
                "warn" if breaks else "info",
                template.format(name=fact.name, value=fact.value),
            )
            fact.shape_break = breaks
            return self.ask("index_log"), [("bash", {"command": "python tools/index_sources.py"}, out)], None
        if fmt == "trace":
            fact = self.new_fact(fmt, place, turn, names.identifier())
            if rng.random() < 0.5:
                cases = [r["name"] for r in self.caps.pip_records[:PYTEST_CASES]]
                actual = names.value()
                out = run_pytest(self.caps.workdir, cases, (fact.name, fact.value, actual), f"f{fact.index}")
                return self.ask("pytest"), [("bash", {"command": "python -m pytest -v test_packages.py"}, out)], None
            out = run_index(self.caps, self.middle(LOG_FILES), "fail", "", fact.name, fact.value)
            return self.ask("index_log"), [("bash", {"command": "python tools/index_sources.py"}, out)], None
        if fmt == "diff":
            fact = self.new_fact(fmt, place, turn, names.identifier())
            command, out = self.fresh(self.fact_diffs, key=lambda d: d[0])
            return self.ask("git_show"), [("bash", {"command": command}, self.with_diff_line(out, command, fact))], None
        if fmt == "comment":
            fact = self.new_fact(fmt, place, turn, names.identifier())
            path, text = self.fresh(self.fact_sources, key=lambda d: d[0])
            text = self.with_comment(text, rng.choice(COMMENTS).format(name=fact.name, value=fact.value))
            return self.ask("source", path=path), [("file_read", {"path": path}, file_read_output(path, text))], None
        # prose in a real document
        fact = self.new_fact(fmt, place, turn, names.phrase())
        path, text = self.fresh(self.fact_docs, key=lambda d: d[0])
        text = self.with_sentence(text, rng.choice(DOC_FACTS).format(name=fact.name, value=fact.value))
        return self.ask("doc", path=path), [("file_read", {"path": path}, file_read_output(path, text))], None

    def with_diff_line(self, out: str, command: str, fact: Fact) -> str:
        lines = out.split("\n")
        hunks = [i for i, line in enumerate(lines) if line.startswith("@@")]
        start = hunks[min(len(hunks) - 1, len(hunks) // 2)] if hunks else 0
        end = next((i for i in hunks if i > start), len(lines))
        at = self.rng.randrange(start + 1, max(start + 2, end))
        template = self.rng.choice(DIFF_LINES_MD if command.endswith(".md") else DIFF_LINES_PY)
        lines.insert(at, template.format(name=fact.name, upper=fact.name.upper(), value=fact.value))
        if hunks:
            lines[start] = re.sub(
                r"\+(\d+),(\d+)", lambda m: f"+{m.group(1)},{int(m.group(2)) + 1}", lines[start], count=1
            )
        return "\n".join(lines)

    def with_comment(self, text: str, comment: str) -> str:
        lines = text.split("\n")
        at = self.middle(len(lines))
        nxt = next((ln for ln in lines[at:] if ln.strip()), "")
        indent = nxt[: len(nxt) - len(nxt.lstrip())]
        lines.insert(at, indent + comment)
        return "\n".join(lines)

    def with_sentence(self, text: str, sentence: str) -> str:
        lines = text.split("\n")
        at = self.middle(len(lines))
        for i in range(at, len(lines)):
            if (
                lines[i].strip()
                and not lines[i].lstrip().startswith(("#", "|", "-", "*", "`", ">"))
                and (i + 1 == len(lines) or not lines[i + 1].strip())
            ):
                lines[i] = lines[i].rstrip() + " " + sentence
                return "\n".join(lines)
        lines.insert(at, sentence)
        return "\n".join(lines)

    # -- re-read files --------------------------------------------------------------------
    def config_text(self, fmt: str, fact: Fact, value: str) -> tuple[str, str]:
        """(path, text) of a settings file holding the fact, from real package data."""
        rng = random.Random(f"config:{self.seed}:{fact.index}")
        packages = rng.sample(self.caps.pip_records, min(40, len(self.caps.pip_records)))
        if fmt == "yaml":
            services = [
                {
                    "name": p["name"],
                    "image": f"registry.local/{p['name']}:{p['version']}",
                    "replicas": rng.randrange(1, 6),
                }
                for p in packages
            ]
            at = len(services) // 2
            services[at][fact.name] = value
            return "deploy/services.yaml", yaml.safe_dump({"services": services}, sort_keys=False).rstrip("\n")
        if fmt == "json":
            settings = {p["name"]: {"version": p["version"], "enabled": rng.random() < 0.8} for p in packages}
            keys = list(settings)
            settings[keys[len(keys) // 2]][fact.name] = value
            return "config/settings.json", json.dumps(settings, indent=2)
        if fmt == "csv":
            rows = ["package,max_mb,owner,window"]
            rows += [
                f"{p['name']},{rng.randrange(64, 4096)},{rng.choice(_PEOPLE)},{rng.randrange(5, 120)}m"
                for p in packages
            ]
            rows.insert(len(rows) // 2, f"{fact.name},{value},{rng.choice(_PEOPLE)},{rng.randrange(5, 120)}m")
            return "config/limits.csv", "\n".join(rows)
        # comment: a real source file with a commented setting
        path, text = self.fact_sources[(fact.index * 7) % len(self.fact_sources)]
        comment = COMMENTS[fact.index % len(COMMENTS)].format(name=fact.name, value=value)
        return path, self.with_comment_at(text, comment, rng)

    def with_comment_at(self, text: str, comment: str, rng: random.Random) -> str:
        lines = text.split("\n")
        at = rng.randrange(len(lines) * 2 // 5, len(lines) * 3 // 5)
        nxt = next((ln for ln in lines[at:] if ln.strip()), "")
        lines.insert(at, nxt[: len(nxt) - len(nxt.lstrip())] + comment)
        return "\n".join(lines)

    def plant_reread(self, fmt: str, turn: int) -> tuple[str, list[tuple[str, dict[str, Any], str]], str | None]:
        name = self.names.package() if fmt == "csv" else self.names.identifier()
        fact = self.new_fact(fmt, 4, turn, name)
        fact.old_value, fact.value = fact.value, self.names.value()
        path, text = self.config_text(fmt, fact, fact.old_value)
        self.configs[f"f{fact.index}"] = path
        return self.ask("config", path=path), [("file_read", {"path": path}, file_read_output(path, text))], None

    def reread(self, fact: Fact) -> tuple[str, list[tuple[str, dict[str, Any], str]]]:
        path, text = self.config_text(fact.format, fact, fact.value)
        return self.ask("reread", path=path), [("file_read", {"path": path}, file_read_output(path, text))]

    # -- the whole session ----------------------------------------------------------------
    def schedule(self) -> dict[int, tuple[str, int]]:
        plants = list(range(2, self.turns - 4, FACT_EVERY))
        mix: list[tuple[str, int]] = []
        while len(mix) < len(plants):
            cycle = list(FACT_MIX)
            self.rng.shuffle(cycle)
            mix += cycle
        return dict(zip(plants, mix, strict=False))

    def build(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        schedule = self.schedule()
        updates: dict[int, Fact] = {}
        mentions: dict[int, list[Fact]] = {}
        lines: list[dict[str, Any]] = []
        for turn in range(1, self.turns + 1):
            note: str | None = None
            if turn in schedule:
                fmt, place = schedule[turn]
                ask, calls, note = self.plant(fmt, place, turn)
                fact = self.facts[-1]
                if place == 4:
                    due = turn + self.rng.choice(REREAD_DELAYS)
                    while due in updates:
                        due += FACT_EVERY
                    fact.updated_turn = due
                    updates[due] = fact
                if place in (2, 3, 4) and self.rng.random() < NAMED_LATER_SHARE:
                    fact.named_turn = fact.probe_base + self.rng.choice(MENTION_DELAYS)
                    mentions.setdefault(fact.named_turn, []).append(fact)
            elif turn in updates:
                ask, calls = self.reread(updates[turn])
            elif turn == 1:
                ask, calls = self.filler(turn)
                ask = "We are preparing this project's next release; walk me through the state of the tree. " + ask
            else:
                ask, calls = self.filler(turn)
            for fact in mentions.get(turn, ()):
                if self.rng.random() < 0.5:
                    fact.named_by = "user"
                    ask += " " + self.rng.choice(USER_MENTIONS).format(name=fact.name)
                else:
                    fact.named_by = "assistant"
                    note = (note + " " if note else "") + self.rng.choice(ASSISTANT_MENTIONS).format(name=fact.name)
            lines.append({"turn": turn, "messages": self.turn_messages(ask, calls, note or self.rng.choice(NOTES))})
        for fact in self.facts:
            fact.probes = [
                {"turn": fact.probe_base + lag, "lag": lag, "query": fact.name}
                for lag in PROBE_LAGS
                if fact.probe_base + lag <= self.turns
            ]
        self.check_unique(lines)
        ordered: list[dict[str, Any]] = []
        by_turn: dict[int, list[dict[str, Any]]] = {}
        for fact in self.facts:
            for probe in fact.probes:
                by_turn.setdefault(probe["turn"], []).append(
                    {"probe": {"turn": probe["turn"], "query": probe["query"]}}
                )
        for line in lines:
            ordered.append(line)
            ordered += by_turn.get(line["turn"], [])
        answers = {
            "generator": GENERATOR,
            "kind": "facts",
            "turns": self.turns,
            "seed": self.seed,
            "tuning_seed": TUNING_SEED,
            "lags": list(PROBE_LAGS),
            "formats": list(FORMATS),
            "places": PLACES,
            "needles": [f.as_answer() for f in self.facts],
        }
        return ordered, answers

    def check_unique(self, lines: list[dict[str, Any]]) -> None:
        """Each value is in exactly the message that planted it (two for a re-read file: the
        old value in the first read, the new one in the second), so finding it in a prompt
        means that message, or what the engine kept of it, is there."""
        texts = [json.dumps(m, ensure_ascii=False) for line in lines for m in line["messages"]]
        for fact in self.facts:
            for value in filter(None, (fact.value, fact.old_value)):
                escaped = json.dumps(value, ensure_ascii=False)[1:-1]
                holders = sum(1 for text in texts if escaped in text)
                if holders != 1:
                    raise RuntimeError(f"fact value {value!r} is in {holders} messages; expected one")


def build_session(caps: Captures, *, turns: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if turns < 20:
        raise ValueError("a fact session needs at least 20 turns (facts are probed 5 to 120 turns later).")
    return _Session(caps, turns, seed).build()


def write_sessions(
    out_dir: str | Path, seeds: list[int], *, turns: int = DEFAULT_TURNS, root: Path = ROOT
) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    manifest: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-facts-") as tmp:
        caps = capture(root, Path(tmp))
        for seed in seeds:
            lines, answers = build_session(caps, turns=turns, seed=seed)
            path = out / f"facts-{seed}.jsonl"
            sidecar = write_session(path, lines, answers)
            manifest[path.name] = {
                "seed": seed,
                "role": "tuning" if seed == TUNING_SEED else "held-out",
                "facts": len(answers["needles"]),
                "sha256": json.loads(sidecar.read_text(encoding="utf-8"))["session_sha256"],
            }
            written.append(path)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fact_sessions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the sessions, their answers and manifest.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[TUNING_SEED, *HELD_OUT_SEEDS])
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS)
    parser.add_argument("--root", default=str(ROOT), help="the git checkout whose real output is captured")
    args = parser.parse_args(argv)
    try:
        paths = write_sessions(args.out, args.seeds, turns=args.turns, root=Path(args.root))
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        print(
            f"error: could not build the fact sessions ({exc}); check --root is a git checkout with myrm_tui.",
            file=sys.stderr,
        )
        return 2
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
