"""Reasoning: `reasoning_effort` reaches litellm only for models that can reason, and Anthropic's
signed thinking blocks are stored and sent back on the tool-call turn, as the API requires.

The far end is a loopback HTTP server replaying recorded provider streams (Anthropic's Messages
SSE, OpenAI's chat-completions SSE) and recording each request body; everything between the
agent and that socket is the real code: the agent, the engine, litellm's anthropic and openai
providers, the assembler, the store.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ToolFinished, TurnFinished
from myrm_tui.context.rows.family import ANTHROPIC, OPENAI, REASONING_TOOLS
from myrm_tui.context.stages.thinking_cleanup import clean_thinking
from myrm_tui.llm.assembler import StreamAssembler
from myrm_tui.llm.call_settings import reasoning_effort_for
from myrm_tui.llm.events import FinishEvent
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store

SIGNATURE = "EqQBCkYIBxgCKkCrecorded-signature-of-block-one=="
THINKING = "The user wants the file; I should read a.txt first."


def sse(events: list[dict]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def anthropic_tool_turn() -> bytes:
    """A recorded-shape Anthropic stream: a signed thinking block, then a tool_use block."""
    return sse(
        [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 812, "output_tokens": 3},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": THINKING[:20]}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": THINKING[20:]}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": SIGNATURE}},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "redacted_thinking", "data": "ENCRYPTED=="},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_01", "name": "file_read", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": '{"path": '},
            },
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": '"a.txt"}'},
            },
            {"type": "content_block_stop", "index": 2},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 61},
            },
            {"type": "message_stop"},
        ]
    )


def anthropic_text_turn(text: str) -> bytes:
    return sse(
        [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_02",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
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
    )


def openai_text_turn(text: str) -> bytes:
    chunks = [
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "o3-mini",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}],
        },
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "o3-mini",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        },
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


@dataclasses.dataclass
class Replay:
    base: str
    bodies: list[dict]
    replies: list[bytes]


@pytest.fixture
def replay() -> Iterator[Replay]:
    state = Replay("", [], [])

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            state.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
            body = state.replies.pop(0) if state.replies else anthropic_text_turn("[no more replies]")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

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
    (root / "a.txt").write_text("alpha\n")
    return root.resolve()


@pytest.fixture
def store(workspace: Path) -> Iterator[Store]:
    opened = Store.open(workspace)
    yield opened
    opened.close()


async def run_turn(agent: Agent, text: str) -> list:
    return [event async for event in agent.turn(text)]


def make_agent(store: Store, workspace: Path, model: str, api_base: str, **values) -> Agent:
    session = store.create_session(model=model)
    settings = Settings().with_values(model=model, api_base=api_base, llm_max_attempts=1, **values)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)


async def test_anthropic_thinking_is_requested_stored_and_sent_back_signed(replay, store, workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    replay.replies += [anthropic_tool_turn(), anthropic_text_turn("a.txt says alpha.")]
    agent = make_agent(store, workspace, "anthropic/claude-sonnet-4-5", replay.base, reasoning_effort="high")
    events = await run_turn(agent, "what is in a.txt?")
    assert [e.reason for e in events if isinstance(e, TurnFinished)] == ["stop"]
    assert [e.content.splitlines()[-1] for e in events if isinstance(e, ToolFinished)] == ["alpha"]
    first, second = replay.bodies
    assert first["thinking"]["type"] == "enabled" and first["thinking"]["budget_tokens"] > 0
    assert "temperature" not in first or first["temperature"] == 1
    # the stored assistant message keeps the blocks, whole and signed
    stored = next(
        r.message
        for r in store.messages(agent.session_id)
        if r.message.get("role") == "assistant" and r.message.get("tool_calls")
    )
    assert stored["thinking_blocks"] == [
        {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "ENCRYPTED=="},
    ]
    assert stored["reasoning_content"] == THINKING
    # the follow-up request answers the tool call with the signed blocks first, as Anthropic requires
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][-1]
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds[:2] == ["thinking", "redacted_thinking"] and "tool_use" in kinds
    assert assistant["content"][0]["signature"] == SIGNATURE and assistant["content"][0]["thinking"] == THINKING
    assert assistant["content"][1]["data"] == "ENCRYPTED=="


async def test_off_sends_no_thinking_and_a_non_reasoning_model_never_gets_it(replay, store, workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    replay.replies += [anthropic_text_turn("plain"), anthropic_text_turn("plain again")]
    off = make_agent(store, workspace, "anthropic/claude-sonnet-4-5", replay.base, reasoning_effort="off")
    await run_turn(off, "hi")
    unable = make_agent(store, workspace, "anthropic/claude-3-5-haiku-20241022", replay.base, reasoning_effort="high")
    await run_turn(unable, "hi")
    assert all("thinking" not in body and "reasoning_effort" not in body for body in replay.bodies)


async def test_openai_reasoning_model_gets_reasoning_effort_and_per_model_override(
    replay, store, workspace, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    replay.replies += [openai_text_turn("done"), openai_text_turn("done")]
    agent = make_agent(store, workspace, "openai/o3-mini", replay.base, reasoning_effort="low")
    await run_turn(agent, "think a little")
    settings = dataclasses.replace(agent.settings, models={"openai/o3-mini": {"reasoning_effort": "high"}})
    session = store.create_session(model="openai/o3-mini")
    overridden = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
    await run_turn(overridden, "think hard")
    assert [b.get("reasoning_effort") for b in replay.bodies] == ["low", "high"]


def test_effort_rules():
    able = ModelInfo("m", "p", 1000, 100, True, supports_reasoning=True)
    unable = ModelInfo("m", "p", 1000, 100, True)
    assert reasoning_effort_for("off", able) is None
    assert reasoning_effort_for("medium", able) == "medium"
    assert reasoning_effort_for("high", unable) is None
    assert reasoning_effort_for("off", dataclasses.replace(able, reasoning_effort="high")) == "high"
    assert reasoning_effort_for("high", dataclasses.replace(able, reasoning_effort="off")) is None
    assert reasoning_effort_for("nonsense", able) is None


def test_assembler_rebuilds_blocks_from_fragments_without_indexes():
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    def chunk(**delta) -> ModelResponseStream:
        return ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(**delta))])

    assembler = StreamAssembler("salt")
    for piece in (
        chunk(reasoning_content="one ", thinking_blocks=[{"type": "thinking", "thinking": "one "}]),
        chunk(reasoning_content="two", thinking_blocks=[{"type": "thinking", "thinking": "two"}]),
        chunk(thinking_blocks=[{"type": "thinking", "thinking": "", "signature": "s1"}]),
        chunk(reasoning_content="three", thinking_blocks=[{"type": "thinking", "thinking": "three"}]),
        chunk(thinking_blocks=[{"type": "thinking", "thinking": "", "signature": "s2"}]),
        chunk(content="answer"),
    ):
        assembler.feed(piece)
    finish = assembler.finish()[-1]
    assert isinstance(finish, FinishEvent)
    message = finish.message
    assert message["thinking_blocks"] == [
        {"type": "thinking", "thinking": "one two", "signature": "s1"},
        {"type": "thinking", "thinking": "three", "signature": "s2"},
    ]
    assert message["content"] == "answer" and message["reasoning_content"] == "one twothree"


def test_cleanup_keeps_signed_blocks_on_the_current_tool_turn_only():
    signed = {"type": "thinking", "thinking": "x", "signature": "sig"}
    cut = {"type": "thinking", "thinking": "interrupted before its signature", "signature": ""}
    message = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "x",
        "thinking_blocks": [signed, cut],
        "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }
    current = clean_thinking(message, ANTHROPIC, before_last_user=False)
    assert current["thinking_blocks"] == [signed] and "reasoning_content" not in current
    assert "thinking_blocks" not in clean_thinking(message, ANTHROPIC, before_last_user=True)
    assert "thinking_blocks" not in clean_thinking(message, OPENAI, before_last_user=False)
    kept = clean_thinking(message, REASONING_TOOLS, before_last_user=True)
    assert kept["reasoning_content"] == "x" and "thinking_blocks" not in kept
    only_cut = clean_thinking({**message, "thinking_blocks": [cut]}, ANTHROPIC, before_last_user=False)
    assert "thinking_blocks" not in only_cut
    assert clean_thinking(current, ANTHROPIC, before_last_user=False) == current, "idempotent"
