"""Plausible tool-output text for the synthetic workload: source files, diffs, pytest logs, logs, JSON.

Why realistic text rather than filler: engines filter and deduplicate by content (pytest
summaries, diff hunks, repeated reads), and their token counts depend on the text's shape. Random
words would flatter or penalise them unfairly. Every generator draws only from the `Random` it is
given, so a session is a pure function of its seed.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

PACKAGES = ("ledgerline", "orbitq", "pipewright", "tidepool", "quillstack", "harborlight", "cobaltkit")
MODULES = (
    "api",
    "auth",
    "billing",
    "cache",
    "cli",
    "config",
    "db",
    "events",
    "http",
    "jobs",
    "metrics",
    "models",
    "parser",
    "queue",
    "retry",
    "router",
    "scheduler",
    "schema",
    "session",
    "storage",
    "sync",
    "tasks",
    "utils",
    "validators",
    "worker",
)
VERBS = (
    "load",
    "parse",
    "build",
    "fetch",
    "resolve",
    "flush",
    "merge",
    "render",
    "apply",
    "compute",
    "validate",
    "sync",
    "retry",
    "close",
    "open",
    "emit",
    "collect",
    "index",
    "normalize",
    "split",
)
NOUNS = (
    "config",
    "batch",
    "record",
    "token",
    "session",
    "job",
    "invoice",
    "payload",
    "window",
    "cursor",
    "manifest",
    "schema",
    "row",
    "entry",
    "request",
    "snapshot",
    "ledger",
    "policy",
    "route",
    "queue",
)
ATTRS = ("id", "name", "size", "created_at", "status", "owner", "retries", "timeout", "offset", "limit")
EXCEPTIONS = ("ValueError", "KeyError", "TimeoutError", "RuntimeError", "AssertionError", "TypeError")
LOG_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR")
LOGGERS = (
    "api.request",
    "jobs.runner",
    "db.pool",
    "cache.redis",
    "auth.token",
    "sync.worker",
    "http.client",
    "scheduler.tick",
    "billing.invoice",
    "queue.consumer",
)
NAMES = ("alice", "bob", "carol", "dmitri", "esther", "farid", "gwen", "hiro", "ines", "jonas", "kemal", "lena")


def ident(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------- source files


def _statement(rng: random.Random, indent: str, names: list[str]) -> list[str]:
    var = rng.choice(names)
    kind = rng.randrange(10)
    if kind == 0:
        return [
            f"{indent}if not {var}:",
            f'{indent}    raise {rng.choice(EXCEPTIONS)}("{rng.choice(NOUNS)} must not be empty")',
        ]
    if kind == 1:
        other = rng.choice(NOUNS)
        names.append(other)
        return [f"{indent}{other} = {rng.choice(MODULES)}.{ident(rng)}({var}, timeout={rng.randrange(1, 120)})"]
    if kind == 2:
        return [f"{indent}for item in {var}:", f"{indent}    total += item.{rng.choice(ATTRS)}"]
    if kind == 3:
        return [f'{indent}logger.debug("%s {rng.choice(VERBS)} %s", {var}, {rng.randrange(1000)})']
    if kind == 4:
        return [
            f"{indent}try:",
            f"{indent}    {var} = {ident(rng)}({var})",
            f"{indent}except {rng.choice(EXCEPTIONS)} as exc:",
            f'{indent}    logger.warning("{rng.choice(VERBS)} failed: %s", exc)',
        ]
    if kind == 5:
        return [f"{indent}{var}.{rng.choice(ATTRS)} = {rng.choice(['None', 'True', 'False', str(rng.randrange(100))])}"]
    if kind == 6:
        return [f"{indent}with self._lock:", f"{indent}    self._{rng.choice(NOUNS)}s.append({var})"]
    if kind == 7:
        return [
            f"{indent}# {sentence_case(rng.choice(VERBS))} before {rng.choice(VERBS)}ing: "
            f"the {rng.choice(NOUNS)} may be stale."
        ]
    if kind == 8:
        return [f'{indent}assert {var} is not None, "{rng.choice(NOUNS)} missing"']
    return [
        f"{indent}{var} = [{rng.choice(NOUNS)} for {rng.choice(NOUNS)} in {var} "
        f"if {rng.choice(NOUNS)}.{rng.choice(ATTRS)}]"
    ]


def _function(rng: random.Random, indent: str = "") -> list[str]:
    name = ident(rng)
    args = rng.sample(NOUNS, rng.randrange(1, 4))
    lines = [
        f"{indent}def {name}({', '.join(args)}) -> {rng.choice(['dict', 'list', 'int', 'bool', 'None', 'str'])}:",
        f'{indent}    """{sentence_case(rng.choice(VERBS))} the {rng.choice(NOUNS)} '
        f'so the {rng.choice(NOUNS)} stays consistent."""',
        f"{indent}    total = 0",
    ]
    names = list(args)
    for _ in range(rng.randrange(2, 9)):
        lines += _statement(rng, indent + "    ", names)
    lines.append(f"{indent}    return {rng.choice(names)}")
    return lines


