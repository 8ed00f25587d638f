"""The one table of what the chat can be told to do: slash command, key, palette entry, handler.

Why one table: the slash popup, the command palette (Ctrl+P), F1 and the dispatcher each kept their
own list once, and a command added to one was missing from another. Every row names the handler
(a method of `screens/chat_commands.ChatCommands`, called with the slash command's argument, "" for
none); a test checks every handler exists. Pure data: no Textual, so the parser and tests read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaletteEntry:
    """How a command shows in the command palette."""

    title: str
    help: str
    needs_session: bool = False  # only offered once the session exists (it has something to act on)


@dataclass(frozen=True)
class Command:
    handler: str  # ChatCommands method, called with the argument
    name: str = ""  # the slash command, with the slash ("": key and palette only)
    args: str = ""  # argument hint shown in the popup ("" for none)
    help: str = ""  # what it does (popup, F1)
    binding_id: str = ""  # the key binding that runs it ("" for none; the key itself is in ChatScreen.BINDINGS)
    palette: PaletteEntry | None = None


# Slash commands in the order they were introduced (the parser and custom-command clash check read
# them; the popup and F1 sort by name), then the key-only commands.
COMMANDS: tuple[Command, ...] = (
    Command(
        "compact",
        "/compact",
        "[focus]",
        "Compact the context now (optional focus for the summary)",
        "chat.compact",
        PaletteEntry("Compact now", "Compact the context of this session now", needs_session=True),
    ),
    Command(
        "fork",
        "/fork",
        "",
        "Fork this session into a new one",
        "chat.fork",
        PaletteEntry("Fork session", "Continue in a new session sharing this history", needs_session=True),
    ),
    Command("undo", "/undo", "", "Restore the files the last turn changed (preview first)"),
    Command("rewind", "/rewind", "", "Go back to before an earlier message: files, conversation (a fork) or both"),
    Command(
        "retry",
        "/retry",
        "",
        "Regenerate the last answer in a fork (this session stays as it is)",
        "chat.retry",
        PaletteEntry(
            "Retry the last answer", "Ask the last message again in a fork; this session stays as it is", True
        ),
    ),
    Command(
        "model",
        "/model",
        "[name] [--default]",
        "Switch the model for this session; --default also saves it (no name: the picker)",
        "chat.model",
        PaletteEntry("Switch model", "Now: {model}"),
    ),
    Command(
        "sessions",
        "/sessions",
        "",
        "Browse, resume, rename, delete and export sessions",
        "chat.sessions",
        PaletteEntry("Sessions", "Resume, rename, delete, export"),
    ),
    Command(
        "settings",
        "/settings",
        "",
        "Open the settings",
        "chat.settings",
        PaletteEntry("Settings", "Edit and save the settings"),
    ),
    Command("image", "/image", "PATH", "Attach an image to your next message (or write @shot.png in it)"),
    Command(
        "export",
        "/export",
        "[path]",
        "Export this session to Markdown",
        palette=PaletteEntry(
            "Export session to Markdown",
            "Write this session to a Markdown file in myrm's exports folder (/export PATH: elsewhere)",
            True,
        ),
    ),
    Command("copy", "/copy", "", "Copy the last reply to the clipboard"),
    Command("notes", "/notes", "", "Show the session notes"),
    Command("mcp", "/mcp", "", "MCP servers: state, tools, last error; restart"),
    Command("jobs", "/jobs", "[stop HANDLE]", "Background commands the model started: list them, or stop one"),
    Command(
        "theme",
        "/theme",
        "[name] [--default]",
        "Switch the theme for this session; --default also saves it (no name: pick one)",
    ),
    Command(
        "new_session",
        "/clear",
        "",
        "Start a new session (the current one stays in /sessions)",
        palette=PaletteEntry("New session", "Start fresh; this session stays in Sessions"),
    ),
    Command("help", "/help", "", "Keys and commands", "chat.help"),
    Command(
        "toggle_panel",
        binding_id="chat.panel",
        palette=PaletteEntry("{panel} compaction panel", "Compactions, cache and breakers"),
    ),
    Command(
        "health",
        binding_id="chat.health",
        palette=PaletteEntry("Context health", "Every context metric of this session"),
    ),
)
BY_HANDLER = {command.handler: command for command in COMMANDS}
