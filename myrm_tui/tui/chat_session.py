"""The chat screen's handle on the engine: store, settings, session row, model, agent.

Kept out of the screen so the screen only lays out widgets, and so the slow parts (model
resolution, the agent/litellm imports) have one obvious home that runs off the UI thread.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.settings import Settings
from myrm_tui.store import Store, StoreError
from myrm_tui.store.records import MessageRecord, SessionRecord
from myrm_tui.tui.formatting import one_line

# Session titles: the start of the first message, short enough for a session list row.
_TITLE_CHARS = 60

ONBOARDING = (
    "No model is configured, so messages cannot be sent yet.",
    ("Pick one: `myrm --model NAME`, `MYRM_MODEL=NAME`, or `model = \"NAME\"` in .myrm/config.toml "
     "(`myrm models` lists them; local/smollm2 runs offline). Then restart myrm."),
)


@dataclass
class ChatSession:
    store: Store
    settings: Settings
    workspace: Path
    session: SessionRecord | None = None
    model: str | None = None
    open_error: str | None = None  # why the requested session could not be opened
    _agent: Any = field(default=None, repr=False)

    @classmethod
    def open(cls, store: Store, settings: Settings, workspace: Path,
             session_id: str | None = None, continue_last: bool = False) -> ChatSession:
        session: SessionRecord | None = None
        error: str | None = None
        if session_id:
            try:
                session = store.get_session(session_id)
            except StoreError as exc:
                error = f"{exc} A new session starts with your next message (`myrm sessions` lists them)."
        elif continue_last:
            session = store.latest_session()
        return cls(store, settings, workspace, session, open_error=error)

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def history(self) -> list[MessageRecord]:
        return self.store.messages(self.session.id) if self.session is not None else []

    # slow, thread-safe (no store access) ----------------------------------------------------

    def resolve_model(self) -> str | None:
        """Settings first, then the resumed session's model, then the llm layer's default."""
        if self.settings.model:
            return str(self.settings.model)
        if self.session is not None and self.session.model:
            return self.session.model
        try:
            from myrm_tui.llm.defaults import default_model
        except ImportError:
            return None
        return default_model()

    @staticmethod
    def warm_up() -> None:
        """Import the agent stack (litellm takes seconds) so the first turn does not freeze the UI."""
        for name in ("myrm_tui.agent.agent", "litellm"):
            try:
                importlib.import_module(name)
            except ImportError:
                pass  # the first turn reports the real error

    # main thread -----------------------------------------------------------------------------

    def ensure_session(self, first_message: str) -> SessionRecord:
        if self.session is None:
            assert self.model is not None
            self.session = self.store.create_session(self.model, one_line(first_message, _TITLE_CHARS))
        return self.session

    def shutdown(self) -> None:
        """App exit: no process a tool started may outlive the app."""
        if self._agent is not None:
            self._agent.kill_running_processes()

    def agent(self, first_message: str) -> Any:
        if self._agent is None:
            from myrm_tui.agent.agent import Agent

            session = self.ensure_session(first_message)
            settings = self.settings
            if self.model and settings.model != self.model:
                settings = settings.with_values(model=self.model)
            self._agent = Agent(store=self.store, session_id=session.id, settings=settings,
                                workspace=self.workspace)
        return self._agent
