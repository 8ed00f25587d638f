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
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.agent.approvals import (
    Decision,
    Verdict,
    decide,
    denial_result,
    headless_refusal,
    rule_refusal,
    sandbox_note,
)
from myrm_tui.agent.attachments import no_vision_notice
from myrm_tui.agent.build import AgentBuild, build_agent
from myrm_tui.agent.checkpoints import Checkpointer
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
    as_answer,
)
from myrm_tui.agent.limits import KILL_GRACE_S
from myrm_tui.agent.model_calls import SummaryRoute, call_settings_for, summary_routes
from myrm_tui.agent.permission_rules import (
    RulesStoreError,
    call_for,
    effective_rules,
    remember_allow,
    suggest_rules,
)
from myrm_tui.agent.reply_figures import ReplyFigures, call_cost
from myrm_tui.agent.resend import reusable_user_message
from myrm_tui.agent.sandbox import headless_network_refusal, sandbox_status
from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_arguments
from myrm_tui.agent.tools.processes import kill_group_now
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.agent.user_content import text_of_parts, user_content
from myrm_tui.context.call_ids import unique_call_ids
from myrm_tui.context.engine import TurnInput
from myrm_tui.context.engine_prepare import PrepareProgress
from myrm_tui.context.engines import engine_for
from myrm_tui.context.media import image_parts, image_url_of
from myrm_tui.context.prompt import ContextExhausted
from myrm_tui.context.tokens import count_message_tokens
from myrm_tui.llm.call_settings import CallSettings, reasoning_effort_for
from myrm_tui.llm.errors import ContextWindowExceededError, LLMError
from myrm_tui.llm.events import (
    FinishEvent,
    ReasoningDelta,
    RetryEvent,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from myrm_tui.settings.permission_syntax import RuleError
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds
from myrm_tui.store.disk_full import disk_full
from myrm_tui.store.errors import VaultError
from myrm_tui.store.tool_status import INTERRUPTED, with_status

StreamFn = Callable[..., AsyncIterator[Any]]
_log = logging.getLogger(__name__)

INTERRUPTED_RESULT = "interrupted by user: the call was stopped before it finished; run it again if still needed"
# Appended to assistant text that was cut off, so the model (and a reader) knows it is partial.
CUT_OFF_NOTE = "\n\n[answer cut off: {why}]"


def _short_tokens(count: int) -> str:
    return (
        f"{count / 1000:.1f}k" if 1000 <= count < 10_000 else (f"{count // 1000:,}k" if count >= 10_000 else str(count))
    )


def excerpt_notice(message_tokens: int, shown_tokens: int, handle: str) -> str:
    """What the user is told when their message was larger than the model can take: it is never
    cut silently."""
    return (
        f"your message is {_short_tokens(message_tokens)} tokens, too large to send whole; "
        f"the model saw a {_short_tokens(shown_tokens)}-token excerpt and can read the rest from the store "
        f"({handle}, with ctx_expand)."
    )


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
    call_started: float = 0.0  # monotonic: the request of the current model call was sent
    first_token_at: float | None = None  # monotonic: its first text, thinking or tool call arrived
    call_ended: float | None = None
    call_usage: UsageEvent | None = None
    # filled by the tool phase
    result: ToolResult | None = None
    approval_wait_s: float = 0.0  # time the current call waited for a person (not its duration)
    user_record: Any = None  # the stored user message of this turn


class Agent:
    def __init__(
        self,
        *,
        store: Any,
        session_id: str,
        settings: Settings,
        workspace: Path,
        stream_fn: StreamFn | None = None,
        build: AgentBuild | None = None,
        extra_tools: Sequence[Tool] = (),
        headless: bool = False,
        mcp: Any = None,
    ):
        self.store = store
        # The app's McpManager (mcp/manager.py), or None: it outlives this agent (rebuilds keep the
        # servers running); each turn starts by syncing its tools into the build (`mcp.sync_turn`, in
        # mcp/agent_sync.py: a method of the manager, since mcp sits above the agent in the layers).
        self.mcp = mcp
        self.extra_tools = tuple(extra_tools)  # kept for the MCP tool sync's rebuilds
        # Headless (`myrm run`): nobody can answer an approval, so a call that would ask is
        # refused here with the real reason instead of being sent to a consumer that can only say no.
        self.headless = headless
        # Times model calls (reply figures) and tool runs; a test swaps in a clock it steps itself.
        self.clock: Callable[[], float] = time.monotonic
        self.session_id = session_id
        self.workspace = Path(workspace).resolve()
        self.build = build or build_agent(
            settings,
            self.workspace,
            extra_tools,
            mcp_tools=(mcp.tools(trust_read_only_hints=bool(settings.mcp_trust_read_only)) if mcp is not None else ()),
        )
        self.settings = self.build.settings
        self._stream_fn = stream_fn
        self._process_groups: set[int] = set()
        self._ctx = ToolContext(
            workspace=self.workspace,
            settings=self.settings,
            vault=getattr(store, "vault", None),
            process_groups=self._process_groups,
            store=store,
            session_id=session_id,
        )
        self._plain_chat_noticed = False
        self._sandbox_noticed = False
        self._rules_problem_noticed = False
        self._busy = False
        self.engine = engine_for(store, session_id, workspace=self.workspace)
        self._checkpoints = Checkpointer(store, session_id, self.workspace)  # pre-images for /undo
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
        """The main model's call settings (`model_calls.call_settings_for`, the one function the
        summarizer's calls use too)."""
        model = self.build.model
        if self.settings.api_base and model.api_base != self.settings.api_base:
            model = dataclasses.replace(model, api_base=self.settings.api_base)
        # Reasoning is asked for on the conversation's calls only: summaries run at temperature 0,
        # which Anthropic refuses together with thinking.
        return dataclasses.replace(
            call_settings_for(self.settings, model, session_id=self.session_id),
            reasoning_effort=reasoning_effort_for(str(self.settings.reasoning_effort), model),
        )

    # -- store helpers --------------------------------------------------------------------
    def _append(self, message: dict[str, Any], artifacts: dict[str, str | None] | None = None):
        """Store `message`; `artifacts` (vault handle → its text, or None to read the vault)
        are indexed in the same transaction, so what left the prompt stays searchable."""
        tokens = count_message_tokens(message, self.model_name)
        try:
            return self.store.append_message(self.session_id, message, tokens, artifacts=artifacts)
        except (VaultError, OSError):
            if not artifacts:
                raise
            # The vault lost or changed the file under us: the message itself must still be
            # stored (search is a convenience; the handle says where the text should be).
            _log.warning("could not index %s for search", ", ".join(artifacts), exc_info=True)
            return self.store.append_message(self.session_id, message, tokens)

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.store.append_event(self.session_id, kind, data)

    def _store_tool_result(
        self, call_id: str, name: str, content: str, status: str, artifacts: dict[str, str | None] | None = None
    ):
        # The outcome is stored beside the content (store/tool_status.py): the fork summary, the
        # transcript and the health screen read it instead of guessing from untrusted output.
        return self._append(
            with_status({"role": "tool", "tool_call_id": call_id, "name": name, "content": content}, status), artifacts
        )

    # -- the turn -------------------------------------------------------------------------
    async def turn(self, text: str | list[dict[str, Any]]) -> AsyncGenerator[AgentEvent, None]:
        """One user turn. `text` may also be OpenAI list content (text and `image_url` parts,
        as `myrm replay` feeds recorded user messages): its images go to the vault first."""
        if self._busy:
            raise RuntimeError("a turn is already running on this agent; wait for it or interrupt it")
        self._busy = True
        state = _TurnState()
        try:
            repaired = self.store.repair_dangling_tool_calls(self.session_id)
            if repaired:
                yield Notice(
                    f"answered {len(repaired)} unfinished tool call(s) from an earlier turn as interrupted",
                    level="warning",
                )
            # A resend after a failed turn reuses the stored ask (agent/resend.py).
            content, artifacts = user_content(text, self._ctx.vault, self.settings.tool_output_cap)
            reused = reusable_user_message(self.engine.last_row(), content)
            record = reused if reused is not None else self._append({"role": "user", "content": content}, artifacts)
            state.user_record = record
            yield UserMessageStored(
                record.id, text if isinstance(text, str) else text_of_parts(content), reused=reused is not None
            )
            images = [image_url_of(p) for p in image_parts({"content": content})]
            if images and not self.build.model.supports_vision:
                # The engine sends a placeholder naming each handle (context/stages/media_filter.py).
                yield Notice(no_vision_notice(self.model_name, images), level="warning")
            if not self.build.model.supports_tools and not self._plain_chat_noticed:
                self._plain_chat_noticed = True
                note = f"{self.model_name} has no tool calling; running as plain chat"
                self._event(event_kinds.NOTE, {"text": note})
                yield Notice(note, level="warning")
            if not self._sandbox_noticed and "bash" in self.build.tools.names:
                self._sandbox_noticed = True
                sandbox_note = sandbox_status(self.settings.sandbox).start_notice()
                if sandbox_note:
                    yield Notice(sandbox_note, level="warning")
            if self.mcp is not None and self.build.model.supports_tools:
                async for notice in self.mcp.sync_turn(self):
                    yield notice
            async with aclosing(self._loop(state)) as events:
                async for event in events:
                    yield event
        except (asyncio.CancelledError, GeneratorExit):
            await self._on_interrupt(state)
            raise
        except Exception as exc:
            # A full disk is not a bug: say which disk, and that resending works.
            full = disk_full(exc, getattr(self.store, "root", None))
            if full is not None and full is not exc:
                raise full from exc
            raise
        finally:
            self._busy = False

    async def _loop(self, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        max_steps = max(1, int(self.settings.max_steps))
        while True:
            state.steps += 1
            async with aclosing(self._summaries_between_steps(state)) as notices:
                async for notice in notices:
                    yield notice
            try:
                prompt = self.engine.assemble(self.turn_input())
                self._event(event_kinds.ASSEMBLE, dict(prompt.report))
                if state.steps == 1 and state.user_record is not None:
                    excerpt = self.engine.excerpt_of(state.user_record.id)
                    if excerpt is not None:
                        yield Notice(
                            excerpt_notice(state.user_record.tokens, excerpt.tokens, excerpt.handle), level="warning"
                        )
                yield StepStarted(state.steps, self.model_name, prompt.tokens)
                try:
                    async with aclosing(self._stream_once(prompt, state)) as events:
                        async for event in events:
                            yield event
                except ContextWindowExceededError:
                    # The provider counts differently than we do: compact hard once and retry.
                    if state.partial_text:
                        raise
                    prompt = self.engine.assemble(self.turn_input(force_tier="emergency", trigger="context_exceeded"))
                    self._event(event_kinds.ASSEMBLE, dict(prompt.report))
                    yield Notice(
                        "the provider said the prompt was too long; compacted and retrying once", level="warning"
                    )
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
            except Exception as exc:  # a bug must end the turn readably, not kill the app
                if disk_full(exc, getattr(self.store, "root", None)) is not None:
                    raise  # turn() names the disk; nothing more can be stored anyway
                self._keep_partial_text(state, "an internal error")
                yield self._turn_error(
                    type(exc).__name__,
                    f"Internal error: {exc}",
                    "This is a bug in myrm; your message is kept. Please report it.",
                    state,
                )
                yield TurnFinished("error", state.steps)
                return

            message, renamed = unique_call_ids(self._assistant_message(state), set(self.engine.call_ids()))
            record = self._append(message)
            state.partial_text = ""
            calls = self._calls_of(state, message, renamed)
            state.open_calls = [(c.id, c.name) for c in calls]
            figures = self._reply_figures(record.id, state)
            yield AssistantMessageStored(
                record.id, message.get("content") or "", tuple(message.get("tool_calls") or ()), figures
            )
            if not calls:
                reason = "length" if state.finish and state.finish.reason == "length" else "stop"
                yield TurnFinished(reason, state.steps)
                return

            for call in calls:
                async with aclosing(self._tool_phase(call, state)) as events:
                    async for event in events:
                        yield event

            if state.steps >= max_steps:
                yield Notice(
                    f"stopped after {max_steps} model calls (max_steps); send a message to let the agent continue",
                    level="warning",
                )
                yield TurnFinished("tool_limit", state.steps)
                return

    # -- context --------------------------------------------------------------------------
    def turn_input(self, force_tier: str | None = None, trigger: str = "auto") -> TurnInput:
        return TurnInput(
            self.system_prompt,
            self.tool_schemas(),
            self.build.model,
            self.call_settings().max_output_tokens,
            force_tier=force_tier,
            trigger=trigger,
        )

    async def compact_now(
        self, focus: str | None = None, progress: Callable[[PrepareProgress], None] | None = None
    ) -> dict[str, Any] | None:
        """The user's compact command: everything outside the latest exchange becomes summary
        nodes, written by the summarizer chain (lite → main model, `focus` in its prompt) when
        one is available, extractive otherwise. `progress` is told before each model summary.
        Cancelling (the awaiting task) changes nothing in the prompt; the summaries already
        written are kept for the next removal. Returns the event, or None when nothing is
        outside the latest exchange."""
        if self._busy:
            raise RuntimeError("a turn is running; compact after it ends or interrupt it")
        self._busy = True
        try:
            await self.engine.prepare_for_compact(
                self.turn_input(trigger="manual"),
                models=self.summary_models(),
                breaker=self.engine.summary_breaker,
                focus=focus,
                progress=progress,
            )
            return self.engine.summarize_now(self.turn_input(trigger="manual"))
        finally:
            self._busy = False

    def summary_routes(self) -> list[SummaryRoute]:
        """The summarizer chain with each model's own call settings (endpoint included)."""
        model = self.build.model
        if self.settings.api_base and model.api_base != self.settings.api_base:
            model = dataclasses.replace(model, api_base=self.settings.api_base)
        return summary_routes(self.settings, model)

    def summary_models(self) -> list[Any]:
        from myrm_tui.context.summary.client import SummaryModel

        return [SummaryModel(r.model, r.window, r.settings) for r in self.summary_routes()]

    def summarizer(self) -> tuple[str | None, int, str]:
        """(model, window, why) of the first model of the summarizer chain: the lite model if
        configured and able, else the main model; None for a tiny main model without a usable
        lite one (extractive summaries only)."""
        routes = self.summary_routes()
        if not routes:
            return None, self.build.model.context_window, "extractive summaries only"
        return routes[0].model, routes[0].window, routes[0].why

    async def maintain(self) -> dict[str, Any] | None:
        """Idle-time compaction work after a turn: prepare the next summary with a model (in the
        background; the prompt only changes at the next compaction event)."""
        if self._busy:
            return None
        return await self._maintain()

    async def _maintain(self) -> dict[str, Any] | None:
        models = self.summary_models()
        if not models:
            return None
        return await self.engine.maintain(self.turn_input(), models=models, breaker=self.engine.summary_breaker)

    async def _summaries_between_steps(self, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        """Summary work inside a turn, before the next request: a long tool-using turn can pass
        from the full threshold to a removal without an idle moment, and `myrm run` has none.
        After a step's tools, the next chunk (or fold) is prepared as after a turn; with
        `summary_wait`, the chunks an emergency is about to remove are written first (the user
        waits). Failures never end the turn: the extractive body stands in."""
        try:
            if state.steps > 1:
                await self._maintain()
            if self.settings.summary_wait:
                models = self.summary_models()
                chunks = self.engine.chunks_before_removal(self.turn_input(), models) if models else []
                if chunks:
                    yield Notice(
                        f"writing {len(chunks)} summar{'y' if len(chunks) == 1 else 'ies'} with "
                        f"{models[0].model} before old turns are removed (summary_wait)"
                    )
                    await self.engine.prepare_chunks(
                        self.turn_input(),
                        chunks,
                        models=models,
                        breaker=self.engine.summary_breaker,
                        kind="before_removal",
                    )
                    await self.engine.prepare_folds(
                        self.turn_input(), models=models, breaker=self.engine.summary_breaker
                    )
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception:  # noqa: BLE001 - background work: the event records model failures
            _log.warning("summary preparation failed between steps", exc_info=True)

    def fork_with_summary(self, keep_user_turns: int = 2) -> Any:
        """A new session that starts small: it shares the human anchor with this one, then a
        summary of everything after it, then the last turns copied verbatim."""
        from myrm_tui.agent.fork import fork_with_summary

        if self._busy:
            raise RuntimeError("a turn is running; fork after it ends or interrupt it")
        return fork_with_summary(self.store, self.session_id, model=self.model_name, keep_user_turns=keep_user_turns)

    async def _stream_once(self, prompt, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        state.calls, state.finish = [], None
        async with aclosing(self._stream_phase(prompt, state)) as events:
            async for event in events:
                if isinstance(event, UsageEvent):
                    self.engine.note_provider_call(prompt_tokens=event.prompt_tokens, estimated_tokens=prompt.tokens)
                yield event
        self.engine.note_provider_call()

    # -- stream phase ---------------------------------------------------------------------
    async def _stream_phase(self, prompt, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        stream_fn = self._stream_fn or _default_stream()
        tools = prompt.tools or None
        stream = stream_fn(self.model_name, prompt.messages, tools, self.call_settings())
        state.call_started, state.first_token_at, state.call_ended, state.call_usage = self.clock(), None, None, None
        async with _closing(stream) as llm_events:
            async for event in llm_events:
                if isinstance(event, (TextDelta, ReasoningDelta, ToolCallEvent)) and state.first_token_at is None:
                    state.first_token_at = self.clock()
                if isinstance(event, TextDelta):
                    state.partial_text += event.text
                    yield event
                elif isinstance(event, ReasoningDelta):
                    yield event
                elif isinstance(event, ToolCallEvent):
                    state.calls.append(event)
                elif isinstance(event, UsageEvent):
                    if event.cost is None:  # the provider sent no price: litellm's map, when it knows one
                        event = dataclasses.replace(
                            event,
                            cost=call_cost(
                                event.prompt_tokens,
                                event.completion_tokens,
                                event.cached_read_tokens,
                                event.cached_write_tokens,
                                self.build.model,
                            ),
                        )
                    state.call_usage = event
                    self._event(event_kinds.USAGE, {"model": self.model_name, **dataclasses.asdict(event)})
                    yield event
                elif isinstance(event, RetryEvent):
                    # the failed attempt's time is not this answer's: time the retry from here
                    state.call_started, state.first_token_at = self.clock(), None
                    yield event
                elif isinstance(event, FinishEvent):
                    state.finish = event
        state.call_ended = self.clock()

    def _reply_figures(self, message_id: int, state: _TurnState) -> ReplyFigures:
        """The call's figures, stored beside the reply so a reopened session shows the same line."""
        usage = state.call_usage or UsageEvent()
        ended = state.call_ended if state.call_ended is not None else self.clock()
        figures = ReplyFigures(
            message_id=message_id,
            model=self.model_name,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_read_tokens=usage.cached_read_tokens,
            cached_write_tokens=usage.cached_write_tokens,
            cost=usage.cost,
            elapsed_s=round(ended - state.call_started, 3),
            first_token_s=None if state.first_token_at is None else round(state.first_token_at - state.call_started, 3),
        )
        self._event(event_kinds.REPLY_FIGURES, figures.as_data())
        return figures

    def _assistant_message(self, state: _TurnState) -> dict[str, Any]:
        if state.finish is not None and state.finish.message:
            return dict(state.finish.message)
        # A provider that ended without a finish event: rebuild the message from what streamed.
        message: dict[str, Any] = {"role": "assistant", "content": state.partial_text or None}
        if state.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
                for c in state.calls
            ]
        return message

    @staticmethod
    def _calls_of(
        state: _TurnState, message: dict[str, Any], renamed: Sequence[tuple[str, str]] = ()
    ) -> list[ToolCallEvent]:
        """The calls to run, in the stored message's order (the parsed events carry the args),
        under their session-unique ids (`renamed`: (id the model sent, id stored) per call)."""
        by_id: dict[str, list[ToolCallEvent]] = {}
        for c in state.calls:
            by_id.setdefault(c.id, []).append(c)
        sent = (
            [old for old, _ in renamed] if renamed else [raw.get("id", "") for raw in message.get("tool_calls") or ()]
        )
        ordered = []
        for raw, sent_id in zip(message.get("tool_calls") or (), sent, strict=True):
            call_id = raw.get("id", "")
            if by_id.get(sent_id):
                ordered.append(dataclasses.replace(by_id[sent_id].pop(0), id=call_id))
            else:
                function = raw.get("function", {})
                ordered.append(
                    ToolCallEvent(
                        call_id,
                        function.get("name", ""),
                        {},
                        function.get("arguments", ""),
                        parse_error="the call's arguments were not received",
                    )
                )
        return ordered

    def _turn_error(self, error_class: str, message: str, hint: str, state: _TurnState) -> TurnError:
        self._event(
            event_kinds.ERROR, {"error_class": error_class, "message": message, "hint": hint, "step": state.steps}
        )
        return TurnError(error_class, message, hint)

    def _keep_partial_text(self, state: _TurnState, why: str) -> None:
        """Text the user already saw is stored, marked as cut off: nothing shown is lost."""
        if state.partial_text.strip():
            self._append({"role": "assistant", "content": state.partial_text + CUT_OFF_NOTE.format(why=why)})
        state.partial_text = ""

    # -- tool phase -----------------------------------------------------------------------
    async def _tool_phase(self, call: ToolCallEvent, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        started = self.clock()
        yield ToolStarted(call.id, call.name, dict(call.arguments))
        state.result, state.approval_wait_s = None, 0.0
        async with aclosing(self._execute(call, state)) as events:
            async for event in events:
                yield event
        result = state.result or ToolResult("error: the tool produced no result", "error")
        content, handle = result.content, result.vault_handle
        # Whatever tool put the output in the vault (bash spills itself), the text is indexed
        # with the result that names it (None: read back from the vault).
        artifacts: dict[str, str | None] = {handle: None} if handle else {}
        if handle is None and len(content) > self.settings.tool_output_cap:
            full = content
            content, handle = spill_if_large(
                full, self.settings.tool_output_cap, self._ctx.vault, tool=call.name, arguments=call.arguments
            )
            if handle:
                artifacts[handle] = full
        record = self._store_tool_result(call.id, call.name, content, result.status, artifacts)
        state.open_calls = [c for c in state.open_calls if c[0] != call.id]
        # The duration is the tool's own: the time a person took to answer the approval is not it.
        ran = max(0.0, self.clock() - started - state.approval_wait_s)
        yield ToolFinished(
            call.id, call.name, result.status == "ok", content, round(ran, 3), record.id, handle, result.status
        )

    async def _execute(self, call: ToolCallEvent, state: _TurnState) -> AsyncGenerator[AgentEvent, None]:
        """Validate, ask, run. Sets state.result; every failure becomes an error result."""
        if call.parse_error:
            state.result = ToolResult(
                f"error: the arguments were not a valid JSON object ({call.parse_error}); "
                f"call {call.name} again with a JSON object.",
                "error",
            )
            return
        tool = self.build.tools.get(call.name)
        if tool is None:
            available = ", ".join(self.build.tools.names) or "none"
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
            forced = tool.required_approval(args, self._ctx)  # e.g. bash asking for the network
            if forced and decision.verdict is Verdict.ALLOW:
                decision = Decision(Verdict.ASK, reason=forced, forced=True)
            network_granted = False
            if decision.verdict is not Verdict.ALLOW:
                preview = tool.preview(args, self._ctx)
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

    def _permission_rules(self):
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
        self, tool: Tool, call: ToolCallEvent, args: dict[str, Any], state: _TurnState, network_granted: bool = False
    ) -> AsyncGenerator[AgentEvent, None]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        ctx = dataclasses.replace(self._ctx, emit=queue.put_nowait, network_granted=network_granted)
        state.tool_output = []
        checkpoint, problem = await asyncio.to_thread(self._checkpoints.before, tool, args, ctx)
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
        turn = state.user_record.id if state.user_record is not None else 0
        problem = await asyncio.to_thread(self._checkpoints.after, checkpoint, turn)
        if problem:
            yield Notice(problem, level="warning")
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
            artifacts: dict[str, str | None] = {}
            running = state.tool_task is not None and not state.tool_task.done()
            if running and output and call_id == state.open_calls[0][0]:
                preview, handle = spill_if_large(output, self.settings.tool_output_cap, self._ctx.vault)
                content = f"{INTERRUPTED_RESULT}\n[output before the interrupt]\n{preview}"
                if handle:
                    artifacts[handle] = output
            self._store_tool_result(call_id, name, content, INTERRUPTED, artifacts)
            repaired.append(call_id)
        state.open_calls = []
        self._event(event_kinds.INTERRUPTED, {"reason": "user", "repaired_call_ids": repaired, "step": state.steps})
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
