"""The chat screen's handle on the engine: store, settings, session row, model, agent.

Kept out of the screen so the screen only lays out widgets, and so the slow parts (model
resolution, the agent/litellm imports) have one obvious home that runs off the UI thread.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.settings import Settings
from myrm_tui.settings.model_choice import choose_model
from myrm_tui.store import Store, StoreError
from myrm_tui.store.records import MessageRecord, SessionRecord
from myrm_tui.tui.formatting import format_tokens

if TYPE_CHECKING:  # the agent stack loads after first paint
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.session_runtime import SessionRuntime
    from myrm_tui.llm.local.client import LocalWorkers
    from myrm_tui.mcp.manager import McpManager

# Session titles: the start of the first message, short enough for a session list row.
_TITLE_CHARS = 60

ONBOARDING = (
    "No model is configured, so messages cannot be sent yet.",
    (
        'Pick one: `myrm --model NAME`, `MYRM_MODEL=NAME`, or `model = "NAME"` in .myrm/config.toml '
        "(`myrm models` lists them; local/smollm2 runs offline). Then restart myrm."
    ),
)


@dataclass(frozen=True)
class ModelSwitch:
    """The agent was rebuilt for another model (the transcript notes it once)."""

    old: str
    new: str
    old_window: int | None
    new_window: int | None

    def describe(self) -> str:
        text = f"model: {self.old} → {self.new}"
        if self.old_window and self.new_window:
            text += f" (window {_window(self.old_window)} → {_window(self.new_window)})"
        return text


def _writable(store: Store, session: SessionRecord, error: str | None) -> tuple[SessionRecord | None, str | None]:
    """This window becomes the session's only writer; a session another myrm is writing
    continues in a fork of it instead (store/busy_fork.py), said in the transcript."""
    from myrm_tui.store.busy_fork import open_for_writing

    try:
        writable = open_for_writing(store, session, fork=False, fork_if_busy=True)
    except StoreError as exc:
        return None, f"{exc} A new session starts with your next message."
    notice = writable.notice()
    if notice is None:
        return session, error
    child = store.get_session(writable.session_id) if writable.session_id else None
    return child, notice[0].upper() + notice[1:]


def _default_model() -> str | None:
    """llm.defaults.default_model, imported on first use (it reads litellm's registry); None when
    the llm layer cannot be imported (the first turn reports the real error)."""
    try:
        from myrm_tui.llm.models.defaults import default_model
    except ImportError:
        return None
    return default_model()


def _built_in_model(model: str) -> bool:
    """llm.session_model.built_in_model: whether a resumed session's stored model may be kept by
    itself (settings/model_choice.py); False when the llm layer cannot be imported."""
    try:
        from myrm_tui.llm.models.session_model import built_in_model
    except ImportError:
        return False
    return built_in_model(model)


def _window(tokens: int) -> str:
    """Windows are usually round thousands: 200k, 128k (else the usual 8.2k form)."""
    if tokens % 1000 == 0 and tokens < 1_000_000:
        return f"{tokens // 1000}k"
    return format_tokens(tokens)


@dataclass
class ChatSession:
    store: Store
    settings: Settings
    workspace: Path
    session: SessionRecord | None = None
    model: str | None = None
    open_error: str | None = None  # why the requested session could not be opened
    # The open session's runtime (agent/session_runtime.py), built with the first turn: it owns
    # the engine, background commands and hooks; it is dropped with this object.
    _runtime: SessionRuntime | None = field(default=None, repr=False)
    mcp: McpManager | None = field(default=None, repr=False)  # the app's servers (mcp/manager.py)
    # The app's embedded-model workers (llm/local/client.py), handed to the session's model calls.
    local_workers: LocalWorkers | None = field(default=None, repr=False)
    _switch: ModelSwitch | None = field(default=None, repr=False)
    # A model chosen for this session only (/model, Ctrl+O without make-default): it survives
    # settings applied later (the settings screen, a workspace just trusted) and is never saved.
    session_model: str | None = None
    # The opt-in cache preheat at open (tui/session/session_preheat.py): started once per session; a new
    # session's row is then created before any message, untitled, and the first message titles it.
    preheat_started: bool = False
    preheat_probe: Any = None  # the ProbeResult of the open preheat (None: not sent, or it failed)
    _untitled: bool = field(default=False, repr=False)
    # Why the resumed session's stored model was set aside (settings.model_choice), "" when it was not.
    model_notice: str = ""

    @classmethod
    def open(
        cls,
        store: Store,
        settings: Settings,
        workspace: Path,
        session_id: str | None = None,
        continue_last: bool = False,
    ) -> ChatSession:
        session: SessionRecord | None = None
        error: str | None = None
        if session_id:
            try:
                session = store.get_session(session_id)
            except StoreError as exc:
                error = f"{exc} A new session starts with your next message (`myrm sessions list` shows them)."
        elif continue_last:
            session = store.latest_session()
        if session is not None:
            session, error = _writable(store, session, error)
        return cls(store, settings, workspace, session, open_error=error)

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def history(self) -> list[MessageRecord]:
        return self.store.messages(self.session.id) if self.session is not None else []

    # slow, thread-safe (no store access) ----------------------------------------------------

    def resolve_session_model(self) -> str | None:
        """The resumed session's own model, if any (no lookup, safe at first paint)."""
        return self.session.model if self.session is not None and self.session.model else None

    def resolve_model(self) -> str | None:
        """The model for this session (settings.model_choice.choose_model, the rule the CLI uses:
        named for this launch > the resumed session's own > configured > the llm layer's default)."""
        chosen = choose_model(
            self.settings, self.resolve_session_model(), fallback=_default_model, built_in=_built_in_model
        )
        self.model_notice = chosen.notice if chosen is not None else ""
        return chosen.model if chosen is not None else None

    def warm_up(self, model: str) -> None:
        """Load, off the UI thread, what the first message to `model` loads: the agent stack, the
        model's tokenizer, and the client of the model's provider family (llm.stream.prepare_call:
        litellm only for the providers it serves; for the user's own server httpx and its TLS
        context; for the embedded model its worker, which starts loading the weights). Why: the
        first turn runs on the UI loop and waits for this warm-up; importing
        litellm here for every model (6-8 s on 2 cores) made the first message to a server on
        loopback wait for an import it never used (bench/tui_first_message.py)."""
        with contextlib.suppress(ImportError):  # the first turn reports the real error
            importlib.import_module("myrm_tui.agent.agent")
        try:
            from myrm_tui.agent.setup.model_calls import model_info_for
            from myrm_tui.context.window.tokens import load_encoder
            from myrm_tui.llm.stream import prepare_call

            settings = self.settings if self.settings.model == model else self.settings.with_values(model=model)
            load_encoder(model)
            prepare_call(model, model_info_for(settings, model).api_base or None)
            if self.local_workers is not None:
                # The embedded model's weights load while the user types (0.5-0.7 s of a worker's
                # start on two cores), not after the first message is sent; any other model: no-op.
                from myrm_tui.llm.local.provider import start_worker

                start_worker(self.local_workers, model, int(settings.local_threads))
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first call loads it and reports why
            return

    # main thread -----------------------------------------------------------------------------

    def ensure_session(self, first_message: str) -> SessionRecord:
        if self.session is not None and self._untitled and first_message:
            from myrm_tui.sinks import session_title

            self.store.rename_session(self.session.id, session_title(first_message, _TITLE_CHARS))
            self.session, self._untitled = self.store.get_session(self.session.id), False
        if self.session is None:
            assert self.model is not None
            from myrm_tui.sinks import session_title  # a title is shown and exported: redacted

            self.session = self.store.create_session(self.model, session_title(first_message, _TITLE_CHARS))
        return self.session

    def open_agent(self) -> Any:
        """The agent built at session open, before any message (the opt-in cache preheat)."""
        self._untitled = self.session is None
        return self.agent("")

    def discard_if_unused(self) -> None:
        """Leaving a session the preheat created that never got a message: remove its row, so
        `myrm -c` and the sessions list do not offer an empty session."""
        if self._untitled and self.session is not None and not self.store.messages(self.session.id):
            with contextlib.suppress(StoreError):  # exit must not fail over an empty row
                self.store.delete_session(self.session.id)
            self.session = None

    def shutdown(self) -> None:
        """App exit: no process a tool started may outlive the app."""
        agent = self.current_agent
        if agent is not None:
            agent.kill_running_processes()

    @property
    def current_agent(self) -> Agent | None:
        """The agent built for the last turn, if any (None before the first message)."""
        return self._runtime.current if self._runtime is not None else None

    @property
    def runtime(self) -> SessionRuntime | None:
        """The session's runtime once a message (or the preheat) opened it."""
        return self._runtime

    def adopt_runtime(self, runtime: SessionRuntime) -> None:
        """The same session shown again in a new chat screen: it keeps its one runtime."""
        self._runtime = runtime

    def release_runtime(self) -> SessionRuntime | None:
        """The session is left: hand its runtime over to be closed, and hold it no longer, so its
        engine (the rendered history) goes with it even while a screen showing it lingers."""
        runtime, self._runtime = self._runtime, None
        return runtime

    def effective_settings(self) -> Settings:
        """The app's settings with the resolved model filled in (the default model when unset)."""
        settings = self.settings
        if self.model and settings.model != self.model:
            settings = settings.with_values(model=self.model)
        return settings

    def apply_settings(self, settings: Settings) -> None:
        """New settings from the settings screen or /model: the next turn rebuilds the agent
        if its fingerprint changed (the SessionRuntime decides)."""
        if self.session_model and settings.model != self.session_model:
            settings = settings.with_values(model=self.session_model)
        self.settings = settings
        if settings.model:
            self.model = settings.model

    def choose_session_model(self, model: str | None) -> None:
        """Use `model` in this session from the next turn on, without touching the app's
        settings (a new session starts on the default); None drops the choice."""
        self.session_model = model
        if model:
            self.apply_settings(self.settings)

    def agent(self, first_message: str, model: str | None = None) -> Agent:
        """The agent for the next turn, rebuilt by the runtime when the settings changed. `model`:
        this turn only goes to another model (a custom command's); the next turn comes back."""
        session = self.ensure_session(first_message)
        if self._runtime is None:
            from myrm_tui.agent.session_runtime import SessionRuntime
            from myrm_tui.llm.stream import StreamWithLocalWorkers

            workers = self.local_workers
            self._runtime = SessionRuntime(
                store=self.store,
                session_id=session.id,
                workspace=self.workspace,
                mcp=self.mcp,
                stream_fn=StreamWithLocalWorkers(workers) if workers is not None else None,
            )
        settings = self.effective_settings()
        return self._agent_for(self._runtime, settings.with_values(model=model) if model else settings)

    def next_agent(self) -> Agent | None:
        """The agent the next message goes to (None before the first): the current one, or, when
        the model changed since its turn (/model, the settings screen, a custom command's one-turn
        model), the one the next turn would build, built now. Why: the idle cache keep-alive
        (tui/session/cache_keepalive.py) must ping the model the next request goes to, not the old one."""
        runtime, current = self._runtime, self.current_agent
        if runtime is None or current is None or self.model is None:
            return current
        settings = self.effective_settings()
        if current.model_name == settings.model:
            return current
        return self._agent_for(runtime, settings)

    def _agent_for(self, runtime: SessionRuntime, settings: Settings) -> Agent:
        """The runtime's agent for `settings`, noting a model switch for the next turn's view."""
        before = runtime.current
        agent = runtime.agent_for(settings)
        if before is not None and agent is not before and before.model_name != agent.model_name:
            self._switch = ModelSwitch(
                before.model_name, agent.model_name, before.build.model.context_window, agent.build.model.context_window
            )
        return agent

    def take_switch(self) -> ModelSwitch | None:
        switch, self._switch = self._switch, None
        return switch
