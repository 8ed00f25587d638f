"""The chat screen as its collaborators (commands, dialogs, the edit queue, context views, keys)
see it: a Textual `Screen` (its API inherited, never re-declared) with the chat's widgets and the
few things the screen does for them.

Why a base class and not `ChatScreen`: the screen imports its collaborators to build them, so their
naming its class, even for the type checker only, would be an import cycle (the acyclic contract in
pyproject.toml). The widget accessors live here; what only the screen can do is declared here and
done there (the keys bound to the screen's own BINDINGS are read here). The turn runner needs
none of this: it posts messages (tui/session/messages.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.screen import Screen

from myrm_tui.tui.widgets.compaction_panel import CompactionPanel
from myrm_tui.tui.widgets.completion_popup import CompletionPopup
from myrm_tui.tui.widgets.context_ring import ContextRing
from myrm_tui.tui.widgets.edit_hint import EditHint
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from myrm_tui.tui.widgets.status_bar import StatusBar
from myrm_tui.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from myrm_tui.tui.app_host import ChatHost
    from myrm_tui.tui.figures.context_source import ContextState, ModelBudget
    from myrm_tui.tui.prompt.image_input import PendingImages
    from myrm_tui.tui.prompt.slash_commands import SlashCommand
    from myrm_tui.tui.session.chat_session import ChatSession


class ChatParts(Screen[None]):
    chat: ChatSession
    images: PendingImages  # /image attachments for the next message
    context: ContextState  # the ring's last reading

    @property
    def myrm(self) -> ChatHost:
        return self.app  # type: ignore[return-value]  # MyrmApp is the only host of this screen

    # the screen's widgets -------------------------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def prompt(self) -> PromptArea:
        return self.query_one("#prompt", PromptArea)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def ring(self) -> ContextRing:
        return self.query_one("#ring", ContextRing)

    @property
    def panel(self) -> CompactionPanel:
        return self.query_one("#panel", CompactionPanel)

    @property
    def popup(self) -> CompletionPopup:
        return self.query_one("#popup", CompletionPopup)

    @property
    def edit_hint(self) -> EditHint:
        return self.query_one("#edit-hint", EditHint)

    @property
    def queued(self) -> QueuedMessages:
        return self.query_one("#queued", QueuedMessages)

    # what the chat screen does for them -----------------------------------------------------

    @property
    def turn_running(self) -> bool:
        raise NotImplementedError

    @property
    def compacting(self) -> bool:
        raise NotImplementedError

    @property
    def panel_shown(self) -> bool:
        return bool(self.panel.display)

    def set_panel(self, shown: bool) -> None:
        raise NotImplementedError

    def busy(self) -> bool:
        """True (and says why) when a turn or a compaction runs."""
        raise NotImplementedError

    def key_for(self, binding_id: str) -> str:
        """The key currently bound to `binding_id` (keymap applied), for hints."""
        for active in self.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        return self.raw_key_for(binding_id)

    def raw_key_for(self, binding_id: str) -> str:
        """The key string bound to `binding_id` with the keymap applied ("ctrl+o")."""
        keymap: Mapping[str, str] = getattr(self.app, "_keymap", {}) or {}  # Textual's Keymap: binding id → keys
        if binding_id in keymap:
            return keymap[binding_id].split(",")[0]
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding.key.split(",")[0]
        return ""

    def send_message(self, text: str, *, draft: str | None, model: str | None = None, note: str = "") -> None:
        raise NotImplementedError

    def refresh_context(self, announce: bool = True) -> None:
        raise NotImplementedError

    @property
    def model_budget(self) -> ModelBudget | None:
        raise NotImplementedError

    def set_model_budget(self, budget: ModelBudget | None) -> None:
        raise NotImplementedError

    def focus_next_approval(self) -> None:
        raise NotImplementedError

    def drop_welcome(self) -> None:
        raise NotImplementedError

    def custom_slash(self) -> tuple[SlashCommand, ...]:
        raise NotImplementedError
