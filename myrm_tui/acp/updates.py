"""A turn's events as ACP session updates: message and thought chunks, tool calls and their
progress, notes.

Why tool arguments and output are scrubbed and the answer is not: the answer is what the user
asked for (like `myrm run`'s stdout), while arguments and results quote files and command output
that may hold a credential, and an editor keeps them in its panels and logs (sinks.RUN_ECHO, the
same policy as `myrm run`'s tool lines).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
)

from myrm_tui.agent.events import Notice, ToolFinished, ToolStarted, TurnError
from myrm_tui.llm.events import ReasoningDelta, TextDelta
from myrm_tui.sinks import RUN_ECHO, scrub, scrub_obj

if TYPE_CHECKING:
    from myrm_tui.agent.events import AgentEvent

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress

# ACP's tool kinds pick the icon and grouping a client shows; a tool not named here is "other".
TOOL_KINDS: dict[str, ToolKind] = {
    "file_read": "read",
    "file_edit": "edit",
    "file_write": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "bash_kill": "execute",
    "grep": "search",
    "glob": "search",
    "ctx_search": "search",
    "ctx_inspect": "read",
    "ctx_expand": "read",
    "web_fetch": "fetch",
    "task": "think",
    "session_note": "think",
}

# myrm's result status (tool_runner.py) as ACP's: only "ok" completed, every other ending failed.
FINISHED_STATUS: dict[bool, ToolCallStatus] = {True: "completed", False: "failed"}


def tool_kind(name: str) -> ToolKind:
    return TOOL_KINDS.get(name, "other")


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """The tool and its main argument, one line, scrubbed (a command may carry a token)."""
    main = next((str(arguments[k]) for k in ("path", "command", "pattern", "query", "url") if k in arguments), "")
    line = f"{name} {main}".strip().splitlines()[0] if main else name
    return scrub(RUN_ECHO, line)


def tool_locations(arguments: dict[str, Any], workspace: Path) -> list[ToolCallLocation] | None:
    """The file a file tool names, as the absolute path a client opens (relative to the workspace,
    as the tools read it)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    return [ToolCallLocation(path=str(workspace / path))]


def updates_for(event: AgentEvent, workspace: Path) -> list[Update]:
    """What the client is told about one event; [] for the ones it has no place for (usage, step
    starts, stored-row confirmations). Approvals are not here: they are a request (permission.py)."""
    if isinstance(event, TextDelta):
        return [update_agent_message_text(event.text)] if event.text else []
    if isinstance(event, ReasoningDelta):
        return [update_agent_thought_text(event.text)] if event.text else []
    if isinstance(event, ToolStarted):
        return [
            start_tool_call(
                event.call_id,
                tool_title(event.name, event.arguments),
                kind=tool_kind(event.name),
                status="pending",
                locations=tool_locations(event.arguments, workspace),
                raw_input=scrub_obj(RUN_ECHO, event.arguments),
            )
        ]
    if isinstance(event, ToolFinished):
        return [
            update_tool_call(
                event.call_id,
                status=FINISHED_STATUS[event.ok],
                content=[tool_content(text_block(scrub(RUN_ECHO, event.content)))],
            )
        ]
    if isinstance(event, Notice):
        return [update_agent_message_text(f"\n\n_{event.level}: {scrub(RUN_ECHO, event.text)}_\n\n")]
    if isinstance(event, TurnError):
        said = f"{event.message} {event.hint}".strip()
        return [update_agent_message_text(f"\n\n**error:** {scrub(RUN_ECHO, said)}\n")]
    return []
