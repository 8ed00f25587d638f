"""A child agent for a delegated sub-problem (the `task` tool), bounded and distilled.

Why a real Agent and not a bare model loop: the child gets the same context pipeline (its own
session in the same store, so compaction, spills and recall all work inside it), the same model,
settings, sandbox and approval policy, and the same `prompt_cache_key` as the parent, so its
calls land on the provider node that already caches the shared prefix.

What differs: the child has no `task` tool (no recursion); its approval requests are forwarded
to the parent's consumer as the task call's own (a headless parent's child refuses them, as
`myrm run` does); it is told to end with a structured handover, and is bounded in model calls, tokens and seconds. The
parent's interrupt cancels the tool call, which cancels the child's turn: the child then answers
its open calls as interrupted and kills its processes, exactly as a top-level interrupt does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from myrm_tui.agent.events import (
    ApprovalRequest,
    AssistantMessageStored,
    StepStarted,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
)
from myrm_tui.agent.setup.build import AgentBuild, build_agent
from myrm_tui.agent.subagent.handover import HANDOVER_INSTRUCTIONS, parse_handover
from myrm_tui.agent.subagent.progress import progress_line
from myrm_tui.agent.subagent.result import Distilled, distill
from myrm_tui.agent.tools.registry import ToolRegistry
from myrm_tui.agent.tools.task import TASK_TOOL
from myrm_tui.context.window.tokens import count_text_tokens
from myrm_tui.llm.events import UsageEvent

if TYPE_CHECKING:
    from myrm_tui.agent.events import AgentEvent
    from myrm_tui.agent.tools.base import ToolContext
    from myrm_tui.llm.ports import StreamFn
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store.store import Store

# Bounds of one delegation; the tool's arguments may lower them, never raise them.
# Model calls: a triage (run, read a few files, rerun) takes 5-15; 30 leaves room without letting
# a lost child loop for the parent's whole budget.
MAX_STEPS = 30
# Tokens the child may spend (prompt + completion, summed over its calls): about three full
# 128k windows, the most a delegation should cost before the parent hears back.
MAX_TOKENS = 400_000
# Wall-clock seconds: long enough for a real test suite, short enough that a hung child does
# not hold the parent's turn indefinitely.
MAX_SECONDS = 600.0
# Bounds of one agentic_map item's child (agent/tools/llm_map.py), lower than a task's: an item is
# a lookup (read a file or two, grep, answer), and a map runs hundreds of them.
ITEM_MAX_STEPS = 12
ITEM_MAX_TOKENS = 150_000
ITEM_MAX_SECONDS = 300.0
# The store event both sessions get, linking them (the child session has no parent_id: it must
# not share the parent's history, only its workspace and store).
SUBAGENT_EVENT = "subagent"

SUBAGENT_PROMPT = (
    "<subagent>\nYou are a subagent: another agent delegated one task to you and reads only your final "
    "answer. Work on that task alone, using your tools; nobody will answer questions, and a refused "
    "call goes under pending. Keep the final answer short: findings, not "
    "logs (quote only the lines that matter).\n" + HANDOVER_INSTRUCTIONS + "\n</subagent>"
)


@dataclass(frozen=True)
class Bounds:
    max_steps: int = MAX_STEPS
    max_tokens: int = MAX_TOKENS
    max_seconds: float = MAX_SECONDS

    def lowered(self, steps: Any = None, tokens: Any = None, seconds: Any = None) -> Bounds:
        """These bounds, lowered (never raised) by what the model asked for."""

        def low(asked: Any, limit: float) -> float:
            return limit if asked is None or asked <= 0 else min(float(asked), limit)

        return Bounds(
            int(low(steps, self.max_steps)), int(low(tokens, self.max_tokens)), low(seconds, self.max_seconds)
        )


@dataclass
class _Watch:
    """What the parent learns from the child's events while it runs."""

    steps: int = 0
    tokens: int = 0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # every assistant text, in order
    final: str | None = None  # the answer of a call that asked for no tools
    finish: str = ""
    error: str = ""


