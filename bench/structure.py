"""Provider-validity checks on one prompt, computed from the messages alone.

Why these checks: a provider rejects (or silently mis-reads) a request whose tool results do not
pair with the calls right before them. Engines that cut history by token count break exactly
this, so the scorer recounts it itself instead of trusting an engine's integrity report.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

# Counters that make a request invalid for strict providers; the rest are informative.
ERROR_KEYS = ("orphan_results", "dangling_calls", "role_order_errors", "duplicate_call_ids")


def check_structure(messages: list[dict[str, Any]]) -> Counter:
    """Counts per problem kind in one prompt.

    - orphan_results: a tool result whose id matches no earlier call in the prompt;
    - dangling_calls: a call with no result anywhere after it;
    - role_order_errors: first non-system message not from the user; a system message after
      position 0; a tool result not inside the run of results right after the assistant message
      that made the call (e.g. a user message in between); a second result for one call; an
      unknown role;
    - duplicate_call_ids: a call id used twice;
    - same_role_runs (informative): two user or two assistant messages in a row;
    - empty_messages (informative): no content and no tool calls.
    """
    issues: Counter = Counter()
    calls: set[str] = set()
    answered: set[str] = set()
    open_block: set[str] = set()  # ids of the nearest assistant message, while only results follow it
    first_non_system = True
    previous_role = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            if index > 0:
                issues["role_order_errors"] += 1
            open_block = set()
            previous_role = role
            continue
        if first_non_system:
            first_non_system = False
            if role != "user":
                issues["role_order_errors"] += 1
        if role in ("user", "assistant") and role == previous_role:
            issues["same_role_runs"] += 1
        if role == "assistant":
            tool_calls = message.get("tool_calls") or []
            if not tool_calls and _is_empty(message.get("content")):
                issues["empty_messages"] += 1
            open_block = set()
            for call in tool_calls:
                call_id = call.get("id")
                if call_id in calls:
                    issues["duplicate_call_ids"] += 1
                calls.add(call_id)
                open_block.add(call_id)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in calls:
                issues["orphan_results"] += 1
            elif call_id in answered or call_id not in open_block:
                issues["role_order_errors"] += 1
            answered.add(call_id)
        elif role == "user":
            open_block = set()
            if _is_empty(message.get("content")):
                issues["empty_messages"] += 1
        else:
            issues["role_order_errors"] += 1
            open_block = set()
        previous_role = role
    issues["dangling_calls"] += len(calls - answered)
    return issues


def _is_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return not content
    return False
