"""The chat's dialog flows: fork, sessions, settings, model switch, health, MCP, help, export, copy, notes.

Each opens its dialog over the chat screen and applies the answer; the command table
(tui/prompt/command_table.py) reaches them through `ChatCommands`. /undo and /rewind are in undo_flow.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from myrm_tui.settings import Settings
from myrm_tui.store import StoreError
from myrm_tui.tui.figures.context_source import expected_compaction, model_budget
from myrm_tui.tui.formatting import format_tokens, one_line, short_id
from myrm_tui.tui.scope import ScopedChoice, model_note
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.screens.dialogs import ConfirmScreen, TextScreen
from myrm_tui.tui.screens.fork import FULL, SUMMARY, ForkScreen
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.screens.sessions import SessionsScreen, export_markdown
from myrm_tui.tui.screens.settings import SettingsScreen
from myrm_tui.tui.transcript.export_target import export_target
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.note import Note

NOTHING_YET = "Nothing to {what} yet: send a message first."


def fork(screen: ChatParts) -> None:
    if screen.busy():
        return
    chat = screen.chat
    session = chat.session
    if session is None or not chat.history():
        screen.notify(NOTHING_YET.format(what="fork"), severity="warning")
        return
    agent = chat.current_agent
    summary_available = agent is not None
    title = session.title or short_id(session.id)

    def chosen(choice: str | None) -> None:
        if choice is None:
            return
        from myrm_tui.agent.fork import keep_model

        model = chat.model  # this session's model now, a session-only switch included
        try:
            if choice == SUMMARY and agent is not None:
                child_id = agent.fork_with_summary().id
            else:
                child_id = chat.store.fork(session.id, title=f"{session.title} (fork)".strip()).id
            keep_model(chat.store, child_id, model)
        except Exception as exc:  # noqa: BLE001 - StoreError or the engine's: shown, nothing changed
            screen.notify(f"Fork failed: {exc}", severity="error")
            return
        kind = "full history" if choice == FULL else "with summary"
        # The fork talks to its parent's model, whatever the saved default or a launch flag says.
        screen.myrm.open_session(child_id, f"Forked from “{title}” ({short_id(session.id)}, {kind}).", model=model)

    screen.app.push_screen(ForkScreen(title, summary_available=summary_available), chosen)


def sessions(screen: ChatParts) -> None:
    chat = screen.chat

    def chosen(session_id: str | None) -> None:
        if session_id and session_id != chat.session_id:
            if screen.busy():
                return
            screen.myrm.open_session(session_id, f"Resumed session {short_id(session_id)}.")

    screen.app.push_screen(SessionsScreen(chat.store, chat.workspace, chat.session_id), chosen)


def new_session(screen: ChatParts) -> None:
    if screen.busy():
        return
    screen.myrm.open_session(None, "New session; the previous one is in /sessions.")


def settings(screen: ChatParts) -> None:
    def chosen(changes: dict[str, Any] | None) -> None:
        if changes is None:
            return
        if not changes:
            screen.notify("No changes.")
            return
        apply_changes(screen, changes)

    screen.app.push_screen(
        SettingsScreen(
            screen.myrm.settings,
            sorted(screen.app.available_themes),
            str(screen.myrm.config_path),
            effective={"lite_model": lite_model_shown(screen.chat.model, screen.chat.effective_settings())},
        ),
        chosen,
    )


def lite_model_shown(model: str | None, settings: Settings) -> str:
    """The summarizer an empty `lite_model` means for this session's model, as the settings
    screen shows it (an unknown model resolves to conservative defaults, it does not raise)."""
    from myrm_tui.agent.setup.model_calls import effective_lite_model

    if not model:
        return ""
    choice = effective_lite_model(settings, model)
    return f"automatic: {choice.model}" if choice.model else f"automatic: {choice.why}"


def pick_model(screen: ChatParts) -> None:
    def chosen(choice: ScopedChoice | None) -> None:
        if choice is not None:
            switch_model(screen, choice)

    screen.app.push_screen(ModelPicker(screen.chat.model, screen.chat.settings.models), chosen)


def switch_model(screen: ChatParts, choice: ScopedChoice) -> None:
    """/model and the picker change this session only unless make-default (tui/scope.py)."""
    name = choice.name or (screen.chat.model or "")
    if not name:
        screen.notify("No model to make the default: name one (/model NAME --default).", severity="warning")
    elif choice.make_default:
        apply_changes(screen, {"model": name})
    elif name != screen.chat.model:
        apply_changes(screen, {"model": name}, session_only=True)


def apply_changes(screen: ChatParts, changes: dict[str, Any], session_only: bool = False) -> None:
    """One at a time (exclusive): a second change waits for nothing, it replaces the first."""
    screen.run_worker(
        _apply_changes(screen, changes, session_only), group="apply-settings", exclusive=True, exit_on_error=False
    )


async def _apply_changes(screen: ChatParts, changes: dict[str, Any], session_only: bool) -> None:
    """Warn before a smaller window forces a compaction, save atomically, then apply.
    `session_only`: a model for this session, applied and never saved."""
    chat, host = screen.chat, screen.myrm
    changes = dict(changes)
    model = changes.get("model")
    key_problem = None
    if model and model != chat.model:
        check = await asyncio.to_thread(_check_model, screen, str(model))
        if not check.known:  # `/model gpt4o`: not taken, with what was probably meant
            screen.notify(check.problem or f"Unknown model {model!r}.", severity="error", timeout=12)
            changes.pop("model")
            if not changes:
                return
            model = None
        else:
            key_problem = check.key_problem()
    if model and model != chat.model:
        warning = await asyncio.to_thread(_shrink_warning, screen, str(model))
        if warning and not await screen.app.push_screen_wait(
            ConfirmScreen("Switch to a smaller window?", warning, "Switch", type_ahead=screen.prompt.type_ahead)
        ):
            screen.notify("Model unchanged.")
            changes.pop("model")
            if not changes:
                return
    if session_only:
        saved = False
        chat.choose_session_model(str(model))
    else:
        if model:
            chat.choose_session_model(None)  # the saved default decides again
        saved = await host.save_settings(changes)
        host.apply_settings(host.settings.with_values(**changes))
    if "sandbox" in changes:
        from myrm_tui.agent.sandbox import sandbox_status

        screen.status.set(sandbox=sandbox_status(host.settings.sandbox).badge())
    if model:
        screen.status.set(model=chat.model)
        if chat.model:
            screen.set_model_budget(await asyncio.to_thread(model_budget, chat.model, chat.effective_settings()))
        text, hint = model_note(str(model), session_only)
        screen.transcript.mount(Note(text, hint=hint))
    if saved:
        screen.notify("Settings saved." if set(changes) != {"model"} else f"Model: {model} (saved as the default).")
    elif session_only:
        screen.notify(f"Model: {model} (this session).")
    if key_problem and "model" in changes:  # taken, but its next message would fail without the key
        screen.notify(key_problem, severity="warning", timeout=12)


def _check_model(screen: ChatParts, model: str) -> Any:
    """llm.model_check.check_model with the app's declarations: the check `myrm run --model` uses."""
    from myrm_tui.llm.models.check import check_model

    settings = screen.myrm.settings
    return check_model(model, settings.models, settings.api_base or None)


