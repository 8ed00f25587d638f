"""One set of numbers: the ring, the status bar, the compaction panel and the
health screen read the same figures, and a compaction names the tier that ran and why.

The session is lived through the real agent and engine (scripted provider, tight window) until
automatic compactions have folded summaries (S1–S4: two folded into S3), then opened in the app.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.agent import Agent
from myrm_tui.context.window import ladder
from myrm_tui.context.window.budget import budget_for
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.figures.metrics import compactions
from myrm_tui.tui.formatting import format_tokens
from myrm_tui.tui.screens.health import HealthScreen
from tests.tui.tui_pilot_helpers import scripted_settings, wait_until

TURNS = 30
WINDOW = 9000
MAX_OUT = 1000


async def live_session(store, workspace: Path, tmp_path: Path) -> tuple[Agent, str]:
    turns = [{"text": f"answer {i}: " + "words and more words " * 60} for i in range(TURNS + 4)]
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps({"turns": turns, "context_window": WINDOW}))
    model = f"scripted/{path}"
    session = store.create_session(model=model)
    agent = Agent(
        store=store,
        session_id=session.id,
        workspace=workspace,
        settings=Settings().with_values(model=model, max_output_tokens=MAX_OUT),
    )
    for i in range(TURNS):
        async for _ in agent.turn(f"question {i}: " + "please explain this thing " * 40):
            pass
    return agent, model


async def figures(app, pilot) -> dict:
    """What each of the four readers shows right now."""
    screen = app.chat_screen
    await wait_until(pilot, lambda: screen.context.session_id == app.chat.session_id, what="ring")
    out = {
        "ring": screen.ring.label(),
        "reading": screen.context.reading,
        "status": screen.status.plain(),
        "tooltip": str(screen.ring.tooltip),
    }
    screen.set_panel(True)
    out["dag"] = screen.panel.section_text("dag")
    out["timeline"] = screen.panel.section_text("timeline")
    screen.set_panel(False)
    await pilot.press("f3")
    await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.report, what="health")
    out["health"] = app.screen.report
    await pilot.press("escape")
    return out


def percent_of(label: str) -> str:
    percent = re.search(r"(\d+|--)%", label)
    assert percent is not None, label
    return percent.group(0)


@pytest.mark.slow
async def test_four_readers_agree_on_a_compacted_session(workspace, store, tmp_path):
    agent, model = await live_session(store, workspace, tmp_path)
    nodes = store.summaries(agent.session_id)
    assert len([n for n in nodes if n["status"] == "folded"]) >= 2, "the session must have folded summaries"
    app = MyrmApp(
        workspace,
        scripted_settings(model, max_output_tokens=MAX_OUT),
        session_id=agent.session_id,
        store=store,
        watch_themes=False,
    )
    async with app.run_test(size=(140, 50)) as pilot:
        seen = await figures(app, pilot)
    reading, health = seen["reading"], seen["health"]
    # the context figure: ring, status bar and health screen
    assert percent_of(seen["ring"]) == health.value("window used (last request)") == f"{reading.percent}%"
    assert f"ctx {format_tokens(reading.used)} tok" in seen["status"]
    # the summaries: store, panel and health screen count the same nodes (S1–S4, not the 3 events)
    handles = set(re.findall(r"\bS\d+\b", seen["dag"]))
    assert handles == {n["handle"] for n in nodes}
    assert health.value("summaries") == str(len(nodes))
    # the compactions: the panel and the health screen list the same ones
    done = compactions(store.events(agent.session_id))
    assert health.value("compactions") == str(len(done)) == str(seen["timeline"].count("#"))


@pytest.mark.slow
async def test_each_compaction_names_the_tier_that_ran_and_the_true_reason(workspace, store, tmp_path):
    agent, _ = await live_session(store, workspace, tmp_path)
    limit = budget_for(WINDOW, MAX_OUT).prompt_limit
    events = store.events(agent.session_id)
    done = compactions(events)
    # The ladder decides on the engine's count corrected by the provider's (usage_ratio), which the
    # report of the assemble that ran the compaction records: the same figure the ring follows.
    ratio = {
        str(e.data["event"]["id"]): e.data["budget"]["usage_ratio"]
        for e in events
        if e.kind == "assemble" and isinstance(e.data.get("event"), dict)
    }
    assert done
    for item in done:
        assert item.tokens_before is not None, item
        share = item.tokens_before * ratio.get(item.key, 1.0) / limit
        assert item.tier == ladder.tier_for(share, DEFAULT_CONFIG) or item.trigger.startswith("preflight")
        over = item.tokens_before > limit
        assert ("over budget" in item.trigger) == over, (item.trigger, item.tokens_before, limit)
        if not over and not item.trigger.startswith("preflight"):
            # the trigger quotes the share that decided it: within a point of the stored figure
            shares = re.match(r"(\d+)% ≥ (\d+)%", item.trigger)
            assert shares is not None, item.trigger
            quoted = int(shares.group(1))
            assert abs(quoted - share * 100) <= 1.5


@pytest.mark.slow
@pytest.mark.parametrize("with_summary", [True, False])
async def test_a_fresh_fork_shows_one_figure_everywhere(workspace, store, tmp_path, with_summary):
    agent, model = await live_session(store, workspace, tmp_path)
    child = agent.fork_with_summary().id if with_summary else store.fork(agent.session_id, title="plain fork").id
    app = MyrmApp(
        workspace,
        scripted_settings(model, max_output_tokens=MAX_OUT),
        session_id=child,
        store=store,
        watch_themes=False,
    )
    async with app.run_test(size=(140, 50)) as pilot:
        seen = await figures(app, pilot)
    reading, health = seen["reading"], seen["health"]
    assert reading.used is not None
    assert percent_of(seen["ring"]) == health.value("window used (last request)") == f"{reading.percent}%"
    assert f"ctx {format_tokens(reading.used)} tok" in seen["status"]
    detail = next(m.detail for m in health.metrics if m.name == "window used (last request)")
    if with_summary:
        # the fork starts from a summary: far smaller than the parent's last prompt, and said to be an estimate
        parent_used = app.chat.store.events(agent.session_id, "usage")[-1].data["prompt_tokens"]
        assert reading.used < parent_used and reading.used == reading.fixed_tokens + sum(
            r.tokens for r in store.messages(child)
        )
        assert "estimated" in seen["tooltip"] and "estimated" in detail
    else:
        assert "parent's last request" in seen["tooltip"] and "parent's last request" in detail


@given(tokens=st.integers(0, 20_000), window=st.integers(4_000, 16_000), warm=st.booleans())
def test_the_ladder_never_says_over_budget_below_the_limit(tokens, window, warm):
    budget = budget_for(window, MAX_OUT)
    decision = ladder.decide(
        tokens=tokens, budget=budget, config=DEFAULT_CONFIG, cache_warm=warm, force_tier=None, recent_savings={}
    )
    if decision.run is None:
        return
    assert decision.run == ladder.tier_for(tokens / budget.prompt_limit, DEFAULT_CONFIG)
    assert ("over budget" in decision.why) == (tokens > budget.prompt_limit)
    assert ("cache warm" in decision.why) == (warm and tokens <= budget.prompt_limit)
