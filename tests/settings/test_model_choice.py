"""One rule for the model a session uses, shared by `myrm`, `myrm run` and the TUI."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import MappingProxyType

import pytest

from myrm_tui.cli_commands import common
from myrm_tui.settings.model_choice import AUTOMATIC, SESSION, ModelChoice, choose_model, set_aside_notice
from myrm_tui.settings.settings import Settings
from myrm_tui.store.records import SessionRecord
from myrm_tui.tui.session.chat_session import ChatSession


def _settings(model: str = "", source: str = "default") -> Settings:
    settings = Settings()
    values = dict(settings.values, model=model)
    sources = dict(settings.sources, model=source)
    return Settings(values=MappingProxyType(values), sources=MappingProxyType(sources))


def _known(model: str) -> bool:
    """Stands in for llm.session_model.built_in_model: "recorded" is a model of the built-in list."""
    return model == "recorded"


@pytest.mark.parametrize("source", ["flag --model", "env MYRM_MODEL", "override"])
def test_a_model_named_for_this_launch_beats_the_sessions_own(source):
    assert choose_model(_settings("named", source), "recorded") == ModelChoice("named", source)


def test_the_sessions_own_model_beats_the_configured_one():
    configured = _settings("configured", "/home/u/.config/myrm/config.toml")
    assert choose_model(configured, "recorded", built_in=_known) == ModelChoice("recorded", SESSION)
    assert choose_model(configured, None) == ModelChoice("configured", "/home/u/.config/myrm/config.toml")


def test_a_config_file_whose_path_starts_like_a_launch_source_is_still_a_config_file():
    chosen = choose_model(_settings("configured", "envs/config.toml"), "recorded", built_in=_known)
    assert chosen == ModelChoice("recorded", SESSION)


def test_the_fallback_comes_last_and_none_when_there_is_none():
    assert choose_model(_settings(), None, fallback=lambda: "auto") == ModelChoice("auto", AUTOMATIC)
    assert choose_model(_settings(), "recorded", fallback=lambda: "auto", built_in=_known) == ModelChoice(
        "recorded", SESSION
    )
    assert choose_model(_settings(), None, fallback=lambda: None) is None
    assert choose_model(_settings(), None) is None


def test_a_stored_model_nobody_configured_is_set_aside_with_a_notice():
    """A session row may come with a clone (.myrm/sessions.db): its model is data, not a choice."""
    configured = _settings("configured", "f.toml")
    assert choose_model(configured, "scripted/evil.json", built_in=_known) == ModelChoice(
        "configured", "f.toml", set_aside_notice("scripted/evil.json")
    )
    assert choose_model(_settings(), "ollama/evil", fallback=lambda: "auto", built_in=_known) == ModelChoice(
        "auto", AUTOMATIC, set_aside_notice("ollama/evil")
    )
    assert choose_model(configured, "recorded") == ModelChoice("configured", "f.toml", set_aside_notice("recorded"))


def test_a_stored_model_the_users_config_names_is_kept():
    settings = _settings("configured", "f.toml")
    assert choose_model(settings, "configured") == ModelChoice("configured", SESSION)
    declared = dataclasses.replace(settings, models=MappingProxyType({"my-proxy/model": {"context_window": 8000}}))
    assert choose_model(declared, "my-proxy/model") == ModelChoice("my-proxy/model", SESSION)
    values = dict(settings.values, api_base="http://127.0.0.1:8080/v1")
    with_endpoint = dataclasses.replace(settings, values=MappingProxyType(values))
    assert choose_model(with_endpoint, "whatever") == ModelChoice("whatever", SESSION)


def test_the_cli_resolver_uses_the_rule_and_records_the_automatic_model(monkeypatch):
    monkeypatch.setattr("myrm_tui.llm.models.session_model.built_in_model", _known)
    monkeypatch.setattr("myrm_tui.llm.models.defaults.default_model", lambda env=None: "auto/model")
    configured = _settings("configured", "f.toml")
    assert common.resolve_model(configured) == (configured, "f.toml")
    settings, source = common.resolve_model(_settings()) or (None, None)
    assert settings is not None and (settings.model, source) == ("auto/model", AUTOMATIC)
    assert settings.sources["model"] == AUTOMATIC
    resumed, source = common.resolve_model(configured, "recorded") or (None, None)
    assert resumed is not None and (resumed.model, source) == ("recorded", SESSION)
    monkeypatch.setattr("myrm_tui.llm.models.defaults.default_model", lambda env=None: None)
    assert common.resolve_model(_settings()) is None


@pytest.mark.parametrize(
    ("model", "source", "recorded"),
    [
        ("named", "flag --model", "recorded"),
        ("configured", "f.toml", "recorded"),
        ("configured", "f.toml", ""),
        ("", "default", "recorded"),
        ("", "default", ""),
        ("configured", "f.toml", "unknown/stored"),
        ("", "default", "unknown/stored"),
    ],
)
def test_the_tui_and_the_cli_pick_the_same_model(monkeypatch, model, source, recorded):
    monkeypatch.setattr("myrm_tui.llm.models.session_model.built_in_model", _known)
    monkeypatch.setattr("myrm_tui.llm.models.defaults.default_model", lambda env=None: "auto/model")
    settings = _settings(model, source)
    session = SessionRecord("s1", "title", 0.0, 0.0, recorded) if recorded else None
    chat = ChatSession(store=None, settings=settings, workspace=Path("."), session=session)  # type: ignore[arg-type]
    cli = common.resolve_model(settings, recorded or None)
    assert cli is not None and chat.resolve_model() == cli[0].model
