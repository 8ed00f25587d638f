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
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

from myrm_tui.agent.events import (
    AgentEvent,
    AssistantMessageStored,
    Notice,
    StepStarted,
    TurnFinished,
    UserMessageStored,
)
from myrm_tui.agent.gc_policy import freeze_startup_heap
from myrm_tui.agent.hooks import HookRunner
from myrm_tui.agent.limits import KILL_GRACE_S
from myrm_tui.agent.ports import ToolSource
from myrm_tui.agent.read_registry import SeenRecordingReader
from myrm_tui.agent.sandbox import sandbox_status
from myrm_tui.agent.session_parts import SessionParts
from myrm_tui.agent.setup.build import AgentBuild, build_agent
from myrm_tui.agent.setup.model_calls import SummaryRoute, call_settings_for, summary_routes
from myrm_tui.agent.subagent.child import SubagentRunner
from myrm_tui.agent.tools.base import Tool, ToolContext
from myrm_tui.agent.tools.editor_port import EditorFiles
from myrm_tui.agent.tools.shell.background import BackgroundInfo
from myrm_tui.agent.tools.shell.processes import kill_group_now
from myrm_tui.agent.turn.arrival_summary import summarize_result
from myrm_tui.agent.turn.excerpt_notice import excerpt_notice
from myrm_tui.agent.turn.model_stream import ModelStream, StreamFn
from myrm_tui.agent.turn.record import TurnRecord
from myrm_tui.agent.turn.resend import reusable_user_message
from myrm_tui.agent.turn.state import CUT_OFF_NOTE, INTERRUPTED_RESULT, TurnState, assistant_message, calls_of
from myrm_tui.agent.turn.summary_work import SummaryWork
from myrm_tui.agent.turn.tool_runner import ToolRunner
from myrm_tui.agent.undo.checkpoints import Checkpointer
from myrm_tui.agent.undo.rewind import with_undo_note
from myrm_tui.agent.user_input.attachments import no_vision_notice
from myrm_tui.agent.user_input.user_content import text_of_parts, user_content
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.compaction.objective_note import RESTATE_OBJECTIVE
from myrm_tui.context.compaction.prepared_summaries import PrepareProgress
from myrm_tui.context.engine import TurnInput
from myrm_tui.context.observations.masker_tiers import parse_protected_tools
from myrm_tui.context.prompt import AssembledPrompt, ContextExhausted
from myrm_tui.context.rows.call_ids import unique_call_ids
from myrm_tui.context.rows.media import image_parts, image_url_of
from myrm_tui.context.undo_note import defused
from myrm_tui.context.workspace_reader import workspace_reader
from myrm_tui.llm.call_settings import CallSettings, reasoning_effort_for
from myrm_tui.llm.errors import ContextWindowExceededError, LLMError
from myrm_tui.llm.events import UsageEvent
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store, event_kinds
from myrm_tui.store.disk_full import disk_full

# Re-exported: importers name them from here (`from myrm_tui.agent.agent import CUT_OFF_NOTE`).
__all__ = ["CUT_OFF_NOTE", "INTERRUPTED_RESULT", "Agent", "StreamFn", "excerpt_notice"]


