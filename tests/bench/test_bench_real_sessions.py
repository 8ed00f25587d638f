"""Sessions from real captured output: genuine text, valid replay format, needles in user messages."""

from __future__ import annotations

import json

import pytest

from bench.needles import needle_pattern
from bench.real_sessions import (
    ROOT,
    Step,
    build_session,
    capture_env,
    capture_git,
    capture_pytest,
    write_sessions,
)
from bench.sessionio import read_answers, read_session, session_problems


@pytest.fixture(scope="module")
def captures():
    return {
        "real-pytest": capture_pytest(ROOT, collect=False),
        "real-git": capture_git(ROOT),
        "real-env": capture_env(ROOT),
    }


@pytest.mark.slow
def test_captured_output_is_real(captures):
    pytest_runs = [
        s.output for s in captures["real-pytest"] if s.args.get("command", "").startswith("python -m pytest -v")
    ]
    assert len(pytest_runs) == 2
    assert "1 failed, 2 passed" in pytest_runs[0] and "[exit code 1]" in pytest_runs[0]
    assert "3 passed" in pytest_runs[1] and "failed" not in pytest_runs[1]
    pip = next(s for s in captures["real-env"] if s.args.get("command") == "pip list --format json")
    assert any(p["name"].lower() in ("myrm-tui", "myrm_tui") for p in json.loads(pip.output))
    git = captures["real-git"]
    assert any(s.output.startswith("commit ") and "\ndiff --git " in s.output for s in git)
    assert any(s.args.get("command", "").startswith("git show HEAD -- myrm_tui/") for s in git)
    reads = [s for s in captures["real-env"] if s.name == "file_read"]
    assert reads and all((ROOT / s.args["path"]).read_text(encoding="utf-8").rstrip("\n") in s.output for s in reads)


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_sessions_are_valid_and_carry_probed_needles(tmp_path, captures):
    paths = write_sessions(tmp_path, captures, turns=60, seed=0)
    assert sorted(p.name for p in paths) == ["real-env.jsonl", "real-git.jsonl", "real-pytest.jsonl"]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    for path in paths:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert session_problems(lines) == []
        answers = read_answers(str(path) + ".answers.json")
        assert manifest[path.stem]["sha256"] == answers["session_sha256"]
        session = read_session(path)
        assert session.last_turn == 60
        first_user = session.turns[1][0]["content"]
        assert first_user.startswith(answers["constraint"]["text"])
        planted = [n for n in answers["needles"] if n["carrier"] == 1]
        assert len(planted) >= 5
        for needle in planted:
            user = session.turns[needle["planted_turn"]][0]
            assert user["role"] == "user" and needle_pattern(needle["needle"]).search(user["content"])
            assert all(p["turn"] <= 60 for p in needle["probes"])
            assert needle["probes"] or needle["planted_turn"] + 5 > 60, "every needle with room for a probe is probed"
        assert sorted(session.probes) == sorted(
            (p["turn"], p["query"]) for n in answers["needles"] for p in n["probes"]
        )


def test_outputs_repeat_exactly_when_steps_cycle():
    steps = [Step("bash", {"command": f"echo {i}"}, f"out {i}") for i in range(3)]
    lines, _ = build_session("tiny", steps, turns=30, seed=1)
    outputs = [m["content"] for line in lines if "messages" in line for m in line["messages"] if m["role"] == "tool"]
    assert len(outputs) > 30 and set(outputs) == {"out 0", "out 1", "out 2"}
    assert build_session("tiny", steps, turns=30, seed=1)[0] == lines
    with pytest.raises(ValueError, match="no captured output"):
        build_session("empty", [], turns=10, seed=1)
