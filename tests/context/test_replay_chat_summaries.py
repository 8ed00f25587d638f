"""Model summaries of a chat session through `myrm replay` with the capable-model stand-in
(`oracle`, `context/summary/standin.py`), the path the bench's chat-cost figures take.

Issue 26: at 32k, 21 of 79 summarizer calls were retries or escalations. Two causes, both fixed
and both checked here: chunks of a question and a short reply were sent to the model (the
request's instructions cost more than the chunk, and a summary was not smaller than it: rejected,
asked again, then extractive anyway), and the stand-in left out the work a reply reported ("I
updated src/a.py: ...") that a capable model records, so the auditor asked for the files again.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.workload import generate
from myrm_tui.context.summary import client
from myrm_tui.context.summary.prompts import build_prompt, condense_messages
from myrm_tui.context.summary.routing import MIN_USEFUL_CHUNK_TOKENS
from myrm_tui.context.summary.schema import FileChange, StructuredSummary, body_text, parse_summary
from myrm_tui.context.summary.standin import answer, leaf
from myrm_tui.replay import ReplayOptions, replay


@pytest.mark.slow  # 70 turns of the agent with background summaries: ~8 s on two cores
def test_a_chat_is_summarized_in_one_call_per_chunk_worth_one(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[int, int]] = []
    original = client.summarize

    async def recording(messages: Any, **options: Any) -> client.SummaryOutcome:
        outcome = await original(messages, **options)
        asked.append((int(options.get("depth", 0)), outcome.source_tokens))
        return outcome

    monkeypatch.setattr(client, "summarize", recording)
    lines, _ = generate("chatty", 70, 1)
    records = list(replay(lines, ReplayOptions(window=14_000, summarizer="oracle")))
    summaries = [s for r in records if "prompt" in r for s in r["events"][-1]["replay"]["summaries"]]
    assert len(summaries) >= 3, "the session compacted and its chunks were summarized"
    # Every answer accepted as written: no retry, no escalation, no extractive fallback.
    assert [s for s in summaries if s["attempts"] != 1 or s["fallback"]] == []
    leaves = [tokens for depth, tokens in asked if depth == 0]
    assert leaves and min(leaves) >= MIN_USEFUL_CHUNK_TOKENS


def test_work_a_reply_reports_is_a_completed_action_and_its_files_are_modified() -> None:
    summary = leaf(
        [
            {"role": "user", "content": "Why does the export hang on large tables?"},
            {
                "role": "assistant",
                "content": "The cursor was never closed. I updated src/export/runner.py: the cursor "
                "is now closed after each batch. We also discussed the retry limit.",
            },
        ]
    )
    assert summary.completed_actions == ["I updated src/export/runner.py: the cursor is now closed after each batch."]
    assert summary.files_modified == [FileChange("src/export/runner.py")]
    assert "src/export/runner.py" not in summary.narrative  # named once, in the fields above


def test_a_fold_past_the_first_level_follows_its_instructions() -> None:
    """A trajectory (depth 2) drops per-step minutiae, as its prompt asks; a timeline keeps them.
    (Before, every level merged every field, and high-level nodes stayed as long as the cap.)"""
    child = StructuredSummary(
        user_goal="Speed up the export",
        active_task="none",
        completed_actions=["I updated src/export/runner.py: the cursor is closed after each batch."],
        decisions=["Decision: keep batches of 500 rows."],
        resolved_questions=["Why does it hang? → the cursor was never closed."],
    )
    bodies = [f"Summary S{i} (msg:{i} … msg:{i + 1}):\n{body_text(child)}" for i in (1, 2)]

    def folded(depth: int) -> StructuredSummary:
        return parse_summary(answer(build_prompt(condense_messages(bodies), depth=depth)))

    timeline, trajectory = folded(1), folded(2)
    assert timeline.completed_actions and timeline.resolved_questions
    assert trajectory.completed_actions == [] and trajectory.resolved_questions == []
    assert trajectory.decisions == ["Decision: keep batches of 500 rows."]
