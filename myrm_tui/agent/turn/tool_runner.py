"""The tool phase of a turn: validate a call, decide whether it may run (rules, the approval
setting, a person), run it with live output and file checkpoints, and store its result.

Every failure becomes an error result the model can read: a tool bug, a bad argument or a
refusal never ends the turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.events import (
    AgentEvent,
    ApprovalRequest,
    Notice,
    ToolFinished,
    ToolOutputChunk,
    ToolStarted,
    as_answer,
)
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.permissions.approvals import (
    Decision,
    Verdict,
    decide,
    denial_result,
    headless_refusal,
    rule_refusal,
    sandbox_note,
)
from myrm_tui.agent.permissions.rules import RulesStoreError, call_for, effective_rules, remember_allow, suggest_rules
from myrm_tui.agent.permissions.ruleset import RuleSet
from myrm_tui.agent.sandbox import headless_network_refusal, sandbox_status
from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_arguments
from myrm_tui.agent.tools.registry import ToolRegistry
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.agent.turn.record import TurnRecord
from myrm_tui.agent.turn.state import TurnState
from myrm_tui.agent.undo.checkpoints import Checkpointer
from myrm_tui.llm.events import ToolCallEvent
from myrm_tui.settings.sections.permission_syntax import RuleError
from myrm_tui.settings.settings import Settings

if TYPE_CHECKING:
    from myrm_tui.agent.turn.arrival_summary import ArrivalSummary

# (tool name, arguments, the tool's result text, its vault handle) → the model-summary result or None.
ArrivalHook = Callable[[str, dict[str, Any], str, "str | None"], Awaitable["ArrivalSummary | None"]]


class ToolRunner:
    def __init__(
        self,
        *,
        settings: Settings,
        workspace: Path,
        ctx: ToolContext,
        checkpoints: Checkpointer,
        record: TurnRecord,
        headless: bool,
        clock: Callable[[], float],
        hooks: HookRunner | None = None,
        arrival: ArrivalHook | None = None,
    ):
        self.settings = settings
        self.workspace = workspace
        self.ctx = ctx
        self.checkpoints = checkpoints  # pre-images for /undo
        self.record = record
        # Headless (`myrm run`): nobody can answer an approval, so a call that would ask is
        # refused here with the real reason instead of being sent to a consumer that can only say no.
        self.headless = headless
        self.clock = clock  # monotonic; the agent's, read at each call so a test can swap it
        self._rules_problem_noticed = False
        self.hooks = hooks  # post_tool hooks run after each stored result (agent/hooks.py)
        # The opt-in model summary of a big unstructured output (agent/turn/arrival_summary.py), or None.
        self.arrival = arrival

    async def phase(
        self, call: ToolCallEvent, state: TurnState, tools: ToolRegistry
    ) -> AsyncGenerator[AgentEvent, None]:
        started = self.clock()
        yield ToolStarted(call.id, call.name, dict(call.arguments))
        state.result, state.approval_wait_s, state.changed_files = None, 0.0, ()
        async with aclosing(self._execute(call, state, tools)) as events:
            async for event in events:
                yield event
        result = state.result or ToolResult("error: the tool produced no result", "error")
        content, handle = result.content, result.vault_handle
        # Whatever tool put the output in the vault (bash spills itself), the text is indexed
        # with the result that names it (None: read back from the vault).
        artifacts: dict[str, str | None] = {handle: None} if handle else {}
        if self.arrival is not None and result.status == "ok":  # the opt-in model summary
            summarized = await self.arrival(call.name, dict(call.arguments), content, handle)
            if summarized is not None:
                content, handle = summarized.content, summarized.handle
                artifacts = {handle: summarized.full}
        if handle is None and len(content) > self.settings.tool_output_cap:
            full = content
            content, handle = spill_if_large(
                full,
                self.settings.tool_output_cap,
                self.ctx.vault,
                tool=call.name,
                arguments=call.arguments,
                filters=self.settings.output_filters,
            )
            if handle:
                artifacts[handle] = full
        record = self.record.tool_result(
            call.id, call.name, content, result.status, artifacts, changed_files=state.changed_files
        )
        state.open_calls = [c for c in state.open_calls if c[0] != call.id]
        # The duration is the tool's own: the time a person took to answer the approval is not it.
        ran = max(0.0, self.clock() - started - state.approval_wait_s)
        yield ToolFinished(
            call.id, call.name, result.status == "ok", content, round(ran, 3), record.id, handle, result.status
        )
        if self.hooks is not None:
            for notice in await self.hooks.post_tool(call.name, dict(call.arguments), result.status, call.id):
                yield notice

    async def _execute(
        self, call: ToolCallEvent, state: TurnState, tools: ToolRegistry
    ) -> AsyncGenerator[AgentEvent, None]:
        """Validate, ask, run. Sets state.result; every failure becomes an error result."""
        if call.parse_error:
            state.result = ToolResult(
                f"error: the arguments were not a valid JSON object ({call.parse_error}); "
                f"call {call.name} again with a JSON object.",
                "error",
            )
            return
        tool = tools.get(call.name)
        if tool is None:
            available = ", ".join(tools.names) or "none"
            state.result = ToolResult(f"error: there is no tool named {call.name!r}; available: {available}.", "error")
            return
        args = dict(call.arguments)
        try:
            validate_arguments(tool, args)
            command = str(args.get("command", "")) if tool.kind == "exec" else None
            rule_call = call_for(tool.name, args, self.workspace)
            rules = self._permission_rules() if tool.kind != "read" else None
            if rules is not None and rules.problems and not self._rules_problem_noticed:
                self._rules_problem_noticed = True
                yield Notice("; ".join(rules.problems), level="warning")
            decision = decide(self.settings.approval, tool.kind, command, rules=rules, call=rule_call)
            forced = tool.required_approval(args, self.ctx)  # e.g. bash asking for the network
            if forced and decision.verdict is Verdict.ALLOW:
                decision = Decision(Verdict.ASK, reason=forced, forced=True)
            network_granted = False
            if decision.verdict is not Verdict.ALLOW:
                preview = await tool.approval_preview(args, self.ctx)
                if decision.verdict is Verdict.REFUSE and decision.rules:
                    refusal = rule_refusal(preview.summary, decision)
                    yield Notice(refusal.for_user, level="warning")
                    state.result = ToolResult(refusal.for_model, "denied")
                    return
                if decision.verdict is Verdict.REFUSE:
                    state.result = ToolResult(
                        f"refused: {preview.summary} ({decision.reason}; the user must change the "
                        "`approval` setting to allow it). Do not retry; tell the user what you wanted to do.",
                        "denied",
                    )
                    return
                if self.headless:
                    refusal = (
                        headless_network_refusal(preview.summary)
                        if preview.network_requested
                        else headless_refusal(decision, tool.kind, preview.summary, self.settings.approval, command)
                    )
                    yield Notice(refusal.for_user, level="warning")
                    state.result = ToolResult(refusal.for_model, "denied")
                    return
                # "Always allow" is offered only when the stored rule would really let this call
                # run next time: never for a destructive command or a network request.
                offered = () if (decision.destructive or preview.network_requested) else suggest_rules(rule_call)
                request = ApprovalRequest(
                    call.id,
                    call.name,
                    args,
                    preview.summary,
                    preview.diff,
                    decision.destructive,
                    asyncio.get_running_loop().create_future(),
                    network_requested=preview.network_requested,
                    cwd=str(self.workspace),
                    sandbox=self._sandbox_note(tool, preview),
                    offered_rules=offered,
                    why=decision.reason,
                )
                asked = self.clock()
                yield request
                assert request.decision is not None
                try:
                    answer = as_answer(await request.decision)
                finally:
                    state.approval_wait_s += self.clock() - asked
                if not answer.allow:
                    state.result = ToolResult(denial_result(preview.summary, answer.reason), "denied")
                    return
                remember = tuple(r for r in answer.remember if r in offered)
                if remember:
                    yield self._remember_rules(remember)
                network_granted = preview.network_requested
        except ToolError as exc:
            state.result = ToolResult(f"error: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - e.g. an unreadable file while previewing
            state.result = ToolResult(f"error: {call.name} failed: {type(exc).__name__}: {exc}", "error")
            return
        async with aclosing(self._run_tool(tool, call, args, state, network_granted)) as events:
            async for event in events:
                yield event

    def _permission_rules(self) -> RuleSet:
        """Read fresh for each call that may ask: "Always allow" in another myrm, or the user
        editing the store, applies at once."""
        from myrm_tui.settings.paths import user_config_dir

        return effective_rules(getattr(self.settings, "permissions", None), self.workspace, user_config_dir())

    def _remember_rules(self, rules: tuple[str, ...]) -> Notice:
        from myrm_tui.settings.paths import user_config_dir

        listed = ", ".join(rules)
        try:
            path = remember_allow(user_config_dir(), self.workspace, rules)
        except (RulesStoreError, RuleError, OSError) as exc:
            return Notice(f"allowed once; could not store {listed}: {exc}", level="warning")
        return Notice(f"always allowed in this workspace: {listed} (stored in {path})")

    def _sandbox_note(self, tool: Tool, preview: Any) -> str:
        if tool.kind != "exec":
            return ""
        runs_elsewhere = getattr(tool, "runs_outside_sandbox", None)  # MCP tools: in their server's process
        if runs_elsewhere:
            return str(runs_elsewhere)
        status = sandbox_status(self.settings.sandbox)
        return sandbox_note(status.mode, status.active, bool(self.settings.sandbox_network), preview.network_requested)

    async def _run_tool(
        self, tool: Tool, call: ToolCallEvent, args: dict[str, Any], state: TurnState, network_granted: bool = False
    ) -> AsyncGenerator[AgentEvent, None]:
        # Live output (str), and approval requests of an agent the tool runs (the task tool's child).
        queue: asyncio.Queue[str | ApprovalRequest] = asyncio.Queue()
        ctx = dataclasses.replace(
            self.ctx, emit=queue.put_nowait, ask=queue.put_nowait, network_granted=network_granted
        )
        state.tool_output = []
        checkpoint, problem = await asyncio.to_thread(self.checkpoints.before, tool, args, ctx)
        if problem:
            yield Notice(problem, level="warning")
        task = asyncio.create_task(tool.run(args, ctx), name=f"tool:{call.name}:{call.id}")
        state.tool_task = task
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                try:
                    await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not getter.done():
                        getter.cancel()
                items = [getter.result()] if getter.done() and not getter.cancelled() else []
                while not queue.empty():
                    items.append(queue.get_nowait())
                pieces = [item for item in items if isinstance(item, str)]
                if pieces:
                    text = "".join(pieces)
                    state.tool_output.append(text)
                    yield ToolOutputChunk(call.id, text)
                for item in items:
                    if isinstance(item, ApprovalRequest):  # asked as this call: its block shows the prompt
                        yield dataclasses.replace(item, call_id=call.id)
                if task.done():
                    break
        finally:
            if task.done():
                state.tool_task = None
        turn = state.user_record.id if state.user_record is not None else 0
        problem = await asyncio.to_thread(self.checkpoints.after, checkpoint, turn)
        if problem:
            yield Notice(problem, level="warning")
        if checkpoint is not None:
            state.changed_files = tuple(checkpoint.changed)
        try:
            state.result = task.result()
        except ToolError as exc:
            state.result = ToolResult(f"error: {exc}", "error")
        except Exception as exc:  # noqa: BLE001 - a tool bug must not end the turn
            state.result = ToolResult(f"error: {call.name} failed: {type(exc).__name__}: {exc}", "error")