def _shrink_warning(screen: ChatParts, model: str) -> str | None:
    """What switching to `model` would compact, judged as the engine will: the prompt limit of
    `model_budget` (the output `model` is asked for and the window cap, not the raw setting),
    and the conversation's own tokens plus the fixed part only a model with tools carries (a
    chat-only model's system prompt is one line and it gets no tool schemas). Off the UI thread:
    the registry may import litellm."""
    settings = screen.chat.effective_settings().with_values(model=model)
    budget = model_budget(model, settings)
    if budget is None:
        return None
    reading = screen.context.reading
    needed = reading.used or 0
    fixed, history = reading.fixed_tokens, reading.history_tokens
    if fixed and not budget.tools:
        if history is None:  # a compaction's reading: `used` is our count, fixed part included
            needed = max(0, needed - fixed)
        else:  # `used` may be the provider's count: take off the fixed part's share of it
            needed = max(0, needed - round(fixed * needed / (fixed + history)))
    tokens = expected_compaction(needed, budget.limit)
    if tokens is None:
        return None
    return (
        f"{model} has a {format_tokens(budget.window)} window (prompt limit "
        f"{format_tokens(budget.limit)}); this conversation needs about {format_tokens(needed)} "
        f"tokens there. This will compact about {format_tokens(tokens)} tokens on your next message."
    )


