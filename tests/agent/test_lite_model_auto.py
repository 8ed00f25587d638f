"""The lite summarizer is chosen automatically: a large main model with a key for its provider
sends its summaries to that provider's small model, unless `lite_model` says otherwise.

The far end is a loopback HTTP server speaking Anthropic's Messages stream and recording each
request body; everything between the agent and that socket is the real code (the agent, the
engine, the summary client, litellm's anthropic provider, the store). Both models are declared
with `[models."X"] api_base` pointing at it, as a user would point them at a gateway.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import Store
from tests.agent.agent_helpers import settings_for

MAIN = "anthropic/claude-sonnet-4-5"
SMALL = "anthropic/claude-haiku-4-5"  # llm/models/lite.py LITE_MODELS["anthropic"][0]
SUMMARY = {
    "user_goal": "plan a vegetable garden for the summer",
    "active_task": "the latest question: how to look after the garden this week",
    "completed_actions": ["answered questions about watering, mulching and planting"],
    "key_findings": ["tomatoes want water early in the morning"],
    "decisions": ["keep the basil away from the mint"],
    "next_steps": ["ask about the autumn beds"],
    "narrative": "Garden planning conversation, summarized by the model.",
}
ANSWER = (
    "Sure. Water the tomatoes early in the morning, mulch the beds against the heat, and keep "
    "the basil away from the mint so neither crowds the other. "
) * 4


def text_stream(text: str) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 900, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@dataclasses.dataclass
class Server:
    base: str
    bodies: list[dict]


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server("", [])
    reply = text_stream(json.dumps(SUMMARY))

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            state.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def store(workspace: Path) -> Iterator[Store]:
    opened = Store.open(workspace)
    yield opened
    opened.close()


def chat_agent(store: Store, server: Server, workspace: Path, **values) -> Agent:
    session = store.create_session(model=MAIN).id
    for n in range(1, 41):
        for message in (
            {"role": "user", "content": f"Question {n}: how should I look after the garden this week?"},
            {"role": "assistant", "content": f"Week {n}. {ANSWER}"},
        ):
            store.append_message(session, message, count_message_tokens(message, MAIN))
    settings = settings_for(MAIN, llm_max_attempts=1, **values)
    endpoint = {"api_base": server.base}
    settings = dataclasses.replace(settings, models={MAIN: endpoint, SMALL: endpoint})
    return Agent(store=store, session_id=session, settings=settings, workspace=workspace)


def models_asked(server: Server) -> set[str]:
    return {body.get("model", "") for body in server.bodies}


async def test_compact_with_a_large_anthropic_model_and_its_key_summarizes_with_haiku(
    store, server, workspace, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    agent = chat_agent(store, server, workspace)

    event = await agent.compact_now("watering schedule")

    assert event is not None and event["tier"] == "summarize"
    assert models_asked(server) == {"claude-haiku-4-5"}, "every summary went to the small model"
    # With the summary call's own settings: no sampling, a capped answer, not the main model's.
    assert all(body["temperature"] == 0 and body["max_tokens"] <= 2_048 for body in server.bodies)
    leaves = [n for n in store.summaries(agent.session_id) if n["depth"] == 0]
    assert leaves and {n["model"] for n in leaves} == {SMALL}


@pytest.mark.parametrize("lite", ["off", "OFF"])
async def test_lite_model_off_keeps_summaries_on_the_main_model(store, server, workspace, monkeypatch, lite):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    agent = chat_agent(store, server, workspace, lite_model=lite)

    await agent.compact_now("watering schedule")

    assert agent.summarizer()[0] == MAIN
    assert "claude-haiku-4-5" not in models_asked(server)


async def test_no_key_for_the_provider_means_no_automatic_lite_model(store, server, workspace, monkeypatch):
    """Never a model the user cannot pay for: without ANTHROPIC_API_KEY the small model is not
    chosen (litellm then refuses the main model's call too, before it is sent)."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    agent = chat_agent(store, server, workspace)

    await agent.compact_now("watering schedule")

    assert agent.summarizer()[0] == MAIN
    assert "claude-haiku-4-5" not in models_asked(server)
