"""The summary work an agent does around its turns: who writes the summaries, and when.

Why apart from the turn loop: which model of the summarizer chain writes (the lite model, the
main model or none), the idle-time preparation after a turn and the preparation between the
steps of a long turn are one job, the agent's side of compaction; the loop only says when.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, Protocol

from myrm_tui.agent.events import COMPACTING, AgentEvent, Notice
from myrm_tui.llm.events import WaitPhase
from myrm_tui.llm.models.lite import LITE_OFF

if TYPE_CHECKING:
    from myrm_tui.agent.setup.build import AgentBuild
    from myrm_tui.agent.setup.model_calls import SummaryRoute
    from myrm_tui.agent.turn.state import TurnState
    from myrm_tui.context.engine import ContextEngine, TurnInput
    from myrm_tui.context.summary.client import SummaryModel
    from myrm_tui.settings.settings import Settings

_log = logging.getLogger(__name__)


class SummaryAgent(Protocol):
    """What the summary work reads of its agent: the settings and build (the chain's models), the
    engine that prepares, the next request's input and whether the chat names a long wait."""

    @property
    def settings(self) -> Settings: ...

    @property
    def build(self) -> AgentBuild: ...

    @property
    def engine(self) -> ContextEngine: ...

    @property
    def report_waits(self) -> bool: ...

    def summary_routes(self) -> list[SummaryRoute]: ...

    def turn_input(self, force_tier: str | None = None, trigger: str = "auto") -> TurnInput: ...


class SummaryWork:
    """One agent's summary work. A benchmark swaps in a subclass (bench/summary_timing.py) to
    inject its summarizer and choose when the work runs."""

    def __init__(self, agent: SummaryAgent) -> None:
        self.agent = agent

    def models(self) -> list[SummaryModel]:
        from myrm_tui.context.summary.client import SummaryModel

        return [SummaryModel(r.model, r.window, r.settings) for r in self.agent.summary_routes()]

    def summarizer(self) -> tuple[str | None, int, str]:
        """(model, window, why) of the first model of the summarizer chain: the lite model if
        configured and able, else the main model; None for a tiny main model without a usable
        lite one (extractive summaries only)."""
        routes = self.agent.summary_routes()
        if not routes:
            return None, self.agent.build.model.context_window, "extractive summaries only"
        return routes[0].model, routes[0].window, routes[0].why

    def notice(self) -> str:
        """The lite model the user configured cannot write summaries (too small a window, a tiny
        model), so the main model (or the extractive body) does. Said, not only stored, because
        the user chose that model to save cost and it is not being used. The agent says it once."""
        lite = self.agent.settings.lite_model.strip()
        if not lite or lite.lower() == LITE_OFF:  # automatic or the user's own "off": nothing to say
            return ""
        model, _window, why = self.summarizer()
        return f"summaries: {why}" if model != lite else ""

    async def maintain(self) -> dict[str, Any] | None:
        """Prepare the next summary with a model (the prompt only changes at the next compaction)."""
        models = self.models()
        if not models:
            return None
        engine = self.agent.engine
        return await engine.maintain(self.agent.turn_input(), models=models, breaker=engine.summary_breaker)

    async def between_steps(self, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        """Summary work inside a turn, before the next request: a long tool-using turn can pass
        from the full threshold to a removal without an idle moment, and `myrm run` has none.
        After a step's tools, the next chunk (or fold) is prepared as after a turn; with
        `summary_wait`, the chunks an emergency is about to remove are written first (the user
        waits). Failures never end the turn: the extractive body stands in."""
        agent = self.agent
        engine = agent.engine
        try:
            if state.steps > 1:
                if agent.report_waits:
                    yield WaitPhase(COMPACTING)
                await self.maintain()
            if agent.settings.summary_wait:
                models = self.models()
                chunks = engine.chunks_before_removal(agent.turn_input(), models) if models else []
                if chunks:
                    if agent.report_waits:
                        yield WaitPhase(COMPACTING)
                    yield Notice(
                        f"writing {len(chunks)} summar{'y' if len(chunks) == 1 else 'ies'} with "
                        f"{models[0].model} before old turns are removed (summary_wait)"
                    )
                    await engine.prepare_chunks(
                        agent.turn_input(),
                        chunks,
                        models=models,
                        breaker=engine.summary_breaker,
                        kind="before_removal",
                    )
                    await engine.prepare_folds(agent.turn_input(), models=models, breaker=engine.summary_breaker)
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception:  # noqa: BLE001 - background work: the event records model failures
            _log.warning("summary preparation failed between steps", exc_info=True)
