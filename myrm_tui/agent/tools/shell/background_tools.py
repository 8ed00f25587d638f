"""bash_output and bash_kill: the model's view of its background commands (tools/bash_background.py).

Why their own tools rather than more bash arguments: reading and stopping never run a command, so
they never ask for approval, and a model can tell at a glance which calls start something.
Both answer with the output printed since the last read; what went to the vault on the way is
named by handle (it is already indexed for ctx_search), and a new part above `tool_output_cap`
is spilled like foreground output, so nothing a background command printed is lost.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.shell.background import BackgroundInfo, BackgroundJobs, UnreadOutput
from myrm_tui.agent.tools.spill import spill_if_large

# bash_output may wait this long at most for a command to end (a model asking for an hour would
# freeze the turn; it can call again).
MAX_WAIT_S = 60.0
# Vault pieces named one by one in a result; more are summarised (each is searchable anyway).
_PIECES_LISTED = 4

_HANDLE = {"type": "string", "description": "The handle bash returned, e.g. bg-1."}


def _jobs(ctx: ToolContext) -> BackgroundJobs:
    if ctx.background is None:
        raise ToolError("background commands are not available here.")
    jobs: BackgroundJobs = ctx.background
    return jobs


def _state(info: BackgroundInfo) -> str:
    if info.running:
        return f"[{info.handle} is still running; {info.bytes:,} bytes of output so far]"
    if info.stopped == "timeout":
        return f"[{info.handle} timed out: stopped]"
    if info.stopped:
        return f"[{info.handle} was stopped ({info.stopped}); exit code {info.exit_code}]"
    return f"[{info.handle} exited with code {info.exit_code}]"


def _pieces_note(unread: UnreadOutput) -> list[str]:
    if not unread.pieces:
        return []
    total = sum(chars for _, chars in unread.pieces)
    named = [handle for handle, _ in unread.pieces]
    if len(named) > _PIECES_LISTED:
        named = [*named[: _PIECES_LISTED - 1], f"… {len(named) - _PIECES_LISTED + 1} more …", named[-1]]
    return [
        f"[{total:,} chars printed since the last read went to the vault in order: {', '.join(named)} "
        '(searchable with ctx_search; read with file_read("vault://…", start_line=…, end_line=…)); '
        "the newest output follows]"
    ]


def report(jobs: BackgroundJobs, handle: str, ctx: ToolContext) -> ToolResult:
    """The unread output of `handle` with its state: head and tail plus a vault handle when big."""
    job = jobs.get(handle)
    info = job.info()
    unread = job.take_unread()
    inline, spilled = spill_if_large(
        unread.text,
        ctx.settings.tool_output_cap,
        ctx.vault,
        tool="bash",
        arguments={"command": info.command},
        filters=ctx.settings.output_filters,
    )
    body = inline.rstrip("\n") if inline.strip() else "(no new output)"
    notes: list[str] = []
    if unread.binary:
        notes.append("[output held binary data: NUL bytes dropped, invalid UTF-8 shown as \ufffd]")
    if unread.dropped:
        notes.append(f"[{unread.dropped:,} chars not kept: above the limit for one background command]")
    if not info.running:
        notes += job.launch.notes(unread.text, info.exit_code)
    status = "ok" if info.running or info.exit_code == 0 or info.stopped == "bash_kill" else "error"
    return ToolResult(
        "\n".join([*_pieces_note(unread), body, *notes, _state(info)]), status=status, vault_handle=spilled
    )


class BashOutput(Tool):
    name = "bash_output"
    kind = "read"
    description = (
        "Read what a background command (bash with background: true) printed since the last read, "
        "and whether it still runs or its exit code. Big output is saved to the vault as for bash."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "handle": _HANDLE,
            "wait": {
                "type": "number",
                "description": f"Seconds to wait for it to end first (at most {MAX_WAIT_S:g}); returns when it does.",
            },
        },
        "required": ["handle"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"read the output of background command {args.get('handle')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        jobs = _jobs(ctx)
        handle = str(args["handle"])
        wait = float(args.get("wait") or 0)
        if wait < 0:
            raise ToolError("wait must be zero or a positive number of seconds.")
        await jobs.wait(handle, min(wait, MAX_WAIT_S))
        return report(jobs, handle, ctx)


class BashKill(Tool):
    name = "bash_kill"
    kind = "read"  # it only stops what this session started; nothing to approve
    description = (
        "Stop a background command (SIGTERM, then SIGKILL) with everything it started; returns the "
        "output it printed since the last read."
    )
    parameters: dict[str, Any] = {"type": "object", "properties": {"handle": _HANDLE}, "required": ["handle"]}

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"stop background command {args.get('handle')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        jobs = _jobs(ctx)
        handle = str(args["handle"])
        await jobs.kill(handle)
        return report(jobs, handle, ctx)
