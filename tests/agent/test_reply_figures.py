"""Per-reply figures (tokens, cached share, cost, time) and tool durations without the approval wait.

The agent's clock is a stepping fake (`agent.clock`), so times are exact and no test reads the
wall clock.
"""

from __future__ import annotations

from myrm_tui.agent.events import AssistantMessageStored, ToolFinished
from myrm_tui.agent.reply_figures import ReplyFigures, call_cost, figures_from_data, stored_figures
from myrm_tui.llm.models import registry
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent


class SteppingClock:
    """Each reading is `step` seconds after the previous one; `jump` adds a pause."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now

    def jump(self, seconds: float) -> None:
        self.now += seconds


async def test_tool_duration_excludes_the_time_spent_waiting_for_approval(store, workspace, script):
    model = script(
        {"tool_calls": [{"id": "c1", "name": "file_write", "arguments": {"path": "x.txt", "content": "x"}}]},
        {"text": "written"},
    )
    agent = make_agent(store, workspace, model)  # approval "ask": file writes wait for a person
    clock = SteppingClock()
    agent.clock = clock

    def slow_person(request) -> bool:
        clock.jump(45.0)  # the person reads the diff for 45 s before saying yes
        return True

    log = await drive(agent, "write x", approve=slow_person)
    [finished] = log.of(ToolFinished)
    assert finished.status == "ok" and (workspace / "x.txt").read_text() == "x"
    assert finished.duration_s == 0.0  # the clock only moved while the person decided


async def test_each_reply_gets_its_figures_emitted_and_stored_by_message_id(store, workspace, script):
    model = script(
        {
            "text": "four",
            "chunk_size": 2,
            "usage": {"prompt_tokens": 1200, "completion_tokens": 340, "cached_read_tokens": 744},
        }
    )
    agent = make_agent(store, workspace, model)
    agent.clock = SteppingClock(step=0.5)  # sent, first token, last chunk: 0.5 s apart
    log = await drive(agent, "2+2?")
    [stored] = log.of(AssistantMessageStored)
    figures = stored.figures
    assert figures is not None
    assert (figures.message_id, figures.prompt_tokens, figures.completion_tokens, figures.cached_read_tokens) == (
        stored.message_id,
        1200,
        340,
        744,
    )
    assert (figures.elapsed_s, figures.first_token_s) == (1.0, 0.5)
    assert figures.tokens_per_s == 680.0  # 340 tokens over the 0.5 s after the first token
    assert figures.cost is None  # a scripted model has no price: unknown, not $0
    assert round(figures.cached_share or 0, 2) == 0.62
    # stored: a reopened session reads the same figures back
    [event] = store.events(agent.session_id, kind=event_kinds.REPLY_FIGURES)
    assert figures_from_data(event.data) == figures
    assert stored_figures(store, agent.session_id) == {stored.message_id: figures}


def test_cost_comes_from_the_price_map_with_cache_rates():
    info = ModelInfo(
        "m",
        "p",
        1000,
        100,
        True,
        input_cost_per_token=3e-6,
        output_cost_per_token=15e-6,
        cache_read_cost_per_token=0.3e-6,
        cache_write_cost_per_token=3.75e-6,
    )
    # 1000 prompt tokens: 600 read from the cache, 100 written to it, 300 plain; 200 out
    cost = call_cost(1000, 200, 600, 100, info)
    assert cost is not None
    assert abs(cost - (300 * 3e-6 + 600 * 0.3e-6 + 100 * 3.75e-6 + 200 * 15e-6)) < 1e-12
    assert call_cost(1000, 200, 0, 0, ModelInfo("local", "p", 1000, 100, False)) is None


def test_a_model_in_litellms_map_has_a_cost():
    info = registry.info("gpt-4o-mini")
    assert info.input_cost_per_token > 0
    cost = call_cost(10_000, 1_000, 0, 0, info)
    assert cost == 10_000 * info.input_cost_per_token + 1_000 * info.output_cost_per_token


def test_tokens_per_second_of_an_unstreamed_reply_uses_the_whole_call():
    # one chunk: the first token is the last, so decoding time is ~0 and would read as infinite speed
    figures = ReplyFigures(completion_tokens=100, elapsed_s=2.0, first_token_s=2.0)
    assert figures.tokens_per_s == 50.0
    assert ReplyFigures(completion_tokens=0, elapsed_s=2.0).tokens_per_s is None
