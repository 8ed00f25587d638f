"""`myrm run --compact` summarizes: a real process on a chat-only session, scripted models."""

from __future__ import annotations

import json

from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import Store

ANSWER = ("Water the tomatoes early in the morning and mulch the beds against the heat. " * 5).strip()
SUMMARY = {
    "user_goal": "plan a vegetable garden",
    "active_task": "none",
    "completed_actions": [f"answered the garden question of week {n}" for n in range(12)],
    "narrative": "Weekly garden advice, summarized by the lite model.",
}


def seeded_session(workspace, model: str, turns: int = 40) -> str:
    with Store.open(workspace) as store:
        session = store.create_session(model=model, title="garden").id
        for n in range(turns):
            for message in (
                {"role": "user", "content": f"Question {n}: what should I do in the garden?"},
                {"role": "assistant", "content": f"Week {n}. {ANSWER}"},
            ):
                store.append_message(session, message, count_message_tokens(message, model))
    return session


def test_run_compact_turns_a_chat_only_session_into_model_written_summaries(myrm, script, workspace):
    main = script({"text": "Happy gardening."}, context_window=32_000)
    lite = script({"text": json.dumps(SUMMARY)}, context_window=12_000)
    session = seeded_session(workspace, main)
    result = myrm(
        "run", "--session", session, "--compact", "--model", main, "one more question", env={"MYRM_LITE_MODEL": lite}
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(line.startswith("compacting: writing summary 1 of ") for line in lines), result.stderr
    (done,) = [line for line in lines if line.startswith("compacted: ")]
    before, after = (int(x.replace(",", "")) for x in done.split()[1:4:2])
    assert after < before * 0.6 and ", 0 extractive)" in done, done
    with Store.open(workspace) as store:
        nodes = store.summaries(session)
    assert nodes and {n["model"] for n in nodes if n["depth"] == 0} == {lite}


def test_run_compact_on_a_short_session_says_nothing_was_worth_compacting(myrm, script, workspace):
    """`--compact` after the second short exchange: the span is too short to gain from a
    summary; the turn is done (exit 0), stderr says why, and no summary or compaction is stored."""
    main = script({"text": "Fine."}, context_window=32_000)
    lite = script({"text": json.dumps(SUMMARY)}, context_window=12_000)
    session = seeded_session(workspace, main, turns=1)
    result = myrm("run", "--session", session, "--compact", "--model", main, "and now?", env={"MYRM_LITE_MODEL": lite})
    assert result.returncode == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("compacted: ")], result.stderr
    assert "note: Nothing worth compacting yet" in result.stderr, result.stderr
    with Store.open(workspace) as store:
        assert not store.summaries(session) and not store.events(session, "compaction")
