"""Which models the live agent asks for summaries (context/summary/routing.py through
`Agent.summary_routes`, what `SummaryWork.maintain`, the steps of a turn and `/compact` use): the
lite model when it can, then the main model, never a tiny or a replayed main model. Each case
here was a surviving mutant of routing.py (docs/testing.md, "the gate"): a boundary off by one,
a check on the wrong model, a fallback appended twice or not at all."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.context.summary.chunking import DEFAULT_OVERHEAD_TOKENS, DEFAULT_TARGET_TOKENS
from myrm_tui.context.summary.routing import MIN_USEFUL_CHUNK_TOKENS, TINY_WINDOW
from myrm_tui.settings.settings import Settings
from tests.agent.agent_helpers import make_agent, settings_for

# The window a summary call needs (overhead + target + the smallest useful chunk), spelled from
# its parts so a change to how routing adds them up is noticed.
NEED = DEFAULT_OVERHEAD_TOKENS + DEFAULT_TARGET_TOKENS + MIN_USEFUL_CHUNK_TOKENS
# A served model the registry does not know: its declared window is only a declaration, so it is
# never "tiny" by window, and only the summary-call check can refuse it.
SERVED = "openai/my-vllm-model"


def _script(tmp_path: Path, name: str, window: int) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [{"text": "ok"}], "context_window": window}))
    return f"scripted/{path}"


def _routes(agent: Agent) -> list[tuple[str, int]]:
    return [(route.model, route.window) for route in agent.summary_routes()]


def _served_lite(store, workspace: Path, main: str, window: int) -> Agent:
    settings = Settings(settings_for(main, lite_model=SERVED).values, models={SERVED: {"context_window": window}})
    session = store.create_session(model=main)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)


def test_without_a_lite_model_the_main_model_summarizes_once(store, workspace, tmp_path):
    main = _script(tmp_path, "main", 32_000)
    agent = make_agent(store, workspace, main)
    assert _routes(agent) == [(main, 32_000)]  # once: a failing main model is not asked again
    assert agent.summarizer() == (main, 32_000, f"main model {main} (no lite model configured)")


def test_a_usable_lite_model_comes_first_and_the_main_model_backs_it_up(store, workspace, tmp_path):
    main, lite = _script(tmp_path, "main", 32_000), _script(tmp_path, "lite", 16_000)
    agent = make_agent(store, workspace, main, lite_model=lite)
    assert _routes(agent) == [(lite, 16_000), (main, 32_000)]


def test_a_lite_model_one_token_short_of_a_summary_call_gives_way_to_the_main_model(store, workspace, tmp_path):
    main = _script(tmp_path, "main", 32_000)
    agent = _served_lite(store, workspace, main, NEED - 1)
    assert _routes(agent) == [(main, 32_000)]
    model, _window, why = agent.summarizer()
    assert model == main
    too_small = f"lite model {SERVED} has a {NEED - 1}-token window, below the {NEED} a summary call needs"
    assert why == f"main model {main} ({too_small})"


def test_a_lite_model_with_exactly_the_window_a_summary_call_needs_is_used(store, workspace, tmp_path):
    main = _script(tmp_path, "main", 32_000)
    agent = _served_lite(store, workspace, main, NEED)
    assert _routes(agent) == [(SERVED, NEED), (main, 32_000)]


def test_a_main_model_with_a_tiny_known_window_writes_no_summaries(store, workspace, tmp_path):
    """At exactly TINY_WINDOW the main model is tiny: extractive summaries only, and the notice
    the summarizer reports says so."""
    agent = make_agent(store, workspace, _script(tmp_path, "main", TINY_WINDOW))
    assert _routes(agent) == []
    assert agent.summarizer() == (None, TINY_WINDOW, "extractive summaries only")


def test_a_tiny_main_model_is_no_fallback_behind_a_lite_model(store, workspace, tmp_path):
    main, lite = _script(tmp_path, "main", TINY_WINDOW), _script(tmp_path, "lite", 16_000)
    agent = make_agent(store, workspace, main, lite_model=lite)
    assert _routes(agent) == [(lite, 16_000)]


def test_a_main_model_named_like_a_sub_1b_model_writes_no_summaries(store, workspace, tmp_path):
    """Tiny by name whatever its window, in any case: `SmolLM` is `smollm`."""
    agent = make_agent(store, workspace, _script(tmp_path, "SmolLM2-chat", 32_000))
    assert _routes(agent) == []


def _replay_agent(store, workspace: Path, tmp_path: Path, **values: object) -> Agent:
    """An agent on a recorded session's model, built as `myrm replay` builds it: provider
    `replay`, whose every answer is the next recorded turn."""
    main = _script(tmp_path, "recorded", 32_000)
    settings = settings_for(main, **values)
    build = build_agent(settings, workspace)
    build = dataclasses.replace(build, model=dataclasses.replace(build.model, provider="replay"))
    session = store.create_session(model=main)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, build=build)


def test_a_replayed_main_model_is_never_asked_for_a_summary(store, workspace, tmp_path):
    assert _routes(_replay_agent(store, workspace, tmp_path)) == []


def test_a_replay_with_a_summarizer_asks_only_the_summarizer(store, workspace, tmp_path):
    lite = _script(tmp_path, "summarizer", 16_000)
    assert _routes(_replay_agent(store, workspace, tmp_path, lite_model=lite)) == [(lite, 16_000)]
