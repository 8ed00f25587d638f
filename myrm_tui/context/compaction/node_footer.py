"""The deterministic part of a summary node: its footer, written without a model.

Why apart from the DAG: whatever writes a node's body (a model, the extractive fallback, a merge
of children), its footer is the same function of what it covers: the files, tools, errors and
handles (`summary.footer`), the session notes written there (they stay in context at no model
cost) and the newest things the user and the assistant said, verbatim (`summary.quotes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from myrm_tui.context.summary.footer import footer_from_records
from myrm_tui.context.summary.quotes import merge_quotes, quotes_for
from myrm_tui.context.window.config import QUOTE_CHARS_PER_TOKEN
from myrm_tui.store.records import MessageRecord

NOTES_PREFIX = "Session notes: "
MAX_NOTES_CHARS = 1_500  # notes are meant to stay; still, a runaway note list must not crowd the prompt


def leaf_footer(
    rows: Sequence[MessageRecord], quote_tokens: int = 0, count_text: Callable[[str], int] | None = None
) -> str:
    """The deterministic footer, the session notes written in these rows (notes stay in
    context at no model cost, whatever happens to the messages that carried them), and the
    newest things the user and the assistant said, verbatim (`summary.quotes`)."""
    from myrm_tui.context.compaction.markers import session_notes

    parts = [footer_from_records(rows).render()]
    notes = session_notes(rows)
    if notes:
        parts.append((NOTES_PREFIX + " | ".join(notes))[:MAX_NOTES_CHARS])
    parts.append(
        quotes_for(
            [r.message for r in rows],
            [r.id for r in rows],
            quote_tokens * QUOTE_CHARS_PER_TOKEN,
            cap_tokens=quote_tokens,
            count=count_text,
        )
    )
    return "\n".join(p for p in parts if p)


def fold_footer(
    children: Sequence[dict[str, Any]], quote_tokens: int = 0, count_text: Callable[[str], int] | None = None
) -> str:
    """A condensed node's footer: the folded handles, the session notes its children carried
    (newest kept) and the verbatim quotes merged from theirs."""
    notes = [
        line[len(NOTES_PREFIX) :]
        for c in children
        for line in c["rendered"].splitlines()
        if line.startswith(NOTES_PREFIX)
    ]
    parts = [f"Folds: {', '.join(c['handle'] for c in children)}"]
    if notes:
        parts.append((NOTES_PREFIX + " | ".join(notes))[-MAX_NOTES_CHARS:])
    parts.append(
        merge_quotes(
            [c["rendered"] for c in children],
            quote_tokens * QUOTE_CHARS_PER_TOKEN,
            cap_tokens=quote_tokens,
            count=count_text,
        )
    )
    return "\n".join(p for p in parts if p)
