"""task: hand one sub-problem to a child agent and get back a distilled result.

Why a tool: research across a codebase or running and triaging a test suite produces pages of
output the parent only needs the conclusions of. The child does the work in its own session and
window; the parent's prompt gets a capped result with a structured handover (agent/subagent/child.py).
The tool itself never asks for approval: each call the child makes is checked against the same
policy as the parent's, and a call that must ask is asked of the person as part of this call.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult

# The tool whose live output carries the child's progress lines (agent/subagent/progress.py);
# the TUI picks its nested block by this name.
TASK_TOOL = "task"

# Kept short on purpose: the schema is sent with every request of every session.
_DESCRIPTION = (
    "Delegate a self-contained sub-task (e.g. research the codebase, run and triage tests) to a "
    "subagent with your tools. It returns findings and a handover (completed, pending, risks, "
    "files), not raw logs. Give it everything it needs in `prompt`."
)


class Task(Tool):
    name = TASK_TOOL
    description = _DESCRIPTION
    kind = "read"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task, with all context needed."},
            "max_steps": {"type": "integer", "description": "Lower the model-call limit."},
            "max_seconds": {"type": "integer", "description": "Lower the time limit."},
        },
        "required": ["prompt"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"subagent: {str(args.get('prompt', ''))[:100]}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = ctx.subagents
        if runner is None or not runner.enabled:
            raise ToolError("no subagent can start here (a subagent cannot delegate); do the work yourself")
        prompt = str(args["prompt"]).strip()
        if not prompt:
            raise ToolError("prompt is empty; say what the subagent should do")
        bounds = runner.bounds.lowered(steps=args.get("max_steps"), seconds=args.get("max_seconds"))
        delegation = await runner.delegate(prompt, bounds, ctx.emit, ctx.ask)
        return ToolResult(delegation.distilled.content, delegation.tool_status, delegation.distilled.vault_handle)
