"""The real `myrm` command run in a cloned repository, as the attacker's victim would run it.

Each call gets a clean environment (no provider keys, no MYRM_* settings from the developer's
shell, its own user config folder) and the myrm_tui this test process imported, so a run under
`PYTHONPATH=/work/base` exercises the old code. `test_providers` decides whether the scripted/
and replay/ providers are on in the child: a real user's machine has them off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import myrm_tui

REPO_ROOT = Path(myrm_tui.__file__).resolve().parents[1]
TEST_PROVIDERS_VAR = "ENABLE_MYRM_TEST_PROVIDERS"
# A cold child imports litellm (several seconds on a loaded 2-core machine).
CLI_TIMEOUT_S = 180


def clean_env(config_dir: Path, extra: dict[str, str] | None = None, *, test_providers: bool) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith(("_API_KEY", "_API_TOKEN"))
    }
    env.pop(TEST_PROVIDERS_VAR, None)
    if test_providers:
        env[TEST_PROVIDERS_VAR] = "1"
    env["MYRM_CONFIG_DIR"] = str(config_dir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.update(extra or {})
    return env


@dataclass
class Clone:
    """A freshly cloned repository (`root`) and the user's own config folder (`config_dir`)."""

    root: Path
    config_dir: Path

    def myrm(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        test_providers: bool = False,
        input: str | None = None,
        timeout: float = CLI_TIMEOUT_S,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "myrm_tui", *args],
            cwd=self.root,
            env=clean_env(self.config_dir, env, test_providers=test_providers),
            input=input,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=timeout,
            check=False,
        )

    def user_config(self, text: str) -> Path:
        path = self.config_dir / "config.toml"
        path.write_text(text, encoding="utf-8")
        return path


def make_clone(base: Path, name: str = "repo") -> Clone:
    root = base / name
    (root / ".git").mkdir(parents=True)  # stops workspace discovery here
    config = base / "user-config"
    config.mkdir()
    return Clone(root, config)


@dataclass
class FakeEndpoint:
    """An OpenAI-compatible endpoint on loopback that answers every chat request with `text`
    (streamed), and keeps each request's path and body: the user's own configured server."""

    text: str
    requests: list[dict[str, object]] = field(default_factory=list)
    port: int = 0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@contextmanager
def fake_endpoint(text: str) -> Iterator[FakeEndpoint]:
    endpoint = FakeEndpoint(text)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            endpoint.requests.append({"path": self.path, "body": json.loads(body or b"{}")})
            chunks = [
                {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": endpoint.text}}]},
                {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
            ]  # fmt: skip
            payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            data = payload.encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    endpoint.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
