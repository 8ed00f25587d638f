"""What the chat screen's collaborators (turn runner, commands, dialogs, edit queue) may use of it.

Why a Protocol and not `ChatScreen`: the screen imports its collaborators to build them, so their
naming the screen's class, even for the type checker only, was an import cycle that the acyclic
contract had to be told to ignore. They need only these members, and `ChatScreen` has them (mypy
checks that where the screen hands itself over).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

if TYPE_CHECKING:
    from textual.binding import BindingType
    from textual.timer import Timer
    from textual.widget import Widget
    from textual.worker import Worker

    from myrm_tui.tui.app_host import ChatHost
    from myrm_tui.tui.chat_session import ChatSession
    from myrm_tui.tui.context_source import ContextState, ModelBudget
    from myrm_tui.tui.image_input import PendingImages
    from myrm_tui.tui.widgets.edit_hint import EditHint
    from myrm_tui.tui.widgets.prompt import PromptArea
    from myrm_tui.tui.widgets.queued_messages import QueuedMessages
    from myrm_tui.tui.widgets.status_bar import StatusBar
    from myrm_tui.tui.widgets.transcript import Transcript

Severity = Literal["information", "warning", "error"]


class ChatParts(Protocol):
    BINDINGS: ClassVar[list[BindingType]]
    chat: ChatSession
    images: PendingImages  # /image attachments for the next message
    context: ContextState  # the ring's last reading

    # the screen's widgets and host ---------------------------------------------------------

    @property
    def app(self) -> Any: ...

    @property
    def myrm(self) -> ChatHost: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def prompt(self) -> PromptArea: ...

    @property
    def status(self) -> StatusBar: ...

    @property
    def edit_hint(self) -> EditHint: ...

    @property
    def queued(self) -> QueuedMessages: ...

    @property
    def focused(self) -> Widget | None: ...

    # state ----------------------------------------------------------------------------------

    @property
    def turn_running(self) -> bool: ...

    @property
    def compacting(self) -> bool: ...

    @property
    def panel_shown(self) -> bool: ...

    def set_panel(self, shown: bool) -> None: ...

    def busy(self) -> bool:
        """True (and says why) when a turn or a compaction runs."""
        ...

    def key_for(self, binding_id: str) -> str: ...

    def raw_key_for(self, binding_id: str) -> str: ...

    # what the screen does for them ----------------------------------------------------------

    def send_message(self, text: str, *, draft: str | None, model: str | None = None, note: str = "") -> None: ...

    def refresh_context(self, announce: bool = True) -> None: ...

    @property
    def model_budget(self) -> ModelBudget | None: ...

    def set_model_budget(self, budget: ModelBudget | None) -> None: ...

    def focus_next_approval(self) -> None: ...

    def drop_welcome(self) -> None: ...

    def engine_prepared(self, problem: str | None, window_problem: str | None) -> None: ...

    def after_turn(self, worker_state: Any, failed: bool) -> None: ...

    def custom_slash(self) -> tuple[Any, ...]: ...

    # Textual's own --------------------------------------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Severity = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[Any]: ...

    def set_timer(
        self, delay: float, callback: Callable[[], Any] | None = None, *, name: str | None = None, pause: bool = False
    ) -> Timer: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def cancel_workers(self, group: str) -> None: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
