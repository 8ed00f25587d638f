"""A compaction the idle step runs after a turn (`ContextEngine.compact_ahead`) shows at once.

Why: the event moved out of the next turn's requests into `Agent.maintain`, which the chat runs
in a worker after a turn ends. The ring, the divider and the panel are read again when a turn
or a model call reports something; an event at the idle step reports nothing of the kind, so
without the runner's `IdleWorkDone` the transcript would say nothing of it until the next
message (and the ring would show the size from before it).
"""

from __future__ import annotations

import pytest

from myrm_tui.store import event_kinds
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, wait_until, write_script

TURNS = 14


def _answers() -> list[dict]:
    """Long answers: each takes the prompt up by ~3k tokens, so the answer is what crosses the
    emergency threshold and the removal is certain before the next message."""
    # Plain prose: the scripted model's usage (characters / 4) then agrees with the engine's
    # count, so the ladder sees the prompt's size, not a scaled one.
    sentence = "we read the service configuration again and the lease settings still look right to me"
    return [{"text": " ".join(f"{sentence} in pass {n}." for _ in range(130))} for n in range(TURNS)]


def _maintaining(app: MyrmApp) -> bool:
    return any(w.group == "maintain" and not w.is_finished for w in app.workers)


@pytest.mark.slow
async def test_a_compaction_at_the_idle_step_is_shown_without_another_message(workspace, store, tmp_path):
    model = write_script(tmp_path, _answers(), window=32000)
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen

        def ahead() -> list:
            sid = screen.chat.session_id
            found = store.events(sid, event_kinds.COMPACTION) if sid else []
            return [
                e for e in found if str(e.data.get("trigger", "")).startswith("ahead") and e.data.get("state") == "done"
            ]

        for i in range(TURNS):
            await send(pilot, app, f"question {i}")
            # The idle step's worker ran to its end (the next message would refresh everything).
            await wait_until(pilot, lambda: not _maintaining(app), what="the idle step")
            if ahead():
                break
        assert ahead(), "no compaction ran at an idle step"
        turns_then = screen.turns_ended
        await wait_until(pilot, lambda: screen.query(CompactionDivider), what="divider of the idle compaction")
        assert screen.turns_ended == turns_then  # shown with no new turn
        assert screen.context.reading.used is not None
        assert (
            screen.context.reading.used <= ahead()[-1].data["tokens_after"] + 1_000
        )  # the ring reads the size after it
