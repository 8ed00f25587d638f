"""The scorer on hand-built OUT files whose figures are known in advance."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from bench.score import main, score
from bench.sessionio import SessionFormatError, dumps_line, write_session

SYSTEM = {"role": "system", "content": "You are a coding agent."}
CONSTRAINT = "Constraint: never touch vendor/. NEEDLE-aaaaaaaaaa limit=3"
NEEDLE = "NEEDLE-bbbbbbbbbb port=1234"
CALL = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}

# Five turns; turn 2 carries the needle (carrier 1) and a tool call.
TURNS: dict[int, list[dict[str, Any]]] = {
    1: [{"role": "user", "content": CONSTRAINT}, {"role": "assistant", "content": "Understood."}],
    2: [
        {"role": "user", "content": f"the port is {NEEDLE} ok"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "name": "bash", "content": "a.py\nb.py"},
        {"role": "assistant", "content": "Two files."},
    ],
    3: [{"role": "user", "content": "next"}, {"role": "assistant", "content": "ok 3"}],
    4: [{"role": "user", "content": "more"}, {"role": "assistant", "content": "ok 4"}],
    5: [{"role": "user", "content": "last"}, {"role": "assistant", "content": "ok 5"}],
}
ANSWERS: dict[str, Any] = {
    "constraint": {"id": "aaaaaaaaaa", "needle": "NEEDLE-aaaaaaaaaa limit=3", "text": CONSTRAINT},
    "needles": [
        {
            "id": "aaaaaaaaaa",
            "needle": "NEEDLE-aaaaaaaaaa limit=3",
            "carrier": 6,
            "planted_turn": 1,
            "probes": [{"turn": 5, "lag": 4, "query": "NEEDLE-aaaaaaaaaa limit"}],
        },
        {
            "id": "bbbbbbbbbb",
            "needle": NEEDLE,
            "carrier": 1,
            "planted_turn": 2,
            "probes": [
                {"turn": 3, "lag": 1, "query": "NEEDLE-bbbbbbbbbb port"},
                {"turn": 4, "lag": 2, "query": "NEEDLE-bbbbbbbbbb port"},
            ],
        },
    ],
}


# Every message costs 10 tokens, so budgets and costs can be worked out by hand.
def TEN(message):
    return 10


@pytest.fixture
def session(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = []
    for turn, messages in TURNS.items():
        lines.append({"turn": turn, "messages": messages})
        lines += [
            {"probe": {"turn": p["turn"], "query": p["query"]}}
            for n in ANSWERS["needles"]
            for p in n["probes"]
            if p["turn"] == turn
        ]
    write_session(path, lines, ANSWERS)
    return path


def history(upto: int) -> list[dict]:
    return [m for t in range(1, upto + 1) for m in TURNS[t]]


def write_out(tmp_path, prompts: dict[int, list[dict]], probes=(), name="out.jsonl", extra=None) -> str:
    path = tmp_path / name
    with open(path, "w", encoding="utf-8") as handle:
        for turn, prompt in prompts.items():
            line = {"turn": turn, "prompt": prompt, "tokens": 0, "events": []}
            line.update((extra or {}).get(turn, {}))
            handle.write(dumps_line(line) + "\n")
            for probe_turn, query, result in probes:
                if probe_turn == turn:
                    handle.write(dumps_line({"turn": turn, "query": query, "result": result}) + "\n")
    return str(path)


def full_prompts() -> dict[int, list[dict]]:
    return {t: [SYSTEM, *history(t)] for t in TURNS}


def run(tmp_path, session, prompts, probes=(), window=10_000, reserve=0, **kw):
    return score(
        write_out(tmp_path, prompts, probes, extra=kw.pop("extra", None)),
        session,
        window=window,
        output_reserve=reserve,
        count=kw.pop("count", TEN),
        **kw,
    )


def test_an_append_only_engine_scores_clean(tmp_path, session):
    report = run(tmp_path, session, full_prompts())
    s, p, r = report["structure"], report["prefix"], report["retention"]
    assert report["turns"] == 5 and report["missing_turn_count"] == 0
    assert all(
        s[k] == 0
        for k in (
            "orphan_results",
            "dangling_calls",
            "role_order_errors",
            "duplicate_call_ids",
            "system_prompt_changes",
            "turns_with_errors",
        )
    )
    assert p["breaks"] == 0 and p["system_prompt_changes"] == 0
    # Turn t reuses all of turn t-1: prompts are 30, 70, 90, 110, 130 tokens (10 per message).
    assert p["anthropic"]["token_weighted"] == pytest.approx((30 + 70 + 90 + 110) / (70 + 90 + 110 + 130))
    assert r["r_verbatim"] == 1.0 and r["r_1"] == 1.0
    assert r["constraint_share"] == 1.0 and r["latest_user_share"] == 1.0


def test_an_orphan_result_is_counted(tmp_path, session):
    prompts = full_prompts()
    prompts[3] = [m for m in prompts[3] if not m.get("tool_calls")]  # the call is gone, its result stays
    s = run(tmp_path, session, prompts)["structure"]
    assert (s["orphan_results"], s["dangling_calls"], s["role_order_errors"], s["turns_with_errors"]) == (1, 0, 0, 1)


def test_a_dangling_call_is_counted(tmp_path, session):
    prompts = full_prompts()
    prompts[4] = [m for m in prompts[4] if m.get("role") != "tool"]
    s = run(tmp_path, session, prompts)["structure"]
    assert (s["orphan_results"], s["dangling_calls"], s["role_order_errors"]) == (0, 1, 0)


def test_role_order_errors_are_counted(tmp_path, session):
    prompts = full_prompts()
    body = history(2)
    # A user message between the call and its result, and an assistant opening the conversation.
    prompts[2] = [
        SYSTEM,
        {"role": "assistant", "content": "hello"},
        *body[:4],
        {"role": "user", "content": "wait"},
        *body[4:],
    ]
    s = run(tmp_path, session, prompts)["structure"]
    assert s["role_order_errors"] == 2 and s["orphan_results"] == 0 and s["dangling_calls"] == 0


def test_a_prefix_break_is_detected_at_its_turn(tmp_path, session):
    prompts = full_prompts()
    for turn in (4, 5):  # turn 4 clears the old tool output; turn 5 appends to that
        prompts[turn] = [dict(m, content="[cleared]") if m.get("role") == "tool" else m for m in prompts[turn]]
    p = run(tmp_path, session, prompts)["prefix"]
    assert p["breaks"] == 1 and p["break_turns"] == [4]
    # At turn 4 only the 5 messages before the tool result are reused: 50 of 110 tokens at message
    # boundaries; the OpenAI-like count adds the common start of the changed message.
    assert p["anthropic"]["token_weighted"] == pytest.approx((30 + 70 + 50 + 110) / (70 + 90 + 110 + 130))
    assert p["openai"]["token_weighted"] > p["anthropic"]["token_weighted"]


def test_cache_markers_and_text_part_lists_do_not_break_the_prefix(tmp_path, session):
    prompts = full_prompts()
    for prompt in prompts.values():  # a marker on the last message moves every turn
        last = prompt[-1]
        prompt[-1] = {
            **last,
            "content": [{"type": "text", "text": last["content"] or "", "cache_control": {"type": "ephemeral"}}],
        }
    assert run(tmp_path, session, prompts)["prefix"]["breaks"] == 0


def test_a_needle_found_only_by_recall_counts_for_r1_not_verbatim(tmp_path, session):
    prompts = full_prompts()
    for turn in (3, 4):
        prompts[turn] = [m for m in prompts[turn] if NEEDLE not in (m.get("content") or "")]
    probes = [
        (3, "NEEDLE-bbbbbbbbbb port", f"[recall] user said: the port is {NEEDLE} ok"),
        (4, "NEEDLE-bbbbbbbbbb port", "[recall] NEEDLE-bbbbbbbbbb port=12345"),
    ]  # a different value
    r = run(tmp_path, session, prompts, probes)["retention"]
    assert r["by_lag"]["1"] == {"probes": 1, "r_verbatim": 0.0, "r_1": 1.0}
    assert r["by_lag"]["2"] == {"probes": 1, "r_verbatim": 0.0, "r_1": 0.0}
    assert r["probes"] == 3 and r["r_verbatim"] == pytest.approx(1 / 3) and r["r_1"] == pytest.approx(2 / 3)
    assert [x["turn"] for x in r["lost"]] == [4]


def test_a_constraint_dropped_at_one_turn_lowers_its_share(tmp_path, session):
    prompts = full_prompts()
    prompts[4] = [m for m in prompts[4] if m.get("content") != CONSTRAINT]
    r = run(tmp_path, session, prompts)["retention"]
    assert r["constraint_share"] == pytest.approx(4 / 5) and r["constraint_text_share"] == pytest.approx(4 / 5)


def test_the_latest_user_message_must_be_in_every_prompt(tmp_path, session):
    prompts = full_prompts()
    prompts[5] = prompts[5][:-2]  # the turn's own messages are missing
    r = run(tmp_path, session, prompts)["retention"]
    assert r["latest_user_share"] == pytest.approx(4 / 5) and r["latest_user_missing_turns"] == [5]


def test_over_budget_turns_and_system_prompt_changes(tmp_path, session):
    prompts = full_prompts()
    prompts[3] = [{"role": "system", "content": "You are a different agent."}, *history(3)]
    # 10 tokens per message + 15 reserve against a window of 100: over when the prompt has 9+ messages.
    report = run(tmp_path, session, prompts, window=100, reserve=15)
    assert [len(p) for p in prompts.values()] == [3, 7, 9, 11, 13]
    assert report["budget"]["over_budget_turns"] == 3 and report["budget"]["over_budget_list"] == [3, 4, 5]
    assert report["budget"]["max_overshoot_tokens"] == 130 + 15 - 100
    assert report["structure"]["system_prompt_changes"] == 2  # changed at turn 3, back at turn 4
    assert report["prefix"]["breaks"] == 2


def test_cost_prices_cached_and_uncached_tokens_and_the_refetch_penalty(tmp_path, session):
    prompts = full_prompts()
    prompts[4] = [m for m in prompts[4] if NEEDLE not in (m.get("content") or "")]  # lag-2 probe lost
    extra = {2: {"events": [{"stage": "summarize", "summarizer_tokens": 40}]}, 3: {"summarizer_tokens": 2}}
    c = run(tmp_path, session, prompts, extra=extra, refetch_penalty=1000)["cost"]
    sizes = [30, 70, 90, 100, 130]
    # Turn 4 drops message 3 (the needle) and turn 5 brings it back: both reuse only 3 messages.
    reused = [0, 30, 70, 30, 30]
    assert c["prompt_tokens"] == sum(sizes) and c["summarizer_tokens"] == 42 and c["lost_probes"] == 1
    assert c["anthropic"] == pytest.approx(sum(0.1 * r + 1.25 * (s - r) for s, r in zip(sizes, reused, strict=True)))
    assert c["openai"] == sum(sizes)  # nothing is cached below OpenAI's 1,024-token minimum
    assert c["total_anthropic"] == pytest.approx(c["anthropic"] + 42 + 1000 * 1.25)
    assert c["total_openai"] == pytest.approx(c["openai"] + 42 + 1000)


def test_a_stale_value_is_not_retention(tmp_path, session):
    answers = json.loads((tmp_path / "s.jsonl.answers.json").read_text())
    answers["needles"][1].update(carrier=4, needle="NEEDLE-bbbbbbbbbb port=9999", old_needle=NEEDLE, value="9999")
    other = tmp_path / "a.json"
    other.write_text(json.dumps(answers))
    report = score(write_out(tmp_path, full_prompts()), session, other, window=10_000, output_reserve=0, count=TEN)
    r = report["retention"]
    assert r["by_carrier"]["4"]["r_1"] == 0.0 and r["stale"] == 2


def test_timing_buckets_and_growth_exponent(tmp_path):
    # 400 turns of 2 messages; engine time grows as sqrt(history), so alpha = 0.5.
    session = tmp_path / "long.jsonl"
    lines: list[dict[str, Any]] = [
        {"turn": t, "messages": [{"role": "user", "content": f"u{t}"}, {"role": "assistant", "content": f"a{t}"}]}
        for t in range(1, 401)
    ]
    write_session(session, lines, {"needles": []})
    extra = {t: {"engine_ms": 0.01 * math.sqrt(2 * t)} for t in range(1, 401)}
    prompts = {t: [SYSTEM, *lines[t - 1]["messages"]] for t in range(1, 401)}
    out = write_out(tmp_path, prompts, extra=extra, name="long.out")
    t = score(out, session, window=10_000, output_reserve=0, count=TEN)["timing"]
    assert t["available"] and sorted(t["buckets"]) == ["100", "200", "400"]
    assert t["buckets"]["100"]["turns"] == 50
    assert t["alpha"] == pytest.approx(0.5, abs=0.02)
    assert t["p50_ms"] < t["p95_ms"] < t["max_ms"] == pytest.approx(0.01 * math.sqrt(800))


def test_the_default_counter_is_the_shared_tiktoken_one(tmp_path, session):
    from myrm_tui.context.window.tokens import count_message_tokens

    prompts = full_prompts()
    report = score(write_out(tmp_path, prompts), session, window=10_000, output_reserve=0)
    expected = sum(count_message_tokens(m, "gpt-4o") for p in prompts.values() for m in p)
    assert report["cost"]["prompt_tokens"] == expected


def test_malformed_out_files_fail_with_the_line_number(tmp_path, session):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps_line({"turn": 1, "prompt": [SYSTEM]}) + "\n{not json\n")
    with pytest.raises(SessionFormatError, match=r"bad.jsonl:2"):
        score(bad, session, window=1000, output_reserve=0, count=TEN)
    bad.write_text(dumps_line({"turn": 2, "prompt": []}) + "\n" + dumps_line({"turn": 1, "prompt": []}) + "\n")
    with pytest.raises(SessionFormatError, match="increasing order"):
        score(bad, session, window=1000, output_reserve=0, count=TEN)


def test_cli_prints_a_table_or_json(tmp_path, session, capsys):
    prompts = full_prompts()
    prompts[3] = [m for m in prompts[3] if not m.get("tool_calls")]
    out = write_out(tmp_path, prompts)
    assert main([out, "--session", str(session), "--window", "64000", "--reserve", "4096"]) == 0
    table = capsys.readouterr().out
    assert "| B4 orphan results | 1 |" in table and "| B2 R_1 |" in table
    assert main([out, "--session", str(session), "--window", "64000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["structure"]["orphan_results"] == 1
    assert main([str(tmp_path / "missing.jsonl"), "--session", str(session), "--window", "64000"]) == 2
    assert "error:" in capsys.readouterr().err


def test_claimed_compactions_are_read_from_the_line_or_the_stage_report(tmp_path, session):
    extra = {2: {"compaction": True}, 3: {"events": [{"event": {"tier": "light"}}]}, 4: {"events": [{"event": None}]}}
    assert run(tmp_path, session, full_prompts(), extra=extra)["prefix"]["compactions"] == 2
    assert run(tmp_path, session, full_prompts())["prefix"]["compactions"] is None


def test_a_recall_that_returns_only_the_superseded_value_is_stale(tmp_path, session):
    answers = json.loads((tmp_path / "s.jsonl.answers.json").read_text())
    answers["needles"][1].update(carrier=4, needle="NEEDLE-bbbbbbbbbb port=9999", old_needle=NEEDLE, value="9999")
    other = tmp_path / "a.json"
    other.write_text(json.dumps(answers))
    prompts = {t: [SYSTEM, {"role": "user", "content": f"u{t}"}] for t in TURNS}
    probes = [
        (3, "NEEDLE-bbbbbbbbbb port", f"[1] {NEEDLE} (older read)"),
        (4, "NEEDLE-bbbbbbbbbb port", f"[1] {NEEDLE}\n[2] NEEDLE-bbbbbbbbbb port=9999"),
    ]
    r = score(write_out(tmp_path, prompts, probes), session, other, window=10_000, output_reserve=0, count=TEN)[
        "retention"
    ]
    assert r["by_lag"]["1"]["r_1"] == 0.0 and r["by_lag"]["2"]["r_1"] == 1.0
    assert r["stale"] == 1
