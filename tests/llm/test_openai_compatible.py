"""The user's own OpenAI-compatible server (`openai/NAME` with an api_base) is reached by myrm's
own streaming client, without importing litellm (5-8 s per `myrm run`, issue 27), and both paths
send the same request and read the same answer from a real HTTP server on loopback.

Before: every call went through litellm, so `myrm run` against a server answering in 1 ms took
6.5 s (60x `myrm --help`), and a process where litellm could not be imported could not call any
model at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import FinishEvent, ReasoningDelta, TextDelta, ToolCallEvent, UsageEvent
from myrm_tui.llm.stream import stream
from tests.faults.fake_openai_server import WIRES, FakeOpenAI, Reply, answer, running_fake_openai, use_wire

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_KEY = "sk-the-key-the-server-was-started-with-0005"
# A conversation with everything a body can carry: a system prompt, an image, an assistant turn
# that only called a tool (content None), its result, and a user turn.
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is in it?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"p": "a"}'}}],
        "reasoning_content": "look at the file",
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "file text"},
    {"role": "user", "content": "go on"},
]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read", "description": "Read a file.", "parameters": {"type": "object", "properties": {}}},
    }
]


def _chunk(delta: dict, finish: str | None = None) -> str:
    return json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


# An answer with reasoning, text in pieces, a tool call in fragments and usage, as vLLM and
# llama.cpp servers stream it (with a keep-alive comment the client must skip).
RICH_ANSWER = Reply(
    events=(
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"reasoning_content": "thinking"}),
        _chunk({"content": "Hel"}),
        _chunk({"content": "lo."}),
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_9", "type": "function", "function": {"name": "read", "arguments": ""}}
                ]
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"p": '}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"b"}'}}]}),
        _chunk({}, finish="tool_calls"),
        json.dumps(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [],
                "usage": {
                    "prompt_tokens": 50,
                    "completion_tokens": 7,
                    "total_tokens": 57,
                    "prompt_tokens_details": {"cached_tokens": 32},
                },
            }
        ),
        "[DONE]",
    )
)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with running_fake_openai() as fake:
        yield fake


async def _run(server: FakeOpenAI, wire: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list, dict]:
    with monkeypatch.context() as patch:
        use_wire(wire, patch)
        events = [
            event
            async for event in stream(
                "openai/qwen-local",
                CONVERSATION,
                TOOLS,
                CallSettings(api_base=server.api_base, temperature=0.2, max_output_tokens=321, reasoning_effort="low"),
            )
        ]
    return events, server.requests[-1]


@pytest.mark.parametrize("key", [None, SERVER_KEY], ids=["keyless", "with-key"])
async def test_both_paths_send_the_same_request(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, key):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if key:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    sent = {}
    for wire in WIRES:
        _events, request = await _run(server, wire, monkeypatch)
        sent[wire] = (request["path"], request["authorization"], json.loads(request["body"]))
    assert sent["direct"] == sent["litellm"]
    path, authorization, body = sent["direct"]
    assert path == "/v1/chat/completions"
    assert authorization == f"Bearer {key or 'myrm-no-key'}"
    assert body["model"] == "qwen-local" and body["max_tokens"] == 321 and body["stream"] is True
    assert "content" not in body["messages"][2], "a tool-only assistant turn carries no null content"


async def test_both_paths_read_the_same_answer(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    server.default = RICH_ANSWER
    seen = {wire: (await _run(server, wire, monkeypatch))[0] for wire in WIRES}
    assert seen["direct"] == seen["litellm"]
    events = seen["direct"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello."
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["thinking"]
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert (call.id, call.name, call.arguments) == ("call_9", "read", {"p": "b"})
    (usage,) = [e for e in events if isinstance(e, UsageEvent)]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_read_tokens) == (50, 7, 32)
    assert isinstance(events[-1], FinishEvent) and events[-1].reason == "tool_calls"


async def test_an_event_split_over_several_data_lines_is_one_chunk(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    # SSE allows one event's data over several `data:` lines; they join with newlines (JSON allows it).
    payload = _chunk({"content": "joined"}).replace(', "created"', ',\ndata: "created"')
    server.default = Reply(events=(payload, answer("!").events[-3], "[DONE]"))
    events = [
        e
        async for e in stream(
            "openai/m",
            [{"role": "user", "content": "hi"}],
            None,
            CallSettings(api_base=server.api_base, max_attempts=1),
        )
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "joined"


def test_myrm_run_against_the_users_server_works_where_litellm_cannot_be_imported(server: FakeOpenAI, tmp_path):
    """The headless path the user scripts: the real CLI in a subprocess in which importing litellm
    fails, so any import of it on the way (seconds per call) fails the run."""
    server.default = answer("Hello from ", "your server.")
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "config.toml").write_text(
        f'model = "openai/llama3"\n\n[models."openai/llama3"]\napi_base = "{server.api_base}"\ncontext_window = 8192\n',
        encoding="utf-8",
    )
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(
        {
            "MYRM_CONFIG_DIR": str(config),
            # the caller's PYTHONPATH first: the same test can run another checkout
            "PYTHONPATH": os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO_ROOT)])),
        }
    )
    code = (
        "import sys; sys.modules['litellm'] = None; sys.argv = ['myrm', 'run', 'hello']; "
        "from myrm_tui.entry import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from your server.\n"
    assert len(server.requests) == 1
