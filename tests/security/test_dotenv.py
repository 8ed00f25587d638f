"""No `.env` is ever loaded: a repository cannot redirect the user's API key with one.

The attack: litellm calls python-dotenv's `load_dotenv()` when it is imported (unless
LITELLM_MODE=PRODUCTION), which looks for a `.env` from litellm's own folder upward (from the
current folder when run from `python -c`, a REPL or a debugger). With myrm installed in a
project's `.venv`, a committed `.env` with OPENAI_BASE_URL sent `Authorization: Bearer <key>` to
the attacker's host. The setup is rebuilt here: litellm is reached through a folder of our own
(a link to the installed package) inside a "project" whose `.env` points at a loopback listener
standing in for the attacker. The user's endpoint is OpenAI's own (no api_base configured);
HTTPS_PROXY sends that traffic to a second listener, so the test sees where the request went
without a network: a CONNECT to api.openai.com.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import litellm
import pytest

from tests.security.clone_cli import REPO_ROOT, clean_env, make_clone

KEY = "sk-test-dotenv-0123456789abcdefghij"
# The user's run: a hosted model at its provider's own endpoint (no api_base configured).
RUN = ["run", "--model", "openai/gpt-4o-mini", "hi"]
# Until the first request reaches either listener: the child imports litellm (seconds) first.
WAIT_S = 120


class Listener:
    """A loopback socket that records the first bytes of every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.seen.append(conn.recv(4096))
                except OSError:
                    self.seen.append(b"")

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listeners():
    attacker, proxy = Listener(), Listener()
    yield attacker, proxy
    attacker.close()
    proxy.close()


def site_with_litellm(project: Path) -> Path:
    """`<project>/.venv/site-packages/litellm` -> the installed litellm: litellm's `.env` search
    starts in its own folder, so it walks up through `project`."""
    site = project / ".venv" / "site-packages"
    site.mkdir(parents=True)
    (site / "litellm").symlink_to(Path(litellm.__file__).parent, target_is_directory=True)
    return site


def run_until_first_request(
    args: list[str], cwd: Path, env: dict[str, str], attacker: Listener, proxy: Listener
) -> subprocess.Popen[str]:
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not (attacker.seen or proxy.seen) and process.poll() is None:
        time.sleep(0.05)
    time.sleep(0.2)  # a request under way lands
    process.kill()
    process.communicate(timeout=30)
    return process


def user_env(clone_config: Path, site: Path, proxy: Listener, extra: dict[str, str] | None = None) -> dict[str, str]:
    keyed = {"OPENAI_API_KEY": KEY, "HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}"}
    env = clean_env(clone_config, keyed, test_providers=False)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO_ROOT)])
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    env.update(extra or {})
    return env


def assert_went_to_openai(attacker: Listener, proxy: Listener) -> None:
    assert not any(KEY.encode() in seen for seen in attacker.seen), "the API key reached the .env's endpoint"
    assert not attacker.seen, attacker.seen
    assert proxy.seen and proxy.seen[0].startswith(b"CONNECT api.openai.com:443"), proxy.seen


@pytest.mark.slow
@pytest.mark.parametrize("user_mode", [None, "DEV"])
def test_a_dotenv_above_the_install_folder_changes_nothing(tmp_path: Path, listeners, user_mode: str | None):
    """`user_mode`: the user's shell exports LITELLM_MODE=DEV (for their own litellm work): myrm
    still never reads a `.env`."""
    attacker, proxy = listeners
    project = tmp_path / "project"
    clone = make_clone(project, "ws")
    site = site_with_litellm(project)
    (project / ".env").write_text(f"OPENAI_BASE_URL=http://127.0.0.1:{attacker.port}/v1\n")
    env = user_env(clone.config_dir, site, proxy, {"LITELLM_MODE": user_mode} if user_mode else None)
    run_until_first_request([sys.executable, "-m", "myrm_tui", *RUN], clone.root, env, attacker, proxy)
    assert_went_to_openai(attacker, proxy)


@pytest.mark.slow
def test_a_dotenv_in_the_workspace_changes_nothing_when_started_from_python_c(tmp_path: Path, listeners):
    """Started from `python -c` (no __main__ file), python-dotenv searches the current folder:
    the repository's own `.env`."""
    attacker, proxy = listeners
    clone = make_clone(tmp_path, "ws")
    (clone.root / ".env").write_text(f"OPENAI_BASE_URL=http://127.0.0.1:{attacker.port}/v1\n")
    env = user_env(clone.config_dir, tmp_path / "no-site", proxy)
    code = f"import sys; sys.argv = ['myrm', *{RUN!r}]; from myrm_tui.entry import main; main()"
    run_until_first_request([sys.executable, "-c", code], clone.root, env, attacker, proxy)
    assert_went_to_openai(attacker, proxy)


@pytest.mark.parametrize(
    "entry", ["myrm_tui.cli", "myrm_tui.llm.local.llama_server", "myrm_tui.llm.local.worker", "bench"]
)
def test_every_entry_point_turns_dotenv_off_before_litellm_can_load(tmp_path: Path, entry: str):
    """The CLI, the llama.cpp server, the embedded model's worker and the bench: importing any of
    them sets LITELLM_MODE=PRODUCTION (even over the user's DEV) before litellm is imported."""
    code = (
        "import os, sys; os.environ['LITELLM_MODE'] = 'DEV'; "
        f"import {entry}; "
        "print(os.environ.get('LITELLM_MODE'), 'litellm' in sys.modules)"
    )
    env = clean_env(tmp_path, test_providers=False)
    env.pop("LITELLM_MODE", None)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["PRODUCTION", "False"]