@dataclass(frozen=True)
class Delegation:
    distilled: Distilled
    child_session: str
    status: str  # done, partial
    tool_status: str  # the task call's result status: ok, timeout (time bound), error (other stop)
    steps: int  # the child's model calls
    tokens: int  # prompt + completion tokens the child's calls reported


class DelegatingAgent(Protocol):
    """The Agent as its subagent runner sees it: the parent whose session, tools and model a child
    inherits, and the type a child is built as. Why a Protocol: agent.py imports this module, so
    naming `Agent` here would be an import cycle. The two private members are the process-group
    set a child shares with its parent (the parent's interrupt must reach the child's commands)."""

    settings: Settings
    store: Store
    session_id: str
    workspace: Path
    build: AgentBuild
    headless: bool
    cache_key: str
    clock: Callable[[], float]
    subagents: SubagentRunner
    _process_groups: set[int]
    _ctx: ToolContext

    def __init__(
        self,
        *,
        store: Store,
        session_id: str,
        settings: Settings,
        workspace: Path,
        stream_fn: StreamFn | None = None,
        build: AgentBuild | None = None,
        headless: bool = False,
        cache_key: str | None = None,
    ) -> None: ...

    @property
    def model_name(self) -> str: ...

    @property
    def stream_fn(self) -> StreamFn | None: ...

    def turn(self, text: str | list[dict[str, Any]]) -> AsyncGenerator[AgentEvent, None]: ...

    def kill_running_processes(self) -> None: ...

    async def aclose(self) -> Sequence[object]:
        """End the child's session (its background commands, its session_end hooks)."""
        ...


