"""Fault classes, each named by the sentence that is true, against a fake OpenAI-compatible
server on 127.0.0.1 (canned bytes; the client stack is the real one). The in-process tests run on
both client paths (the `wire` fixture): myrm's own OpenAI-compatible client, which serves
`openai/NAME` at an api_base, and litellm → openai → httpx, which serves every other provider.

Before this suite each of these was named wrong (recorded in the issue): malformed stream data
read "could not reach … check the network" and was retried; a 200 HTML page read "empty
response" and was retried; a user:password in api_base read "HTTP 500 … failed on its side"
and was retried; a full disk read "This is a bug in myrm"; `llm_timeout` was per chunk, so a
server trickling a token every 2 s kept a 5 s-timeout call going for 56 s. Each test below
asserts the sentence, the class (which decides retrying) and how many requests reached the
server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.llm import errors, retry_policy
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import RetryEvent, TextDelta
from myrm_tui.llm.stream import stream
from tests.faults.fake_openai_server import (
    FAKE_MODEL,
    WIRES,
    FakeOpenAI,
    Reply,
    answer,
    error,
    hang,
    html_200,
    malformed_stream,
    running_fake_openai,
    use_wire,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-fake-test-key-for-the-fake-server-0001"
HELLO = [{"role": "user", "content": "hello"}]
# A cold `myrm run` imports litellm: several seconds on a loaded 2-core machine.
CLI_TIMEOUT_S = 180


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with running_fake_openai() as server:
        yield server


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each in-process fault test runs on myrm's own OpenAI-compatible client and on litellm's."""
    use_wire(request.param, monkeypatch)
    return request.param


@pytest.fixture(autouse=True)
def _fast_retries_and_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry_policy, "BACKOFF_BASE_S", 0.001)
    monkeypatch.setattr(retry_policy, "BACKOFF_CAP_S", 0.005)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


async def call(api_base: str, **fields: Any) -> tuple[list, BaseException | None]:
    """Every event of one call and the error it ended with (None when it finished)."""
    options: dict[str, Any] = {"max_attempts": 3, **fields}
    settings = CallSettings(api_base=api_base, **options)
    events: list = []
    try:
        async for event in stream(FAKE_MODEL, HELLO, None, settings):
            events.append(event)
    except errors.LLMError as exc:
        return events, exc
    return events, None


def text_of(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def retries(events: list) -> int:
    return sum(isinstance(e, RetryEvent) for e in events)


# -- malformed stream ≠ network ------------------------------------------------------------------


@pytest.mark.usefixtures("wire")
async def test_malformed_stream_data_is_named_malformed_not_network_and_not_retried(fake_openai: FakeOpenAI):
    fake_openai.default = malformed_stream()
    events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.MalformedResponseError), exc
    assert "not valid JSON" in exc.message
    for wrong in ("reach", "network", "connection"):
        assert wrong not in exc.user_text().lower().replace("the connection itself worked", "")
    assert len(fake_openai.requests) == 1 and retries(events) == 0, "the same endpoint answers the same way"


# -- bad body ≠ empty ----------------------------------------------------------------------------


@pytest.mark.usefixtures("wire")
async def test_a_200_html_page_is_named_a_page_not_an_empty_response(fake_openai: FakeOpenAI):
    fake_openai.default = html_200()
    events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.MalformedResponseError), exc
    assert "HTML page (text/html)" in exc.message and "empty" not in exc.message
    assert "api_base" in exc.hint
    assert len(fake_openai.requests) == 1 and retries(events) == 0


@pytest.mark.usefixtures("wire")
async def test_a_200_json_body_to_a_streamed_request_is_not_an_empty_response(fake_openai: FakeOpenAI):
    fake_openai.default = Reply(kind="body", body=b'{"status": "ok"}')
    _events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.MalformedResponseError), exc
    assert "application/json" in exc.message and "instead of an event stream" in exc.message