def python_source(rng: random.Random, module: str) -> str:
    """A 40-300 line module body: docstring, imports, a class or two, functions."""
    target = rng.randrange(40, 300)
    lines = [
        f'"""{sentence_case(module)} helpers: {rng.choice(VERBS)} and {rng.choice(VERBS)} {rng.choice(NOUNS)}s."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "import threading",
        f"from . import {', '.join(sorted(rng.sample(MODULES, 2)))}",
        "",
        "logger = logging.getLogger(__name__)",
        f"DEFAULT_{rng.choice(NOUNS).upper()}_TIMEOUT = {rng.randrange(5, 300)}",
        "",
    ]
    while len(lines) < target:
        lines.append("")
        if rng.random() < 0.3:
            cls = sentence_case(rng.choice(NOUNS)) + rng.choice(("Store", "Client", "Runner", "Builder", "Cache"))
            lines += [
                f"class {cls}:",
                f'    """Owns the {rng.choice(NOUNS)}s of one {rng.choice(NOUNS)}."""',
                "",
                "    def __init__(self) -> None:",
                "        self._lock = threading.Lock()",
                "",
            ]
            for _ in range(rng.randrange(1, 4)):
                lines += _function(rng, "    ") + [""]
        else:
            lines += _function(rng)
    return "\n".join(lines[:target]) + "\n"


@dataclass
class FakeProject:
    """The repository the synthetic agent works in: file bodies change when the agent edits them."""

    package: str
    files: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, seed: int) -> FakeProject:
        rng = random.Random(f"project:{seed}")
        project = cls(rng.choice(PACKAGES))
        for module in MODULES:
            # Per-path seeds: a file's body does not depend on the order files were first read.
            project.files[f"src/{project.package}/{module}.py"] = python_source(
                random.Random(f"{seed}:{module}"), module
            )
        for module in rng.sample(MODULES, 12):
            project.files[f"tests/test_{module}.py"] = unit_test_source(random.Random(f"{seed}:test:{module}"), module)
        return project

    def source_paths(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith(".py"))


def unit_test_source(rng: random.Random, module: str) -> str:
    lines = ["import pytest", "", f"from {module} import {ident(rng)}", ""]
    for _ in range(rng.randrange(4, 14)):
        name = f"test_{ident(rng)}_{rng.choice(('works', 'rejects_empty', 'retries', 'round_trips', 'is_idempotent'))}"
        lines += [
            "",
            f"def {name}(tmp_path):",
            f'    result = {ident(rng)}(tmp_path / "{rng.choice(NOUNS)}.json")',
            f"    assert result.{rng.choice(ATTRS)} == {rng.randrange(100)}",
            "",
        ]
    return "\n".join(lines) + "\n"


def file_read_output(path: str, body: str) -> str:
    """What myrm's file_read returns: a header with the line range, then the text."""
    total = body.count("\n") + (0 if body.endswith("\n") else 1)
    return f"[{path} · lines 1-{total} of {total:,}]\n{body.rstrip(chr(10))}"


# --------------------------------------------------------------------------- git diff


def git_diff(rng: random.Random, project: FakeProject) -> str:
    """A `git diff` over 1-4 files, each one hunk of 20-80 lines with some -/+ pairs."""
    out: list[str] = []
    for path in rng.sample(project.source_paths(), rng.randrange(1, 5)):
        lines = project.files[path].splitlines()
        span = min(len(lines), rng.randrange(20, 81))
        start = rng.randrange(0, max(1, len(lines) - span))
        hunk: list[str] = []
        removed = added = 0
        for line in lines[start : start + span]:
            if line.strip() and rng.random() < 0.15:
                hunk.append("-" + line)
                new = (
                    line.replace(rng.choice(NOUNS), rng.choice(NOUNS))
                    if rng.random() < 0.5
                    else line + f"  # {rng.choice(VERBS)}"
                )
                hunk.append("+" + new)
                removed += 1
                added += 1
            elif rng.random() < 0.04:
                hunk.append("+" + " " * 4 + f'logger.info("{rng.choice(VERBS)} {rng.choice(NOUNS)}")')
                added += 1
            else:
                hunk.append(" " + line)
        old_len = span
        new_len = span + added - removed
        blob_a, blob_b = f"{rng.getrandbits(28):07x}", f"{rng.getrandbits(28):07x}"
        out += [
            f"diff --git a/{path} b/{path}",
            f"index {blob_a}..{blob_b} 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
            f"@@ -{start + 1},{old_len} +{start + 1},{new_len} @@ def {ident(rng)}(",
            *hunk,
        ]
    return "\n".join(out)


