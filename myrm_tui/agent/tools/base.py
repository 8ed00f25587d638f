"""What every tool shares: its schema, the context it runs in, and the shape of its result.

Why a tiny class per tool rather than decorated functions: a tool has three faces (the JSON
schema the model sees, a preview the approval prompt shows, the run itself) and keeping them
on one object keeps them from drifting apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.tools.editor_port import EditorFiles
from myrm_tui.settings.settings import Settings
from myrm_tui.store.vault import Vault

if TYPE_CHECKING:
    from myrm_tui.store.store import Store


class ToolError(Exception):
    """A tool call that cannot be done; the message goes back to the model as the result."""


@dataclass
class ToolContext:
    """Everything a tool may touch. `emit` streams live output to the consumer (display only);
    `process_groups` lets the agent kill what a tool started when the turn is interrupted.

    `store` and `session_id` let the recall tools read this session's history (None in a bare
    tool test: those tools then answer with a clear error). `replacements`, supplied by the
    context engine, says what the prompt shows instead of each handle it replaced, so
    ctx_inspect can tell the model why something is missing from its view."""

    workspace: Path
    settings: Settings
    vault: Vault | None
    emit: Callable[[str], None] = lambda text: None
    process_groups: set[int] = field(default_factory=set)
    store: Store | None = None  # the session log (its recall methods and the read registry)
    session_id: str | None = None
    replacements: Callable[[], Mapping[str, str]] | None = None
    # A person said yes to this call after being told it asks for the network (bash only).
    network_granted: bool = False
    # The session's background commands (tools/bash_background.BackgroundJobs), shared by bash,
    # bash_output and bash_kill; None (a bare tool test) makes `background: true` an error.
    background: Any = None
    # The agent's SubagentRunner (agent/subagent/child.py) for the task tool; None in a bare tool test.
    subagents: Any = None
    # Where a tool that runs an agent (task) sends that agent's approval requests; the tool runner
    # yields them as the tool call's own, so a person answers them. None: nobody can answer.
    ask: Callable[[Any], None] | None = None
    # The editor's files when myrm runs inside one (ACP): file tools read and write through it,
    # after the same fence and checks (tools/editor_files.py). None: the disk, as everywhere else.
    editor: EditorFiles | None = None


@dataclass(frozen=True)
class ToolResult:
    content: str
    status: str = "ok"  # ok, error, timeout, interrupted (denied is decided by the agent)
    vault_handle: str | None = None


@dataclass(frozen=True)
class ApprovalPreview:
    """What the approval prompt shows: one line, and a unified diff for file changes.
    `network_requested`: a yes also lets this command reach the network (bash in the sandbox)."""

    summary: str
    diff: str | None = None
    network_requested: bool = False


class Tool:
    # Instance attributes, not ClassVars: most tools set them once on the class, but an MCP tool
    # or a replayed recording is one class standing in for many tools, set per instance.
    name: str
    description: str
    parameters: dict[str, Any]
    # read: never asks; write: file changes; exec: runs commands (see approvals.py)
    kind: str = "read"

    def schema(self) -> dict[str, Any]:
        """OpenAI function-tool schema (litellm translates it for every provider)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        """Describe the call for an approval prompt; raises ToolError if it cannot succeed."""
        return ApprovalPreview(summary=f"{self.name} {args}")

    async def approval_preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        """The preview the approval shows, where it may need to wait (a file the editor holds is
        read from the editor, so the diff and the integrity guard see its buffer)."""
        return self.preview(args, ctx)

    def required_approval(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Why this call must ask a person whatever the approval policy (e.g. bash asking for
        the network), or None to let the policy decide."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def validate_arguments(tool: Tool, args: dict[str, Any]) -> None:
    """Check required and known keys and basic JSON types, so a malformed call gets one clear
    sentence back instead of a Python TypeError."""
    props: dict[str, Any] = tool.parameters.get("properties", {})
    missing = [k for k in tool.parameters.get("required", ()) if k not in args or args[k] is None]
    if missing:
        raise ToolError(f"{tool.name} needs the argument(s) {', '.join(missing)}; call it again with them.")
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolError(f"{tool.name} has no argument(s) {', '.join(unknown)}; its arguments are {', '.join(props)}.")
    checks = {"string": (str,), "integer": (int,), "boolean": (bool,), "number": (int, float)}
    for key, value in args.items():
        if value is None:
            continue
        expected = props[key].get("type")
        types = checks.get(expected)
        if types is None:
            continue
        if isinstance(value, bool) and expected in ("integer", "number"):
            raise ToolError(f"{tool.name}: argument {key} must be a {expected}, got {value!r}.")
        if not isinstance(value, types):
            # Models often send "12" for an integer; accept it when it converts cleanly.
            if expected in ("integer", "number") and isinstance(value, str):
                try:
                    args[key] = int(value) if expected == "integer" else float(value)
                    continue
                except ValueError:
                    pass
            raise ToolError(f"{tool.name}: argument {key} must be a {expected}, got {value!r}.")
