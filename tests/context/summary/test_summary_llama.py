"""End to end: a summarization request over HTTP through litellm to the real llama.cpp server
running SmolLM2. Whatever the tiny model writes, the outcome is an accepted summary or the
extractive fallback: never an exception, never empty."""

from __future__ import annotations

import pytest

from myrm_tui.context.summary.client import LEVEL_EXTRACTIVE, summarize
from myrm_tui.context.summary.schema import body_text, render
from myrm_tui.llm.call_settings import CallSettings
from tests.context.summary.summary_helpers import DUMMY_API_KEY, LLAMA_N_CTX, session_chunk

pytestmark = pytest.mark.llama


@pytest.mark.slow
async def test_smollm2_summary_is_accepted_or_falls_back(llama_server):
    settings = CallSettings(
        api_base=llama_server.api_base,
        temperature=0.0,
        timeout_s=120.0,
        max_attempts=1,
        extra={"api_key": DUMMY_API_KEY},
    )
    chunk = session_chunk()
    outcome = await summarize(
        chunk,
        ids=list(range(100, 111)),
        model="openai/smollm2",
        window=LLAMA_N_CTX,
        settings=settings,
        attempts=2,
        target_tokens=400,
    )
    assert outcome.attempts >= 1, "the request really went to the server"
    assert outcome.tokens_in > 0, "usage came back over HTTP"
    if outcome.level == LEVEL_EXTRACTIVE:
        assert outcome.fallback and outcome.summary.fallback and outcome.errors
    else:
        assert outcome.audit is not None and outcome.audit.ok and not outcome.summary.fallback
    assert body_text(outcome.summary).strip(), "never empty"
    assert outcome.summary.user_goal and outcome.summary.active_task
    assert 0 < outcome.summary_tokens < outcome.source_tokens
    text = render(outcome.summary, handle="S1", depth=0, covered_count=len(chunk))
    assert "trust=untrusted" in text and 'ctx_expand("S1")' in text