# --------------------------------------------------------------------------- pytest


def pytest_log(rng: random.Random, project: FakeProject, *, failing: bool, verbose: bool = True) -> str:
    """A pytest -v run: 100-400 result lines, and failures with tracebacks when `failing`."""
    count = rng.randrange(100, 401)
    tests = [p for p in project.files if p.startswith("tests/")]
    results: list[tuple[str, str]] = []
    for _ in range(count):
        node = f"{rng.choice(tests)}::test_{ident(rng)}"
        if rng.random() < 0.1:
            node += f"[{rng.choice(NOUNS)}-{rng.randrange(10)}]"
        results.append((node, "PASSED"))
    n_failed = rng.randrange(1, 6) if failing else 0
    for index in rng.sample(range(count), n_failed):
        results[index] = (results[index][0], "FAILED")
    n_skipped = rng.randrange(0, 4)
    for index in rng.sample(range(count), n_skipped):
        if results[index][1] == "PASSED":
            results[index] = (results[index][0], "SKIPPED")
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.4.2, pluggy-1.7.0"
        + (" -- /home/dev/.venv/bin/python" if verbose else ""),
        f"rootdir: /home/dev/{project.package}",
        "configfile: pyproject.toml",
        "plugins: asyncio-1.5.0, timeout-2.3.1",
        f"collected {count} items",
        "",
    ]
    for i, (node, outcome) in enumerate(results):
        lines.append(f"{node} {outcome}{' ' * max(1, 70 - len(node) - len(outcome))}[{(i + 1) * 100 // count:3d}%]")
    failed = [node for node, outcome in results if outcome == "FAILED"]
    if failed:
        lines += ["", "=================================== FAILURES ==================================="]
        for node in failed:
            name = node.split("::", 1)[1]
            exc = rng.choice(EXCEPTIONS)
            module = node.split("::")[0]
            lines += [
                f"_{'_' * 20} {name} {'_' * 20}",
                "",
                "tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-41/test0')",
                "",
                f"    def {name.split('[')[0]}(tmp_path):",
                f"        result = {ident(rng)}(tmp_path)",
                f">       assert result.{rng.choice(ATTRS)} == {rng.randrange(100)}",
                f"E       {exc}: expected {rng.randrange(100)}, got {rng.randrange(100)}",
                "",
                f"{module}:{rng.randrange(5, 200)}: {exc}",
            ]
        lines += ["=========================== short test summary info ============================"]
        lines += [f"FAILED {node} - {rng.choice(EXCEPTIONS)}" for node in failed]
    passed = sum(1 for _, o in results if o == "PASSED")
    skipped = sum(1 for _, o in results if o == "SKIPPED")
    parts = (
        ([f"{len(failed)} failed"] if failed else [])
        + [f"{passed} passed"]
        + ([f"{skipped} skipped"] if skipped else [])
    )
    summary = f" {', '.join(parts)} in {rng.uniform(0.5, 40):.2f}s "
    lines.append(summary.center(80, "="))
    return "\n".join(lines)


# --------------------------------------------------------------------------- logs


