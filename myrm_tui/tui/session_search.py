"""Which sessions a search in the sessions screen keeps (pure; no Textual).

A session is found by what people remember of it: its title, what they first asked, the model
it ran on (or the start of its id). Every word of the query must appear somewhere in those,
case-insensitively, so "fix gpt" finds the session titled "fix the parser" that ran on gpt-4o.
"""

from __future__ import annotations


def search_fields(title: str, first_message: str, model: str, session_id: str) -> str:
    """The text a query is matched against, folded once per row (not per keystroke)."""
    return f"{title}\n{first_message}\n{model}\n{session_id}".casefold()


def matches(query: str, fields: str) -> bool:
    return all(term in fields for term in query.casefold().split())
