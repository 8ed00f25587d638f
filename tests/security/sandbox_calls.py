"""Running bash the way a user's session does, for the security tests: through `Agent.turn` with a
scripted model (yolo, so only what must ask asks), or the Bash tool alone for the many variants of
one attack. Evidence is always gathered on the host, never from the command's own word."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalRequest, ToolFinished
from myrm_tui.agent.tools.base import ToolContext, ToolResult
from myrm_tui.agent.tools.shell.bash import Bash
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store


def settings(**values: Any) -> Settings:
    return Settings().with_values(**values)


async def bash(workspace: Path, command: str, **values: Any) -> ToolResult:
    """One bash call in `workspace`, output streamed into the result (the excerpt of a big output
    is not enough evidence)."""
    streamed: list[str] = []
    values.setdefault("bash_timeout", 30.0)
    ctx = ToolContext(workspace, settings(**values), None, emit=streamed.append)
    result = await Bash().run({"command": command}, ctx)
    return ToolResult("".join(streamed) + "\n" + result.content, result.status, result.vault_handle)


@dataclass
class Turn:
    finished: list[ToolFinished] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)


def script_file(folder: Path, *turns: dict[str, Any]) -> str:
    path = folder / f"script-{len(list(folder.glob('script-*.json')))}.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"scripted/{path}"


def bash_calls(*commands: str, **extra: Any) -> Iterator[dict[str, Any]]:
    for index, command in enumerate(commands):
        yield {"tool_calls": [{"id": f"c{index}", "name": "bash", "arguments": {"command": command, **extra}}]}


async def turn(workspace: Path, scripts: Path, commands: list[str], approve: bool = False, **values: Any) -> Turn:
    """A whole agent turn in yolo whose model runs `commands` one call at a time; an approval
    request is answered with `approve` and recorded."""
    model = script_file(scripts, *bash_calls(*commands), {"text": "done"})
    values.setdefault("approval", "yolo")
    store = Store.open(workspace)
    try:
        session = store.create_session(model=model)
        agent = Agent(store=store, session_id=session.id, settings=settings(model=model, **values), workspace=workspace)
        log = Turn()
        async for event in agent.turn("go"):
            if isinstance(event, ApprovalRequest):
                log.approvals.append(event)
                assert event.decision is not None
                event.decision.set_result(approve)
            elif isinstance(event, ToolFinished):
                log.finished.append(event)
        return log
    finally:
        store.close()
