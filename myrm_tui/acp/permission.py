"""An approval the TUI would show, asked of the ACP client as `session/request_permission`.

The agent decided that the call asks (the same approval policy, permission rules and sandbox as
the TUI: tool_runner.py); this module only carries the question and the answer. A denial is a
denial: a rejected option, a cancelled request (the client's answer to `session/cancel`), an
option id we never offered, or a failed request all answer no. "Always allow" is offered only
when the agent offered rules to remember, and only those rules are stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallUpdate,
)

from myrm_tui.acp.edit_diff import edit_texts
from myrm_tui.acp.updates import tool_kind, tool_locations
from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest
from myrm_tui.sinks import RUN_ECHO, scrub, scrub_obj

if TYPE_CHECKING:
    from acp.interfaces import Client

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"


def permission_options(request: ApprovalRequest) -> list[PermissionOption]:
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if request.offered_rules:
        rules = ", ".join(request.offered_rules)
        options.append(
            PermissionOption(
                option_id=ALLOW_ALWAYS, name=f"Always allow in this workspace ({rules})", kind="allow_always"
            )
        )
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Deny", kind="reject_once"))
    return options


def diff_content(request: ApprovalRequest, workspace: Path) -> list[ToolCallContent] | None:
    """The edit's diff as ACP diff content, or None for a call without one (a command)."""
    path = request.arguments.get("path")
    if not request.diff or not isinstance(path, str):
        return None
    texts = edit_texts(request.diff)
    return [
        FileEditToolCallContent(
            type="diff", path=str(workspace / path), old_text=texts.old_text, new_text=texts.new_text
        )
    ]


def asked_call(request: ApprovalRequest, workspace: Path) -> ToolCallUpdate:
    """The tool call as the permission prompt shows it: the summary line, why it asks, the diff."""
    why = f" ({request.why})" if request.why else ""
    return ToolCallUpdate(
        tool_call_id=request.call_id,
        title=scrub(RUN_ECHO, f"{request.summary}{why}"),
        kind=tool_kind(request.tool),
        status="pending",
        content=diff_content(request, workspace),
        locations=tool_locations(request.arguments, workspace),
        raw_input=scrub_obj(RUN_ECHO, request.arguments),
    )


def granted_update(request: ApprovalRequest, workspace: Path) -> ToolCallProgress:
    """After a yes: the call runs, with its diff kept in the tool call's content."""
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=request.call_id,
        status="in_progress",
        content=diff_content(request, workspace),
    )


async def ask_client(client: Client, session_id: str, request: ApprovalRequest, workspace: Path) -> ApprovalAnswer:
    """The client's answer as the agent's ApprovalAnswer (no on anything but a chosen allow)."""
    response = await client.request_permission(
        session_id=session_id, tool_call=asked_call(request, workspace), options=permission_options(request)
    )
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return ApprovalAnswer(False, reason="the request was cancelled")
    if outcome.option_id == ALLOW_ONCE:
        return ApprovalAnswer(True)
    if outcome.option_id == ALLOW_ALWAYS and request.offered_rules:
        return ApprovalAnswer(True, remember=request.offered_rules)
    return ApprovalAnswer(False)