def health(screen: ChatParts) -> None:
    screen.app.push_screen(HealthScreen(screen.chat.store, screen.chat.session_id, screen.model_budget))


def mcp(screen: ChatParts) -> None:
    from myrm_tui.tui.screens.mcp import McpScreen

    screen.app.push_screen(McpScreen(screen.myrm.mcp))


def show_help(screen: ChatParts, markdown: str) -> None:
    screen.app.push_screen(TextScreen("Keys and commands", markdown, id="help-screen"))


def export(screen: ChatParts, argument: str) -> None:
    chat = screen.chat
    sid = chat.session_id
    if sid is None:
        screen.notify(NOTHING_YET.format(what="export"), severity="warning")
        return
    path = export_target(argument, sid, chat.workspace)
    try:
        written = export_markdown(chat.store, sid, path)
    except (OSError, StoreError) as exc:
        screen.notify(f"Export failed: {exc}", severity="error")
        return
    screen.notify(f"Exported to {written}")


def copy_last_reply(screen: ChatParts) -> None:
    replies = [r for r in screen.transcript.query(AssistantMessage) if r.text]
    if not replies:
        screen.notify("No reply to copy yet.", severity="warning")
        return
    text = replies[-1].text
    screen.app.copy_to_clipboard(text)
    screen.notify(f"Copied {len(text):,} characters.", timeout=2)


def jobs(screen: ChatParts, argument: str) -> None:
    """`/jobs`: the background commands of this session (bash with `background: true`), and
    `/jobs stop HANDLE` to end one the way bash_kill does (its unread output is kept)."""
    agent = screen.chat.current_agent
    listing = agent.background.listing() if agent is not None else []
    words = argument.split()
    if words[:1] == ["stop"]:
        handle = words[1] if len(words) > 1 else ""
        if agent is None or not any(info.handle == handle and info.running for info in listing):
            running = ", ".join(info.handle for info in listing if info.running) or "none"
            screen.notify(f"No running background command {handle or '(no handle given)'}; running: {running}.")
            return

        background = agent.background

        async def stop() -> None:
            await background.kill(handle)
            screen.notify(f"Stopped {handle}.")

        screen.run_worker(stop(), group="jobs", exit_on_error=False)
        return
    if not listing:
        screen.notify("No background commands in this session.")
        return
    rows = [
        f"| {info.handle} | {'running' if info.running else _ended(info)} | {info.bytes:,} | "
        f"`{one_line(info.command, 80).replace('|', '∣').replace('`', '´')}` |"
        for info in listing
    ]
    body = "\n".join(
        [
            "| handle | state | output bytes | command |",
            "|---|---|---|---|",
            *rows,
            "",
            "They stop when this session ends or myrm exits. `/jobs stop HANDLE` stops one now.",
        ]
    )
    screen.app.push_screen(TextScreen("Background commands", body, id="jobs-screen"))


def _ended(info: Any) -> str:
    if info.stopped:
        return f"stopped ({info.stopped})"
    return f"exited {info.exit_code}"


def show_notes(screen: ChatParts) -> None:
    notes = session_notes(screen.chat.history())
    body = "\n".join(f"- {one_line(n, 400)}" for n in notes) if notes else "No session notes yet."
    screen.app.push_screen(TextScreen("Session notes", body, id="notes-screen"))


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
