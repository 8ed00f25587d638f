"""summarize(): scripted model calls through litellm, escalation, fallback, breaker, routing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from myrm_tui.context.summary.breaker import OPEN, PERMANENT, PERMANENT_COOLDOWN_S, SummarizerBreaker
from myrm_tui.context.summary.chunking import choose_chunk
from myrm_tui.context.summary.client import (
    LEVEL_EXTRACTIVE,
    LEVEL_LLM,
    LEVEL_TERSE,
    pick_summarizer_model,
    stream_call,
    summarize,
)
from myrm_tui.context.summary.schema import StructuredSummary
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.models.info import ModelInfo
from tests.context.summary.summary_helpers import GOOD_SUMMARY, good_answer, rows_of, session_chunk, user

SETTINGS = CallSettings(temperature=0.0, max_attempts=1, timeout_s=30.0)
CHUNK = session_chunk()
IDS = list(range(100, 111))
VAGUE = json.dumps(
    {"user_goal": "Fix a bug.", "active_task": "add a limit", "completed_actions": ["looked at code", "fixed it"]}
)


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[..., str]:
    """write_script(turns, **top) -> the model name `scripted/<abs path>` (see llm/fake_providers/scripted.py)."""
    counter = {"n": 0}

    def write(turns: list[dict], **top: object) -> str:
        counter["n"] += 1
        path = tmp_path / f"summary_script{counter['n']}.json"
        path.write_text(json.dumps({"turns": turns, **top}), encoding="utf-8")
        return f"scripted/{path}"

    return write


def recording(model: str):
    """The real stream call, recording what each attempt sent."""
    inner = stream_call(model, SETTINGS)
    sent: list[tuple[list[dict], int]] = []

    async def call(messages, max_output_tokens):
        sent.append((messages, max_output_tokens))
        return await inner(messages, max_output_tokens)

    return call, sent


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_success_first_attempt(write_script):
    model = write_script([{"text": good_answer()}])
    breaker = SummarizerBreaker()
    outcome = await summarize(
        CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS, breaker=breaker, session_id="s"
    )
    assert (outcome.level, outcome.attempts, outcome.fallback, outcome.failure) == (LEVEL_LLM, 1, False, None)
    assert outcome.summary.user_goal == GOOD_SUMMARY["user_goal"]
    assert outcome.summary.active_task == CHUNK[-1]["content"]
    assert outcome.audit is not None
    assert outcome.audit.ok and outcome.errors == []
    assert outcome.tokens_in > 0 and outcome.tokens_out > 0
    assert 0 < outcome.summary_tokens < outcome.source_tokens


async def test_auditor_rejection_then_success_sends_the_feedback(write_script):
    model = write_script([{"text": VAGUE}, {"text": good_answer()}])
    call, sent = recording(model)
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, call=call)
    assert (outcome.level, outcome.attempts) == (LEVEL_LLM, 2)
    assert outcome.summary.files_modified[0].path == "src/api/upload.py"
    assert len(outcome.errors) == 1 and outcome.errors[0].startswith("answer rejected: ")
    retry = sent[1][0]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == VAGUE
    assert "key identifiers survived" in retry[3]["content"] and "src/api/upload.py" in retry[3]["content"]
    assert retry[3]["content"].rstrip().endswith("no code fence.")


async def test_repeated_failure_ends_in_the_extractive_fallback(write_script):
    model = write_script(
        [{"text": "Sorry, I cannot summarize."}, {"text": VAGUE}, {"text": "{}"}, {"text": "still no"}]
    )
    call, sent = recording(model)
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, call=call, attempts=3)
    assert outcome.attempts == 4, "3 normal attempts + 1 terse"
    assert "as terse as possible" in sent[3][0][-1]["content"]
    assert (outcome.level, outcome.fallback, outcome.failure) == (LEVEL_EXTRACTIVE, True, "transient")
    assert outcome.summary.fallback and outcome.summary.active_task == CHUNK[-1]["content"]
    assert len(outcome.errors) == 4 and "terse answer rejected" in outcome.errors[-1]
    assert outcome.summary_tokens < outcome.source_tokens


async def test_terse_attempt_can_still_win(write_script):
    # Terse: fewer items, but the user's rule (keep the UploadValidator API unchanged) is kept:
    # a summary that drops it is rejected whatever the bar (auditor.py, the user's rules).
    terse = json.dumps(
        {
            **GOOD_SUMMARY,
            "completed_actions": [],
            "key_findings": [],
            "decisions": [],
            "constraints_and_preferences": ["keep the UploadValidator API unchanged"],
        }
    )
    model = write_script([{"text": "no"}, {"text": "nope"}, {"text": "still no"}, {"text": terse}])
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS)
    assert (outcome.level, outcome.attempts, outcome.fallback) == (LEVEL_TERSE, 4, False)


async def test_a_repeated_rejected_answer_ends_the_escalation(write_script):
    """A model that writes the same rejected answer after the feedback is asked no more (each
    round resends the whole chunk): the answer is judged by the terse bar, then the extractive floor."""
    model = write_script([{"text": VAGUE}, {"text": VAGUE}, {"text": "never sent"}, {"text": "nor this"}])
    call, sent = recording(model)
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, call=call, attempts=3)
    assert outcome.attempts == 2 and len(sent) == 2
    assert outcome.level == LEVEL_EXTRACTIVE and outcome.fallback and outcome.failure == "transient"
    assert any(e.startswith("answer repeated after feedback") for e in outcome.errors)


async def test_a_repeated_answer_that_meets_the_terse_bar_is_accepted_as_terse(write_script):
    terse = json.dumps(
        {
            **GOOD_SUMMARY,
            "completed_actions": [],
            "key_findings": [],
            "decisions": [],
            "errors_and_fixes": [],
            "artifacts": [],
            "active_state": "",
            "constraints_and_preferences": ["keep the UploadValidator API unchanged"],
        }
    )
    model = write_script([{"text": terse}, {"text": terse}, {"text": "never sent"}])
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS, attempts=3)
    assert (outcome.level, outcome.attempts, outcome.fallback) == (LEVEL_TERSE, 2, False)


async def test_a_different_rejected_answer_keeps_retrying(write_script):
    model = write_script([{"text": VAGUE}, {"text": "{}"}, {"text": good_answer()}])
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS, attempts=3)
    assert (outcome.level, outcome.attempts) == (LEVEL_LLM, 3)


async def test_permanent_error_skips_retries_and_opens_the_breaker(write_script):
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    bad = write_script([{"text": "x", "error": "auth"}])
    for _ in range(3):
        outcome = await summarize(
            CHUNK, ids=IDS, model=bad, window=32_000, settings=SETTINGS, breaker=breaker, session_id="s"
        )
        assert (outcome.attempts, outcome.fallback, outcome.failure) == (1, True, PERMANENT)
        assert "call failed (permanent)" in outcome.errors[0]
    assert breaker.state("s", bad) == OPEN
    skipped = await summarize(
        CHUNK, ids=IDS, model=bad, window=32_000, settings=SETTINGS, breaker=breaker, session_id="s"
    )
    assert skipped.attempts == 0 and skipped.fallback and "breaker open" in skipped.errors[0]
    assert skipped.failure is None


async def test_half_open_probe_success_closes_the_breaker(write_script):
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    model = write_script([{"text": good_answer()}])
    for _ in range(3):
        breaker.record_failure("s", model, PERMANENT)
    clock.now += PERMANENT_COOLDOWN_S
    outcome = await summarize(
        CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS, breaker=breaker, session_id="s"
    )
    assert outcome.level == LEVEL_LLM and breaker.state("s", model) == "closed"


async def test_oversized_chunk_for_a_small_summarizer_window(write_script):
    model = write_script([{"text": good_answer()}])
    history = [user("setup")] + [user(f"step {i}: " + "details of the work " * 150) for i in range(12)] + [user("now")]
    rows = rows_of(history)
    # Whole history against a 4k window: refused without a call, with a clear warning.
    outcome = await summarize(history, model=model, window=4_096, settings=SETTINGS)
    assert outcome.attempts == 0 and outcome.fallback and "does not fit" in outcome.warning
    # The chunk chosen for that window fits it: the call is made.
    chunk = choose_chunk(
        rows, start=1, tail_start=len(rows) - 1, anchor=0, summarizer_window=4_096, overhead=1_200, target=600
    )
    assert chunk is not None and 1 <= chunk.end - chunk.start < 12
    call, sent = recording(model)
    outcome = await summarize(
        history[chunk.start : chunk.end], model=model, window=4_096, call=call, target_tokens=600, min_retention=0.0
    )
    assert outcome.attempts >= 1 and sent[0][1] <= 600


async def test_secrets_in_the_model_answer_are_redacted(write_script):
    key = "AKIA" + "Q" * 12 + "7Z3X"
    answer = json.dumps({**GOOD_SUMMARY, "key_findings": [f"the deploy uses {key}"]})
    model = write_script([{"text": answer}])
    outcome = await summarize(CHUNK, ids=IDS, model=model, window=32_000, settings=SETTINGS)
    assert outcome.level == LEVEL_LLM
    assert key not in outcome.summary.to_json()
    assert outcome.summary.key_findings == ["the deploy uses [REDACTED:aws_access_key]"]
    assert outcome.redactions == {"aws_access_key": 1}


async def test_incremental_merge_sends_the_existing_summary(write_script):
    previous = StructuredSummary(
        user_goal="Harden the upload API", active_task="fix empty uploads", blocked_items=["CI runner offline"]
    )
    model = write_script([{"text": good_answer()}])
    call, sent = recording(model)
    outcome = await summarize(
        CHUNK, ids=IDS, model=model, window=32_000, call=call, previous=previous, focus="upload validation"
    )
    assert outcome.level == LEVEL_LLM
    system, body = sent[0][0][0]["content"], sent[0][0][1]["content"]
    assert "UPDATING an existing summary" in system and 'on "upload validation"' in system
    assert '"CI runner offline"' in body


async def test_no_model_and_a_failing_injected_call_never_raise():
    outcome = await summarize(CHUNK, ids=IDS, model=None, window=8_192)
    assert outcome.fallback and outcome.attempts == 0 and outcome.summary.fallback

    async def broken(messages, max_output_tokens):
        raise ConnectionResetError("peer went away")

    outcome = await summarize(CHUNK, ids=IDS, model="any/model", window=32_000, call=broken)
    assert outcome.fallback and outcome.attempts == 4 and outcome.failure == "transient"
    assert all("peer went away" in e for e in outcome.errors)


def info(name: str, window: int, known: bool = True) -> ModelInfo:
    return ModelInfo(
        name=name, provider="x", context_window=window, max_output_tokens=4_096, supports_tools=True, known=known
    )


@pytest.mark.parametrize(
    "main,lite,expected",
    [
        (
            ("anthropic/claude-sonnet-4-5", 200_000),
            ("anthropic/claude-haiku-4-5", 200_000),
            "anthropic/claude-haiku-4-5",
        ),
        (("anthropic/claude-sonnet-4-5", 200_000), None, "anthropic/claude-sonnet-4-5"),
        (("anthropic/claude-sonnet-4-5", 200_000), ("openai/tiny-aux", 4_096), "anthropic/claude-sonnet-4-5"),
        (("anthropic/claude-sonnet-4-5", 200_000), ("local/smollm2", 8_192), "anthropic/claude-sonnet-4-5"),
        (("local/smollm2", 8_192), None, None),
        (("openai/smollm2", 8_192), None, None),
        (("local/smollm2", 8_192), ("openai/gpt-4.1-mini", 1_000_000), "openai/gpt-4.1-mini"),
        (("openai/my-vllm-model", 8_192), None, "openai/my-vllm-model"),  # unknown window: not judged tiny
    ],
)
def test_pick_summarizer_model(main, lite, expected):
    main_info = info(main[0], main[1], known=main[0] != "openai/my-vllm-model")
    lite_info = info(*lite) if lite else None
    model, reason = pick_summarizer_model(main[0], lite[0] if lite else None, main_info, lite_info)
    assert model == expected, reason
    assert reason
    if expected is None:
        assert "extractive" in reason
