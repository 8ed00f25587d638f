"""A summary request goes to the endpoint the user configured for the summarizing model, never
to another one.

Before the fix, the summarizer built its own call settings and passed `api_base` only when it
was the main model: a lite model declared with `[models."X"].api_base` (the README's way to use
Ollama / vLLM / LM Studio) was sent to litellm's default endpoint, with whatever key was set.
Here litellm's default endpoint is a decoy server (OPENAI_BASE_URL / OPENAI_API_BASE point at it,
as they would for a user who also has a hosted account), the configured endpoint is another
server on loopback, and the test asserts where every summary request landed. Both servers are
real HTTP servers; the client stack (summary client → llm.stream → litellm → openai → httpx)
is the real one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm import retry_policy
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.store import Store
from tests.agent.agent_helpers import compact_any_span
from tests.faults.fake_openai_server import FakeOpenAI, answer, error, running_fake_openai

KEY = "sk-fake-test-key-for-the-fake-server-0002"
LITE = "openai/lite-on-my-box"
MAIN = "openai/main-on-my-box"
SUMMARY = json.dumps(
    {
        "user_goal": "plan a vegetable garden",
        # A chunk may end on a question answered after it: the summary keeps it open.
        "active_task": "the latest question: what to do in the garden",
        "completed_actions": [f"answered the garden question of week {n}" for n in range(12)],
        "key_findings": ["tomatoes want water early in the morning", "mulch keeps the beds cool"],
        "narrative": "A long conversation about watering, mulching and planting the garden.",
    }
)
ANSWER = ("Water the tomatoes early in the morning and mulch the beds against the heat. " * 6).strip()
# What distinguishes a summary request from a chat request in a server's log.
SUMMARY_OPENING = "You compress part of"


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI, FakeOpenAI]]:
    """(decoy, configured, other): the decoy is litellm's default endpoint for this process."""
    with running_fake_openai() as decoy, running_fake_openai() as configured, running_fake_openai() as other:
        for server in (decoy, configured, other):
            server.default = answer(SUMMARY)
        yield decoy, configured, other


@pytest.fixture(autouse=True)
def _default_endpoint_is_the_decoy(servers, monkeypatch: pytest.MonkeyPatch) -> None:
    decoy = servers[0]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", decoy.api_base)
    monkeypatch.setenv("OPENAI_API_BASE", decoy.api_base)
    monkeypatch.setattr(retry_policy, "BACKOFF_BASE_S", 0.001)
    monkeypatch.setattr(retry_policy, "BACKOFF_CAP_S", 0.005)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def settings_from(tmp_path, workspace, config: str):
    """Settings as the user's config file gives them (the README's `[models."X"]` shape)."""
    user_dir = tmp_path / "config"
    user_dir.mkdir(exist_ok=True)
    (user_dir / "config.toml").write_text(config, encoding="utf-8")
    loaded = load_settings(workspace, user_config_dir=user_dir, env={})
    assert not loaded.problems, loaded.problems
    return loaded.settings


def summary_requests(server: FakeOpenAI) -> list[dict]:
    return [r for r in server.requests if SUMMARY_OPENING in r["body"]]


def chat_session(store: Store, model: str, turns: int = 80) -> str:
    session = store.create_session(model=model).id
    for n in range(turns):
        for message in (
            {"role": "user", "content": f"Question {n}: what should I do in the garden?"},
            {"role": "assistant", "content": f"Week {n}. {ANSWER}"},
        ):
            store.append_message(session, message, count_message_tokens(message, "gpt-4o"))
    return session


def scripted_main(tmp_path) -> str:
    path = tmp_path / "main.json"
    path.write_text(json.dumps({"turns": [{"text": "ok"}], "context_window": 16_000}))
    return f"scripted/{path}"


async def test_a_lite_model_declared_with_api_base_is_summarized_there_and_nowhere_else(servers, workspace, tmp_path):
    decoy, configured, other = servers
    main = scripted_main(tmp_path)
    settings = settings_from(
        tmp_path,
        workspace,
        f'''
model = "{main}"
lite_model = "{LITE}"

[models."{LITE}"]
api_base = "{configured.api_base}"
context_window = 12000
''',
    )
    with Store.open(workspace) as store:
        agent = Agent(store=store, session_id=chat_session(store, main), settings=settings, workspace=workspace)
        prepared = await agent.maintain()  # the TUI's idle step: the session is past the full threshold
        # the compact command on what the idle step left (a short span: the floor is not this test's)
        event = await compact_any_span(agent).compact_now()
        nodes = store.summaries(agent.session_id)
    assert prepared is not None and not prepared["fallback"], prepared
    assert (
        event is not None and nodes and all(not n["fallback"] and n["model"] == LITE for n in nodes if n["depth"] == 0)
    )
    assert len(summary_requests(configured)) == sum(1 for n in nodes if n["depth"] == 0)
    assert not decoy.requests and not other.requests, "no request reached any other endpoint"
    assert {r["path"] for r in configured.requests} == {"/v1/chat/completions"}
    assert all(r["authorization"] == f"Bearer {KEY}" for r in configured.requests)


async def test_the_main_model_with_the_api_base_setting_summarizes_at_that_endpoint(servers, workspace, tmp_path):
    decoy, configured, other = servers
    settings = settings_from(
        tmp_path,
        workspace,
        f'''
model = "{MAIN}"
api_base = "{configured.api_base}"

[models."{MAIN}"]
context_window = 16000
''',
    )
    with Store.open(workspace) as store:
        agent = Agent(store=store, session_id=chat_session(store, MAIN), settings=settings, workspace=workspace)
        event = await agent.compact_now()
    assert event is not None and summary_requests(configured)
    assert not decoy.requests and not other.requests


async def test_when_the_lite_endpoint_fails_the_main_models_endpoint_writes_the_summary(servers, workspace, tmp_path):
    decoy, configured, other = servers
    configured.default = error(401, "invalid api key for this box", type_="invalid_request_error")
    settings = settings_from(
        tmp_path,
        workspace,
        f'''
model = "{MAIN}"
lite_model = "{LITE}"

[models."{LITE}"]
api_base = "{configured.api_base}"
context_window = 12000

[models."{MAIN}"]
api_base = "{other.api_base}"
context_window = 16000
''',
    )
    with Store.open(workspace) as store:
        agent = Agent(store=store, session_id=chat_session(store, MAIN), settings=settings, workspace=workspace)
        await agent.compact_now()
        leaves = [n for n in store.summaries(agent.session_id) if n["depth"] == 0]
    assert summary_requests(configured), "the lite model was asked first"
    assert summary_requests(other) and leaves and all(n["model"] == MAIN and not n["fallback"] for n in leaves)
    assert not decoy.requests
