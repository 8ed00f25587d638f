"""The tools of a replayed session: each call returns the result the recording holds.

Why tools and not rows written behind the agent's back: a recorded result must take the path a
live one takes (the agent's spill to the vault, the index written with the row, the smart
filter at ingestion, the status field), or the replay measures something a user never runs.

A `RecordedTool` stands in for each tool the recording uses, under its name. It offers the
model the real tool's schema (the tool list is part of every prompt), but accepts any argument
the recording used: a recorded call was answered, so the replay must deliver that answer, not
an argument error of today's schema. It never asks for approval (nothing runs).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolResult
from myrm_tui.agent.tools.registry import ToolRegistry


@dataclass
class _Expected:
    name: str
    arguments: dict[str, Any] | None  # None: the recorded arguments were not a JSON object
    content: str | None  # None: the recording has no result for this call


def arguments_of(call: dict[str, Any]) -> dict[str, Any] | None:
    raw = (call.get("function") or {}).get("arguments", "")
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def result_text(message: dict[str, Any], vault: Any) -> str:
    """A recorded tool result as the text a tool returns. List content keeps its text parts; an
    image part goes to the vault and is named by its handle (myrm's tools return text only)."""
    from myrm_tui.context.rows.media import image_url_of, offload_images

    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = offload_images({"role": "tool", "content": content}, vault)["content"] if vault is not None else content
    out = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            out.append(f"[image {image_url_of(part)[:200]}]")
        else:
            out.append(str(part.get("text", "")))
    return "\n".join(out)


class RecordedResults:
    """The results the recording gives for the calls still to run, in call order."""

    def __init__(self) -> None:
        self._pending: list[_Expected] = []

    def expect(self, name: str, arguments: dict[str, Any] | None, content: str | None) -> None:
        self._pending.append(_Expected(name, arguments, content))

    def clear(self) -> int:
        """Forget what was not delivered; returns how many."""
        count = len(self._pending)
        self._pending.clear()
        return count

    def _find(self, name: str, arguments: dict[str, Any]) -> _Expected | None:
        return next((e for e in self._pending if e.name == name and e.arguments == arguments), None)

    def missing(self, name: str, arguments: dict[str, Any]) -> bool:
        """The next call like this one has no recorded result (its process died first)."""
        found = self._find(name, arguments)
        return found is not None and found.content is None

    def expects(self, name: str) -> bool:
        return any(e.name == name for e in self._pending)

    def argument_names(self, name: str) -> list[str]:
        names: dict[str, None] = {}
        for expected in self._pending:
            if expected.name == name and expected.arguments:
                names.update(dict.fromkeys(expected.arguments))
        return list(names)

    def take(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        found = self._find(name, arguments)
        if found is None or found.content is None:
            return ToolResult(f"error: the recording has no result for this {name} call", "error")
        self._pending.remove(found)
        return ToolResult(found.content, "ok")


class RecordedTool(Tool):
    kind = "read"  # nothing runs: never asks

    def __init__(self, name: str, schema: dict[str, Any], results: RecordedResults):
        self.name = name  # per instance: one class stands in for every tool
        self.description = str((schema.get("function") or {}).get("description", ""))
        self._schema = schema
        self._results = results

    # Read-only on purpose: it follows the recording's pending calls, so nothing may set it.
    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        """What argument validation sees: every argument the recording's pending calls use."""
        return {"type": "object", "properties": {key: {} for key in self._results.argument_names(self.name)}}

    def schema(self) -> dict[str, Any]:
        return copy.deepcopy(self._schema)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"{self.name} (recorded result)")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self._results.take(self.name, args)


class RecordedRegistry(ToolRegistry):
    """The offered tools (myrm's, by schema and order) and, for any other name a recorded call
    uses, a stand-in made on demand: it answers with the recorded result but is never offered
    to the model (the tool list stays myrm's, as in every other prompt)."""

    def __init__(self, offered: Sequence[Tool], results: RecordedResults):
        super().__init__(offered)
        self._results = results
        self._hidden: dict[str, RecordedTool] = {}

    def get(self, name: str) -> Tool | None:
        tool = super().get(name)
        if tool is not None or not self._results.expects(name):
            return tool
        if name not in self._hidden:
            self._hidden[name] = RecordedTool(name, generic_schema(name), self._results)
        return self._hidden[name]


def recorded_registry(offered_schemas: Iterable[dict[str, Any]], results: RecordedResults) -> RecordedRegistry:
    """Stand-ins for the tools behind `offered_schemas`, in their order."""
    tools = [RecordedTool(str(s["function"]["name"]), s, results) for s in offered_schemas]
    return RecordedRegistry(tools, results)


def generic_schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "", "parameters": {"type": "object"}}}
