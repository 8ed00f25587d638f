"""A turn as the user runs it (the chat screen, `Agent.turn`, the scripted model through litellm),
seen from the status line and from the screen's message queue.

What each test guards: while the first token is awaited for more than a second, the status line
says what the wait is ("waiting for the first token" once the request is out), and an answer that
comes at once never flashes a phase; the turn runner reports the turn to the screen as messages
(tui/session/messages.py: started, each event, ended), which the screen turns into the transcript.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.status_bar import StatusBar
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, type_text, wait_until

WAITING = "waiting for the first token"
PHASES = (WAITING, "connecting to", "loading the model", "compacting")


async def test_the_status_line_names_a_long_wait_and_never_a_short_one(workspace, store, script, monkeypatch):
    shown: list[str] = []
    set_status = StatusBar.set

    def recording_set(self: StatusBar, **changes: Any) -> None:
        set_status(self, **changes)
        shown.append(self.info.state)

    monkeypatch.setattr(StatusBar, "set", recording_set)
    # Turn 1 warms the path (the first call in a process imports and registers providers: on a
    # loaded box that alone can pass a second, and naming it then is right); turn 2 answers at
    # once; turn 3's first chunk comes 1.3 s after the request (scripted delay_ms schedules every
    # chunk: the reply and the finish are two chunks).
    model = script(
        {"text": "Warm.", "chunk_size": 100},
        {"text": "At once.", "chunk_size": 100},
        {"text": "After a pause.", "chunk_size": 100, "delay_ms": 1300},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "warm up")
        shown.clear()
        await send(pilot, app, "quick one")
        assert "thinking" in " ".join(shown)
        assert not [state for state in shown if state.startswith(PHASES)], shown
        await type_text(pilot, "slow one")
        await pilot.press("enter")
        await wait_until(pilot, lambda: WAITING in screen.status.plain(), timeout=10, what="the wait named")
        await wait_until(pilot, lambda: not screen.turn_running, what="turn end")
        await wait_until(pilot, lambda: WAITING not in screen.status.plain(), what="the wait text gone")
        replies = [reply.text for reply in screen.query(AssistantMessage)]
        assert replies == ["Warm.", "At once.", "After a pause."]


async def test_the_turn_reaches_the_screen_as_messages(workspace, store, script):
    from myrm_tui.tui.session import messages

    seen: list[Message] = []

    def hook(message: Message) -> None:
        if type(message).__module__ == messages.__name__:
            seen.append(message)

    model = script({"text": "Hello from the model.", "chunk_size": 5})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await send(pilot, app, "hi")
        screen = app.chat_screen
        turn = [m for m in seen if isinstance(m, (messages.TurnStarted, messages.TurnEvent, messages.TurnEnded))]
        assert isinstance(turn[0], messages.TurnStarted) and turn[0].shown == "hi"
        assert isinstance(turn[-1], messages.TurnEnded)
        events = [m.event for m in turn[1:-1] if isinstance(m, messages.TurnEvent)]
        deltas = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
        assert deltas == "Hello from the model."
        assert [reply.text for reply in screen.query(AssistantMessage)] == ["Hello from the model."]
        assert any(isinstance(m, messages.EnginePrepared) for m in seen)
