"""Each `myrm replay` run serves its recorded answers from a feed it owns, handed to its own
model calls; nothing else in the process can reach them.

Before: feeds sat in a module-level registry keyed by model name (`replay/session-N`), so any
call in the process that named a replay's model took that replay's next recorded answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.fake_providers.switch import enable_in_this_process
from myrm_tui.llm.stream import stream
from myrm_tui.replay import ReplayOptions, ReplaySession, replay

WINDOW = 16_000


def recording(words: str) -> list[dict]:
    """Three short turns whose answers name `words`, so two recordings give different prompts."""
    return [
        {
            "turn": t,
            "messages": [
                {"role": "user", "content": f"turn {t}: say {words}"},
                {"role": "assistant", "content": f"{words} number {t}"},
            ],
        }
        for t in (1, 2, 3)
    ]


def test_a_call_outside_the_replay_cannot_take_its_recorded_answer(tmp_path: Path) -> None:
    enable_in_this_process()
    session = ReplaySession(tmp_path, ReplayOptions(window=WINDOW))
    try:
        session.feed.push({"role": "assistant", "content": "the replay's own answer"})

        async def outsider() -> None:
            prompt = [{"role": "user", "content": "hello"}]
            async for _ in stream(session.feed.model, prompt, None, CallSettings(max_attempts=1)):
                pass

        with pytest.raises(LLMError):
            asyncio.run(outsider())
        assert session.feed.served == 0 and len(session.feed.answers) == 1, "the answer is still the replay's"
    finally:
        session.close()


def test_two_replays_interleaved_in_one_process_each_see_only_their_own_recording() -> None:
    alone_a = list(replay(recording("apples"), ReplayOptions(window=WINDOW)))
    alone_b = list(replay(recording("pears"), ReplayOptions(window=WINDOW)))
    run_a = replay(recording("apples"), ReplayOptions(window=WINDOW))
    run_b = replay(recording("pears"), ReplayOptions(window=WINDOW))
    together_a, together_b = [], []
    for record_a, record_b in zip(run_a, run_b, strict=True):  # both feeds open at once
        together_a.append(record_a)
        together_b.append(record_b)

    def prompts(records: list[dict]) -> list[object]:
        return [r.get("prompt") for r in records]

    assert prompts(together_a) == prompts(alone_a) and prompts(together_b) == prompts(alone_b)
    assert "pears" not in repr(prompts(together_a)) and "apples" not in repr(prompts(together_b))
