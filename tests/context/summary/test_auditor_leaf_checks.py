"""The leaf checks of the summary auditor: a user's rule and open request, judged the way a
capable model keeps them (in the fields the schema gives them, in its own words, without the
secret the user pasted), through the summary client as the engine calls it."""

from __future__ import annotations

import asyncio
import json

from myrm_tui.context.summary.client import CallResult, summarize
from myrm_tui.context.summary.schema import StructuredSummary

KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join("MIIEpAIBAAKCAQEA7q" + "x" * 46 for _ in range(20))
    + "\n-----END RSA PRIVATE KEY-----"
)
FILLER = "\n".join(f"2026-01-01 00:00:{i % 60:02d} INFO build: step {i} done" for i in range(40))


def chunk(first_ask: str, last_ask: str) -> list[dict[str, object]]:
    return [
        {"role": "user", "content": first_ask},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "make"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": FILLER},
        {"role": "assistant", "content": "The build passed."},
        {"role": "user", "content": last_ask},
    ]


def verdict(messages: list[dict[str, object]], summary: StructuredSummary) -> tuple[bool, str]:
    """(accepted, the feedback of the first rejection) of one leaf summary call."""
    asked: list[str] = []

    async def call(prompt: list[dict[str, object]], max_output_tokens: int) -> CallResult:
        asked.append(json.dumps(prompt))
        return CallResult(summary.to_json(), 1_000, 100, 0.0)

    outcome = asyncio.run(summarize(messages, model="openai/gpt-4o-mini", window=128_000, call=call))
    return not outcome.summary.fallback, (asked[1] if len(asked) > 1 else "")


def test_an_open_request_with_a_pasted_key_is_kept_by_naming_the_request_not_the_key():
    messages = chunk("Run make and tell me if it builds.", f"Install this deploy key on the staging relay:\n{KEY}")
    kept = StructuredSummary(
        user_goal="get the build green and deploy",
        active_task="Install the deploy key the user pasted on the staging relay",
        completed_actions=["bash make → The build passed."],
    )
    accepted, feedback = verdict(messages, kept)
    assert accepted, feedback


def test_a_rule_quoted_only_inside_a_resolved_question_is_not_kept():
    rule = "Never push to main without a review."
    messages = chunk(f"Run make and tell me if it builds. {rule}", "Next, check whether the relay starts.")
    quoted_only = StructuredSummary(
        user_goal="get the build green",
        active_task="Next, check whether the relay starts.",
        completed_actions=["bash make → The build passed."],
        resolved_questions=["Run make and tell me if it builds. Never push to main withou… → The build passed."],
    )
    accepted, feedback = verdict(messages, quoted_only)
    assert not accepted and "Never push to main without a review." in feedback
    kept = StructuredSummary(
        user_goal="get the build green",
        active_task="Next, check whether the relay starts.",
        completed_actions=["bash make → The build passed."],
        constraints_and_preferences=["no push to main unless it was reviewed"],
    )
    accepted, feedback = verdict(messages, kept)
    assert accepted, feedback