@pytest.mark.usefixtures("wire")
async def test_a_real_but_empty_event_stream_is_still_an_empty_response(fake_openai: FakeOpenAI):
    # The contrast: an event stream that ends without output is the server failing (retried).
    fake_openai.default = Reply(events=("[DONE]",))
    events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.ServerError) and "empty response" in exc.message
    assert len(fake_openai.requests) == 3 and retries(events) == 2


# -- the endpoint's auth ≠ server error ----------------------------------------------------------


@pytest.mark.usefixtures("wire")
async def test_credentials_in_api_base_are_a_config_error_sent_nowhere_and_not_retried(fake_openai: FakeOpenAI):
    password = "hunter2-Sup3r-s3cret"
    events, exc = await call(fake_openai.api_base_with(f"admin:{password}"))
    assert isinstance(exc, errors.EndpointConfigError), exc
    assert "user name and password" in exc.message and "HTTP 500" not in exc.user_text()
    assert "failed on its side" not in exc.user_text()
    assert password not in exc.user_text(), "the error names the endpoint, never its password"
    assert fake_openai.requests == [] and retries(events) == 0


@pytest.mark.usefixtures("wire")
@pytest.mark.parametrize("status", [401, 403])
async def test_an_endpoint_refusing_the_credentials_is_auth_and_the_url_key_is_not_quoted(
    fake_openai: FakeOpenAI, status: int
):
    url_key = "qk_9f8e7d6c5b4a39281706"
    fake_openai.default = error(status, "Unauthorized", type_="invalid_request_error")
    events, exc = await call(fake_openai.api_base_with(query=f"api_key={url_key}"))
    assert isinstance(exc, errors.AuthenticationError), exc
    assert exc.status == status and "rejected the API key" in exc.message
    assert url_key not in exc.user_text() and KEY not in exc.user_text()
    assert len(fake_openai.requests) == 1 and retries(events) == 0


@pytest.mark.usefixtures("wire")
async def test_a_proxy_asking_for_credentials_is_named_a_proxy(fake_openai: FakeOpenAI):
    fake_openai.default = error(407, "Proxy Authentication Required")
    events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.AuthenticationError), exc
    assert "proxy" in exc.message and "HTTP 407" in exc.message and "HTTPS_PROXY" in exc.hint
    assert len(fake_openai.requests) == 1 and retries(events) == 0


@pytest.mark.usefixtures("wire")
async def test_a_real_server_error_is_still_retried(fake_openai: FakeOpenAI):
    fake_openai.default = error(500, "internal error", type_="server_error")
    events, exc = await call(fake_openai.api_base)
    assert isinstance(exc, errors.ServerError) and "HTTP 500" in exc.message
    assert len(fake_openai.requests) == 3 and retries(events) == 2


# -- deadlines are real --------------------------------------------------------------------------

TRICKLE_PIECES = 40  # at one piece per TRICKLE_GAP_S the full answer would need 20 s
TRICKLE_GAP_S = 0.5


@pytest.mark.usefixtures("wire")
async def test_a_trickling_server_cannot_outlast_the_whole_call_deadline(fake_openai: FakeOpenAI):
    fake_openai.default = answer(*[f"t{i} " for i in range(TRICKLE_PIECES)], gap_s=TRICKLE_GAP_S)
    events, exc = await call(fake_openai.api_base, timeout_s=2.0)
    assert isinstance(exc, errors.DeadlineExceededError), exc
    assert "did not finish its answer within 2 s (llm_timeout)" in exc.message
    assert not isinstance(exc, errors.StreamInterruptedError), "nothing dropped: the deadline passed"
    received = text_of(events).split()
    assert 0 < len(received) < TRICKLE_PIECES // 2, "the partial answer reached the caller, then it stopped"
    assert received == [f"t{i}" for i in range(len(received))]
    assert len(fake_openai.requests) == 1 and retries(events) == 0, "no time is left for a retry"


