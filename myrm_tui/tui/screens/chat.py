"""The conversation screen: transcript, prompt, status line and context ring; one turn at a time.

A turn is an async worker iterating `agent.turn()`; Esc cancels it (the agent stores synthetic
results for unfinished tool calls). The engine is warmed up in a thread worker right after
mount so the first paint never waits for litellm.

The ring, the fork hint and the compaction panel are refreshed from the store when the context
changes (a model call starts, usage arrives, a turn ends, a compaction runs) — never per token.
Only the last TURN_WINDOW turns are mounted; older ones come back on "load earlier".
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from myrm_tui.agent.attachments import (
    AttachmentError,
    FileAttachment,
    ImageAttachment,
    attachment_chips,
    file_refs,
    load_attachments,
    message_content,
)
from myrm_tui.agent.events import StepStarted
from myrm_tui.agent.reply_figures import ReplyFigures, stored_figures
from myrm_tui.llm.events import UsageEvent
from myrm_tui.store import StoreError, event_kinds
from myrm_tui.tui import completion as completing
from myrm_tui.tui.chat_session import ONBOARDING, ChatSession
from myrm_tui.tui.constants import (
    CTRL_C_QUIT_WINDOW_S,
    IDLE_COLLECT_DELAY_S,
    LOAD_EARLIER_TURNS,
    POPUP_MAX_ROWS,
    SHUTDOWN_TURN_WAIT_S,
    STREAMING_GEN2_THRESHOLD,
    TURN_WINDOW,
    TURN_WINDOW_HIGH,
)
from myrm_tui.tui.context_source import ContextState, expected_compaction, read_context
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.custom_commands import (
    CustomCommands,
    command_model,
    load_custom_commands,
    workspace_trusted,
)
from myrm_tui.tui.export_target import export_target
from myrm_tui.tui.formatting import format_tokens, one_line, pretty_key, short_id
from myrm_tui.tui.fuzzy import fuzzy_filter
from myrm_tui.tui.history import (
    AssistantItem,
    ContextNoteItem,
    HistoryItem,
    ToolItem,
    UserItem,
    build_history,
    turn_after,
    turns_of,
    user_times,
)
from myrm_tui.tui.image_input import PendingImages, describe
from myrm_tui.tui.metrics import compactions
from myrm_tui.tui.scope import ScopedChoice, model_note, parse_scoped
from myrm_tui.tui.screens.chat_edit_queue import EditQueueMixin
from myrm_tui.tui.screens.dialogs import ConfirmScreen, TextScreen
from myrm_tui.tui.screens.fork import FULL, SUMMARY, ForkScreen
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.screens.sessions import SessionsScreen, export_markdown
from myrm_tui.tui.screens.settings import SettingsScreen
from myrm_tui.tui.slash_commands import (
    SLASH_COMMANDS,
    SlashCommand,
    alphabetical,
    parse_command,
    popup_order,
    with_custom,
)
from myrm_tui.tui.turn_view import TurnView
from myrm_tui.tui.widgets.approval import FOCUS_BINDING_ID, FOCUS_KEY, ApprovalPrompt
from myrm_tui.tui.widgets.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.compaction_panel import CompactionPanel
from myrm_tui.tui.widgets.completion_popup import Choice, CompletionPopup
from myrm_tui.tui.widgets.context_note_block import ContextNoteBlock
from myrm_tui.tui.widgets.context_ring import ContextRing, ForkHint
from myrm_tui.tui.widgets.edit_hint import EditHint
from myrm_tui.tui.widgets.note import Note
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from myrm_tui.tui.widgets.status_bar import StatusBar, StatusInfo
from myrm_tui.tui.widgets.tool_block import ToolBlock
from myrm_tui.tui.widgets.transcript import LoadEarlier, Transcript
from myrm_tui.tui.widgets.user_message import UserMessage
from myrm_tui.tui.widgets.welcome import Welcome, WelcomeKeys

if TYPE_CHECKING:
    from myrm_tui.tui.app_host import ChatHost

BUSY_NOTICE = "A turn is running — Esc to interrupt."
COMPACT_CANCELLED = (
    "Compaction cancelled: the prompt is unchanged; summaries already written are kept for the next compaction."
)
NOTHING_YET = "Nothing to {what} yet: send a message first."


def history_widgets(items: list[HistoryItem], figures: dict[int, ReplyFigures] | None = None) -> list[Widget]:
    widgets: list[Widget] = []
    for item in items:
        if isinstance(item, UserItem):
            widgets.append(UserMessage(item.text))
        elif isinstance(item, AssistantItem):
            found = (figures or {}).get(item.message_id) if item.message_id is not None else None
            widgets.append(AssistantMessage(item.text, item.reasoning, figures=found))
        elif isinstance(item, ToolItem):
            block = ToolBlock(item.call_id, item.name, item.arguments)
            if item.content is not None:
                block.finish(item.status, item.content, None)
            widgets.append(block)
        elif isinstance(item, ContextNoteItem):
            widgets.append(ContextNoteBlock(item.title, item.body))
    return widgets


def session_notes(records: list[Any]) -> list[str]:
    """The texts of every session_note call in the history, oldest first."""
    notes = []
    for record in records:
        for call in record.message.get("tool_calls") or ():
            function = call.get("function") or {}
            if function.get("name") != "session_note":
                continue
            arguments = function.get("arguments")
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
            except json.JSONDecodeError:
                continue
            if isinstance(parsed, dict) and isinstance(parsed.get("text"), str):
                notes.append(parsed["text"])
    return notes


_DEFAULT_GC_THRESHOLDS = gc.get_threshold()


def _defer_full_collections() -> None:
    """While a reply streams, keep the collector to its cheap young generations: a full pass over
    litellm's heap stalls the UI for hundreds of ms (bench/tui_bench.py). It runs after the turn."""
    young, middle, _ = _DEFAULT_GC_THRESHOLDS
    gc.set_threshold(young, middle, STREAMING_GEN2_THRESHOLD)


