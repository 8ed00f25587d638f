"""The Textual application and its entry point.

The app owns what is global to every screen: the settings (and saving them), the keymap, the
themes (loaded from TOML files and watched for edits), the store's lifetime, and which session
the chat screen shows (resume, fork and "new session" swap the chat screen). Nothing heavy is
imported here: litellm and the agent load in a worker after the first paint, and with
`paint_first` (the `myrm` launch) even the chat screen and the store load after a first frame
(screens/start.py), so this module imports little beyond Textual and the settings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding, BindingType

from myrm_tui.settings import Settings
from myrm_tui.settings.trust import IGNORE
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.scope import ScopedChoice, theme_note
from myrm_tui.tui.terminal_keys import install_extra_sequences
from myrm_tui.tui.theming.app_themes import DEFAULT_THEME, ThemedApp

if TYPE_CHECKING:  # the chat screen, the store and what they import load after the first paint
    from myrm_tui.agent.session_runtime import SessionRuntime
    from myrm_tui.llm.local.client import LocalWorkers
    from myrm_tui.mcp.manager import McpManager
    from myrm_tui.store import Store
    from myrm_tui.tui.crash_report import CrashReport
    from myrm_tui.tui.screens.chat.screen import ChatScreen
    from myrm_tui.tui.screens.trust import TrustPrompt
    from myrm_tui.tui.session.chat_session import ChatSession
    from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
    from myrm_tui.tui.widgets.prompt import PromptArea

__all__ = ["DEFAULT_THEME", "EXIT_MODEL_REFUSED", "AppOutcome", "MyrmApp", "run_app"]


# How long the start-screen hand-over waits for the chat's prompt to exist: 5 s in 10 ms steps
# (it takes ~50-300 ms; the bound only keeps a wedged compose from holding keys forever).
CHAT_READY_POLLS = 500
CHAT_READY_POLL_S = 0.01
# The process's exit code when the model is refused after the first frame: a usage error, as when
# the command line refuses it (cli_commands.common.EXIT_USAGE; the CLI layer is above this one).
EXIT_MODEL_REFUSED = 2


@dataclass(frozen=True)
class AppOutcome:
    """How a `run_app` ended, for the command line to print once the terminal is back."""

    resumable: str | None  # the session worth resuming (one with messages), or None
    refusal: str | None  # why the model was refused before any session opened, or None
    crash: CrashReport | None = None  # the app died of an unhandled exception (tui/crash_report.py)


class MyrmApp(ThemedApp):
    TITLE = "myrm"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False, id="app.quit"),
    ]

    def __init__(
        self,
        workspace: Path,
        settings: Settings,
        session_id: str | None = None,
        continue_last: bool = False,
        store: Store | None = None,
        *,
        config_path: Path | None = None,
        theme_dirs: list[Path] | None = None,
        watch_themes: bool = True,
        trust_prompt: TrustPrompt | None = None,
        config_notices: Sequence[str] = (),
        paint_first: bool = False,
        model_check: Callable[[], str | None] | None = None,
    ) -> None:
        """`paint_first`: show the start screen in the first frame and open the store, the session
        and the chat screen after it (the `myrm` launch); tests and embedders get them at once.
        `model_check` (with `paint_first`): why the model cannot be used, or None; run in the loading
        thread, before anything opens, because it may import litellm (seconds) to look the model up.
        A refusal ends the app with EXIT_MODEL_REFUSED and leaves the reason in `refusal`."""
        super().__init__()
        # Config warnings the command printed on stderr before the screen took over: shown
        # again inside the app, where the user looks (stderr is hidden behind the screen).
        self.config_notices = list(config_notices)
        install_extra_sequences()
        self.trust_prompt = trust_prompt  # asked over the chat before the first message
        self.workspace = Path(workspace)
        self.settings = settings
        self._config_path = config_path
        self.theme_dirs = theme_dirs
        self.watch_themes = watch_themes
        self.theme_problems: list[str] = []
        self.theme_files: dict[str, Path] = {}
        self._owns_store = store is None
        self.store: Store
        self.chat: ChatSession
        self.mcp: McpManager
        self.local_workers: LocalWorkers
        self._opening = (store, session_id, continue_last)
        self.paint_first = paint_first
        self.model_check = model_check
        self.refusal: str | None = None
        self.crash: BaseException | None = None  # the first unhandled exception, which ended the app
        self.chat_opened = False  # True once store, session and MCP manager exist
        if not paint_first:
            self._open_chat()
        self._theme_stop = asyncio.Event()
        self._saving_theme = False
        self.resume_session_id: str | None = None  # set on exit: the command line prints how to resume
        self._apply_animations(settings)
        # Themes are registered and chosen before the app runs, not in on_mount: a theme set once
        # the app is running makes Textual parse every stylesheet again, before the first frame.
        self.load_theme_files()
        self._theme_notices = self._choose_start_theme()

    def _open_chat(self) -> None:
        """Open the store and the session; what the chat screen needs before it can compose."""
        from myrm_tui.llm.local.client import LocalWorkers
        from myrm_tui.mcp.manager import McpManager
        from myrm_tui.store import Store
        from myrm_tui.tui.session.chat_session import ChatSession

        store, session_id, continue_last = self._opening
        self.store = store if store is not None else Store.open(self.workspace)
        self.chat = ChatSession.open(self.store, self.settings, self.workspace, session_id, continue_last)
        # MCP servers belong to the app: sessions come and go, the servers stay up. Started after
        # the first paint (on_mount), stopped in on_unmount; the SDK is imported off the UI thread.
        self.mcp = McpManager.from_settings(self.settings, self.workspace)
        self.chat.mcp = self.mcp
        # The embedded model's worker belongs to the app too: it keeps the loaded weights across
        # sessions and ends with the app (on_unmount).
        self.local_workers = LocalWorkers()
        self.chat.local_workers = self.local_workers
        self.chat_opened = True

    def _handle_exception(self, error: Exception) -> None:
        """Every unhandled exception (a handler, a timer, a worker) ends the app here (Textual's
        one door for them). Kept for `run_app`, which logs it and makes the exit non-zero; the
        traceback Textual would print after the screen is gone (with local variables: a key,
        a message) is not printed, the log holds it scrubbed (tui/crash_report.py)."""
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)
        self._exit_renderables.clear()

    def notify(self, message: str, *, title: str = "", **options: Any) -> None:
        """Every toast goes through here (screens and widgets call the app's); many quote a
        path, an exception or a title, so control characters are drawn as escapes, and markup is
        off: a `[@click=…]` in a file name or a model's text must stay text, not become an action."""
        options.setdefault("markup", False)
        super().notify(for_terminal(message), title=for_terminal(title), **options)

    def get_system_commands(self, screen: Any) -> Iterator[SystemCommand]:
        """Textual's entries (minus the removed ones), then on the chat screen its commands and the
        myrm themes (tui/prompt/palette.py)."""
        from myrm_tui.tui.prompt.palette import system_commands, theme_commands
        from myrm_tui.tui.screens.chat.screen import ChatScreen

        yield from system_commands(super().get_system_commands(screen))
        if isinstance(screen, ChatScreen):
            yield from screen.commands.palette()
            yield from theme_commands(self.available_themes, self.choose_theme)

    def on_prompt_area_history_search(self, event: PromptArea.HistorySearch) -> None:
        """The prompt's history search (Ctrl+S). The widget asks, the app opens: widgets sit below
        screens in the TUI, so the prompt does not import the dialog."""
        from myrm_tui.tui.screens.prompt_search import PromptSearchScreen

        self.push_screen(PromptSearchScreen(event.history, event.query), event.chosen)

    def on_tool_block_open_output(self, event: ToolBlock.OpenOutput) -> None:
        """A tool call's full-output viewer (`o` on a block); asked for by the block, as above."""
        from myrm_tui.tui.screens.tool_output import ToolOutputScreen

        self.push_screen(ToolOutputScreen(event.title, event.vault, event.handle, event.stored))

    @property
    def config_path(self) -> Path:
        """The user config file settings are saved to (MYRM_CONFIG_DIR respected)."""
        if self._config_path is None:
            from myrm_tui.settings.paths import user_config_file

            self._config_path = user_config_file()
        return self._config_path

    def on_mount(self) -> None:
        if self.settings.keymap:
            self.set_keymap(dict(self.settings.keymap))
        for notice in self.config_notices:
            self.notify(notice, title="Configuration", severity="warning", timeout=15)
        for text, title, timeout in self._theme_notices:
            self.notify(text, title=title, severity="warning", timeout=timeout)
        for problem in self.theme_problems:
            self.notify(problem, title="Theme file skipped", severity="warning", timeout=10)
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.watch_themes:  # after the first frame: it imports watchfiles (and anyio) on the UI thread
            self.call_after_refresh(self._watch_theme_dirs)
        if self.paint_first:
            from myrm_tui.tui.screens.start import StartScreen

            self.push_screen(StartScreen())
            self.call_after_refresh(self._load_chat_modules)
            return
        self._show_chat()

    @work(thread=True, exclusive=True, group="start", exit_on_error=False)
    def _load_chat_modules(self) -> None:
        """Import the chat screen's modules off the UI thread, after the first frame, then open
        the session on the UI thread (SQLite connections stay on the thread that opened them)."""
        import myrm_tui.store.store  # noqa: F401
        import myrm_tui.tui.screens.chat.screen  # noqa: F401
        import myrm_tui.tui.screens.trust  # noqa: F401
        import myrm_tui.tui.session.chat_session  # noqa: F401

        problem = None
        if self.model_check is not None:
            try:
                problem = self.model_check()
            except Exception:  # noqa: BLE001 - a lookup that crashed refuses nothing; a send would say why
                problem = None
        try:
            if problem is None:
                self.call_from_thread(self.call_later, self._finish_start)
            else:
                self.call_from_thread(self._refuse, problem)
        except RuntimeError:  # the user quit on the start screen; the app is gone
            return

    def _refuse(self, problem: str) -> None:
        """End the launch before any session opens; the command line prints `problem`."""
        self.refusal = problem
        self.exit(return_code=EXIT_MODEL_REFUSED)

    async def _finish_start(self) -> None:
        """Swap the start screen for the chat screen, moving over what the user typed."""
        from myrm_tui.tui.screens.start import StartScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, StartScreen):
            self.pop_screen()  # e.g. the command palette, opened on the start screen
        start = self.screen
        from myrm_tui.tui.screens.start import typed_in
        from myrm_tui.tui.widgets.prompt import PromptArea

        prompt = start.prompt if isinstance(start, StartScreen) else None
        if prompt is not None:
            # Keys already handed to the start prompt are inserted by its own queue, after the
            # app's: wait for them, so nothing typed there is lost. Keys still arriving wait in
            # the app's queue (this handler holds it) and reach the chat's prompt.
            await prompt.settled()
        text, cursor, messages = typed_in(prompt) if prompt is not None else ("", (0, 0), [])
        self._open_chat()
        chat = self._chat_screen()
        await self.switch_screen(chat)
        # The chat composes in its own queue; this handler holds the app's (keys wait there),
        # so wait for its prompt and focus it: the next queued key must land in it.
        for _ in range(CHAT_READY_POLLS):
            if chat.is_mounted and chat.query("#prompt"):
                break
            if self._exit or chat._closing or chat._closed:
                return  # a quit as the chat opened: its prompt never comes, do not hold the exit
            await asyncio.sleep(CHAT_READY_POLL_S)
        else:  # never seen in practice; the chat's AUTO_FOCUS still focuses it when it comes
            self._after_chat_shown()
            return
        chat.prompt.focus()
        if text and not chat.prompt.text:
            chat.prompt.text = text
            chat.prompt.cursor_location = cursor
            # Messages Enter ended on the start screen go now, in order, as the chat would have
            # sent them (each send takes its text off the front of the prompt, keeping what was
            # typed after); not before a pending trust decision, which decides what a turn may do.
            if self.trust_prompt is None:
                for message in messages:
                    chat.post_message(PromptArea.Submitted(chat.prompt, message))
        self._after_chat_shown()

    def _show_chat(self) -> None:
        self.push_screen(self._chat_screen())
        self._after_chat_shown()

    def _chat_screen(self) -> ChatScreen:
        from myrm_tui.tui.screens.chat.screen import ChatScreen

        return ChatScreen(self.chat)

    def _after_chat_shown(self) -> None:
        from myrm_tui.tui.screens.trust import TrustScreen

        if self.mcp.configured:
            self.call_after_refresh(self._start_mcp)
        from myrm_tui.tui.session.cache_keepalive import CacheKeepAlive  # opt-in settings; idle unless on

        CacheKeepAlive(self).start()
        if self.trust_prompt is not None:
            self.push_screen(TrustScreen(self.trust_prompt.trust), self._trust_decided)

    @property
    def chat_screen(self) -> ChatScreen:
        from myrm_tui.tui.screens.chat.screen import ChatScreen

        screen = self.screen
        assert isinstance(screen, ChatScreen)
        return screen

    async def on_unmount(self) -> None:
        self._theme_stop.set()
        if not self.chat_opened:  # quit on the start screen: nothing was opened
            return
        from myrm_tui.tui.resume_hint import resumable_session

        self.chat.discard_if_unused()  # a session the cache preheat opened and no message used
        self.resume_session_id = resumable_session(self.store, self.chat.session_id)
        await self.mcp.aclose()  # no server process outlives the app
        await asyncio.to_thread(self.local_workers.close)  # nor the local model's worker
        if self._owns_store:
            self.store.close()

    def _start_mcp(self) -> None:
        self.run_worker(self.mcp.start(), group="mcp", exit_on_error=False)

    # sessions -------------------------------------------------------------------------------

    def open_session(self, session_id: str | None, notice: str = "", model: str | None = None) -> None:
        """Show another session (resume, fork) or a fresh one (None) in a new chat screen.
        `model`: the session talks to this model (a fork: its parent's), whatever the settings say."""
        from myrm_tui.tui.screens.chat.screen import ChatScreen
        from myrm_tui.tui.session.chat_session import ChatSession

        self.store.release_sessions(keep=session_id)  # others may now continue the one we leave
        leaving = self.chat.session_id
        leaving_runtime = self.chat.release_runtime()
        staying = leaving_runtime if leaving == session_id else None  # the same session, shown anew
        if leaving != session_id:
            self.chat.discard_if_unused()  # a session the cache preheat opened and no message used
        if leaving != session_id and leaving_runtime is not None:
            # The session ends here: its background commands stop (unread output kept) and the
            # user's session_end hooks run, as at the end of `myrm run`. Its engine goes with the
            # runtime: nothing of a session left behind stays in memory.
            self.run_worker(self._end_session(leaving_runtime), group="close-session", exit_on_error=False)
        self.chat = ChatSession.open(self.store, self.settings, self.workspace, session_id)
        self.chat.mcp = self.mcp
        self.chat.local_workers = self.local_workers
        if staying is not None and self.chat.session_id == staying.session_id:
            self.chat.adopt_runtime(staying)  # its engine, commands and hooks go on
        elif staying is not None:  # reopened as a fork after all: the old one ends
            self.run_worker(self._end_session(staying), group="close-session", exit_on_error=False)
        if model:
            self.chat.choose_session_model(model)
        self.switch_screen(ChatScreen(self.chat))
        if notice:
            self.notify(notice, timeout=5)

    async def _end_session(self, runtime: SessionRuntime) -> None:
        await runtime.aclose()
        for notice in runtime.take_hook_notices():  # a failed session_end hook is said, not only stored
            self.notify(notice.text, severity="warning")

    # settings -------------------------------------------------------------------------------

    def _trust_decided(self, choice: str | None) -> None:
        """Apply the workspace settings the user just trusted (or keep going without them)."""
        assert self.trust_prompt is not None
        settings, note = self.trust_prompt.settle(choice or IGNORE)
        self.trust_prompt = None
        if settings is not None:
            self.apply_settings(settings)
        if note:
            self.notify(note, title="Workspace settings", timeout=8)
        from myrm_tui.tui.session.session_preheat import start_session_preheat  # waited for this decision

        start_session_preheat(self)

    def _apply_animations(self, settings: Settings) -> None:
        self.animation_level = "full" if settings.animations else "none"

    def apply_settings(self, settings: Settings) -> None:
        """Use new settings now: the chat rebuilds its agent on the next message if needed."""
        old, self.settings = self.settings, settings
        self.chat.apply_settings(settings)
        if settings.mcp_servers != old.mcp_servers:  # e.g. the workspace's servers, just trusted
            self.run_worker(self._reconfigure_mcp(settings), group="mcp", exit_on_error=False)
        self.mcp.set_timeouts(float(settings.mcp_startup_timeout), float(settings.mcp_tool_timeout))
        if settings.animations != old.animations:
            self._apply_animations(settings)
        if settings.theme != old.theme and settings.theme in self.available_themes:
            problem = self.theme_problem(settings.theme)
            if problem is not None:
                self.notify(
                    f"{problem} Still using {self.theme}.", title="Theme not applied", severity="error", timeout=10
                )
                return
            self._saving_theme = True  # already saved with the other changes
            self.theme = settings.theme
            self.call_later(setattr, self, "_saving_theme", False)

    async def _reconfigure_mcp(self, settings: Settings) -> None:
        await self.mcp.configure(settings.mcp_servers)
        await self.mcp.start()

    async def save_settings(self, changes: Mapping[str, Any]) -> bool:
        """Save to the user config atomically (in a thread); a failure is shown, not raised:
        the change still applies to this run."""
        from myrm_tui.settings.config_files.loader import ConfigWriteError, save_user_settings

        try:
            await asyncio.to_thread(save_user_settings, dict(changes), self.config_path)
        except (ValueError, TypeError, ConfigWriteError, OSError) as exc:
            self.notify(f"Not saved: {exc} The change applies to this session only.", severity="error", timeout=10)
            return False
        return True

    def choose_theme_scoped(self, choice: ScopedChoice) -> None:
        """/theme NAME is for this run; `--default` also writes it to the user config."""
        if choice.make_default:
            self._saving_theme = True  # one toast, the one that says it was saved
            self.call_later(setattr, self, "_saving_theme", False)
        if choice.name and not self.choose_theme(choice.name):
            return
        if choice.make_default:
            self.run_worker(self._save_theme_default(self.theme), group="save-theme", exit_on_error=False)

    async def _save_theme_default(self, name: str) -> None:
        if await self.save_settings({"theme": name}):
            self.notify(theme_note(name, make_default=True))


def run_app(
    *,
    workspace: Path,
    settings: Settings,
    session_id: str | None = None,
    continue_last: bool = False,
    trust_prompt: TrustPrompt | None = None,
    config_notices: Sequence[str] = (),
    paint_first: bool = True,
    model_check: Callable[[], str | None] | None = None,
) -> AppOutcome:
    """Run the full-screen app until the user quits (or `model_check` refuses the model)."""
    app = MyrmApp(
        workspace,
        settings,
        session_id=session_id,
        continue_last=continue_last,
        trust_prompt=trust_prompt,
        config_notices=config_notices,
        paint_first=paint_first,
        model_check=model_check,
    )
    try:
        app.run()
    except Exception as exc:  # noqa: BLE001 - one that escaped Textual itself: reported like any crash
        app.crash = app.crash or exc
    crash = None
    if app.crash is not None:
        from myrm_tui.tui.crash_report import report_crash  # only after a crash: it loads the redaction rules

        crash = report_crash(app.crash)
    return AppOutcome(resumable=app.resume_session_id, refusal=app.refusal, crash=crash)
