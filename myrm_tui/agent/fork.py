"""Fork with summary: a new session that starts small instead of sharing the whole history.

Why: past ~75% of the window the cheapest way forward is often a fresh session that keeps what
matters: the human anchor (shared with the parent by reference), a summary of the middle, and
the last turns verbatim. The parent is untouched; the child's summary names where the
originals are.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.footer import footer_from_records
from myrm_tui.context.summary.redact import redact_summary
from myrm_tui.context.summary.schema import render
from myrm_tui.context.tokens import count_message_tokens, count_text_tokens


def fork_with_summary(store: Any, session_id: str, *, model: str, keep_user_turns: int = 2) -> Any:
    rows = store.messages(session_id)
    users = [i for i, r in enumerate(rows) if r.role == "user"]
    if not users:
        raise ValueError("this session has no user message yet; there is nothing to fork")
    anchor = users[0]
    later = [i for i in users if i > anchor]
    keep_from = later[-keep_user_turns] if len(later) >= keep_user_turns else (later[0] if later else len(rows))
    middle = rows[anchor + 1:keep_from]
    parent = store.get_session(session_id)
    title = f"{parent.title or session_id} (fork with summary)"
    if not middle:
        return store.fork(session_id, title=title)
    child = store.fork(session_id, at_message=rows[anchor].id, title=title)
    summary = extractive_summary([r.message for r in middle], ids=[r.id for r in middle],
                                 source_tokens=sum(r.tokens for r in middle),
                                 count=lambda t: count_text_tokens(t, model))
    summary, _ = redact_summary(summary)
    text = render(summary, handle=f"parent {session_id}", depth=0, covered_count=len(middle),
                  time_range=(middle[0].created_at, middle[-1].created_at),
                  footer=footer_from_records(middle).render()
                  + f"\nOriginals: session {session_id} (`myrm sessions show {session_id}`).")
    message = {"role": "user", "content": text}
    store.append_message(child.id, message, count_message_tokens(message, model))
    for row in rows[keep_from:]:
        store.append_message(child.id, row.message, row.tokens)
    store.repair_dangling_tool_calls(child.id)
    store.append_event(session_id, "fork", {"child": child.id, "with_summary": True,
                                            "summarized_messages": len(middle)})
    store.append_event(child.id, "fork", {"parent": session_id, "with_summary": True,
                                          "summarized_messages": len(middle),
                                          "copied_messages": len(rows) - keep_from})
    return store.get_session(child.id)