class Agent:
    def __init__(
        self,
        *,
        store: Store,
        session_id: str,
        settings: Settings,
        workspace: Path,
        stream_fn: StreamFn | None = None,
        build: AgentBuild | None = None,
        extra_tools: Sequence[Tool] = (),
        headless: bool = False,
        mcp: ToolSource | None = None,
        parts: SessionParts | None = None,
        cache_key: str | None = None,
        editor: EditorFiles | None = None,
    ):
        self.store = store
        # The provider's session-affinity key (prompt_cache_key): the session id, or for a subagent
        # its parent's, so the child's calls reach the node that caches the shared prefix.
        self.cache_key = cache_key or session_id
        # The app's McpManager (mcp/manager.py), or None: it outlives this agent (rebuilds keep the
        # servers running); each turn starts by syncing its tools into the build (`mcp.sync_turn`, in
        # mcp/agent_sync.py: a method of the manager, since mcp sits above the agent in the layers).
        self.mcp = mcp
        self.extra_tools = tuple(extra_tools)  # kept for the MCP tool sync's rebuilds
        self.headless = headless  # `myrm run`: nobody answers an approval (tool_runner.py)
        # Yield WaitPhase events (compacting, connecting, waiting for the first token): the chat
        # sets it to name a long wait on its status line; other callers want the answer only.
        self.report_waits = False
        # Times model calls (reply figures) and tool runs; a test swaps in a clock it steps itself.
        self.clock: Callable[[], float] = time.monotonic
        self.session_id = session_id
        self.workspace = Path(workspace).resolve()
        self.build = build or build_agent(
            settings,
            self.workspace,
            extra_tools,
            mcp_tools=(
                mcp.session_tools(store, session_id, trust_read_only_hints=bool(settings.mcp_trust_read_only))
                if mcp is not None
                else ()
            ),
        )
        self.settings = self.build.settings
        self._process_groups: set[int] = set()
        # The session's engine, background commands and hook lifecycle: a rebuilt agent for the
        # same session is handed the old one's (agent/session_runtime.py), so commands keep running
        # and the engine keeps its state. The UI lists the commands (`background.listing()`) and
        # hears them start and end (`background.subscribe`).
        self.parts = parts if parts is not None else SessionParts.fresh(store, session_id)
        self.background = self.parts.background
        self._ctx = ToolContext(
            workspace=self.workspace,
            settings=self.settings,
            vault=getattr(store, "vault", None),
            process_groups=self._process_groups,
            store=store,
            session_id=session_id,
            background=self.background,
            editor=editor,  # the editor's files when ACP runs the session (tools/editor_port.py)
        )
        self._plain_chat_noticed = False
        self._sandbox_noticed = False
        self._summarizer_noticed = False
        # Who writes the summaries and when the work runs (agent/turn/summary_work.py).
        self.summary_work = SummaryWork(self)
        self._busy = False
        # The post-compaction reread's files count as seen by the model (agent/read_registry.py).
        # The engine outlives agents (a rebuild): the newest agent's reader wins.
        self.engine = self.parts.engine
        self._reread_seen = SeenRecordingReader(workspace_reader(self.workspace), store, session_id, self.workspace)
        self.engine.summaries.file_reader = self._reread_seen
        self._ctx.replacements = self.engine.replacements
        self.subagents = SubagentRunner(self)  # the task tool's children (agent/subagent/child.py)
        self._ctx.subagents = self.subagents
        # The turn's helpers; the clock is read through the agent, so swapping it reaches them.
        self._record = TurnRecord(store, session_id, self.model_name)
        # The user config's [hooks] (agent/hooks.py); the engine gets the pre-compact one.
        self._hooks = HookRunner(self.settings.hooks, self._ctx, self._record.event, self.parts.hooks)
        self._hooks.attach(self.engine)
        self._model_stream = ModelStream(stream_fn, self._record, lambda: self.clock())
        self.stream_fn = stream_fn  # None: llm.stream (the cache keep-alive calls the same way)
        # The last request sent, as sent: the cache keep-alive (agent/cache_warmth.py) resends it.
        self.last_prompt: AssembledPrompt | None = None
        self._tools = ToolRunner(
            settings=self.settings,
            workspace=self.workspace,
            ctx=self._ctx,
            checkpoints=Checkpointer(store, session_id, self.workspace),
            record=self._record,
            headless=headless,
            clock=lambda: self.clock(),
            hooks=self._hooks,
            arrival=lambda *call: summarize_result(self, *call),  # opt-in `arrival_summary`
        )

    @property
    def busy(self) -> bool:
        """A turn (or a manual compaction) is running: the cache keep-alive waits."""
        return self._busy

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
            call_settings_for(self.settings, model, session_id=self.cache_key),
            reasoning_effort=reasoning_effort_for(str(self.settings.reasoning_effort), model),
        )

    # -- the turn -------------------------------------------------------------------------
    async def turn(self, text: str | list[dict[str, Any]]) -> AsyncGenerator[AgentEvent, None]:
        """One user turn. `text` may also be OpenAI list content (text and `image_url` parts,
        as `myrm replay` feeds recorded user messages): its images go to the vault first."""
        if self._busy:
            raise RuntimeError("a turn is already running on this agent; wait for it or interrupt it")
        self._busy = True
        state = TurnState()
        try:
            for notice in await self._hooks.session_start():
                yield notice
            repaired = self.store.repair_dangling_tool_calls(self.session_id)
            if repaired:
                yield Notice(
                    f"answered {len(repaired)} unfinished tool call(s) from an earlier turn as interrupted",
                    level="warning",
                )
            # A resend after a failed turn reuses the stored ask (agent/turn/resend.py).
            content, artifacts = user_content(
                text, self._ctx.vault, self.settings.tool_output_cap, self.settings.output_filters
            )
            content = defused(content)  # only the agent writes an undo note (context/undo_note.py)
            last = self.engine.last_row()
            reused = reusable_user_message(last, content)
            if reused is None and last is not None:
                content = with_undo_note(content, self.store, self.session_id, last.created_at)
            record = (
                reused if reused is not None else self._record.append({"role": "user", "content": content}, artifacts)
            )
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
                self._record.event(event_kinds.NOTE, {"text": note})
                yield Notice(note, level="warning")
            if not self._sandbox_noticed and "bash" in self.build.tools.names:
                self._sandbox_noticed = True
                sandbox_note = sandbox_status(self.settings.sandbox).start_notice()
                if sandbox_note:
                    yield Notice(sandbox_note, level="warning")
            if not self._summarizer_noticed:
                self._summarizer_noticed = True
                summarizer_note = self.summary_work.notice()
                if summarizer_note:
                    yield Notice(summarizer_note, level="warning")
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

    async def _loop(self, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        max_steps = max(1, int(self.settings.max_steps))
        while True:
            state.steps += 1
            async with aclosing(self.summary_work.between_steps(state)) as notices:
                async for notice in notices:
                    yield notice
            try:
                self._reread_seen.release()  # this request carries what an owed event reread
                # In a worker thread: an event inside the request is 10-100 ms of CPU (more on a
                # large window), which on the event loop would hold the TUI's keys and frames.
                prompt = await asyncio.to_thread(self.engine.assemble, self.turn_input())
                self._record.event(event_kinds.ASSEMBLE, dict(prompt.report))
                for trip in self.engine.take_notices():
                    yield Notice(trip, level="warning")
                for hook_notice in self._hooks.take_notices():  # a pre_compact hook that failed
                    yield hook_notice
                if state.steps == 1 and state.user_record is not None:
                    excerpt = self.engine.excerpt_of(state.user_record.id)
                    if excerpt is not None:
                        yield Notice(
                            excerpt_notice(state.user_record.tokens, excerpt.tokens, excerpt.handle), level="warning"
                        )
                yield StepStarted(state.steps, self.model_name, prompt.tokens)
                state.owed = self._pay_owed_while_answering()
                try:
                    async with aclosing(self._stream_once(prompt, state)) as events:
                        async for event in events:
                            yield event
                except ContextWindowExceededError:
                    # The provider counts differently than we do: compact hard once and retry.
                    if state.partial_text:
                        raise
                    # The request went out whole, owing its compaction: once that has run, the retry
                    # sends the compacted prompt (a forced emergency on top would take more history).
                    if await self._owed_paid(state) is not None:
                        retry = self.turn_input()
                    else:
                        retry = self.turn_input(force_tier="emergency", trigger="context_exceeded")
                    prompt = await asyncio.to_thread(self.engine.assemble, retry)
                    self._record.event(event_kinds.ASSEMBLE, dict(prompt.report))
                    yield Notice(
                        "the provider said the prompt was too long; compacted and retrying once", level="warning"
                    )
                    async with aclosing(self._stream_once(prompt, state)) as events:
                        async for event in events:
                            yield event
                finally:
                    # Before the answer is stored: the event's store transaction would hold the loop.
                    await self._owed_paid(state)
            except ContextExhausted as exc:
                yield self._record.turn_error("ContextExhausted", exc.user_text(), "", state)
                yield TurnFinished("error", state.steps)
                return
            except LLMError as exc:
                self._record.keep_partial_text(state, "the provider call failed")
                yield self._record.turn_error(type(exc).__name__, exc.message, exc.hint, state)
                yield TurnFinished("error", state.steps)
                return
            except Exception as exc:  # a bug must end the turn readably, not kill the app
                if disk_full(exc, getattr(self.store, "root", None)) is not None:
                    raise  # turn() names the disk; nothing more can be stored anyway
                self._record.keep_partial_text(state, "an internal error")
                yield self._record.turn_error(
                    type(exc).__name__,
                    f"Internal error: {exc}",
                    "This is a bug in myrm; your message is kept. Please report it.",
                    state,
                )
                yield TurnFinished("error", state.steps)
                return

            message, renamed = unique_call_ids(assistant_message(state), set(self.engine.call_ids()))
            record = self._record.append(message)
            state.partial_text = ""
            calls = calls_of(state, message, renamed)
            state.open_calls = [(c.id, c.name) for c in calls]
            figures = self._model_stream.reply_figures(record.id, state, self.model_name)
            yield AssistantMessageStored(
                record.id, message.get("content") or "", tuple(message.get("tool_calls") or ()), figures
            )
            if not calls:
                reason = "length" if state.finish and state.finish.reason == "length" else "stop"
                yield TurnFinished(reason, state.steps)
                return

            for call in calls:
                async with aclosing(self._tools.phase(call, state, self.build.tools)) as events:
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
            eviction_order=str(self.settings.eviction_order),
            restate_objective=RESTATE_OBJECTIVE.get(str(self.settings.restate_objective)),
            prefix_anchor_turns=self.settings.prefix_anchor_turns,
            removal_focus_band=self.settings.removal_focus_band,
            file_read_exempt=self.settings.file_read_exempt,
            thinking_keep_turns=self.settings.thinking_keep_turns,
            eviction_min_age=self.settings.eviction_min_age,
            observation_keep_window=self.settings.observation_keep_window,
            compact_while_answering=self.settings.compact_while_answering,
            protected_tools=parse_protected_tools(str(self.settings.protected_tools)),
            output_filters=self.settings.output_filters,
        )

    async def compact_now(
        self, focus: str | None = None, progress: Callable[[PrepareProgress], None] | None = None
    ) -> dict[str, Any] | None:
        """The user's compact command: everything outside the latest exchange becomes summary
        nodes, written by the summarizer chain (lite → main model, `focus` in its prompt) when
        one is available, extractive otherwise. `progress` is told before each model summary.
        Cancelling (the awaiting task) changes nothing in the prompt; the summaries already
        written are kept for the next removal. Returns the event, or None when nothing is
        outside the latest exchange; raises `NothingWorthCompacting` (nothing changed) when what
        is outside it is too short to gain from a summary."""
        if self._busy:
            raise RuntimeError("a turn is running; compact after it ends or interrupt it")
        self.engine.check_worth_compacting(self.turn_input(trigger="manual"))
        self._busy = True
        try:
            await self.engine.prepare_for_compact(
                self.turn_input(trigger="manual"),
                models=self.summary_work.models(),
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

    def summarizer(self) -> tuple[str | None, int, str]:
        """(model, window, why) of the first model of the summarizer chain (summary_work.py)."""
        return self.summary_work.summarizer()

    async def maintain(self) -> dict[str, Any] | None:
        """Idle-time compaction work after a turn: prepare the next summary with a model (in the
        background), run the removal the next turn would need inside its requests
        (`ContextEngine.compact_ahead`), then the scans the next removal's extractive summaries
        need (`EventWarmup`: the event then only assembles)."""
        if self._busy:
            return None
        # Once per process, where nobody waits: a full pass, then the heap out of the collector's
        # reach (agent/gc_policy.py; the TUI froze it already, when its engine was prepared).
        freeze_startup_heap(collect=True)
        record = await self.summary_work.maintain()
        if not self._busy:
            # After the summaries (the event uses the ones just prepared), before the warm-up
            # (which then warms the removal after this one).
            await self.engine.compact_ahead_idle(self.turn_input())
        if not self._busy:
            await self.engine.warm_next_event(self.turn_input())
        return record

    def fork_with_summary(self, keep_user_turns: int = 2) -> Any:
        """A new session that starts small: it shares the human anchor with this one, then a
        summary of everything after it, then the last turns copied verbatim."""
        from myrm_tui.agent.fork import fork_with_summary

        if self._busy:
            raise RuntimeError("a turn is running; fork after it ends or interrupt it")
        return fork_with_summary(self.store, self.session_id, model=self.model_name, keep_user_turns=keep_user_turns)

    def _pay_owed_while_answering(self) -> asyncio.Future[CompactionEvent | None] | None:
        """The compaction the request just built went out without (the prompt crossed the safety
        net but fits: the `compact_while_answering` setting), run in a worker thread while the
        model answers, not before the request. Awaited once the answer has streamed."""
        if not self.engine.owes_event:
            return None
        self._reread_seen.hold()  # the model sees that reread only in the next request
        return asyncio.ensure_future(asyncio.to_thread(self.engine.pay_owed))

    @staticmethod
    async def _owed_paid(state: TurnState) -> CompactionEvent | None:
        """Wait for the owed compaction's worker, if one runs (the engine's and the store's locks
        are held until it ends: a call that takes them would hold the event loop instead); the
        event it ran, if any."""
        owed, state.owed = state.owed, None
        return await owed if owed is not None else None

    async def _stream_once(self, prompt: AssembledPrompt, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        state.calls, state.finish = [], None
        self.last_prompt = prompt
        call_settings = self.call_settings()
        if self.report_waits:
            call_settings = dataclasses.replace(call_settings, report_waits=True)
        stream = self._model_stream.run(
            prompt, state, model_name=self.model_name, model=self.build.model, call_settings=call_settings
        )
        async with aclosing(stream) as events:
            async for event in events:
                if isinstance(event, UsageEvent):
                    await self._owed_paid(state)  # a quick answer: the engine's lock is still taken
                    verdict = self.engine.note_provider_call(
                        prompt_tokens=event.prompt_tokens,
                        estimated_tokens=prompt.tokens,
                        cached_read_tokens=event.cached_read_tokens,
                        cached_write_tokens=event.cached_write_tokens,
                    )
                    if verdict is not None:
                        self._record.event(event_kinds.CACHE_VERDICT, verdict.to_dict())
                yield event
        self.engine.note_provider_call()

    # -- interrupt ------------------------------------------------------------------------
    async def _on_interrupt(self, state: TurnState) -> None:
        """Leave the store valid first (synchronous writes), then stop what is running."""
        self._record.interrupted(state, self.settings.tool_output_cap, self._ctx.vault)
        task = state.tool_task
        if task is not None and not task.done():
            task.cancel()
            # The tool's own handler sends SIGTERM, waits the grace period, then SIGKILL.
            await asyncio.wait({task}, timeout=KILL_GRACE_S + 1.0)
        for pgid in list(self._process_groups):
            kill_group_now(pgid)
            self._process_groups.discard(pgid)

    def kill_running_processes(self) -> None:
        """For app shutdown: SIGKILL every process group a tool started and that still runs,
        background commands included."""
        for pgid in list(self._process_groups):
            kill_group_now(pgid)
            self._process_groups.discard(pgid)
        self.background.kill_now()
        self._hooks.session_end_blocking()

    async def aclose(self) -> list[BackgroundInfo]:
        """The session ends (`myrm run` finishing, a test): stop the background commands still
        running, with a grace period, keeping their unread output in the vault, then run the
        session_end hooks (their failures: `take_hook_notices`). Returns the stopped commands."""
        stopped = await self.background.aclose()
        await self._hooks.session_end()
        return stopped

    def take_hook_notices(self) -> list[Notice]:
        """Hook failures no turn has yielded (session_end, a pre_compact outside a turn)."""
        return self._hooks.take_notices()
