"""The turn loop: store, assemble, stream, store, run tools, repeat.

Every fact is committed to the store before the event that reports it is yielded, so a crash or
an interrupt at any point leaves a history the next turn can resume from. Tools run one after
another in the order the model asked for them; each result is stored as soon as it exists.

Interrupt = cancel the task iterating `turn()`. The loop then answers every call still open with
a synthetic "interrupted by user" result (keeping any output already seen), records an
INTERRUPTED event, kills the running process groups, and re-raises the cancellation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.agent.approvals import Verdict, decide
from myrm_tui.agent.build import AgentBuild, build_agent
from myrm_tui.agent.events import (
    AgentEvent,
    ApprovalRequest,
    AssistantMessageStored,
    Notice,
    StepStarted,
    ToolFinished,
    ToolOutputChunk,
    ToolStarted,
    TurnError,
    TurnFinished,
    UserMessageStored,
)
from myrm_tui.agent.limits import KILL_GRACE_S
from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_arguments
from myrm_tui.agent.tools.processes import kill_group_now
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.context.call_ids import unique_call_ids
from myrm_tui.context.engine import TurnInput
from myrm_tui.context.engines import engine_for
from myrm_tui.context.prompt import ContextExhausted
from myrm_tui.context.tokens import count_message_tokens
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.errors import ContextWindowExceededError, LLMError
from myrm_tui.llm.events import (
    FinishEvent,
    ReasoningDelta,
    RetryEvent,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds

StreamFn = Callable[..., AsyncIterator[Any]]

INTERRUPTED_RESULT = "interrupted by user: the call was stopped before it finished; run it again if still needed"
# Appended to assistant text that was cut off, so the model (and a reader) knows it is partial.
CUT_OFF_NOTE = "\n\n[answer cut off: {why}]"


def _default_stream() -> StreamFn:
    from myrm_tui.llm.stream import stream

    return stream


@asynccontextmanager
async def _closing(iterator: AsyncIterator[Any]):
    """Like contextlib.aclosing, for any async iterator (an injected stream_fn may return one
    without aclose)."""
    try:
        yield iterator
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


@dataclass
class _TurnState:
    """What an interrupt needs to know to leave the store consistent."""

    steps: int = 0
    partial_text: str = ""  # streamed but not yet stored as an assistant message
    open_calls: list[tuple[str, str]] = field(default_factory=list)  # (id, name) without result
    tool_task: asyncio.Task | None = None
    tool_output: list[str] = field(default_factory=list)  # live output of the running call
    # filled by the stream phase
    calls: list[ToolCallEvent] = field(default_factory=list)
    finish: FinishEvent | None = None
    # filled by the tool phase
    result: ToolResult | None = None


class Agent:
    def __init__(self, *, store: Any, session_id: str, settings: Settings, workspace: Path,
                 stream_fn: StreamFn | None = None, build: AgentBuild | None = None,
                 extra_tools: Sequence[Tool] = ()):
        self.store = store
        self.session_id = session_id
        self.workspace = Path(workspace).resolve()
        self.build = build or build_agent(settings, self.workspace, extra_tools)
        self.settings = self.build.settings
        self._stream_fn = stream_fn
        self._process_groups: set[int] = set()
        self._ctx = ToolContext(workspace=self.workspace, settings=self.settings,
                                vault=getattr(store, "vault", None), process_groups=self._process_groups,
                                store=store, session_id=session_id)
        self._plain_chat_noticed = False
        self._busy = False
        self.engine = engine_for(store, session_id, workspace=self.workspace)
        self._ctx.replacements = self.engine.replacements

    # -- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        return self.build.fingerprint

    @property
    def model_name(self) -> str:
        return self.settings.model

    @property
    def system_prompt(self) -> str:
        return self.build.system_prompt.text

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.build.tools.schemas()

    def call_settings(self) -> CallSettings:
        model = self.build.model
        max_out = self.settings.max_output_tokens
        if model.known and model.max_output_tokens:
            max_out = min(max_out, model.max_output_tokens)
        return CallSettings(
            max_output_tokens=max_out,
            api_base=self.settings.api_base or model.api_base or None,
            timeout_s=float(self.settings.llm_timeout),
            max_attempts=int(self.settings.llm_max_attempts),
            prompt_cache_key=self.session_id,
        )

    # -- store helpers --------------------------------------------------------------------
    def _append(self, message: dict[str, Any]):
        return self.store.append_message(self.session_id, message,
                                         count_message_tokens(message, self.model_name))

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.store.append_event(self.session_id, kind, data)

    def _store_tool_result(self, call_id: str, name: str, content: str):
        return self._append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content})

    # -- the turn -------------------------------------------------------------------------
    async def turn(self, text: str) -> AsyncIterator[AgentEvent]:
        if self._busy:
            raise RuntimeError("a turn is already running on this agent; wait for it or interrupt it")
        self._busy = True
        state = _TurnState()
        try:
            repaired = self.store.repair_dangling_tool_calls(self.session_id)
            if repaired:
                yield Notice(f"answered {len(repaired)} unfinished tool call(s) from an earlier turn "
                             "as interrupted", level="warning")
            record = self._append({"role": "user", "content": text})
            yield UserMessageStored(record.id, text)
            if not self.build.model.supports_tools and not self._plain_chat_noticed:
                self._plain_chat_noticed = True
                note = f"{self.model_name} has no tool calling; running as plain chat"
                self._event(event_kinds.NOTE, {"text": note})
                yield Notice(note, level="warning")
            async with aclosing(self._loop(state)) as events:
                async for event in events:
                    yield event
        except (asyncio.CancelledError, GeneratorExit):
            await self._on_interrupt(state)
            raise
        finally:
            self._busy = False

    async def _loop(self, state: _TurnState) -> AsyncIterator[AgentEvent]:
        max_steps = max(1, int(self.settings.max_steps))
        while True:
            state.steps += 1
            try:
                prompt = self.engine.assemble(self.turn_input())
                self._event(event_kinds.ASSEMBLE, dict(prompt.report))
                yield StepStarted(state.steps, self.model_name, prompt.tokens)
                try:
                    async with aclosing(self._stream_once(prompt, state)) as events:
                        async for event in events:
                            yield event
                except ContextWindowExceededError:
                    # The provider counts differently than we do: compact hard once and retry.
                    if state.partial_text:
                        raise
                    prompt = self.engine.assemble(self.turn_input(force_tier="emergency",
                                                                  trigger="context_exceeded"))
                    self._event(event_kinds.ASSEMBLE, dict(prompt.report))
                    yield Notice("the provider said the prompt was too long; compacted and retrying once",
                                 level="warning")
                    async with aclosing(self._stream_once(prompt, state)) as events:
                        async for event in events:
                            yield event
            except ContextExhausted as exc:
                yield self._turn_error("ContextExhausted", exc.user_text(), "", state)
                yield TurnFinished("error", state.steps)
                return
            except LLMError as exc:
                self._keep_partial_text(state, "the provider call failed")
                yield self._turn_error(type(exc).__name__, exc.message, exc.hint, state)
                yield TurnFinished("error", state.steps)
                return
            except Exception as exc:  # noqa: BLE001 - a bug must end the turn readably, not kill the app
                self._keep_partial_text(state, "an internal error")
                yield self._turn_error(type(exc).__name__, f"Internal error: {exc}",
                                       "This is a bug in myrm; your message is kept. Please report it.", state)
                yield TurnFinished("error", state.steps)
                return

            message, renamed = unique_call_ids(self._assistant_message(state), set(self.engine.call_ids()))
            record = self._append(message)
            state.partial_text = ""
            calls = self._calls_of(state, message, renamed)
            state.open_calls = [(c.id, c.name) for c in calls]
            yield AssistantMessageStored(record.id, message.get("content") or "",
                                         tuple(message.get("tool_calls") or ()))
            if not calls:
                reason = "length" if state.finish and state.finish.reason == "length" else "stop"
                yield TurnFinished(reason, state.steps)
                return

            for call in calls:
                async with aclosing(self._tool_phase(call, state)) as events:
                    async for event in events:
                        yield event

            if state.steps >= max_steps:
                yield Notice(f"stopped after {max_steps} model calls (max_steps); send a message to "
                             "let the agent continue", level="warning")
                yield TurnFinished("tool_limit", state.steps)
                return

    # -- context --------------------------------------------------------------------------
    def turn_input(self, force_tier: str | None = None, trigger: str = "auto") -> TurnInput:
        return TurnInput(self.system_prompt, self.tool_schemas(), self.build.model,
                         self.call_settings().max_output_tokens, force_tier=force_tier, trigger=trigger)

    def compact_now(self, focus: str | None = None) -> dict[str, Any] | None:
        """The user's compact command: compact everything outside the fresh tail now."""
        if self._busy:
            raise RuntimeError("a turn is running; compact after it ends or interrupt it")
        return self.engine.compact(self.turn_input(trigger="manual"), focus=focus)

    def summarizer(self) -> tuple[str | None, int, str]:
        """(model, window, why): the lite model if configured and able, else the main model;
        None for a tiny main model without a usable lite one (extractive summaries only)."""
        from myrm_tui.agent.build import resolve_model_info
        from myrm_tui.context.summary.client import pick_summarizer_model

        lite = self.settings.lite_model or None
        lite_info = resolve_model_info(self.settings.with_values(model=lite, api_base="")) if lite else None
        model, why = pick_summarizer_model(self.model_name, lite, self.build.model, lite_info)
        window = (lite_info.context_window if model == lite and lite_info else self.build.model.context_window)
        return model, window, why

    async def maintain(self) -> dict[str, Any] | None:
        """Idle-time compaction work after a turn: prepare the next summary with a model (in the
        background; the prompt only changes at the next compaction event)."""
        if self._busy:
            return None
        model, window, _ = self.summarizer()
        if model is None:
            return None
        settings = CallSettings(max_output_tokens=2048, temperature=0.0,
                                api_base=(self.settings.api_base or None) if model == self.model_name else None,
                                timeout_s=float(self.settings.llm_timeout), max_attempts=2)
        return await self.engine.maintain(self.turn_input(), model=model, window=window, settings=settings,
                                          breaker=self.engine.summary_breaker)

    def fork_with_summary(self, keep_user_turns: int = 2) -> Any:
        """A new session that starts small: it shares the human anchor with this one, then a
        summary of everything after it, then the last turns copied verbatim."""
        from myrm_tui.agent.fork import fork_with_summary

        if self._busy:
            raise RuntimeError("a turn is running; fork after it ends or interrupt it")
        return fork_with_summary(self.store, self.session_id, model=self.model_name,
                                 keep_user_turns=keep_user_turns)

    async def _stream_once(self, prompt, state: _TurnState) -> AsyncIterator[AgentEvent]:
        state.calls, state.finish = [], None
        async with aclosing(self._stream_phase(prompt, state)) as events:
            async for event in events:
                if isinstance(event, UsageEvent):
                    self.engine.note_provider_call(prompt_tokens=event.prompt_tokens,
                                                   estimated_tokens=prompt.tokens)
                yield event
        self.engine.note_provider_call()

    # -- stream phase ---------------------------------------------------------------------
    async def _stream_phase(self, prompt, state: _TurnState) -> AsyncIterator[AgentEvent]:
        stream_fn = self._stream_fn or _default_stream()
        tools = prompt.tools or None
        stream = stream_fn(self.model_name, prompt.messages, tools, self.call_settings())
        async with _closing(stream) as llm_events:
            async for event in llm_events:
                if isinstance(event, TextDelta):
                    state.partial_text += event.text
                    yield event
                elif isinstance(event, ReasoningDelta):
                    yield event
                elif isinstance(event, ToolCallEvent):
                    state.calls.append(event)
                elif isinstance(event, UsageEvent):
                    self._event(event_kinds.USAGE, {"model": self.model_name, **dataclasses.asdict(event)})
                    yield event
                elif isinstance(event, RetryEvent):
                    yield event
                elif isinstance(event, FinishEvent):
                    state.finish = event

    def _assistant_message(self, state: _TurnState) -> dict[str, Any]:
        if state.finish is not None and state.finish.message:
            return dict(state.finish.message)
        # A provider that ended without a finish event: rebuild the message from what streamed.
        message: dict[str, Any] = {"role": "assistant", "content": state.partial_text or None}
        if state.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
                for c in state.calls
            ]
        return message

    @staticmethod
    def _calls_of(state: _TurnState, message: dict[str, Any],
                  renamed: Sequence[tuple[str, str]] = ()) -> list[ToolCallEvent]:
        """The calls to run, in the stored message's order (the parsed events carry the args),
        under their session-unique ids (`renamed`: (id the model sent, id stored) per call)."""
        by_id: dict[str, list[ToolCallEvent]] = {}
        for c in state.calls:
            by_id.setdefault(c.id, []).append(c)
        sent = [old for old, _ in renamed] if renamed else [raw.get("id", "") for raw in message.get("tool_calls") or ()]
        ordered = []
        for raw, sent_id in zip(message.get("tool_calls") or (), sent):
            call_id = raw.get("id", "")
            if by_id.get(sent_id):
                ordered.append(dataclasses.replace(by_id[sent_id].pop(0), id=call_id))
            else:
                function = raw.get("function", {})
                ordered.append(ToolCallEvent(call_id, function.get("name", ""), {},
                                             function.get("arguments", ""),
                                             parse_error="the call's arguments were not received"))
        return ordered

    def _turn_error(self, error_class: str, message: str, hint: str, state: _TurnState) -> TurnError:
        self._event(event_kinds.ERROR, {"error_class": error_class, "message": message, "hint": hint,
                                        "step": state.steps})
        return TurnError(error_class, message, hint)

    def _keep_partial_text(self, state: _TurnState, why: str) -> None:
        """Text the user already saw is stored, marked as cut off: nothing shown is lost."""
        if state.partial_text.strip():
            self._append({"role": "assistant", "content": state.partial_text + CUT_OFF_NOTE.format(why=why)})
        state.partial_text = ""

    # -- tool phase -----------------------------------------------------------------------
    async def _tool_phase(self, call: ToolCallEvent, state: _TurnState) -> AsyncIterator[AgentEvent]:
        started = time.monotonic()
        yield ToolStarted(call.id, call.name, dict(call.arguments))
        state.result = None
        async with aclosing(self._execute(call, state)) as events:
            async for event in events:
                yield event
        result = state.result or ToolResult("error: the tool produced no result", "error")
        content, handle = result.content, result.vault_handle
        if handle is None and len(content) > self.settings.tool_output_cap:
            content, handle = spill_if_large(content, self.settings.tool_output_cap, self._ctx.vault,
                                             store=self.store, session_id=self.session_id,
                                             tool=call.name, arguments=call.arguments)
        record = self._store_tool_result(call.id, call.name, content)
        state.open_calls = [c for c in state.open_calls if c[0] != call.id]
        yield ToolFinished(call.id, call.name, result.status == "ok", content,
                           round(time.monotonic() - started, 3), record.id, handle, result.status)

    async def _execute(self, call: ToolCallEvent, state: _TurnState) -> AsyncIterator[AgentEvent]:
        """Validate, ask, run. Sets state.result; every failure becomes an error result."""
        if call.parse_error:
            state.result = ToolResult(f"error: the arguments were not a valid JSON object ({call.parse_error}); "
                                      f"call {call.name} again with a JSON object.", "error")
            return
        tool = self.build.tools.get(call.name)
        if tool is None:
            available = ", ".join(self.build.tools.names) or "none"
            state.result = ToolResult(f"error: there is no tool named {call.name!r}; available: {available}.",
                                      "error")
            return
        args = dict(call.arguments)
        try:
            validate_arguments(tool, args)
            command = str(args.get("command", "")) if tool.kind == "exec" else None
            decision = decide(self.settings.approval, tool.kind, command)
            if decision.verdict is not Verdict.ALLOW:
                preview = tool.preview(args, self._ctx)
                if decision.verdict is Verdict.REFUSE:
                    state.result = ToolResult(
                        f"refused: {preview.summary} ({decision.reason}; the user must change the "
                        "`approval` setting to allow it). Do not retry; tell the user what you wanted to do.",
                        "denied")
                    return
                request = ApprovalRequest(call.id, call.name, args, preview.summary, preview.diff,
                                          decision.destructive, asyncio.get_running_loop().create_future())
                yield request
                assert request.decision is not None
                if not await request.decision:
                    state.result = ToolResult(f"denied by user: {preview.summary}", "denied")
                    return
        except ToolError as exc:
            state.result = ToolResult(f"error: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - e.g. an unreadable file while previewing
            state.result = ToolResult(f"error: {call.name} failed: {type(exc).__name__}: {exc}", "error")
            return
        async with aclosing(self._run_tool(tool, call, args, state)) as events:
            async for event in events:
                yield event

    async def _run_tool(self, tool: Tool, call: ToolCallEvent, args: dict[str, Any],
                        state: _TurnState) -> AsyncIterator[AgentEvent]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        ctx = dataclasses.replace(self._ctx, emit=queue.put_nowait)
        state.tool_output = []
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
                pieces = [getter.result()] if getter.done() and not getter.cancelled() else []
                while not queue.empty():
                    pieces.append(queue.get_nowait())
                if pieces:
                    text = "".join(pieces)
                    state.tool_output.append(text)
                    yield ToolOutputChunk(call.id, text)
                if task.done():
                    break
        finally:
            if task.done():
                state.tool_task = None
        try:
            state.result = task.result()
        except ToolError as exc:
            state.result = ToolResult(f"error: {exc}", "error")
        except Exception as exc:  # noqa: BLE001 - a tool bug must not end the turn
            state.result = ToolResult(f"error: {call.name} failed: {type(exc).__name__}: {exc}", "error")

    # -- interrupt ------------------------------------------------------------------------
    async def _on_interrupt(self, state: _TurnState) -> None:
        """Leave the store valid first (synchronous writes), then stop what is running."""
        self._keep_partial_text(state, "interrupted by user")
        repaired = []
        output = "".join(state.tool_output)
        for call_id, name in state.open_calls:
            content = INTERRUPTED_RESULT
            running = state.tool_task is not None and not state.tool_task.done()
            if running and output and call_id == state.open_calls[0][0]:
                preview, _ = spill_if_large(output, self.settings.tool_output_cap, self._ctx.vault)
                content = f"{INTERRUPTED_RESULT}\n[output before the interrupt]\n{preview}"
            self._store_tool_result(call_id, name, content)
            repaired.append(call_id)
        state.open_calls = []
        self._event(event_kinds.INTERRUPTED, {"reason": "user", "repaired_call_ids": repaired,
                                              "step": state.steps})
        task = state.tool_task
        if task is not None and not task.done():
            task.cancel()
            # The tool's own handler sends SIGTERM, waits the grace period, then SIGKILL.
            await asyncio.wait({task}, timeout=KILL_GRACE_S + 1.0)
        for pgid in list(self._process_groups):
            kill_group_now(pgid)
            self._process_groups.discard(pgid)

    def kill_running_processes(self) -> None:
        """For app shutdown: SIGKILL every process group a tool started and that still runs."""
        for pgid in list(self._process_groups):
            kill_group_now(pgid)
            self._process_groups.discard(pgid)
