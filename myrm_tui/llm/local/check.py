"""A real test of the embedded model on this machine, for `myrm doctor` and the wheel smoke.

Why a multi-token prompt and several output tokens: the CPU-specific llama.cpp fault this guards
against (AMX on Xeons) only shows on decodes of two or more tokens; a one-token check passes on a
machine where every real answer crashes. The test runs in the same worker process the app uses,
so it exercises exactly the path a user's first message takes (in a worker of its own).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.local import client as local_client

CHECK_PROMPT = [
    {"role": "system", "content": "You are a helpful assistant. Answer briefly."},
    {"role": "user", "content": "What is the capital of France? Answer in one short sentence."},
]
# Enough tokens to cover several multi-token decode steps, few enough to finish in a second.
CHECK_MAX_TOKENS = 12
# A check that takes longer than this is reported as hung (the worker is killed).
CHECK_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class LocalCheck:
    ok: bool
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    load_ms: float = 0.0
    total_ms: float = 0.0
    error: str = ""


async def _run(workers: local_client.LocalWorkers, threads: int | None) -> LocalCheck:
    from myrm_tui.llm.local.provider import LOCAL_CONTEXT_WINDOW, plain_messages, smollm2_path

    path = smollm2_path()
    if path is None:
        return LocalCheck(ok=False, error="the SmolLM2 file is not installed")
    key = local_client.key_for(path, LOCAL_CONTEXT_WINDOW, threads)
    started = time.perf_counter()
    pieces: list[str] = []
    usage: dict = {}
    params = {"max_tokens": CHECK_MAX_TOKENS, "temperature": 0.0}
    async for message in workers.generate(key, "local/smollm2", plain_messages(CHECK_PROMPT), params):
        if message["op"] == "chunk":
            pieces.append(message["text"])
        else:
            usage = message.get("usage") or {}
    total = (time.perf_counter() - started) * 1000
    worker = workers.get(key, "local/smollm2")
    return LocalCheck(
        ok=bool("".join(pieces).strip()) and int(usage.get("completion_tokens") or 0) >= 2,
        text="".join(pieces).strip(),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        load_ms=float(worker.ready_info.get("load_ms") or 0.0),
        total_ms=total,
        error="" if pieces else "the model produced no text",
    )


def check_local_model(threads: int | None = None) -> LocalCheck:
    """Load the model in its worker, decode a multi-token prompt, report what happened. The
    check owns its worker: it is stopped when the check ends, whatever the outcome."""
    with local_client.LocalWorkers() as workers:
        try:
            return asyncio.run(asyncio.wait_for(_run(workers, threads), CHECK_TIMEOUT_S))
        except LLMError as exc:
            return LocalCheck(ok=False, error=exc.user_text())
        except TimeoutError:
            return LocalCheck(ok=False, error=f"no answer within {CHECK_TIMEOUT_S:.0f} s")
        except Exception as exc:  # noqa: BLE001 - doctor reports every failure, it never crashes
            return LocalCheck(ok=False, error=f"{type(exc).__name__}: {exc}")