def log_line(rng: random.Random, second: int) -> str:
    hh, mm, ss = (second // 3600) % 24, (second // 60) % 60, second % 60
    level = rng.choice(LOG_LEVELS)
    logger = rng.choice(LOGGERS)
    kind = rng.randrange(6)
    if kind == 0:
        msg = (
            f"GET /api/v1/{rng.choice(NOUNS)}s/{rng.randrange(100000)} "
            f"status={rng.choice((200, 200, 200, 404, 500))} duration_ms={rng.randrange(1, 900)}"
        )
    elif kind == 1:
        msg = (
            f"processed job id={rng.randrange(10**6)} queue={rng.choice(('default', 'bulk', 'mail'))} "
            f"attempts={rng.randrange(1, 5)}"
        )
    elif kind == 2:
        msg = f"pool size={rng.randrange(1, 32)} idle={rng.randrange(0, 16)} waiting={rng.randrange(0, 5)}"
    elif kind == 3:
        msg = f"{rng.choice(VERBS)} {rng.choice(NOUNS)} user={rng.choice(NAMES)} ok={rng.choice(('true', 'false'))}"
    elif kind == 4:
        msg = f"retrying {rng.choice(NOUNS)} after {rng.choice(EXCEPTIONS)} backoff_ms={rng.randrange(50, 5000)}"
    else:
        msg = f"cache {rng.choice(('hit', 'miss', 'evict'))} key={rng.choice(NOUNS)}:{rng.getrandbits(32):08x}"
    return (
        f"2025-03-{14 + second // 86400:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{rng.randrange(1000):03d}Z "
        f"{level:<5} [{logger}] {msg}"
    )


def log_text(rng: random.Random, *, min_chars: int = 0, lines: int = 0, start_second: int = 36000) -> str:
    """Log lines until `min_chars` characters or `lines` lines, whichever is asked."""
    out: list[str] = []
    size = 0
    second = start_second
    while (min_chars and size < min_chars) or (lines and len(out) < lines):
        second += rng.randrange(0, 3)
        line = log_line(rng, second)
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def build_log(rng: random.Random, project: FakeProject, lines: int) -> str:
    """A long build/CI log (compile, lint, test progress) - the carrier of mid-output needles."""
    out = [f"$ make ci PACKAGE={project.package}", "ruff check src tests", "All checks passed!", "mypy src"]
    paths = project.source_paths()
    while len(out) < lines:
        roll = rng.random()
        if roll < 0.4:
            out.append(f"[{len(out):4d}/{lines}] compiling {rng.choice(paths)}")
        elif roll < 0.7:
            out.append(log_line(rng, 36000 + len(out)))
        elif roll < 0.85:
            out.append(
                f"{rng.choice(paths)}:{rng.randrange(1, 300)}: note: "
                f"{rng.choice(VERBS)} of {rng.choice(NOUNS)} is untyped"
            )
        else:
            out.append(
                f"  cache: restored {rng.randrange(1, 400)} objects ({rng.uniform(0.1, 90):.1f} MB) "
                f"key=build-{rng.getrandbits(32):08x}"
            )
    return "\n".join(out)


# --------------------------------------------------------------------------- JSON


def _record(rng: random.Random, index: int) -> dict:
    return {
        "id": 100000 + index,
        "sku": f"{rng.choice(NOUNS)[:3].upper()}-{rng.randrange(10000):04d}",
        "name": f"{sentence_case(rng.choice(NOUNS))} {rng.choice(VERBS)}er {rng.randrange(100)}",
        "status": rng.choice(("open", "paid", "shipped", "refunded", "cancelled")),
        "amount": round(rng.uniform(1, 5000), 2),
        "currency": rng.choice(("EUR", "USD", "GBP")),
        "tags": rng.sample(NOUNS, rng.randrange(0, 4)),
        "owner": {"name": rng.choice(NAMES), "team": rng.choice(MODULES)},
        "updated_at": (
            f"2025-0{rng.randrange(1, 10)}-{rng.randrange(1, 29):02d}"
            f"T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
        ),
    }


def big_json(rng: random.Random, target_chars: int = 200_000, note: str | None = None) -> str:
    """A paginated API response of about `target_chars`, as `jq .` prints it; `note` lands mid-list."""
    records: list[dict] = []
    size = 0
    while size < target_chars:
        record = _record(rng, len(records))
        records.append(record)
        size += len(json.dumps(record, indent=2)) + 8  # nesting indent adds a few chars per line
    if note is not None:
        records[len(records) // 2]["note"] = note
    doc = {
        "data": records,
        "page": {"limit": len(records), "next_cursor": f"{rng.getrandbits(64):016x}"},
        "total": len(records) * 7,
    }
    return json.dumps(doc, indent=2)


# --------------------------------------------------------------------------- small outputs


def grep_output(rng: random.Random, project: FakeProject, pattern: str, limit: int = 40) -> str:
    hits: list[str] = []
    for path in project.source_paths():
        for number, line in enumerate(project.files[path].splitlines(), 1):
            if pattern in line:
                hits.append(f"{path}:{number}: {line.strip()}")
                if len(hits) >= limit:
                    return "\n".join(hits) + f"\n[capped at {limit} matches]"
    return "\n".join(hits) if hits else "no matches"


def glob_output(project: FakeProject, pattern_prefix: str) -> str:
    found = [p for p in sorted(project.files) if p.startswith(pattern_prefix)]
    return "\n".join(found) if found else "no files matched"


def git_status(rng: random.Random, project: FakeProject) -> str:
    changed = rng.sample(project.source_paths(), rng.randrange(0, 5))
    if not changed:
        return "On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit, working tree clean"
    body = "\n".join(f"\tmodified:   {p}" for p in changed)
    return (
        'On branch main\nChanges not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n'
        f'{body}\n\nno changes added to commit (use "git add" and/or "git commit -a")'
    )


def git_log_oneline(rng: random.Random, n: int) -> str:
    return "\n".join(
        f"{rng.getrandbits(28):07x} {sentence_case(rng.choice(VERBS))} {rng.choice(NOUNS)} "
        f"{rng.choice(('handling', 'retries', 'tests', 'docs', 'types'))}"
        for _ in range(n)
    )