@pytest.mark.usefixtures("wire")
async def test_a_silent_server_is_abandoned_at_the_first_token_deadline_and_retried(fake_openai: FakeOpenAI):
    fake_openai.plan = [answer("late", first_delay_s=30), answer("late", first_delay_s=30)]
    fake_openai.default = answer("on ", "time")
    events, exc = await call(fake_openai.api_base, timeout_s=60.0, first_token_timeout_s=1.0)
    assert exc is None, exc
    assert text_of(events) == "on time"
    assert len(fake_openai.requests) == 3 and retries(events) == 2
    reasons = [e.reason for e in events if isinstance(e, RetryEvent)]
    assert all("sent nothing within 1 s of the request (llm_first_token_timeout)" in r for r in reasons)


@pytest.mark.usefixtures("wire")
async def test_the_whole_call_deadline_bounds_first_token_retries(fake_openai: FakeOpenAI):
    fake_openai.default = hang()
    events, exc = await call(fake_openai.api_base, timeout_s=2.5, first_token_timeout_s=1.0, max_attempts=10)
    assert isinstance(exc, errors.DeadlineExceededError), exc
    assert 2 <= len(fake_openai.requests) <= 3, "attempts stop when the call's deadline passes"
    assert retries(events) == len(fake_openai.requests) - 1


@pytest.mark.usefixtures("wire")
async def test_a_slow_but_steady_answer_within_both_deadlines_completes(fake_openai: FakeOpenAI):
    fake_openai.default = answer("a ", "b ", "c", gap_s=0.05, first_delay_s=0.2)
    events, exc = await call(fake_openai.api_base, timeout_s=60.0, first_token_timeout_s=30.0)
    assert exc is None and text_of(events) == "a b c"
    assert len(fake_openai.requests) == 1


# -- through `myrm run`: the sentence the user reads, the exit code, nothing lost ----------------


def _myrm(
    workspace: Path,
    config_dir: Path,
    *args: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    clean.update(
        {
            "MYRM_CONFIG_DIR": str(config_dir),
            "OPENAI_API_KEY": KEY,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), clean.get("PYTHONPATH", "")])),
        }
    )
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=clean,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)  # stops workspace discovery here
    return root


def test_run_names_credentials_in_api_base_and_never_prints_them(
    fake_openai: FakeOpenAI, workspace: Path, tmp_path: Path
):
    password = "p@ss:w0rd-with-at"
    result = _myrm(
        workspace,
        tmp_path / "cfg",
        "run",
        "--model",
        FAKE_MODEL,
        "hello",
        env={"MYRM_API_BASE": fake_openai.api_base_with(f"admin:{password}")},
    )
    assert result.returncode == 1, result.stderr
    assert "user name and password" in result.stderr
    assert "HTTP 500" not in result.stderr and "retry" not in result.stderr and "bug" not in result.stderr
    assert password not in result.stderr and "w0rd" not in result.stderr
    assert fake_openai.requests == []


@pytest.mark.slow
def test_run_keeps_the_partial_answer_when_the_deadline_passes(
    fake_openai: FakeOpenAI, workspace: Path, tmp_path: Path
):
    fake_openai.default = answer(*[f"w{i} " for i in range(TRICKLE_PIECES)], gap_s=TRICKLE_GAP_S)
    config = tmp_path / "cfg"
    result = _myrm(
        workspace,
        config,
        "run",
        "--model",
        FAKE_MODEL,
        "hello",
        env={"MYRM_API_BASE": fake_openai.api_base, "MYRM_LLM_TIMEOUT": "3"},
    )
    assert result.returncode == 1, result.stderr
    assert "did not finish its answer within 3 s (llm_timeout)" in result.stderr
    assert "dropped" not in result.stderr and "bug" not in result.stderr
    shown = result.stdout.split()
    assert 0 < len(shown) < TRICKLE_PIECES and shown[0] == "w0"
    listed = json.loads(_myrm(workspace, config, "sessions", "list", "--json").stdout)
    transcript = _myrm(workspace, config, "sessions", "show", listed[0]["id"]).stdout
    assert " ".join(shown) in " ".join(transcript.split()), "what the user saw is stored"


# -- disk full = "disk full at PATH, free space and resend" --------------------------------------

