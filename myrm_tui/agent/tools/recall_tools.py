"""The recall tools: how the model gets back what the context engine left out of its prompt.

The engine may omit, mask or summarise old messages; nothing is deleted, and these tools reach
it by handle (`msg:<id>`, `vault://<hex>`). They are thin: `myrm_tui.context.recall.answers` does the
work over the store and answers in text; this module only gives it a schema, clamps what the
model may ask for, and turns its "error: …" answers into error results.

All are read-only (kind "read"): recall never changes anything, so it never needs approval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.notes import SessionNote
from myrm_tui.context.recall import answers as recall
from myrm_tui.context.recall.scope import DEFAULT_SCOPE
from myrm_tui.store.search import RECALL_SCOPES

# Hits a model may ask ctx_search for: 25 snippets are ~2.5k tokens. The store allows more,
# but past ~25 the ranking has stopped helping and a narrower query is the better move.
SEARCH_TOOL_MAX_LIMIT = 25
# Room kept under `tool_output_cap` for ctx_expand's header, wrapper and continuation hint, so
# an expansion is never itself spilled to the vault (recalling would then mint a new artifact
# instead of showing the content).
EXPAND_FRAME_CHARS = 1_000

_HANDLE_DESCRIPTION = (
    "A handle exactly as shown in this session: msg:<id> or vault://<hex>, from ctx_search "
    "results, omission markers or spilled-output notes."
)
# Static text (the tool list is part of the cached prompt prefix): no session ids, no titles.
_SCOPE_DESCRIPTION = (
    f'Where to search: "{DEFAULT_SCOPE}" (default) is this session; "workspace" also searches the '
    "other sessions of this workspace (earlier conversations, forks), each hit labelled with its session."
)


def _store_of(ctx: ToolContext, tool: str) -> tuple[Any, str]:
    if ctx.store is None or not ctx.session_id:
        raise ToolError(
            f"{tool} needs the session's store, and none is open here; use file_read/grep on the workspace instead."
        )
    return ctx.store, ctx.session_id


def _as_result(text: str) -> ToolResult:
    """recall answers "error: …" for anything the model can correct; keep that visible as an
    error result so the UI and the stored status agree."""
    return ToolResult(text, "error" if text.startswith("error:") else "ok")


def _clamp_limit(value: Any) -> int:
    if value is None:
        return recall.SEARCH_DEFAULT_LIMIT
    return max(1, min(int(value), SEARCH_TOOL_MAX_LIMIT))


def expand_max_chars(ctx: ToolContext) -> int:
    """The default expansion size, lowered when the user's inline cap is smaller than it."""
    cap = int(ctx.settings.tool_output_cap)
    return max(1, min(recall.EXPAND_MAX_CHARS, cap - EXPAND_FRAME_CHARS))


class CtxSearch(Tool):
    name = "ctx_search"
    description = (
        "Search this session's whole history, including messages and tool outputs no longer in "
        "your context and full spilled outputs (vault://). Use it when you need something from "
        "earlier that you cannot see now: a path, an error message, a value or decision the user "
        "gave. Matches words, phrases and identifiers. Returns ranked snippets with handles for "
        'ctx_expand (the original text) and ctx_inspect (what a handle is). Use scope="workspace" '
        "when the user refers to an earlier conversation, or this session has no match."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words, a phrase or an identifier to find."},
            "limit": {
                "type": "integer",
                "description": f"How many hits (1-{SEARCH_TOOL_MAX_LIMIT}, default {recall.SEARCH_DEFAULT_LIMIT}).",
            },
            "scope": {"type": "string", "enum": sorted(RECALL_SCOPES), "description": _SCOPE_DESCRIPTION},
        },
        "required": ["query"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        where = " across the workspace" if args.get("scope") == "workspace" else ""
        return ApprovalPreview(summary=f"search history{where} for {args.get('query')!r}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store, session_id = _store_of(ctx, self.name)
        scope = args.get("scope")
        text = recall.ctx_search(store, session_id, args["query"], _clamp_limit(args.get("limit")), scope)
        return _as_result(text)


class CtxInspect(Tool):
    name = "ctx_inspect"
    description = (
        "Describe a handle without fetching it: what it is (which message or tool output), when, "
        "how big, and what your context shows in its place. Use it before ctx_expand on "
        "something that may be large, or to learn why content is missing from your context."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"handle": {"type": "string", "description": _HANDLE_DESCRIPTION}},
        "required": ["handle"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"inspect {args.get('handle')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store, session_id = _store_of(ctx, self.name)
        replacements: Mapping[str, str] | None = None
        if ctx.replacements is not None:
            replacements = ctx.replacements()
        return _as_result(recall.ctx_inspect(store, session_id, args["handle"], replacements))


class CtxExpand(Tool):
    name = "ctx_expand"
    description = (
        "Get back the original content behind a handle (msg:<id> or vault://<hex>) exactly as it "
        "was, e.g. a tool output your context only shows cut or omitted. Whole, a line range "
        '(lines="200:400", 1-based inclusive), or only the lines matching query with some '
        "context. Long content comes in parts; the result ends with the call that continues."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": _HANDLE_DESCRIPTION},
            "query": {
                "type": "string",
                "description": "Optional: show only lines matching these words (with context).",
            },
            "lines": {
                "type": "string",
                "description": 'Optional 1-based inclusive line range: "200:400", "200:" or ":50".',
            },
        },
        "required": ["handle"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"expand {args.get('handle')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store, session_id = _store_of(ctx, self.name)
        text = recall.ctx_expand(
            store,
            session_id,
            args["handle"],
            query=args.get("query"),
            lines=args.get("lines"),
            max_chars=expand_max_chars(ctx),
        )
        return _as_result(text)


def recall_tools() -> tuple[Tool, ...]:
    """Fresh instances in the fixed order the tool list (a cached prompt prefix) relies on."""
    return (CtxSearch(), CtxInspect(), CtxExpand(), SessionNote())
