"""Names of event kinds, in one place so writers and readers (TUI, bench) agree.

A StrEnum: a member is its string, so what is stored (and every `kind == "usage"` written
before this enum) stays the same, and a misspelt kind is an AttributeError instead of a query
that silently finds nothing.
"""

from enum import StrEnum


class EventKind(StrEnum):
    USAGE = "usage"  # data: model, prompt_tokens, completion_tokens, cached_read_tokens, cached_write_tokens, cost
    ERROR = "error"  # data: error_class, message, hint
    MODEL_SWITCH = "model_switch"  # data: old, new, old_window, new_window
    ASSEMBLE = "assemble"  # data: the engine's per-assemble report
    COMPACTION = "compaction"  # data: trigger, tokens_before, tokens_after, …
    SUMMARY = "summary"  # data: one prepared summary (model, attempts, …; context/compaction/prepared_summaries.py)
    INTERRUPTED = "interrupted"  # data: reason, repaired_call_ids
    REPAIR = "repair"  # data: repaired_call_ids (dangling calls answered on resume)
    NOTE = "note"  # data: text (a user-visible note, e.g. "model has no tool calling")
    FORK = "fork"  # data: child / parent, with_summary, summarized_messages (agent/fork.py)
    # data: tools (the live MCP tool names offered), digest (of their schemas), offered (every
    # schema in prompt order, stubs included) and unavailable (the stubs' names): mcp/frozen_order.py
    MCP_TOOLS = "mcp_tools"
    # data: turn, path, before (vault handle or None: absent), after (sha256 or None), source
    # (agent/undo/checkpoints.py)
    CHECKPOINT = "checkpoint"
    UNDO = "undo"  # data: turns, paths, forced (agent/undo/rewind.py)
    # data: message_id, model, tokens in/out/cached, cost, elapsed_s, first_token_s (agent/reply_figures.py)
    REPLY_FIGURES = "reply_figures"
    # data: path, sha256, mtime_ns, size, how (read/range/write/edit/reread/offered), handle (agent/read_registry.py)
    FILE_SEEN = "file_seen"
    # data: event, command, status (ok/failed/timeout/error), exit_code, duration_s, output, handle (agent/hooks.py)
    HOOK = "hook"
    # data: kind (hit/break/unexpected-break/unexpected-hit), provider, expected_tokens, reported_tokens, gap_s,
    # cause (context/cache_observer.py: the prediction checked against the provider's usage)
    CACHE_VERDICT = "cache_verdict"
    # data: map (map id), key (item key), output, attempts, tokens, cost: one finished item of an
    # llm_map/agentic_map call (agent/map/ledger.py), so a re-run skips it
    MAP_ITEM = "map_item"


# The names writers and readers import (`event_kinds.USAGE`): the enum's own members.
USAGE = EventKind.USAGE
ERROR = EventKind.ERROR
MODEL_SWITCH = EventKind.MODEL_SWITCH
ASSEMBLE = EventKind.ASSEMBLE
COMPACTION = EventKind.COMPACTION
SUMMARY = EventKind.SUMMARY
INTERRUPTED = EventKind.INTERRUPTED
REPAIR = EventKind.REPAIR
NOTE = EventKind.NOTE
FORK = EventKind.FORK
MCP_TOOLS = EventKind.MCP_TOOLS
CHECKPOINT = EventKind.CHECKPOINT
UNDO = EventKind.UNDO
REPLY_FIGURES = EventKind.REPLY_FIGURES
FILE_SEEN = EventKind.FILE_SEEN
HOOK = EventKind.HOOK
CACHE_VERDICT = EventKind.CACHE_VERDICT
MAP_ITEM = EventKind.MAP_ITEM