DISK_SCRIPT = textwrap.dedent("""\
    set -u
    ws="$1"; shift
    mount -t tmpfs -o size=8m tmpfs "$ws" || exit 97
    mkdir "$ws/.git" && cd "$ws"
    run() { "$PY" -m myrm_tui run --continue --model "scripted/$SCRIPT" "$1"; echo "exit=$?" >&2; }
    run "first turn" 2>>"$OUT/first.err" >>"$OUT/first.out"
    for leave in "$@"; do
      free=$(df -k --output=avail "$ws" | tail -1)
      dd if=/dev/zero of="$ws/filler" bs=1k count=$((free > leave ? free - leave : 0)) 2>/dev/null
      run "turn while ${leave}K are free $(head -c 3000 /dev/zero | tr '\\0' x)" \\
          2>"$OUT/full-$leave.err" >"$OUT/full-$leave.out"
      rm -f "$ws/filler"
    done
    run "resend after freeing space" 2>"$OUT/resend.err" >"$OUT/resend.out"
    "$PY" -m myrm_tui sessions list --json > "$OUT/sessions.json"
    "$PY" -m myrm_tui sessions show "$("$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])' \\
        < "$OUT/sessions.json")" > "$OUT/transcript.txt"
    """)
# Free space left on the tiny disk for one turn each: none (the store cannot even open), a little
# (the user's message cannot be stored), more (the user's message is stored, the answer streams,
# then it cannot be stored: every answer after the first is BIG_ANSWER_KB).
LEAVE_KB = (0, 24, 100)
BIG_ANSWER_KB = 400


def _in_private_mount_namespace(script: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `script` where mounting a tmpfs is allowed and invisible to the rest of the machine:
    a mount namespace (as root), or a user + mount namespace (unprivileged)."""
    unshare = shutil.which("unshare")
    assert unshare, "needs util-linux `unshare` (a real tiny filesystem is mounted for this test)"
    flags = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    return subprocess.run(
        [unshare, *flags, "bash", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S * 4,
        check=False,
    )


@pytest.mark.slow
def test_a_full_disk_is_named_with_its_path_and_resending_after_freeing_space_works(tmp_path: Path):
    script_file = tmp_path / "script.json"
    # Distinct words: litellm stops a stream that repeats one chunk a hundred times.
    big = "big answer " + " ".join(f"w{i}" for i in range(BIG_ANSWER_KB * 1024 // 7))
    turns = [{"text": "answer 0"}] + [{"text": big, "chunk_size": 8192}] * 9
    script_file.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    runner = tmp_path / "disk.sh"
    runner.write_text(DISK_SCRIPT, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    ws = tmp_path / "tiny"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_")}
    env.update(
        {
            "PY": sys.executable,
            "SCRIPT": str(script_file),
            "OUT": str(out),
            "MYRM_CONFIG_DIR": str(tmp_path / "cfg"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")])),
        }
    )
    done = _in_private_mount_namespace(runner, str(ws), *map(str, LEAVE_KB), env=env)
    assert done.returncode != 97, f"could not mount a tmpfs in a private namespace: {done.stderr}"
    assert "exit=0" in (out / "first.err").read_text(), (out / "first.err").read_text()
    for leave in LEAVE_KB:
        stderr = (out / f"full-{leave}.err").read_text()
        assert f"error: disk full at {ws}/.myrm, free space and resend." in stderr, (leave, stderr)
        assert "bug" not in stderr and "recover" not in stderr and "not a readable" not in stderr, stderr
        assert "exit=0" not in stderr
    assert (out / f"full-{LEAVE_KB[-1]}.out").read_text().startswith("big answer"), (
        "with room for the user's message, the answer streamed before its storage failed"
    )
    assert "exit=0" in (out / "resend.err").read_text(), "after freeing space the resend goes through"
    transcript = (out / "transcript.txt").read_text()
    assert "first turn" in transcript and "answer 0" in transcript, "what was stored before is intact"
    assert "resend after freeing space" in transcript