def _restore_collections() -> None:
    gc.set_threshold(*_DEFAULT_GC_THRESHOLDS)


class ChatScreen(EditQueueMixin, Screen[None]):
    DEFAULT_CSS = sibling_css(__file__)
    AUTO_FOCUS = "#prompt"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", priority=True, id="chat.interrupt"),
        Binding("ctrl+c", "clear_or_quit", "Clear / quit (twice)", show=False, priority=True, id="chat.clear_or_quit"),
        Binding("ctrl+end", "jump_to_bottom", "Jump to bottom", show=False, id="chat.jump_to_bottom"),
        Binding("ctrl+l", "compact", "Compact now", id="chat.compact"),
        Binding("ctrl+n", "fork", "Fork session", id="chat.fork"),
        Binding("f2", "settings", "Settings", id="chat.settings"),
        Binding("ctrl+o", "switch_model", "Switch model", id="chat.model"),
        Binding("ctrl+r", "sessions", "Sessions", id="chat.sessions"),
        Binding("ctrl+b", "toggle_panel", "Compaction panel", id="chat.panel"),
        Binding("f3", "health", "Context health", id="chat.health"),
        Binding("f1", "help", "Keys and commands", id="chat.help"),
        Binding("ctrl+g", "external_editor", "Edit draft in $EDITOR", id="chat.editor"),
        # Priority: the prompt's own Ctrl+Y (redo) would take it otherwise; only while an approval
        # waits (check_action), so redo works the rest of the time.
        Binding(
            FOCUS_KEY, "focus_approval", "Answer the waiting approval (and back)", priority=True, id=FOCUS_BINDING_ID
        ),
        # Edit, retry and queue (screens/chat_edit_queue.py): Up/Delete are ours only on an empty
        # prompt or while editing (check_action); everywhere else they keep their meaning. Esc
        # (chat.interrupt) also cancels an edit: a second Esc binding would be lost to a keymap.
        Binding(
            "up",
            "edit_last",
            "Edit your last message (empty prompt) / the last queued one",
            show=False,
            priority=True,
            id="chat.edit_last",
        ),
        Binding(
            "alt+up",
            "edit_earlier",
            "While editing: the message before",
            show=False,
            priority=True,
            id="chat.edit_earlier",
        ),
        Binding(
            "alt+down",
            "edit_later",
            "While editing: the message after",
            show=False,
            priority=True,
            id="chat.edit_later",
        ),
        Binding(
            "delete",
            "cancel_queued",
            "Remove the last queued message (empty prompt)",
            show=False,
            priority=True,
            id="chat.cancel_queued",
        ),
        Binding("f5", "retry", "Retry: regenerate the last answer in a fork", id="chat.retry"),
    ]

    def __init__(self, chat: ChatSession) -> None:
        super().__init__()
        self.chat = chat
        self.ready = asyncio.Event()  # set once the engine warm-up finished (either way)
        self.turn_worker: Worker[None] | None = None
        self.turn_view: TurnView | None = None
        self.turn_text = ""
        self.images = PendingImages()  # /image attachments for the next message
        self.context = ContextState()
        self.hidden_turns = 0  # stored turns not mounted (windowing)
        self.compacting = False
        self.compact_worker: Worker[None] | None = None
        self.turns_ended = 0  # finished turns this screen ran (tests and the palette wait on it)
        self._last_ctrl_c = 0.0
        self._seen_compactions: set[str] = set()
        self._cta_level = "ok"  # the ring level the fork call to action last fired for
        self._files: list[str] | None = None  # workspace paths for @file, listed once
        self._window_problem: str | None = None  # the model window cannot hold a conversation
        self.custom = CustomCommands()  # custom slash commands (re-read when a command is typed)
        self._turn_model: str | None = None  # a custom command's model, for the turn it starts

    @property
    def myrm(self) -> ChatHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="conversation"):
                yield Transcript(id="transcript")
                yield CompletionPopup(id="popup")
                yield QueuedMessages(id="queued")
                yield EditHint(id="edit-hint")
                yield PromptArea(id="prompt")
            yield CompactionPanel(id="panel")
        with Horizontal(id="statusline"):
            yield StatusBar(
                StatusInfo(
                    model=self.chat.settings.model or None,
                    workspace=self.chat.workspace,
                    session_id=self.chat.session_id,
                ),
                id="status",
            )
            yield ForkHint(id="fork-hint")
            yield ContextRing(id="ring")

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
    def turn_running(self) -> bool:
        return self.turn_worker is not None

    async def on_unmount(self) -> None:
        """Quitting mid-turn: let the agent record the interrupt (synthetic results, killed
        processes) before the app closes the store."""
        worker, self.turn_worker = self.turn_worker, None  # no UI updates while closing
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), SHUTDOWN_TURN_WAIT_S)
        self.chat.shutdown()

    def on_mount(self) -> None:
        self.prompt.popup = self.popup
        self.panel.display = False
        if self.chat.open_error:
            self.transcript.mount(Note(self.chat.open_error, "error"))
        records = self.chat.history()
        self.prompt.prompt_history = type(self.prompt.prompt_history)(
            item.text for item in build_history(records).items if isinstance(item, UserItem)
        )
        self.prompt.add_workspace_history(self.chat.store, {r.id for r in records})
        self._render_history(records)
        if not records and not self.chat.open_error:
            self.transcript.mount(
                Welcome(
                    self.chat.settings.model or self.chat.resolve_session_model(), self._welcome_keys(), id="welcome"
                )
            )
        self.ring.compact_key = self.key_for("chat.compact")
        self.refresh_context(announce=False)
        self.reload_custom_commands(announce=True)
        self._prepare()

    def key_for(self, binding_id: str) -> str:
        """The key currently bound to `binding_id` (keymap applied), for hints."""
        for active in self.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        keymap = getattr(self.app, "_keymap", {}) or {}
        if binding_id in keymap:
            return keymap[binding_id].split(",")[0]
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding.key.split(",")[0]
        return ""

    # history and windowing ------------------------------------------------------------------

    def _render_history(self, records: list[Any]) -> None:
        history = build_history(records)
        turns = turns_of(history.items)
        self.hidden_turns = max(0, len(turns) - TURN_WINDOW)
        widgets: list[Widget] = []
        if self.hidden_turns:
            widgets.append(LoadEarlier(self.hidden_turns))
        dividers = self._dividers_by_turn(records, history.items)
        figures = self._reply_figures()
        for index in range(self.hidden_turns, len(turns)):
            widgets += dividers.get(index, [])
            widgets += history_widgets(turns[index], figures)
        widgets += dividers.get(len(turns), [])
        if widgets:
            self.transcript.mount_all(widgets)

    def _reply_figures(self) -> dict[int, ReplyFigures]:
        """Each stored reply's figures line, by message id (a fork's shared replies: its parents')."""
        return stored_figures(self.chat.store, self.chat.session_id)

    def _dividers_by_turn(self, records: list[Any], items: list[HistoryItem]) -> dict[int, list[Widget]]:
        """Compaction dividers placed before the first turn that began after each compaction."""
        if self.chat.session_id is None:
            return {}
        done = compactions(self.chat.store.events(self.chat.session_id))
        starts = user_times(records)
        lead = 1 if items and not isinstance(items[0], UserItem) else 0
        out: dict[int, list[Widget]] = {}
        for item in done:
            self._seen_compactions.add(item.key)
            out.setdefault(turn_after(starts, item.created_at) + lead, []).append(
                CompactionDivider(item.summary, item.key)
            )
        return out

    def mounted_turns(self) -> list[UserMessage]:
        return [u for u in self.transcript.query_children(UserMessage) if not u.has_class("-pending")]

    def _prune(self) -> None:
        """Past the high-water mark, unmount the oldest turns (they stay in the store)."""
        users = self.mounted_turns()
        if len(users) <= TURN_WINDOW_HIGH:
            return
        drop = len(users) - TURN_WINDOW
        keep_from = users[drop]
        doomed = []
        for child in self.transcript.children:
            if child is keep_from:
                break
            if not isinstance(child, LoadEarlier):
                doomed.append(child)
        self.hidden_turns += drop
        bar = self.transcript.query_children(LoadEarlier)
        if bar:
            bar.first().set_hidden(self.hidden_turns)
        else:
            self.transcript.mount(LoadEarlier(self.hidden_turns), before=0)
        self.transcript.remove_children(doomed)

    @on(LoadEarlier.Pressed)
    @on(Transcript.ReachedTop)
    def load_earlier(self, event: Any = None) -> None:
        if event is not None:
            event.stop()
        bars = self.transcript.query_children(LoadEarlier)
        if not self.hidden_turns or not bars:
            return
        bar = bars.first()
        records = self.chat.history()
        history = build_history(records)
        turns = turns_of(history.items)
        first = max(0, self.hidden_turns - LOAD_EARLIER_TURNS)
        dividers = self._dividers_by_turn(records, history.items)
        figures = self._reply_figures()
        widgets: list[Widget] = []
        for index in range(first, min(self.hidden_turns, len(turns))):
            widgets += dividers.get(index, [])
            widgets += history_widgets(turns[index], figures)
        loaded = self.hidden_turns - first
        self.hidden_turns = first
        transcript = self.transcript
        old_height = transcript.virtual_size.height
        old_y = transcript.scroll_y
        if widgets:
            transcript.mount_all(widgets, after=bar)
        if self.hidden_turns:
            bar.set_hidden(self.hidden_turns)
        else:
            bar.remove()

        def keep_place() -> None:  # the view stays on what the user was reading
            grown = transcript.virtual_size.height - old_height
            transcript.scroll_to(y=old_y + max(0, grown), animate=False)

        transcript.call_after_refresh(keep_place)
        self.notify(f"Loaded {loaded} earlier turns.", timeout=2)

    # engine warm-up -------------------------------------------------------------------------

    @work(thread=True, group="prepare", exit_on_error=False)
    def _prepare(self) -> str | None:
        from myrm_tui.agent.sandbox import sandbox_status

        sandbox_status(self.chat.settings.sandbox)  # the one bwrap probe, off the UI thread
        model = self.chat.resolve_model()
        if model:
            self.chat.warm_up()
            from myrm_tui.agent.window_check import window_problem

            settings = self.chat.settings
            self._window_problem = window_problem(
                settings if settings.model == model else settings.with_values(model=model), self.chat.workspace
            )
        return model

    def _prepared(self, worker: Worker) -> None:
        if worker.state == WorkerState.SUCCESS:
            self.chat.model = worker.result
        else:
            self.chat.model = self.chat.settings.model or None
            self.transcript.mount(
                Note(
                    f"Could not resolve the model: {worker.error}",
                    "error",
                    "Run `myrm doctor` to check the installation.",
                )
            )
        from myrm_tui.agent.sandbox import sandbox_status

        self.status.set(model=self.chat.model, sandbox=sandbox_status(self.chat.settings.sandbox).badge())
        self._refine_welcome()
        if self.chat.model is None:
            self.transcript.mount(Note(ONBOARDING[0], "warning", ONBOARDING[1]))
        elif self._window_problem:  # before the first turn, not after it fails (context/room.py)
            self.transcript.mount(Note(self._window_problem, "error"))
        # litellm's import leaves hundreds of thousands of long-lived objects; moving them out of
        # the collector's reach halves the worst full-collection stall while a reply streams
        # (measured: bench/tui_bench.py, docs/tui-benchmarks.md).
        gc.freeze()
        self.ready.set()

    def raw_key_for(self, binding_id: str) -> str:
        """The key string bound to `binding_id` with the keymap applied ("ctrl+o")."""
        keymap = getattr(self.app, "_keymap", {}) or {}
        if binding_id in keymap:
            return keymap[binding_id].split(",")[0]
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding.key.split(",")[0]
        return ""

    def _welcome_keys(self) -> WelcomeKeys:
        return WelcomeKeys(
            switch_model=pretty_key(self.raw_key_for("chat.model")),
            settings=pretty_key(self.raw_key_for("chat.settings")),
            help=pretty_key(self.raw_key_for("chat.help")),
        )

    def _refine_welcome(self) -> None:
        found = self.transcript.query_children(Welcome)
        if not found:
            return
        window = tools = None
        if self.chat.model:
            try:
                from myrm_tui.llm import registry

                info = registry.info(self.chat.model, self.chat.settings.models)
                window, tools = info.context_window, info.supports_tools
            except Exception:  # noqa: BLE001, S110 - the welcome is a courtesy; the first turn reports real errors
                pass
        found.first().refine(self.chat.model, window, tools)

    def _drop_welcome(self) -> None:
        for welcome in self.transcript.query_children(Welcome):
            welcome.remove()

    # context: ring, fork hint, panel, dividers ----------------------------------------------

    def refresh_context(self, announce: bool = True) -> None:
        """Re-read the ring's figures from the store (a model call, usage or a compaction)."""
        state = read_context(self.chat.store, self.chat.session_id)
        self.context = state
        self.ring.show(state)
        level = state.reading.level
        self.query_one("#fork-hint", ForkHint).display = level in ("warn", "crit")
        # The ring's reading, also when there is none (a fresh session clears the last one's).
        self.status.set(prompt_tokens=state.reading.used)
        if announce and level in ("warn", "crit") and self._cta_level not in ("warn", "crit"):
            self.notify(
                f"Context {state.reading.percent}% full. Fork into a fresh session "
                f"({self.key_for('chat.fork')}) or compact now ({self.key_for('chat.compact')}).",
                title="Context filling up",
                severity="warning",
                timeout=8,
            )
        self._cta_level = level
        if self.panel.display:
            self._refresh_panel()
        if announce:
            self._mount_new_dividers()

    def _refresh_panel(self) -> None:
        sid = self.chat.session_id
        self.panel.show_events(self.chat.store.events(sid) if sid else [])
        self.panel.show_summaries(self.chat.store.summaries(sid) if sid else [])

    def _mount_new_dividers(self) -> None:
        sid = self.chat.session_id
        if sid is None:
            return
        recent = [
            *self.chat.store.events(sid, event_kinds.COMPACTION, limit=4),
            *self.chat.store.events(sid, event_kinds.ASSEMBLE, limit=2),
        ]
        for item in compactions(recent):
            if item.key not in self._seen_compactions:
                self._seen_compactions.add(item.key)
                self.transcript.mount(CompactionDivider(item.summary, item.key))

    @on(CompactionDivider.Opened)
    def _divider_opened(self, event: CompactionDivider.Opened) -> None:
        event.stop()
        self.set_panel(True)

    @on(ContextRing.CompactRequested)
    def _ring_clicked(self, event: ContextRing.CompactRequested) -> None:
        event.stop()
        self.action_compact()

    @on(ForkHint.ForkRequested)
    def _fork_clicked(self, event: ForkHint.ForkRequested) -> None:
        event.stop()
        self.action_fork()

    def set_panel(self, shown: bool) -> None:
        self.panel.display = shown
        if shown:
            self._refresh_panel()

    def action_toggle_panel(self) -> None:
        self.set_panel(not self.panel.display)

    # sending --------------------------------------------------------------------------------

    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        text = event.text
        if not text.strip():
            return
        self.popup.close()
        self.reload_custom_commands()
        if self.submit_hook(text):  # editing a sent message, or queueing during a turn
            return
        parsed = parse_command(text, self.custom_slash())
        if parsed is not None:
            if parsed.command is None:
                self.notify(f"Unknown command {parsed.name}; /help lists them.", severity="warning")
                return
            if parsed.command.source:  # a custom command: its text goes as the message
                self.run_custom_command(parsed.command.name, parsed.argument, draft=text)
                return
            self.prompt.prompt_history.add(text)
            self.prompt.take_submitted(text)
            self.run_command(parsed.command.name, parsed.argument)
            return
        self.send_message(text, draft=text)

    def send_message(self, text: str, *, draft: str | None, model: str | None = None, note: str = "") -> None:
        """Send `text` as the next message (attachments read now). `draft`: what the prompt holds
        (taken when the message goes, given back if the turn fails); None when the message did
        not come from the prompt (the palette). `model`: a custom command's model for this turn."""
        if self.turn_running:
            self.notify(BUSY_NOTICE, severity="warning", timeout=3)
            return
        if self.compacting:
            self.notify("Compacting — your message can go as soon as it ends.", severity="warning")
            return
        if self.ready.is_set() and self.chat.model is None:
            self.transcript.mount(Note(ONBOARDING[0], "warning", ONBOARDING[1]))
            return
        try:  # a refused image or file stops the send; the draft stays in the prompt
            images = self.images.for_message(text, self.chat.workspace)
            files = load_attachments(
                file_refs(text, self.chat.workspace), self.chat.workspace, self.chat.workspace, self.chat.settings
            )
        except AttachmentError as exc:
            self.notify(str(exc), title="Not attached", severity="error", timeout=8)
            return
        if draft is not None:
            self.prompt.prompt_history.add(draft)
            self.prompt.take_submitted(draft)
        self.images.commit()
        self._turn_model = model
        self.start_turn(text, images, files, note=note, draft=draft)

    def start_turn(
        self,
        text: str,
        images: Sequence[ImageAttachment] = (),
        files: Sequence[FileAttachment] = (),
        *,
        note: str = "",
        draft: str | None = None,
    ) -> None:
        self._drop_welcome()
        chips = attachment_chips(files, int(self.chat.settings.tool_output_cap), self.chat.model or "")
        user = UserMessage(
            text
            + "".join(f"\n[{chip}]" for chip in chips)
            + "".join(f"\n[image: {image.name}]" for image in images)
            + (f"\n[{note}]" if note else ""),
            stored=False,
        )
        self.transcript.mount(user)
        self.transcript.anchor()  # sending is a request to follow the reply
        self.turn_text = text if draft is None else draft
        self.turn_view = TurnView(self.transcript, self.status, user)
        self.status.set(state="starting" if self.ready.is_set() else "loading the model library")
        self.workers.cancel_group(self, "maintain")  # background summary work yields to the user
        _defer_full_collections()
        self.turn_worker = self.run_worker(
            self._run_turn(text, self.turn_view, images, files), group="turn", exclusive=True, exit_on_error=False
        )

    async def _run_turn(
        self, text: str, view: TurnView, images: Sequence[ImageAttachment] = (), files: Sequence[FileAttachment] = ()
    ) -> None:
        await self.ready.wait()
        if self.chat.model is None:
            raise RuntimeError(ONBOARDING[0])
        model, self._turn_model = self._turn_model, None
        agent = self.chat.agent(text, model=model)
        switch = self.chat.take_switch()
        if switch is not None:
            view.mount(Note(switch.describe()), after=None)
        self.status.set(session_id=self.chat.session_id, state="thinking")
        turn = agent.turn(message_content(text, images, files) if (images or files) else text)
        try:
            async for event in turn:
                view.handle(event)
                if isinstance(event, (StepStarted, UsageEvent)):
                    self.refresh_context()
        finally:
            await turn.aclose()

    def _turn_ended(self, worker: Worker) -> None:
        view = self.turn_view
        self.turn_worker = None
        self.turn_view = None
        self.turns_ended += 1
        if view is None or not self.app.is_running or not self.transcript.is_mounted:
            return  # the app is closing; on_unmount waits for the agent instead
        if worker.state == WorkerState.CANCELLED:
            view.close("interrupted")
        elif worker.state == WorkerState.ERROR:
            error = worker.error
            view.note(
                str(error) or type(error).__name__,
                "error",
                "Your message was kept in the input; send it again when fixed.",
            )
            view.close("error")
        else:
            view.close("error" if view.failed else "done")
        # After any failure the draft comes back, even when part of a reply had streamed (a
        # dropped stream): sending it again is the retry, and the agent reuses the stored ask
        # when nothing answered it (agent/resend.py). An interrupt is the user's own stop: the
        # draft comes back only if nothing was produced.
        failed = worker.state == WorkerState.ERROR or (worker.state == WorkerState.SUCCESS and view.failed)
        if failed or (worker.state == WorkerState.CANCELLED and not view.produced):
            self.prompt.restore(self.turn_text)
            self.images.give_back()
        self.refresh_context()
        self._prune()
        self._focus_next_approval()
        _restore_collections()
        self.set_timer(IDLE_COLLECT_DELAY_S, lambda: gc.collect())  # the full pass, while the user reads
        if worker.state == WorkerState.SUCCESS and not view.failed:
            self.run_worker(self._maintain(), group="maintain", exclusive=True, exit_on_error=False)
        self.after_turn(worker.state, view.failed)  # queued messages: sent, or back in the prompt

    async def _maintain(self) -> None:
        """Idle-time engine work after a turn (a summary prepared in the background); it never
        blocks input, and the next turn simply waits for nothing: a new turn cancels it."""
        agent = self.chat.current_agent
        maintain = getattr(agent, "maintain", None)
        if maintain is None:
            return
        try:
            await maintain()
        except Exception:  # noqa: BLE001 - background work: failures are recorded as events
            return

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group == "prepare":
            self._prepared(worker)
        elif worker is self.turn_worker:
            self._turn_ended(worker)

    # completion popup -----------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        self._update_popup()

    def _update_popup(self) -> None:
        """Offer slash commands or workspace paths for the token at the cursor."""
        prompt = self.prompt
        row, column = prompt.cursor_location
        request = completing.completion_at(prompt.text, row, column)
        if request is None:
            self.popup.close()
            return
        if request.kind == "slash":
            self.reload_custom_commands()
            by_name = {c.name: c for c in with_custom(self.custom_slash())}
            names = popup_order(request.query, list(by_name))  # all of them: the popup scrolls
            choices = [Choice(n, f"{n} {by_name[n].args}".rstrip() + f"  — {by_name[n].help}") for n in names]
            if len(choices) == 1 and choices[0].value == request.query:
                choices = []  # fully typed: nothing left to offer
            self.popup.offer(request, choices)
        else:
            if self._files is None:
                self._list_files()
                return
            paths = fuzzy_filter(request.query, self._files, POPUP_MAX_ROWS)
            self.popup.offer(request, [Choice(p, p) for p in paths])

    @work(thread=True, exclusive=True, group="list-files", exit_on_error=False)
    def _list_files(self) -> None:
        files = completing.list_workspace_files(self.chat.workspace)
        self.app.call_from_thread(self._files_listed, files)

    def _files_listed(self, files: list[str]) -> None:
        self._files = files
        self._update_popup()

    # commands -------------------------------------------------------------------------------

    def run_command(self, name: str, argument: str = "") -> None:
        """A slash command (also what the palette calls)."""
        if name == "/compact":
            self.action_compact(argument or None)
        elif name == "/fork":
            self.action_fork()
        elif name in ("/undo", "/rewind"):
            from myrm_tui.tui.screens import undo_flow

            (undo_flow.start_undo if name == "/undo" else undo_flow.start_rewind)(self)
        elif name == "/model":
            if argument:
                self.switch_model(parse_scoped(argument))
            else:
                self.action_switch_model()
        elif name == "/sessions":
            self.action_sessions()
        elif name == "/settings":
            self.action_settings()
        elif name == "/export":
            self.export(argument)
        elif name == "/copy":
            self.copy_last_reply()
        elif name == "/notes":
            self.show_notes()
        elif name == "/mcp":
            self.action_mcp()
        elif name == "/theme":
            if argument:
                self.myrm.choose_theme_scoped(parse_scoped(argument))
            else:
                self.app.search_themes()
        elif name == "/clear":
            self.new_session()
        elif name == "/help":
            self.action_help()
        elif name == "/retry":
            self.action_retry()
        elif name == "/image":
            self.attach_image(argument)
        elif self.custom.get(name) is not None:  # the palette runs custom commands here
            self.run_custom_command(name, argument, draft=None)

    # custom commands ------------------------------------------------------------------------

    def reload_custom_commands(self, announce: bool = False) -> None:
        """Re-read the command folders (cheap: two small folders), so a file added or edited while
        myrm runs is offered at once. `announce`: say what was not loaded (at start)."""
        from myrm_tui.settings.paths import user_config_dir

        self.custom = load_custom_commands(self.chat.workspace, user_config_dir(), [c.name for c in SLASH_COMMANDS])
        if announce and self.custom.problems:
            self.transcript.mount(
                Note(
                    "Custom commands: " + "; ".join(self.custom.problems),
                    "warning",
                    "F1 lists the commands that were loaded.",
                )
            )

    def custom_slash(self) -> tuple[SlashCommand, ...]:
        return tuple(SlashCommand(c.name, c.argument_hint, c.help, str(c.path)) for c in self.custom.commands)

    def run_custom_command(self, name: str, argument: str, *, draft: str | None) -> None:
        """`/NAME args`: the command file's text, arguments substituted, goes as the message; its
        `model` (when it may apply: custom_commands.command_model) answers this one message."""
        from myrm_tui.settings.paths import user_config_dir

        command = self.custom.get(name)
        if command is None:
            self.notify(f"{name} is gone from the commands folders.", severity="warning")
            return
        trusted = workspace_trusted(self.chat.workspace, user_config_dir()) if command.model else False
        model, refused = command_model(command, trusted)
        if refused:
            self.transcript.mount(Note(refused, "warning"))
        shown = command.path.name if command.scope == "user" else f".myrm/commands/{command.path.name}"
        note = f"{command.name} from {shown}" + (f" · model {model}" if model else "")
        self.send_message(command.expand(argument), draft=draft, model=model or None, note=note)

    def attach_image(self, path: str) -> None:
        """`/image PATH`: checked now, sent with the next message."""
        try:
            image = self.images.add(path, self.chat.workspace)
        except AttachmentError as exc:
            self.notify(str(exc), title="Image not attached", severity="error", timeout=8)
            return
        self.transcript.mount(Note(f"{describe(image)} goes with your next message"))

    def _busy(self) -> bool:
        if self.turn_running or self.compacting:
            self.notify(BUSY_NOTICE if self.turn_running else "A compaction is running.", severity="warning", timeout=3)
            return True
        return False

    def action_compact(self, focus: str | None = None) -> None:
        if self._busy():
            return
        if self.chat.session is None:
            self.notify(NOTHING_YET.format(what="compact"), severity="warning")
            return
        if self.chat.model is None:
            self.notify("No model is configured; compaction needs one.", severity="warning")
            return
        self.compacting = True
        self.status.set(state="compacting")
        self._compact(focus)

    def _compact(self, focus: str | None) -> None:
        self.compact_worker = self.run_worker(
            self._run_compact(focus), group="compact", exclusive=True, exit_on_error=False
        )

    async def _run_compact(self, focus: str | None) -> None:
        """The compact command on the app's loop: the summarizer's calls are awaited, the
        progress line follows them, and Esc cancels the worker (nothing in the prompt changes
        until every summary is written)."""
        try:
            agent = self.chat.agent("")
            result = await agent.compact_now(focus, progress=self._compact_progress)
        except asyncio.CancelledError:
            self._compacted(None, COMPACT_CANCELLED)
            raise
        except Exception as exc:  # noqa: BLE001 - shown to the user; the session is untouched
            self._compacted(None, f"Compaction failed: {exc}")
            return
        self._compacted(result, None)

    def _compact_progress(self, progress: Any) -> None:
        """The progress line while the summarizer writes (status bar), with the cancel key."""
        if progress.what == "done":
            state = "compacting"
        else:
            what = "summary" if progress.what == "leaf" else "fold"
            state = f"compacting: {what} {progress.done + 1} of {max(progress.total, progress.done + 1)}"
        self.status.set(state=f"{state} · {self.key_for('chat.interrupt')} cancels")

    def _compacted(self, result: dict[str, Any] | None, problem: str | None) -> None:
        self.compacting = False
        self.compact_worker = None
        self.status.set(state="")
        if problem is not None:
            self.notify(problem, severity="warning" if problem == COMPACT_CANCELLED else "error")
            self.refresh_context()
            return
        if not result:
            self.notify("Nothing to compact: only the latest exchange is left.")
        else:
            self.notify(compacted_text(result))
        self.refresh_context()

    def action_fork(self) -> None:
        if self._busy():
            return
        session = self.chat.session
        if session is None or not self.chat.history():
            self.notify(NOTHING_YET.format(what="fork"), severity="warning")
            return
        agent = self.chat.current_agent
        summary_available = agent is not None
        title = session.title or short_id(session.id)

        def chosen(choice: str | None) -> None:
            if choice is None:
                return
            try:
                if choice == SUMMARY and summary_available:
                    child_id = agent.fork_with_summary().id
                else:
                    child_id = self.chat.store.fork(session.id, title=f"{session.title} (fork)".strip()).id
            except Exception as exc:  # noqa: BLE001 - StoreError or the engine's: shown, nothing changed
                self.notify(f"Fork failed: {exc}", severity="error")
                return
            kind = "full history" if choice == FULL else "with summary"
            self.myrm.open_session(child_id, f"Forked from “{title}” ({short_id(session.id)}, {kind}).")

        self.app.push_screen(ForkScreen(title, summary_available=summary_available), chosen)

    def action_sessions(self) -> None:
        def chosen(session_id: str | None) -> None:
            if session_id and session_id != self.chat.session_id:
                if self._busy():
                    return
                self.myrm.open_session(session_id, f"Resumed session {short_id(session_id)}.")

        self.app.push_screen(SessionsScreen(self.chat.store, self.chat.workspace, self.chat.session_id), chosen)

    def new_session(self) -> None:
        if self._busy():
            return
        self.myrm.open_session(None, "New session; the previous one is in /sessions.")

    def action_settings(self) -> None:
        def chosen(changes: dict[str, Any] | None) -> None:
            if changes is None:
                return
            if not changes:
                self.notify("No changes.")
                return
            self.apply_changes(changes)

        self.app.push_screen(
            SettingsScreen(self.myrm.settings, sorted(self.app.available_themes), str(self.myrm.config_path)), chosen
        )

    def action_switch_model(self) -> None:
        def chosen(choice: ScopedChoice | None) -> None:
            if choice is not None:
                self.switch_model(choice)

        self.app.push_screen(ModelPicker(self.chat.model, self.chat.settings.models), chosen)

    def switch_model(self, choice: ScopedChoice) -> None:
        """/model and the picker change this session only unless make-default (tui/scope.py)."""
        name = choice.name or (self.chat.model or "")
        if not name:
            self.notify("No model to make the default: name one (/model NAME --default).", severity="warning")
        elif choice.make_default:
            self.apply_changes({"model": name})
        elif name != self.chat.model:
            self.apply_changes({"model": name}, session_only=True)

    @work(exclusive=True, group="apply-settings", exit_on_error=False)
    async def apply_changes(self, changes: dict[str, Any], session_only: bool = False) -> None:
        """Warn before a smaller window forces a compaction, save atomically, then apply.
        `session_only`: a model for this session, applied and never saved."""
        changes = dict(changes)
        model = changes.get("model")
        if model and model != self.chat.model:
            warning = await asyncio.to_thread(self._shrink_warning, str(model))
            if warning and not await self.app.push_screen_wait(
                ConfirmScreen("Switch to a smaller window?", warning, "Switch")
            ):
                self.notify("Model unchanged.")
                changes.pop("model")
                if not changes:
                    return
        if session_only:
            saved = False
            self.chat.choose_session_model(str(model))
        else:
            if model:
                self.chat.choose_session_model(None)  # the saved default decides again
            saved = await self.myrm.save_settings(changes)
            self.myrm.apply_settings(self.myrm.settings.with_values(**changes))
        if "sandbox" in changes:
            from myrm_tui.agent.sandbox import sandbox_status

            self.status.set(sandbox=sandbox_status(self.myrm.settings.sandbox).badge())
        if model:
            self.status.set(model=self.chat.model)
            text, hint = model_note(str(model), session_only)
            self.transcript.mount(Note(text, hint=hint))
        if saved:
            self.notify("Settings saved." if set(changes) != {"model"} else f"Model: {model} (saved as the default).")
        elif session_only:
            self.notify(f"Model: {model} (this session).")

    def _shrink_warning(self, model: str) -> str | None:
        from myrm_tui.llm import registry

        info = registry.info(model, self.myrm.settings.models)
        estimate = expected_compaction(
            self.context.reading.used, info.context_window, int(self.myrm.settings.max_output_tokens)
        )
        if estimate is None:
            return None
        tokens, limit = estimate
        return (
            f"{model} has a {format_tokens(info.context_window)} window (prompt limit "
            f"{format_tokens(limit)}); the last prompt was {format_tokens(self.context.reading.used or 0)} "
            f"tokens. This will compact about {format_tokens(tokens)} tokens on your next message."
        )

    def action_health(self) -> None:
        self.app.push_screen(HealthScreen(self.chat.store, self.chat.session_id))

    def action_mcp(self) -> None:
        from myrm_tui.tui.screens.mcp import McpScreen

        self.app.push_screen(McpScreen(self.myrm.mcp))

    def action_help(self) -> None:
        self.app.push_screen(TextScreen("Keys and commands", self.help_markdown(), id="help-screen"))

    def help_markdown(self) -> str:
        """Generated from the bindings (the keymap setting applied) and the slash commands."""
        from textual.binding import BindingsMap

        from myrm_tui.tui.key_help import BoundKey, key_rows, key_table

        keymap = {k: v for k, v in self.myrm.settings.keymap.items()}
        bound: list[BoundKey] = []
        for bindings in (
            type(self.prompt).BINDINGS,
            type(self).BINDINGS,
            ApprovalPrompt.BINDINGS,
            type(self.app).BINDINGS,
        ):
            mapped = BindingsMap(bindings)
            if keymap:
                mapped.apply_keymap(keymap)
            bound += [
                BoundKey(binding.id, binding.description, key)
                for key, binding in mapped
                if binding.id and binding.description
            ]
        palette = getattr(self.app, "COMMAND_PALETTE_BINDING", "ctrl+p")
        if not any(item.binding_id == "app.command_palette" for item in bound):
            bound.append(BoundKey("app.command_palette", "Command palette", palette))
        lines = key_table(key_rows(bound))
        lines += [
            "",
            'Rebind any key with `[keymap]` in the config: `"chat.fork" = "f6"`.',
            "",
            "| command | what it does |",
            "|---|---|",
        ]
        lines += [
            f"| `{f'{c.name} {c.args}'.rstrip()}` | {c.help.replace('|', '/')} |"
            for c in alphabetical(with_custom(self.custom_slash()))
        ]
        if self.custom.problems:
            lines += ["", "Custom commands not loaded:", ""] + [f"- {problem}" for problem in self.custom.problems]
        return "\n".join(lines)

    def export(self, argument: str) -> None:
        sid = self.chat.session_id
        if sid is None:
            self.notify(NOTHING_YET.format(what="export"), severity="warning")
            return
        path = export_target(argument, sid, self.chat.workspace)
        try:
            written = export_markdown(self.chat.store, sid, path)
        except (OSError, StoreError) as exc:
            self.notify(f"Export failed: {exc}", severity="error")
            return
        self.notify(f"Exported to {written}")

    def copy_last_reply(self) -> None:
        replies = [r for r in self.transcript.query(AssistantMessage) if r.text]
        if not replies:
            self.notify("No reply to copy yet.", severity="warning")
            return
        text = replies[-1].text
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(text):,} characters.", timeout=2)

    def show_notes(self) -> None:
        notes = session_notes(self.chat.history())
        body = "\n".join(f"- {one_line(n, 400)}" for n in notes) if notes else "No session notes yet."
        self.app.push_screen(TextScreen("Session notes", body, id="notes-screen"))

    # approvals ------------------------------------------------------------------------------

    # An approval never takes the keyboard by itself (widgets/approval.py says why): the prompt
    # keeps it, and the user moves to the approval with approval.focus (Ctrl+Y) and back.

    @on(ApprovalPrompt.Shown)
    def _approval_shown(self, event: ApprovalPrompt.Shown) -> None:
        event.stop()
        key = pretty_key(self.raw_key_for(FOCUS_BINDING_ID) or FOCUS_KEY)
        self.status.set(state=f"waiting for approval ({key} to answer)")
        event.prompt.call_after_refresh(event.prompt.scroll_visible)  # once its height is known

    @on(ApprovalPrompt.Decided)
    def _decided(self, event: ApprovalPrompt.Decided) -> None:
        event.stop()
        if self.turn_view is not None and event.allowed is not None:
            self.turn_view.approval_decided(event.prompt)
        self._focus_next_approval()

    def pending_approval(self) -> ApprovalPrompt | None:
        """The oldest approval still waiting for an answer."""
        return next((p for p in self.transcript.query(ApprovalPrompt) if p.pending), None)

    def action_focus_approval(self) -> None:
        """Move the keyboard to the waiting approval, or from it back to the message."""
        waiting = self.pending_approval()
        if waiting is None:
            return
        if waiting.has_focus_within:
            waiting.disarm()
            self.prompt.focus()
            return
        waiting.arm()

    def _focus_next_approval(self) -> None:
        """Give the keyboard back to the prompt when it was on an approval that closed (never
        to a waiting approval: moving there is the user's deliberate key)."""
        focused = self.focused
        on_approval = focused is not None and any(isinstance(a, ApprovalPrompt) for a in (focused, *focused.ancestors))
        if on_approval or focused is None or not focused.can_focus:
            self.prompt.focus()

    # keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        ours = self.check_edit_action(action)
        if ours is not None:
            return ours
        if action == "interrupt":
            # Without a running turn (or compaction) Esc is not ours: let focused widgets use it.
            # In an approval's reason box it goes back to the answers.
            if self.compact_worker is not None:
                return True
            waiting = self.pending_approval() if self.turn_running else None
            return self.turn_running and not (waiting is not None and waiting.reason_open)
        if action == "focus_approval":
            return self.pending_approval() is not None  # otherwise Ctrl+Y is the prompt's redo
        return True

    def action_interrupt(self) -> None:
        if self.editing is not None and not self.turn_running:
            self.action_cancel_edit()
            return
        compacting = self.compact_worker
        if compacting is not None and not compacting.is_cancelled:
            self.status.set(state="cancelling the compaction")
            compacting.cancel()
            return
        worker = self.turn_worker
        if worker is not None and not worker.is_cancelled:
            self.status.set(state="interrupting")
            worker.cancel()

    def action_clear_or_quit(self) -> None:
        """Copy a selection if there is one; else interrupt a running turn (like Esc); when idle,
        a second press within the window quits. The draft is never cleared: what the user typed
        is theirs (Ctrl+C in a shell habitually means "stop", not "delete my text")."""
        selected = self.get_selected_text() or self.prompt.selected_text
        if selected:
            self.app.copy_to_clipboard(selected)
            self.notify(f"Copied {len(selected):,} characters.", timeout=2)
            return
        if self.turn_running or self.compact_worker is not None:
            self._last_ctrl_c = 0.0
            self.action_interrupt()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_QUIT_WINDOW_S:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=CTRL_C_QUIT_WINDOW_S)

    def action_jump_to_bottom(self) -> None:
        self.transcript.anchor()

    def action_external_editor(self) -> None:
        from myrm_tui.tui.external_editor import edit_text, editor_command

        command = editor_command()
        try:
            with self.app.suspend():
                edited = edit_text(self.prompt.expanded_text, command)  # paste chips expanded
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to an editor here.", severity="warning")
            return
        except (OSError, Exception) as exc:  # noqa: BLE001 - the draft stays as it was
            self.notify(f"The editor ({' '.join(command)}) failed: {exc}. Your draft is unchanged.", severity="error")
            return
        self.prompt.load_text(edited)
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()


def compacted_text(event: dict[str, Any]) -> str:
    """The toast after the compact command: tokens freed and who wrote the summaries."""
    saved = event.get("saved")
    summaries = event.get("summaries") or {}
    made = sum(int(n) for n in (summaries.get("created_by_depth") or {}).values())
    extractive = int(summaries.get("fallback") or 0)
    text = f"Compacted{f': −{saved:,} tokens' if isinstance(saved, int) else ''}"
    if made:
        written = made - extractive
        text += f"; {made} summar{'y' if made == 1 else 'ies'}"
        text += f" ({written} written by the model)" if written else " (extractive: no model wrote them)"
    return text + "."
