"""Names of event kinds, in one place so writers and readers (TUI, bench) agree."""

USAGE = "usage"  # data: model, prompt_tokens, completion_tokens, cached_read_tokens, cached_write_tokens, cost
ERROR = "error"  # data: error_class, message, hint
MODEL_SWITCH = "model_switch"  # data: old, new, old_window, new_window
ASSEMBLE = "assemble"  # data: the engine's per-assemble report
COMPACTION = "compaction"  # data: trigger, tokens_before, tokens_after, …
INTERRUPTED = "interrupted"  # data: reason, repaired_call_ids
REPAIR = "repair"  # data: repaired_call_ids (dangling calls answered on resume)
NOTE = "note"  # data: text (a user-visible note, e.g. "model has no tool calling")
FORK = "fork"  # data: child / parent, with_summary, summarized_messages (agent/fork.py)
MCP_TOOLS = "mcp_tools"  # data: tools (the MCP tool names offered), digest (of their schemas)
# data: turn, path, before (vault handle or None: absent), after (sha256 or None), source (agent/checkpoints.py)
CHECKPOINT = "checkpoint"
UNDO = "undo"  # data: turns, paths, forced (agent/undo.py)
# data: message_id, model, tokens in/out/cached, cost, elapsed_s, first_token_s (agent/reply_figures.py)
REPLY_FIGURES = "reply_figures"
