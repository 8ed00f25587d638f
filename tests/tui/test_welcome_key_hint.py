"""The welcome tells a newcomer to export a provider key only when a key is what they need.

Seen: a custom model served at a configured `api_base` got "A hosted model: export its key
(ANTHROPIC_API_KEY or OPENAI_API_KEY …)", which sends the user after a key the model does not use.
"""

from __future__ import annotations

import dataclasses

import pytest

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.welcome import Welcome, wants_key_hint
from tests.tui.tui_pilot_helpers import SIZE, screen_text, wait_until

KEY_LINE = "A hosted model: export its key"


def test_the_key_hint_is_for_the_embedded_model_and_a_hosted_model_without_its_key():
    assert wants_key_hint(None) and wants_key_hint("local/smollm2")
    assert wants_key_hint("anthropic/claude-sonnet-4-5", env={})
    assert not wants_key_hint("anthropic/claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "set"})
    assert not wants_key_hint("openai/my-model", own_endpoint=True, env={})
    assert not wants_key_hint("ollama/llama3", env={})
    assert wants_key_hint("gpt-4o", provider="openai", env={})  # the registry's provider, once known


async def welcome_of(app: MyrmApp, pilot) -> str:
    await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="warm-up")
    await pilot.pause(0.1)
    assert app.chat_screen.query(Welcome)
    return " ".join(screen_text(app).split())


@pytest.mark.parametrize(
    ("model", "declared", "shown"),
    [
        ("openai/house-model", {"api_base": "http://127.0.0.1:9/v1", "context_window": 32_000}, False),
        ("openai/gpt-4o", None, True),
    ],
    ids=["own-endpoint", "hosted-without-key"],
)
async def test_welcome_names_a_key_only_when_one_is_needed(workspace, store, monkeypatch, model, declared, shown):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = Settings().with_values(model=model)
    if declared is not None:
        settings = dataclasses.replace(settings, models={model: declared})
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        text = await welcome_of(app, pilot)
        assert "Welcome to myrm." in text
        assert (KEY_LINE in text) is shown, text
