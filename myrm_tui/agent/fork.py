"""Fork with summary: a new session that starts small instead of sharing the whole history.

Why: past ~75% of the window the cheapest way forward is often a fresh session that keeps what
matters: the human anchor (shared with the parent by reference), a summary of the middle, and
the last turns verbatim. The parent is untouched.

The summary must tell the truth, because the next model acts on it: it is built from what the
stored rows say happened (`context/summary/outcomes.py`): a denied or interrupted call is not
"done", a file is "modified" only after a successful write, and an ask is "pending" only when no
reply followed it. Where the parent's own model-written summary nodes already cover part of
that span, their text is reused (`fork_cover.py`) and only the rest is extracted. Its message
is marked `SYNTHETIC_KEY: FORK_SUMMARY` so the transcript shows it as a summary block, never as
something the user typed; the provider never sees the mark (the engine's normalize stage keeps
only provider fields).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.fork_cover import fork_body, model_nodes, summarized_until
from myrm_tui.context.summary.footer import build_footer
from myrm_tui.context.summary.schema import render
from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens
from myrm_tui.redact import redact_summary
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.store.records import SessionRecord
    from myrm_tui.store.store import Store

# The stored message's bookkeeping key (read by the TUI history and the health screen) and
# its value on a fork's summary.
SYNTHETIC_KEY = "myrm_synthetic"
FORK_SUMMARY = "fork_summary"


def is_fork_summary(message: dict[str, Any]) -> bool:
    return message.get(SYNTHETIC_KEY) == FORK_SUMMARY


def _originals(session_id: str, first_id: int, last_id: int) -> str:
    """Where the summarized messages are. They belong to the parent, after the fork point, so
    `ctx_expand` in the fork cannot reach them: the summary names no handle it would fail on."""
    return (
        f"messages {first_id}–{last_id} of session {session_id}, not part of this fork "
        f"(`myrm sessions show {session_id}` prints them)"
    )


def keep_model(store: Store, child_id: str, model: str | None) -> SessionRecord:
    """Record `model` as the fork's model and return its row. A fork continues its parent's
    conversation with the model the parent was talking to at that moment, a switch made for that
    session only (`/model NAME`, Ctrl+O) included: the store copies the parent's row, which is
    only updated when the next turn runs, and the app's saved default is not the session's model.
    The sessions list, a resume and the fork's requests then all name the same model."""
    child = store.get_session(child_id)
    if model and child.model != model:
        store.set_session_model(child_id, model)
        child = store.get_session(child_id)
    return child


def fork_with_summary(store: Store, session_id: str, *, model: str, keep_user_turns: int = 2) -> SessionRecord:
    rows = store.messages(session_id)
    users = [i for i, r in enumerate(rows) if r.role == "user" and not is_fork_summary(r.message)]
    if not users:
        raise ValueError("this session has no user message yet; there is nothing to fork")
    anchor = users[0]
    later = [i for i in users if i > anchor]
    keep_from = later[-keep_user_turns] if len(later) >= keep_user_turns else (later[0] if later else len(rows))
    nodes = model_nodes(store, session_id)
    if later:
        keep_from = summarized_until(rows, anchor + 1, keep_from, later[-1], nodes)
    middle = rows[anchor + 1 : keep_from]
    parent = store.get_session(session_id)
    title = f"{parent.title or session_id} (fork with summary)"
    if not middle:
        return keep_model(store, store.fork(session_id, title=title).id, model)
    child = store.fork(session_id, at_message=rows[anchor].id, title=title)
    messages = [r.message for r in middle]
    # A kept turn follows the middle: an ask in it without a reply was never answered.
    anchor_text = rows[anchor].message.get("content")
    # The parent's model-written nodes where they cover the middle, extractive for the rest.
    body = fork_body(
        middle,
        nodes,
        previous_goal=anchor_text if isinstance(anchor_text, str) else "",
        count=lambda t: count_text_tokens(t, model),
        ends_turn=keep_from < len(rows),
    )
    summary, _ = redact_summary(body.summary)
    # Files and tools of the middle; no handles (they name the parent's rows, see _originals).
    footer = replace(build_footer(messages), errors=(), handles=(), first_handle="", last_handle="")
    text = render(
        summary,
        handle=f"parent {session_id}",
        depth=0,
        covered_count=len(middle),
        time_range=(middle[0].created_at, middle[-1].created_at),
        footer=footer.render(),
        originals=_originals(session_id, middle[0].id, middle[-1].id),
    )
    message = {"role": "user", "content": text, SYNTHETIC_KEY: FORK_SUMMARY}
    record = store.append_message(child.id, message, count_message_tokens(message, model))
    for row in rows[keep_from:]:
        store.append_message(child.id, row.message, row.tokens)
    store.repair_dangling_tool_calls(child.id)
    store.append_event(
        session_id, event_kinds.FORK, {"child": child.id, "with_summary": True, "summarized_messages": len(middle)}
    )
    store.append_event(
        child.id,
        event_kinds.FORK,
        {
            "parent": session_id,
            "with_summary": True,
            "summarized_messages": len(middle),
            "summary_message_id": record.id,
            "reused_summaries": list(body.reused),
            "extractive_messages": body.extractive_rows,
            "copied_messages": len(rows) - keep_from,
        },
    )
    return keep_model(store, child.id, model)
