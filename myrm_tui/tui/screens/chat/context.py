"""The chat's readouts of the engine: context ring, fork hint, compaction panel and dividers, and
the model notes once the warm-up finished.

All are re-read from the store when the context changes (a model call starts, usage arrives, a turn
ends, a compaction runs), never per token.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from myrm_tui.store import event_kinds
from myrm_tui.tui.figures.context_source import ContextFollower, ModelBudget, model_budget, with_budget
from myrm_tui.tui.figures.metrics import compactions
from myrm_tui.tui.formatting import pretty_key
from myrm_tui.tui.history_page import read_page
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.session.chat_session import ONBOARDING
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.compaction_panel import CompactionPanel
from myrm_tui.tui.widgets.context_ring import ContextRing, ForkHint
from myrm_tui.tui.widgets.transcript import HistoryPage
from myrm_tui.tui.widgets.welcome import Welcome, WelcomeKeys


class ContextView:
    def __init__(self, screen: ChatParts) -> None:
        self.screen = screen
        self.seen_compactions: set[str] = set()  # dividers already mounted, by compaction key
        self._cta_level = "ok"  # the ring level the fork call to action last fired for
        self._context = ContextFollower()  # reads only the events since the last refresh
        # The current model's budget (context_source.with_budget: why); set after the warm-up and
        # after each model change, used only while it is the chat's model.
        self.budget: ModelBudget | None = None

    def current_budget(self) -> ModelBudget | None:
        budget = self.budget
        return budget if budget is not None and budget.model == self.screen.chat.model else None

    def history_page(self, records: list[Any] | None = None) -> HistoryPage:
        """The stored turns for the transcript (the compactions they show count as seen)."""
        chat = self.screen.chat
        records = chat.history() if records is None else records
        return read_page(chat.store, chat.session_id, records, self.seen_compactions)

    def refresh(self, ring: ContextRing, fork_hint: ForkHint, panel: CompactionPanel, announce: bool) -> None:
        """Re-read the ring's figures from the store (a model call, usage or a compaction)."""
        screen = self.screen
        state = self._context.read(screen.chat.store, screen.chat.session_id)
        state = replace(state, reading=with_budget(state.reading, self.current_budget()))
        screen.context = state
        ring.show(state)
        level = state.reading.level
        fork_hint.display = level in ("warn", "crit")
        # The ring's reading, also when there is none (a fresh session clears the last one's).
        screen.status.set(prompt_tokens=state.reading.used)
        if announce and level in ("warn", "crit") and self._cta_level not in ("warn", "crit"):
            screen.notify(
                f"Context {state.reading.percent}% full. Fork into a fresh session "
                f"({screen.key_for('chat.fork')}) or compact now ({screen.key_for('chat.compact')}).",
                title="Context filling up",
                severity="warning",
                timeout=8,
            )
        self._cta_level = level
        if panel.display:
            self.refresh_panel(panel)
        if announce:
            self._mount_new_dividers()

    def refresh_panel(self, panel: CompactionPanel) -> None:
        chat = self.screen.chat
        sid = chat.session_id
        budget = self.current_budget()
        panel.show_events(chat.store.events(sid) if sid else [], budget is None or budget.prompt_cache)
        panel.show_summaries(chat.store.summaries(sid) if sid else [])

    def _mount_new_dividers(self) -> None:
        chat = self.screen.chat
        sid = chat.session_id
        if sid is None:
            return
        recent = [
            *chat.store.events(sid, event_kinds.COMPACTION, limit=4),
            *chat.store.events(sid, event_kinds.ASSEMBLE, limit=2),
        ]
        for item in compactions(recent):
            if item.key not in self.seen_compactions:
                self.seen_compactions.add(item.key)
                self.screen.transcript.mount(CompactionDivider(item.summary, item.key))

    # the model, after the warm-up -----------------------------------------------------------

    def welcome_keys(self) -> WelcomeKeys:
        key = self.screen.raw_key_for
        return WelcomeKeys(
            switch_model=pretty_key(key("chat.model")),
            settings=pretty_key(key("chat.settings")),
            help=pretty_key(key("chat.help")),
        )

    def own_endpoint(self, model: str | None) -> bool:
        """The model is reached at an endpoint the user configured: the `api_base` setting (the
        main model's) or one in its `[models."NAME"]` table."""
        settings = self.screen.chat.settings
        declared = settings.models.get(model) if model else None
        return bool(settings.api_base) or bool(declared and declared.get("api_base"))

    def engine_prepared(self, problem: str | None, window_problem: str | None) -> None:
        """The warm-up finished (tui/session/turn_runner.py): say what the model is, or why there is none."""
        screen, chat = self.screen, self.screen.chat
        if problem is not None:
            screen.transcript.mount(Note(problem, "error", "Run `myrm doctor` to check the installation."))
        from myrm_tui.agent.sandbox import sandbox_status

        screen.status.set(model=chat.model, sandbox=sandbox_status(chat.settings.sandbox).badge())
        if chat.model:  # the registry is loaded by now (the warm-up read it for the model's endpoint)
            screen.set_model_budget(model_budget(chat.model, chat.effective_settings()))
        self._refine_welcome()
        if chat.model is None:
            screen.transcript.mount(Note(ONBOARDING[0], "warning", ONBOARDING[1]))
        elif window_problem:  # before the first turn, not after it fails (context/window/room.py)
            screen.transcript.mount(Note(window_problem, "error"))

    def _refine_welcome(self) -> None:
        found = self.screen.transcript.query_children(Welcome)
        if not found:
            return
        chat = self.screen.chat
        window = tools = provider = None
        if chat.model:
            try:
                from myrm_tui.llm.models import registry

                info = registry.info(chat.model, chat.settings.models)
                window, tools, provider = info.context_window, info.supports_tools, info.provider
            except Exception:  # noqa: BLE001, S110 - the welcome is a courtesy; the first turn reports real errors
                pass
        welcome = found.first()
        welcome.own_endpoint = self.own_endpoint(chat.model)
        welcome.refine(chat.model, window, tools, provider)
