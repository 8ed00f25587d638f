"""The map engine behind `llm_map` and `agentic_map`: one instruction applied to many items by the
engine itself, each item in its own small call, outside the parent's context (docs/llm-map.md)."""