class SubagentRunner:
    """One per agent. `model`: the child's model, the parent's by default (a test or a bench
    swaps in a scripted child). `enabled` is False inside a child: a task never delegates."""

    def __init__(self, parent: DelegatingAgent, *, enabled: bool = True):
        """`parent`: the Agent that owns this runner (the child is built as `type(parent)`, so no
        import goes back up to agent.py)."""
        self.parent = parent
        self.enabled = enabled
        self.bounds = Bounds()
        self.model: str | None = None

    def _child_build(
        self, tools: frozenset[str] | None = None, instructions: str = SUBAGENT_PROMPT, model: str | None = None
    ) -> AgentBuild:
        """`tools`: the only tools the child gets (None: the parent's but `task`); `model`: the
        child's model when the runner's own (a test's) is not set."""
        parent = self.parent
        model = self.model or (model if model != parent.model_name else None)
        settings = parent.settings if model is None else parent.settings.with_values(model=model)
        base = build_agent(settings, parent.workspace, model=None if model else parent.build.model)
        keep = (lambda name: name != TASK_TOOL) if tools is None else (lambda name: name in tools)
        registry = ToolRegistry([tool for tool in parent.build.tools if keep(tool.name)])
        prompt = dataclasses.replace(base.system_prompt, text=f"{base.system_prompt.text}\n\n{instructions}")
        return dataclasses.replace(
            base, tools=registry, system_prompt=prompt, fingerprint=f"{base.fingerprint}:subagent"
        )

    def _spawn(
        self,
        task: str,
        bounds: Bounds,
        tools: frozenset[str] | None = None,
        instructions: str = SUBAGENT_PROMPT,
        model: str | None = None,
    ) -> DelegatingAgent:
        parent = self.parent
        build = self._child_build(tools, instructions, model)
        build = dataclasses.replace(build, settings=build.settings.with_values(max_steps=bounds.max_steps))
        title = "subagent: " + " ".join(task.split())[:60]
        session = parent.store.create_session(model=build.settings.model, title=title)
        child = type(parent)(
            store=parent.store,
            session_id=session.id,
            settings=build.settings,
            workspace=parent.workspace,
            stream_fn=parent.stream_fn,
            build=build,
            headless=parent.headless,
            # its own session parts: its own engine, background commands and hook lifecycle
            cache_key=parent.cache_key,
        )
        child.subagents.enabled = False
        child.clock = parent.clock
        # The child's commands are the parent's too: if the parent's interrupt gives up waiting for
        # the child's own clean-up, its kill loop still reaches them.
        child._process_groups = parent._process_groups
        child._ctx.process_groups = parent._process_groups
        return child

    async def delegate(self, task: str, bounds: Bounds, emit: Any, ask: Any = None) -> Delegation:
        """Run the child to its end or a bound. `emit` gets progress lines; `ask` gets the child's
        approval requests (None: they are answered no)."""
        if not self.enabled:
            raise RuntimeError("a subagent cannot start another subagent; do the work with your own tools")
        parent = self.parent
        child = self._spawn(task, bounds)
        store = parent.store
        store.append_event(parent.session_id, SUBAGENT_EVENT, {"child": child.session_id, "task": task[:500]})
        store.append_event(child.session_id, SUBAGENT_EVENT, {"parent": parent.session_id})
        emit(progress_line("session", child.session_id))
        watch, stopped, started, timed_out = _Watch(), "", time.monotonic(), False
        try:
            async with asyncio.timeout(bounds.max_seconds):
                async with aclosing(child.turn(task)) as events:
                    async for event in events:
                        _observe(watch, event, emit, ask)
                        if watch.tokens > bounds.max_tokens:
                            stopped = f"it used {watch.tokens:,} tokens (limit {bounds.max_tokens:,})"
                            break
        except TimeoutError:
            timed_out = True
            stopped = f"it ran for {bounds.max_seconds:.0f}s (limit)"
        except asyncio.CancelledError:
            child.kill_running_processes()
            emit(progress_line("end", "interrupted"))
            raise
        except Exception:  # a bug or a full disk: the tool runner reports it; nothing keeps running
            child.kill_running_processes()
            raise
        await child.aclose()
        if not stopped and watch.finish == "tool_limit":
            stopped = f"it made {watch.steps} model calls (limit {bounds.max_steps})"
        if not stopped and watch.finish == "error":
            stopped = f"its turn failed: {watch.error}"
        status = "partial" if stopped or watch.final is None else "done"
        seconds = time.monotonic() - started
        distilled = self._distill(watch, status, stopped, seconds, child.session_id)
        store.append_event(
            parent.session_id,
            SUBAGENT_EVENT,
            {"child": child.session_id, "status": status, "steps": watch.steps, "tokens": watch.tokens},
        )
        emit(progress_line("end", f"{status} · {watch.steps} steps · {watch.tokens:,} tokens · {seconds:.1f}s"))
        tool_status = "ok" if status == "done" else ("timeout" if timed_out else "error")
        return Delegation(distilled, child.session_id, status, tool_status, watch.steps, watch.tokens)

    def isolated(self, title: str, tools: frozenset[str], instructions: str, model: str | None) -> IsolatedChild:
        """A child with only `tools` and `instructions` for one agentic_map item: it answers by
        turns (the item, then maybe a retry), nobody answers its approvals, and it starts on the
        first question."""
        if not self.enabled:
            raise RuntimeError("a subagent cannot start another subagent")
        bounds = Bounds(ITEM_MAX_STEPS, ITEM_MAX_TOKENS, ITEM_MAX_SECONDS)
        return IsolatedChild(self, title, bounds, tools, instructions, model)

    def _distill(self, watch: _Watch, status: str, stopped: str, seconds: float, child_id: str) -> Distilled:
        if watch.final is not None and not stopped:
            full = watch.final
        else:
            done = "\n".join(f"- {name} {_brief(args)}" for name, args in watch.calls) or "- (no tool calls)"
            said = "\n\n".join(t for t in watch.texts if t.strip()) or "(it wrote nothing yet)"
            full = (
                f"The subagent was stopped before it finished: {stopped or 'it gave no final answer'}. "
                f"This is partial work.\nWhat it said:\n{said}\nTool calls it made:\n{done}"
            )
        answer, handover = parse_handover(full, watch.calls)
        header = (
            f"[subagent {status}: {watch.steps} model calls, {len(watch.calls)} tool calls, "
            f"{watch.tokens:,} tokens, {seconds:.0f}s · child session {child_id}]"
        )
        if stopped:
            header += f"\nstopped early: {stopped}. Only what is listed was done."
        model = self.parent.model_name
        return distill(
            header,
            answer,
            handover,
            full_text=full,
            vault=self.parent.store.vault,
            count=lambda text: count_text_tokens(text, model),
        )


