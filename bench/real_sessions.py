"""Replay sessions built from real tool output captured on this machine, now.

Why: a generator's text has a generator's regularities; an engine tuned on it could look better
than it is. These sessions wrap genuine outputs (this project's pytest collection, a real pytest
run that fails then passes, `git log -p`, `pip list --format json`, `ls -R`, real source files)
into the replay format, with needles in user messages (carrier 1) and a first-message constraint
(carrier 6). The conversation around the outputs is scripted from a seed; the outputs are not,
so two captures differ when the tree does (the manifest records each session's sha256).

    python -m bench.real_sessions --out DIR [--turns 60] [--seed 0] [--root REPO]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.content import file_read_output
from bench.needles import PROBE_LAGS, NeedleFactory, probe_lines
from bench.sessionio import write_session

ROOT = Path(__file__).resolve().parent.parent
CAPTURE_TIMEOUT_S = 300  # the project's test collection imports the whole app on a shared 2-core box
DEFAULT_TURNS = 60
NEEDLE_EVERY = 6  # a user-message needle every 6 turns: ~10 per 60-turn session
GIT_LOG_COMMITS = 30
FULL_LOG_STEP = 12  # where the full `git log -p` appears among the git steps

# A tiny test module that fails until the "fix" turn edits it (then a second real run passes).
TMP_TEST = '''"""Scratch tests the agent fixes during the session."""


def parse_port(text):
    return int(text.strip())


def test_parse_port_plain():
    assert parse_port("8080") == 8080


def test_parse_port_spaces():
    assert parse_port(" 9090 ") == 9090


def test_parse_port_rejects_words():
    assert parse_port("eighty") == 80
'''
TMP_TEST_FIX = (
    '    assert parse_port("eighty") == 80',
    '    import pytest\n    with pytest.raises(ValueError):\n        parse_port("eighty")',
)


@dataclass(frozen=True)
class Step:
    """One real tool call and its captured output."""

    name: str
    args: dict[str, Any]
    output: str


def _run(command: list[str], cwd: Path, display: str) -> Step:
    proc = subprocess.run(
        command,
        check=False,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=CAPTURE_TIMEOUT_S,
        env={**os.environ, "PYTHONHASHSEED": "0", "TZ": "UTC"},
    )
    output = proc.stdout.rstrip("\n")
    if proc.returncode:
        output += f"\n[exit code {proc.returncode}]"
    return Step("bash", {"command": display}, output)


def capture_pytest(root: Path, *, collect: bool = True) -> list[Step]:
    """The project's own test collection, and a scratch test file run failing then passing."""
    steps: list[Step] = []
    if collect:
        steps.append(
            _run(
                [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                root,
                "python -m pytest --collect-only -q",
            )
        )
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # keep the project's config out
        test_file = folder / "test_scratch.py"
        test_file.write_text(TMP_TEST, encoding="utf-8")
        steps.append(
            Step(
                "file_write",
                {"path": "test_scratch.py", "content": TMP_TEST},
                f"Wrote test_scratch.py ({TMP_TEST.count(chr(10))} lines).",
            )
        )
        run = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_scratch.py"]
        steps.append(_run(run, folder, "python -m pytest -v test_scratch.py"))
        fixed = TMP_TEST.replace(*TMP_TEST_FIX)
        test_file.write_text(fixed, encoding="utf-8")
        steps.append(
            Step(
                "file_edit",
                {"path": "test_scratch.py", "old": TMP_TEST_FIX[0].strip(), "new": TMP_TEST_FIX[1].strip()},
                "Edited test_scratch.py: 1 replacement.",
            )
        )
        steps.append(Step("file_read", {"path": "test_scratch.py"}, file_read_output("test_scratch.py", fixed)))
        steps.append(_run(run, folder, "python -m pytest -v test_scratch.py"))
    return steps


def capture_git(root: Path) -> list[Step]:
    """`git log -p` in full, and each file's diff as its own `git show` output."""
    full = _run(
        ["git", "log", "-p", "-n", str(GIT_LOG_COMMITS), "--no-color"], root, f"git log -p -n {GIT_LOG_COMMITS}"
    )
    steps = [
        _run(
            ["git", "log", "--stat", "-n", str(GIT_LOG_COMMITS), "--no-color"],
            root,
            f"git log --stat -n {GIT_LOG_COMMITS}",
        )
    ]
    sections = full.output.split("\ndiff --git ")
    for section in sections[1:]:
        header = section.split("\n", 1)[0]  # "a/path b/path"
        path = header.split(" b/", 1)[-1]
        steps.append(Step("bash", {"command": f"git show HEAD -- {path}"}, "diff --git " + section))
    # The full log (the big real output) early enough that a short session reaches it.
    steps.insert(min(FULL_LOG_STEP, len(steps)), full)
    return steps


def capture_env(root: Path, package: str = "myrm_tui", reads: int = 12) -> list[Step]:
    """Installed packages, the package tree, and real source files (a few read more than once)."""
    steps = [
        _run([sys.executable, "-m", "pip", "list", "--format", "json"], root, "pip list --format json"),
        _run(["ls", "-R", package], root, f"ls -R {package}"),
    ]
    sources = sorted((root / package).rglob("*.py"))
    rng = random.Random(0)
    for path in rng.sample(sources, min(reads, len(sources))):
        relative = path.relative_to(root).as_posix()
        steps.append(
            Step("file_read", {"path": relative}, file_read_output(relative, path.read_text(encoding="utf-8")))
        )
    return steps


def capture_all(root: Path = ROOT, *, collect: bool = True) -> dict[str, list[Step]]:
    return {
        "real-pytest": capture_pytest(root, collect=collect),
        "real-git": capture_git(root),
        "real-env": capture_env(root),
    }


# --------------------------------------------------------------------------- sessions

USER_ASKS = (
    "Next step please.",
    "Go on - what does the next command show?",
    "Run the next check.",
    "ok, and after that?",
    "Keep going, I'm following along.",
    "What do we learn from the next one?",
)
ASSISTANT_NOTES = (
    "That output is consistent with what we saw before.",
    "Nothing alarming here; moving on.",
    "This is the part that matters for the task.",
    "Noted - I'll keep this in mind for the next step.",
)
NEEDLE_SENTENCES = (
    "Also remember {needle} - it comes from the deploy notes.",
    "FYI the value is {needle}, don't lose it.",
    "Quick note for later: {needle}.",
)


def build_session(
    name: str, steps: list[Step], *, turns: int, seed: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Wrap captured steps into `turns` turns: one or two real calls per turn, cycling (so outputs repeat)."""
    if not steps:
        raise ValueError(f"session {name} has no captured output to replay.")
    rng = random.Random(f"real:{name}:{seed}")
    factory = NeedleFactory(random.Random(f"real-needles:{name}:{seed}"))
    ids: set[str] = set()

    def call_id() -> str:
        while True:
            value = f"call_{rng.getrandbits(96):024x}"
            if value not in ids:
                ids.add(value)
                return value

    lines: list[dict[str, Any]] = []
    cursor = 0
    constraint_text = ""
    for turn in range(1, turns + 1):
        if turn == 1:
            needle = factory.new(6, 1, "limit", str(rng.randrange(2, 10)))
            constraint_text = f"Constraint: never push to the main branch. {needle.text}"
            user = f"{constraint_text}\n\nWalk me through the state of this project ({name}), one command at a time."
        else:
            user = rng.choice(USER_ASKS)
            if turn % NEEDLE_EVERY == 0:
                user += " " + rng.choice(NEEDLE_SENTENCES).format(needle=factory.new(1, turn).text)
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        batch = []
        for _ in range(1 if rng.random() < 0.7 else 2):
            batch.append(steps[cursor % len(steps)])
            cursor += 1
        call_ids = [call_id() for _ in batch]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": step.name, "arguments": json.dumps(step.args)}}
                    for cid, step in zip(call_ids, batch, strict=True)
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": cid, "name": step.name, "content": step.output}
            for cid, step in zip(call_ids, batch, strict=True)
        ]
        messages.append({"role": "assistant", "content": rng.choice(ASSISTANT_NOTES)})
        lines.append({"turn": turn, "messages": messages})
    for needle in factory.needles:
        needle.schedule_probes(turns)
    probes = probe_lines(factory.needles)
    ordered: list[dict[str, Any]] = []
    for line in lines:
        ordered.append(line)
        ordered += probes.get(line["turn"], [])
    constraint = factory.needles[0]
    answers = {
        "generator": "bench.real_sessions",
        "kind": name,
        "turns": turns,
        "seed": seed,
        "lags": list(PROBE_LAGS),
        "constraint": {"id": constraint.id, "needle": constraint.text, "text": constraint_text},
        "needles": [n.as_answer() for n in factory.needles],
    }
    return ordered, answers


def write_sessions(
    out_dir: str | Path, captures: dict[str, list[Step]], *, turns: int = DEFAULT_TURNS, seed: int = 0
) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    manifest: dict[str, Any] = {}
    for name, steps in captures.items():
        lines, answers = build_session(name, steps, turns=turns, seed=seed)
        path = out / f"{name}.jsonl"
        sidecar = write_session(path, lines, answers)
        manifest[name] = {
            "session": path.name,
            "answers": sidecar.name,
            "sha256": json.loads(sidecar.read_text(encoding="utf-8"))["session_sha256"],
            "commands": [s.args.get("command", f"{s.name} {s.args.get('path', '')}") for s in steps][:40],
            "captured_chars": sum(len(s.output) for s in steps),
        }
        written.append(path)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_sessions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the sessions, their answers and manifest.json")
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", default=str(ROOT), help="the repository whose real output is captured")
    parser.add_argument("--no-collect", action="store_true", help="skip the (slower) project test collection")
    args = parser.parse_args(argv)
    if args.turns < 2:
        parser.error("--turns must be at least 2.")
    try:
        captures = capture_all(Path(args.root), collect=not args.no_collect)
    except (OSError, subprocess.SubprocessError) as exc:
        print(
            f"error: could not capture real output ({exc}); check --root is a git checkout with myrm_tui.",
            file=sys.stderr,
        )
        return 2
    for path in write_sessions(args.out, captures, turns=args.turns, seed=args.seed):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
