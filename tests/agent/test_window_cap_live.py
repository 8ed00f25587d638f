"""The capability-class cap on the context window (`window_cap`, llm/models/capability_class.py): the
window the engine plans with, through the agent the TUI and `myrm run` build.

Why through the agent: the cap is a promise about the prompts only once `build_agent` resolves the
model with it and `Agent.turn` sizes each request's budget from that window.
"""

from __future__ import annotations

import pytest

from myrm_tui.agent.setup.build import build_agent
from myrm_tui.llm.models.capability_class import FRONTIER, LOCAL, SMALL, capability_class, capped
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent, settings_for


async def test_a_number_caps_the_budget_of_every_request(store, workspace, script):
    model = script({"text": "one"}, {"text": "two"}, context_window=64_000)
    for cap, window in (("auto", 64_000), ("16000", 16_000)):
        agent = make_agent(store, workspace, model, window_cap=cap)
        await drive(agent, "hello")
        budget = store.events(agent.session_id, event_kinds.ASSEMBLE)[-1].data["budget"]
        assert budget["window"] == window, (cap, budget)


@pytest.mark.parametrize(
    ("model", "cap", "window"),
    [
        ("gemini/gemini-2.5-flash", "auto", 128_000),  # a small model: 1,048,576 advertised
        ("gemini/gemini-2.5-flash", "off", 1_048_576),
        ("anthropic/claude-sonnet-4-5", "auto", 200_000),  # a frontier model keeps its window
        ("anthropic/claude-sonnet-4-5", "64000", 64_000),
    ],
)
def test_the_agent_is_built_with_the_classes_window(workspace, model, cap, window):
    assert build_agent(settings_for(model, window_cap=cap), workspace).model.context_window == window


def test_classes_and_a_declared_window():
    def info(name: str, provider: str, window: int = 131_072, api_base: str | None = None) -> ModelInfo:
        return ModelInfo(name, provider, window, 8_192, True, api_base=api_base)

    assert capability_class(info("ollama/qwen2.5-coder:7b", "ollama")) == LOCAL
    assert capability_class(info("openai/my-model", "openai", api_base="http://127.0.0.1:8080/v1")) == LOCAL
    assert capability_class(info("openai/gpt-4o-mini", "openai")) == SMALL
    assert capability_class(info("groq/llama-3.1-8b-instant", "groq")) == SMALL
    assert capability_class(info("anthropic/claude-opus-4-1", "anthropic")) == FRONTIER
    local = info("ollama/qwen2.5-coder:7b", "ollama")
    assert capped(local, "auto", declared=False).context_window == 32_768
    assert capped(local, "auto", declared=True).context_window == 131_072, "the user's own figure wins"
    assert capped(local, "16000", declared=True).context_window == 16_000, "a number caps every model"