@dataclass(frozen=True)
class ChildAnswer:
    text: str  # the final answer ("" when it gave none)
    tokens: int = 0
    cost: float = 0.0
    error: str = ""  # why it stopped without an answer ("" when it answered)


class IsolatedChild:
    """One child agent asked in turns, bounded per turn (agentic_map's worker for one item)."""

    def __init__(
        self,
        runner: SubagentRunner,
        title: str,
        bounds: Bounds,
        tools: frozenset[str],
        instructions: str,
        model: str | None,
    ):
        self.runner, self.title, self.bounds = runner, title, bounds
        self.tools, self.instructions, self.model = tools, instructions, model
        self.child: DelegatingAgent | None = None

    async def ask(self, text: str) -> ChildAnswer:
        child = self.child
        if child is None:
            child = self.child = self.runner._spawn(self.title, self.bounds, self.tools, self.instructions, self.model)
            store, parent_id = self.runner.parent.store, self.runner.parent.session_id
            store.append_event(parent_id, SUBAGENT_EVENT, {"child": child.session_id, "task": self.title})
            store.append_event(child.session_id, SUBAGENT_EVENT, {"parent": parent_id})
        watch, cost, limit = _Watch(), 0.0, self.bounds.max_tokens
        try:
            async with asyncio.timeout(self.bounds.max_seconds):
                async with aclosing(child.turn(text)) as events:
                    async for event in events:
                        _observe(watch, event, lambda line: None, None)
                        if isinstance(event, UsageEvent):
                            cost += event.cost or 0.0
                        if watch.tokens > limit:
                            return ChildAnswer("", watch.tokens, cost, f"the item's agent used over {limit:,} tokens")
        except TimeoutError:
            return ChildAnswer("", watch.tokens, cost, f"the item's agent ran over {self.bounds.max_seconds:.0f}s")
        except asyncio.CancelledError:
            child.kill_running_processes()
            raise
        if watch.final is None or watch.finish in ("tool_limit", "error"):
            why = watch.error or f"it stopped ({watch.finish or 'no final answer'}) after {watch.steps} model calls"
            return ChildAnswer("", watch.tokens, cost, f"the item's agent gave no answer: {why}")
        return ChildAnswer(watch.final, watch.tokens, cost)

    async def aclose(self) -> None:
        if self.child is not None:
            await self.child.aclose()


def _brief(arguments: dict[str, Any]) -> str:
    text = " ".join(f"{k}={v}" for k, v in arguments.items())
    return text if len(text) <= 120 else text[:119] + "…"


def _observe(watch: _Watch, event: Any, emit: Any, ask: Any) -> None:
    if isinstance(event, StepStarted):
        watch.steps = event.step
        emit(progress_line("step", f"{event.step} ({event.prompt_tokens:,} prompt tokens)"))
    elif isinstance(event, UsageEvent):
        watch.tokens += event.prompt_tokens + event.completion_tokens
    elif isinstance(event, AssistantMessageStored):
        watch.texts.append(event.text)
        watch.final = None if event.tool_calls else event.text
    elif isinstance(event, ToolStarted):
        watch.calls.append((event.name, dict(event.arguments)))
        emit(progress_line("call", f"{event.name} {_brief(event.arguments)}"))
    elif isinstance(event, ToolFinished):
        emit(progress_line("result", f"{event.name} {event.status} {event.duration_s:.1f}s"))
    elif isinstance(event, ApprovalRequest):
        if ask is not None:  # the same future: the person's answer reaches the child's runner
            ask(dataclasses.replace(event, summary=f"subagent: {event.summary}"))
        elif event.decision is not None and not event.decision.done():
            event.decision.set_result(False)
    elif isinstance(event, TurnError):
        watch.error = event.message
    elif isinstance(event, TurnFinished):
        watch.finish = event.reason
