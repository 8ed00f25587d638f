"""B4's adversarial cases: each generator is deterministic, writes a readable replay session that
really contains its hostile feature, and the harness detects that feature on the raw baseline
(so the adversarial table cannot come out clean because a case is toothless)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.adversarial import (
    CASES,
    HUGE_ARGS_CHARS,
    MB,
    SUMMARIZER_CALLS,
    WINDOW,
    generate,
    inflating_summarizer,
    main,
    raising_summarizer,
    register_summarizers,
    run_cases,
    write_cases,
)
from bench.png import PNG_SIGNATURE
from bench.sessionio import read_session, session_bytes, session_problems, write_session
from bench.structure import check_structure

# Problems the whole recorded history is expected to have: the hostile feature itself.
EXPECTED_HISTORY_PROBLEMS = {
    "duplicate-ids": {"role_order_errors", "duplicate_call_ids"},
    "broken-history": {"orphan_results", "dangling_calls"},
}


def _messages(lines: list[dict]) -> list[dict]:
    return [m for line in lines if "messages" in line for m in line["messages"]]


def _tool_texts(lines: list[dict]) -> list[str]:
    return [m["content"] for m in _messages(lines) if m["role"] == "tool" and isinstance(m["content"], str)]


@pytest.fixture(scope="module")
def sessions() -> dict[str, tuple[list[dict], dict]]:
    return {name: generate(name) for name in CASES}


@pytest.mark.parametrize("name", list(CASES))
def test_case_is_deterministic_and_a_valid_replay_session(name: str, sessions, tmp_path: Path) -> None:
    lines, answers = sessions[name]
    again_lines, again_answers = generate(name)
    assert session_bytes(lines) == session_bytes(again_lines)
    assert answers == again_answers
    assert generate(name, seed=2)[0] != lines  # the seed matters
    problems = session_problems(lines)
    allowed = EXPECTED_HISTORY_PROBLEMS.get(name, set())
    assert all(p.startswith("history: ") and p.split()[-1] in allowed for p in problems), problems
    assert {p.split()[-1] for p in problems} == allowed
    # Written and read back as the harness does: UTF-8 JSON lines, every turn present.
    path = tmp_path / "s.jsonl"
    write_session(path, lines, answers)
    assert read_session(path).last_turn == answers["turns"] >= 20
    assert answers["needles"] and all(n["probes"] for n in answers["needles"])
    assert CASES[name].doc and CASES[name].doc.endswith(".")


def test_mb_outputs(sessions) -> None:
    multi = max(_tool_texts(sessions["mb-output"][0]), key=len)
    assert len(multi) >= 1_000_000 and multi.count("\n") > 5_000
    one_line = max(_tool_texts(sessions["mb-one-line"][0]), key=len)
    assert len(one_line) >= MB and "\n" not in one_line
    json.loads(one_line)
    # The needle planted in the big output is probed after it.
    for name, text in (("mb-output", multi), ("mb-one-line", one_line)):
        planted = [n for n in sessions[name][1]["needles"] if n["carrier"] == 2]
        assert planted and planted[0]["needle"] in text and planted[0]["probes"]


def test_first_message_is_150k_tokens_with_the_constraint_first(sessions) -> None:
    from myrm_tui.context.window.tokens import count_text_tokens

    lines, answers = sessions["first-message-150k"]
    first = lines[0]["messages"][0]
    assert first["role"] == "user" and first["content"].startswith(answers["constraint"]["text"])
    assert answers["constraint"]["needle"] in first["content"].split("\n", 1)[0]
    assert count_text_tokens(first["content"], "gpt-4o") >= 150_000 > WINDOW


def test_parallel_groups_are_wide_and_large(sessions) -> None:
    from myrm_tui.context.window.tokens import count_message_tokens

    lines, _ = sessions["parallel-across-cut"]
    for line in (x for x in lines if "messages" in x):
        calls = [m for m in line["messages"] if m.get("tool_calls")]
        assert len(calls) == 1 and 8 <= len(calls[0]["tool_calls"]) <= 12
        group = sum(count_message_tokens(m, "gpt-4o") for m in line["messages"] if m["role"] == "tool")
        assert WINDOW // 8 < group < WINDOW  # two or three groups per window: a cut lands inside one


def test_images_in_user_and_tool_messages(sessions) -> None:
    messages = _messages(sessions["images"][0])
    user_images = [
        p
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    tool_images = [
        p
        for m in messages
        if m["role"] == "tool" and isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert len(user_images) >= 40 and len(tool_images) >= 20
    url = tool_images[0]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]).startswith(PNG_SIGNATURE)


def test_duplicate_ids_are_reused_across_turns(sessions) -> None:
    turns_per_id: dict[str, set[int]] = {}
    for line in (x for x in sessions["duplicate-ids"][0] if "messages" in x):
        for m in line["messages"]:
            for call in m.get("tool_calls") or ():
                turns_per_id.setdefault(call["id"], set()).add(line["turn"])
    assert set(turns_per_id) <= {f"call_{i}" for i in range(4)}
    assert len(turns_per_id["call_0"]) == sessions["duplicate-ids"][1]["turns"]


def test_hostile_summarizers_reach_peers_and_myrm() -> None:
    from bench.contenders.base import SharedCounter, SharedSummarizer
    from myrm_tui.llm.fake_providers.replay_summarizers import SUMMARIZERS

    register_summarizers()
    assert SUMMARIZERS["raises"] is raising_summarizer and SUMMARIZERS["inflate"] is inflating_summarizer
    assert CASES["summarizer-raises"].summarizer == "raises" and CASES["summarizer-inflates"].summarizer == "inflate"
    # The peers' shared summarizer passes the failure on (a peer that does not catch it shows as exceptions).
    shared = SharedSummarizer("raises", SharedCounter())
    with pytest.raises(RuntimeError, match="HTTP 500"):
        shared.summarize_messages([{"role": "user", "content": "hello"}])
    block: list[dict[str, Any]] = [
        {"role": "user", "content": "x" * 500},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
            ],
        },
    ]
    out = SharedSummarizer("inflate", SharedCounter()).summarize_messages(block)
    assert len(out) > 2 * 500 and out.count("x" * 500) == 2


def test_binary_output_has_the_hostile_bytes(sessions) -> None:
    text = "".join(_tool_texts(sessions["binary-output"][0]))
    for needle in ("\x00", "\x1b[", "\ufffd", "\r", "\x07", "\x08"):
        assert needle in text, repr(needle)
    assert any(len(line) >= 200_000 for line in text.split("\n"))
    session_bytes(sessions["binary-output"][0]).decode("utf-8")  # no lone surrogate survived


def test_huge_tool_arguments(sessions) -> None:
    sizes = [
        len(call["function"]["arguments"])
        for m in _messages(sessions["huge-tool-args"][0])
        for call in m.get("tool_calls") or ()
    ]
    assert sum(size >= HUGE_ARGS_CHARS for size in sizes) >= 3


def test_broken_history_has_every_kind_of_damage(sessions) -> None:
    issues = check_structure(_messages(sessions["broken-history"][0]))
    for kind in ("orphan_results", "dangling_calls", "same_role_runs", "empty_messages"):
        assert issues[kind] > 0, kind


def test_token_dense_text_is_under_two_chars_per_token(sessions) -> None:
    from myrm_tui.context.window.tokens import count_text_tokens

    text = "".join(_tool_texts(sessions["token-dense"][0]))
    assert len(text) / count_text_tokens(text, "gpt-4o") < 2.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str], dict]:
    """myrm and raw on all 12 cases, codex-policy on the raising summarizer (about 10 s)."""
    from bench.contenders import BY_NAME

    workloads = write_cases(tmp_path_factory.mktemp("adversarial"))
    rows = run_cases([BY_NAME["myrm"], BY_NAME["raw"]], workloads, progress=False)
    rows += run_cases([BY_NAME["codex-policy"]], {"summarizer-raises": workloads["summarizer-raises"]}, progress=False)
    return {(r["contender"], r["case"]): r for r in rows}


@pytest.mark.slow
def test_the_harness_sees_each_hostile_feature_on_raw(runs) -> None:
    def over(case: str) -> int:
        return runs[("raw", case)]["report"]["budget"]["over_budget_turns"]

    def structure(case: str) -> int:
        return runs[("raw", case)]["report"]["structure"]["turns_with_errors"]

    for case in CASES:
        row = runs[("raw", case)]
        assert row["status"] == "ok" and row["report"]["exceptions"] == 0
        assert row["report"]["retention"]["r_1"] == 1.0  # raw keeps everything: the probes are answerable
    lines_after = {case: runs[("raw", case)]["report"]["turns"] for case in CASES}
    assert over("first-message-150k") == lines_after["first-message-150k"]  # over budget from turn 1
    for case in (
        "mb-output",
        "mb-one-line",
        "parallel-across-cut",
        "images",
        "binary-output",
        "huge-tool-args",
        "token-dense",
        "summarizer-raises",
        "summarizer-inflates",
    ):
        assert over(case) >= 10, case
    assert structure("duplicate-ids") >= lines_after["duplicate-ids"] - 1
    issues = runs[("raw", "broken-history")]["report"]["structure"]
    assert structure("broken-history") > 0 and issues["orphan_results"] and issues["dangling_calls"]
    for case in CASES:
        if case not in ("duplicate-ids", "broken-history"):
            assert structure(case) == 0, case


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_hostile_summarizers_are_called(runs) -> None:
    # A peer that does not catch the failure shows it as exceptions, one per failing turn.
    codex = runs[("codex-policy", "summarizer-raises")]
    assert codex["summarizer_calls"] > 0 and codex["report"]["exceptions"] == codex["summarizer_calls"]
    assert "RuntimeError" in codex["report"]["exception_samples"][0]
    # myrm gets the same fakes through replay (its figures are reported, not asserted here).
    assert runs[("myrm", "summarizer-raises")]["summarizer_calls"] > 0
    assert runs[("myrm", "summarizer-inflates")]["summarizer_calls"] > 0
    assert runs[("raw", "summarizer-raises")]["summarizer_calls"] == 0
    assert SUMMARIZER_CALLS["raises"] > 0 and SUMMARIZER_CALLS["inflate"] > 0


@pytest.mark.slow  # shares the module fixture the slow tier builds
def test_myrm_rows_are_recorded(runs) -> None:
    from bench.tables import render_adversarial

    for case in CASES:
        row = runs[("myrm", case)]
        # B4's target, as a regression guard: every hostile case ends with a valid prompt in budget.
        assert row["status"] == "ok", (case, row.get("traceback", row["detail"]))
        report = row["report"]
        assert report["turns"] == runs[("raw", case)]["report"]["turns"], case
        assert report["budget"]["over_budget_turns"] == 0, case
        assert report["structure"]["turns_with_errors"] == 0, (case, report["structure"])
        assert report["exceptions"] == 0 and report["silent_noops"] == 0, case
    section = {
        "window": WINDOW,
        "elapsed_s": 1.0,
        "cases": {c: {"doc": CASES[c].doc} for c in CASES},
        "results": [dict(r, case=k[1]) for k, r in runs.items()],
    }
    text = render_adversarial({"mode": "all", "adversarial": section})
    table = next(line for line in text.splitlines() if line.startswith("| raw |"))
    assert table.count("|") == len(CASES) + 2 and "/" in table


def test_cli_mode_writes_results(tmp_path: Path, capsys) -> None:
    out = tmp_path / "adv.json"
    assert (
        main(
            [
                "--contenders",
                "raw,naive-truncation",
                "--cases",
                "broken-history,duplicate-ids",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    document = json.loads(out.read_text(encoding="utf-8"))
    rows = document["adversarial"]["results"]
    assert document["mode"] == "adversarial" and len(rows) == 4
    assert Counter(r["case"] for r in rows) == {"broken-history": 2, "duplicate-ids": 2}
    printed = capsys.readouterr().out
    assert "| naive-truncation |" in printed and "broken-history" in printed
