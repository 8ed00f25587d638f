"""Helpers for agent tests (imported by the test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest
from myrm_tui.settings.settings import Settings

if TYPE_CHECKING:
    from myrm_tui.settings.sections.output_filters import FilterSpec

# The tools every agent offers, in the fixed order the prompt prefix (and its cache) depends on:
# the built-ins, then the recall tools. Spelled once here; a tool added or moved fails each test
# that compares against it.
BUILTIN_TOOL_NAMES = (
    "file_read",
    "file_write",
    "file_edit",
    "bash",
    "bash_output",
    "bash_kill",
    "grep",
    "glob",
    "web_fetch",
    "task",
    "llm_map",
    "agentic_map",
)
RECALL_TOOL_NAMES = ("ctx_search", "ctx_inspect", "ctx_expand", "session_note")
TOOL_ORDER = (*BUILTIN_TOOL_NAMES, *RECALL_TOOL_NAMES)


def settings_for(model: str = "", **values: Any) -> Settings:
    return Settings().with_values(model=model, **values)


@dataclass
class TurnLog:
    events: list[Any] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


Answer = bool | ApprovalAnswer


async def drive(
    agent: Agent, text: str | list[dict[str, Any]], approve: Answer | Callable[[ApprovalRequest], Answer] = True
) -> TurnLog:
    """Consume a whole turn, answering approvals like a user would."""
    log = TurnLog()
    async for event in agent.turn(text):
        log.events.append(event)
        if isinstance(event, ApprovalRequest):
            log.approvals.append(event)
            answer = approve(event) if callable(approve) else approve
            assert event.decision is not None
            event.decision.set_result(answer)
    return log


def compact_any_span(agent: Agent) -> Agent:
    """Let the compact command summarize a span of any size: these tests are about what a
    compaction does to a short session's rows, not about the command's least span
    (`EngineConfig.min_manual_compact_tokens`, tests/agent/test_compact_summarizes.py)."""
    agent.engine.config = dataclasses.replace(agent.engine.config, min_manual_compact_tokens=0)
    return agent


def make_agent(store, workspace: Path, model: str, **values: Any) -> Agent:
    session = store.create_session(model=model)
    return Agent(store=store, session_id=session.id, settings=settings_for(model, **values), workspace=workspace)


def filtered_agent(store, workspace: Path, model: str, filters: tuple[FilterSpec, ...]) -> Agent:
    """A yolo agent whose settings carry declarative output `filters`, as `bootstrap` settles them
    (cli_commands/filter_setup.py)."""
    settings = dataclasses.replace(settings_for(model, approval="yolo"), output_filters=filters)
    session = store.create_session(model=model)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)


def pid_gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")
