"""A turn as the user runs it (the chat screen, `Agent.turn`, the scripted model through litellm),
seen from the status line and from the screen's message queue.

What each test guards: while the first token is awaited for more than a second, the status line
says what the wait is ("waiting for the first token" once the request is out, "connecting to
HOST" while the user's own server has not answered, "loading the model" while the embedded model's
worker reads its weights), and an answer that comes at once never flashes a phase; the turn
runner reports the turn to the screen as messages (tui/session/messages.py: started, each event,
ended), which the screen turns into the transcript.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.message import Message

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.status_bar import StatusBar
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, type_text, wait_until

WAITING = "waiting for the first token"
LOADING = "loading the model"
PHASES = (WAITING, "connecting to", LOADING, "compacting")
# A turn on the embedded model: worker start, load and a prefill of the system prompt on two
# shared cores (tests/tui/test_local_worker_owner.py).
LOCAL_TURN_WAIT_S = 300.0


def record_states(monkeypatch) -> list[str]:
    """Every state the status line is set to, in order (appended as it is set)."""
    shown: list[str] = []
    set_status = StatusBar.set

    def recording_set(self: StatusBar, **changes: Any) -> None:
        set_status(self, **changes)
        shown.append(self.info.state)

    monkeypatch.setattr(StatusBar, "set", recording_set)
    return shown


@pytest.mark.slow
async def test_the_status_line_names_a_long_wait_and_never_a_short_one(workspace, store, script, monkeypatch):
    shown = record_states(monkeypatch)
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


async def test_the_status_line_names_the_users_server_while_it_has_not_answered(workspace, store, monkeypatch):
    """The user's own OpenAI-compatible server (llm/openai_compatible.py) that accepts the request
    and sends nothing: the line names the host the call waits on, and Esc still stops the turn."""
    from tests.faults.fake_openai_server import hang, running_fake_openai

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with running_fake_openai() as server:
        server.default = hang()
        model = "openai/llama3"
        settings = scripted_settings(model, api_base=server.api_base)
        app = MyrmApp(workspace, settings, store=store)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.chat_screen
            await type_text(pilot, "hello")
            await pilot.press("enter")
            host = f"connecting to 127.0.0.1:{server.port}"
            await wait_until(pilot, lambda: host in screen.status.plain(), what="the host named")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen.turn_running, what="the turn stopped")
            assert host not in screen.status.plain()
        assert len(server.requests) == 1


@pytest.mark.slow
@pytest.mark.llama
async def test_the_status_line_says_the_embedded_model_is_loading_when_a_message_starts_it(
    workspace, store, monkeypatch
):
    """`local/smollm2`, its worker not started before the message (as after switching to it: the
    warm-up starts it only for the model the app opened with; here the warm-up's start is turned
    off): the message starts the worker, which reads the weights before any token; the next one
    finds them loaded and waits for its first token only. The threshold is set to zero so a fast
    machine cannot hide the phase (the threshold is the test above)."""
    from myrm_tui.llm.local import provider
    from myrm_tui.tui.widgets import status_bar

    shown = record_states(monkeypatch)
    monkeypatch.setattr(status_bar, "WAIT_TEXT_AFTER_S", 0.0)
    monkeypatch.setattr(provider, "start_worker", lambda *args: None)  # the warm-up's start only
    app = MyrmApp(workspace, scripted_settings("local/smollm2", max_output_tokens=8), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_opened and app.chat_screen.ready.is_set(), what="warm-up")
        assert not app.local_workers.running(), "nothing started the worker before the message"
        await _send_local(pilot, app, "Say hi")
        assert any(state.startswith(LOADING) for state in shown), shown
        shown.clear()
        await _send_local(pilot, app, "Say bye")
        assert not any(state.startswith(LOADING) for state in shown), shown
        assert any(state.startswith(WAITING) for state in shown), shown


@pytest.mark.slow
@pytest.mark.llama
async def test_a_first_message_after_the_warm_up_loaded_the_model_only_waits_for_its_token(
    workspace, store, monkeypatch
):
    """The chat's warm-up starts the embedded model's worker; a first message sent once its weights
    are in never shows "loading the model"."""
    from myrm_tui.tui.widgets import status_bar

    shown = record_states(monkeypatch)
    monkeypatch.setattr(status_bar, "WAIT_TEXT_AFTER_S", 0.0)
    app = MyrmApp(workspace, scripted_settings("local/smollm2", max_output_tokens=8), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_opened and app.chat_screen.ready.is_set(), what="warm-up")
        (worker,) = app.local_workers.running()
        await wait_until(pilot, worker.ready.is_set, timeout=LOCAL_TURN_WAIT_S, what="the weights loaded")
        await _send_local(pilot, app, "Say hi")
        assert not any(state.startswith(LOADING) for state in shown), shown
        assert any(state.startswith(WAITING) for state in shown), shown


async def _send_local(pilot, app, text: str) -> None:
    ended = app.chat_screen.turns_ended
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.chat_screen.turns_ended > ended, timeout=LOCAL_TURN_WAIT_S, what="turn end")
