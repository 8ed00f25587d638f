"""The scripted/ and replay/ providers exist only where they were switched on.

The attack: a model name from the repository (a committed session, a command's front matter, a
config the user trusted for something else) names `scripted/<a file in the repo>`, and the agent
acts on the script's tool calls. On a user's machine (switch off) every front door refuses the
name before a session is created, with a sentence naming the switch, and the provider itself
refuses a call that gets past them; the suite, the bench and `myrm replay` switch it on.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.security.clone_cli import TEST_PROVIDERS_VAR, make_clone

SCRIPT_ANSWER = "SCRIPT-WAS-READ"


def script(root: Path) -> tuple[str, Path]:
    path = root / "model.json"
    record = root / "requests.jsonl"
    path.write_text(json.dumps({"record": str(record), "turns": [{"text": SCRIPT_ANSWER}]}))
    return f"scripted/{path}", record


def test_the_suite_switch_is_the_modules_switch():
    from myrm_tui.llm.fake_providers import switch as test_providers

    assert TEST_PROVIDERS_VAR == test_providers.ENV_VAR
    assert os.environ.get(TEST_PROVIDERS_VAR) == test_providers.ON  # tests/conftest.py


@pytest.mark.parametrize("how", ["flag", "env", "user-config"])
def test_a_scripted_model_is_refused_before_anything_runs(tmp_path: Path, how: str):
    clone = make_clone(tmp_path)
    model, record = script(clone.root)
    args = {
        "flag": (["run", "--model", model, "hello"], {}),
        "env": (["run", "hello"], {"MYRM_MODEL": model}),
        "user-config": (["run", "hello"], {}),
    }[how]
    if how == "user-config":
        clone.user_config(f'model = "{model}"\n')
    result = clone.myrm(*args[0], env=args[1])
    assert SCRIPT_ANSWER not in result.stdout
    assert not record.exists(), "the script was read"
    assert result.returncode == 2, result.stderr
    assert TEST_PROVIDERS_VAR in result.stderr and "myrm's tests" in result.stderr
    assert not (clone.root / ".myrm" / "sessions.db").exists() or "hello" not in _titles(clone.root)


def _titles(root: Path) -> str:
    from myrm_tui.store.store import Store

    store = Store.open(root, read_only=True)
    try:
        return " ".join(s.title for s in store.list_sessions())
    finally:
        store.close()


@pytest.mark.slow
def test_the_switch_on_lets_the_suite_use_it(tmp_path: Path):
    clone = make_clone(tmp_path)
    model, record = script(clone.root)
    result = clone.myrm("run", "--model", model, "hello", test_providers=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == SCRIPT_ANSWER and record.exists()


@pytest.mark.parametrize("model", ["scripted/{script}", "replay/session-1", "replay-summarizer/head"])
def test_each_provider_refuses_a_call_by_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str):
    """Past every front door (a summarizer model, a switch in the running app): the provider's
    own handler refuses, once (not retried), with the sentence, and reads nothing."""
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.errors import LLMError
    from myrm_tui.llm.stream import stream

    name, record = script(tmp_path)
    model = model.format(script=name.removeprefix("scripted/"))
    monkeypatch.delenv(TEST_PROVIDERS_VAR)

    async def call() -> None:
        async for _event in stream(model, [{"role": "user", "content": "hi"}], None, CallSettings()):
            pass

    with pytest.raises(LLMError) as caught:
        asyncio.run(call())
    assert TEST_PROVIDERS_VAR in str(caught.value)
    assert not record.exists()


def test_the_model_check_every_front_end_uses_says_why(monkeypatch: pytest.MonkeyPatch):
    """`myrm run`, the TUI's first-frame check and the settings screen ask this before any call,
    whatever a config declares for the name."""
    import dataclasses

    from myrm_tui.cli_commands.common import model_problem
    from myrm_tui.settings.settings import Settings

    monkeypatch.delenv(TEST_PROVIDERS_VAR)
    for model in ("scripted/x.json", "replay/session-1", "replay-summarizer/head"):
        declared = dataclasses.replace(
            Settings().with_values(model=model, api_base="http://127.0.0.1:1/v1"),
            models={model: {"context_window": 8000}},
        )
        problem = model_problem(declared)
        assert problem is not None and TEST_PROVIDERS_VAR in problem, model
    monkeypatch.setenv(TEST_PROVIDERS_VAR, "1")
    assert model_problem(Settings().with_values(model="scripted/x.json")) is None
