"""How far recall reaches: the session's own history, or every session of its workspace.

`ctx_search` looks in the session (fork ancestry included) unless asked for
`scope="workspace"`; a handle it finds that way must then open, so `ctx_inspect` and
`ctx_expand` fall back to the workspace when the session's own history does not have the handle.
The session check comes first so that everything reachable before answers exactly as before;
only what it refuses is looked up across the workspace, and labelled with the session it came
from. The store is one workspace's `.myrm/`: "workspace" never reaches another workspace.
"""

from __future__ import annotations

import json

from myrm_tui.store import Store, StoreError
from myrm_tui.store.records import ArtifactRecord, MessageRecord
from myrm_tui.store.search import RECALL_SCOPES, RecallScope

DEFAULT_SCOPE: RecallScope = "session"
# Session ids are shown as the sessions list shows them (8 hex characters): enough to tell a
# workspace's sessions apart, short in every hit line.
SESSION_LABEL_ID_CHARS = 8
# Titles are the user's words (often the first prompt): cut so a hit line stays one short line.
SESSION_LABEL_TITLE_CHARS = 60


def parse_scope(raw: object) -> RecallScope | None:
    """The scope a caller asked for (None or "" = the default); None if it is not one."""
    if raw is None:
        return DEFAULT_SCOPE
    text = str(raw).strip().lower() or DEFAULT_SCOPE
    for scope in RECALL_SCOPES:
        if scope == text:
            return scope
    return None


def scope_error(raw: object) -> str:
    return f"error: scope={raw!r} is not one of {', '.join(RECALL_SCOPES)}; omit it to search this session."


def session_label(store: Store, session_id: str | None, current: str, titles: dict[str, str] | None = None) -> str:
    """`this session`, or `session 1a2b3c4d "title"` for another session of the workspace.

    `titles` caches look-ups across the hits of one search."""
    if not session_id or session_id == current:
        return "this session"
    cache = titles if titles is not None else {}
    if session_id not in cache:
        try:
            cache[session_id] = store.get_session(session_id).title
        except StoreError:  # deleted since the search read it: the id still says where it was
            cache[session_id] = ""
    label = f"session {session_id[:SESSION_LABEL_ID_CHARS]}"
    title = " ".join(cache[session_id].split())
    if len(title) > SESSION_LABEL_TITLE_CHARS:
        title = title[: SESSION_LABEL_TITLE_CHARS - 1].rstrip() + "…"
    return f"{label} {json.dumps(title, ensure_ascii=False)}" if title else label


def reach_message(store: Store, session_id: str, message_id: int) -> tuple[MessageRecord, str | None]:
    """(the message, None if the session's own history has it, else the label of the other
    session of the workspace that does). StoreError (the session's own refusal) if neither."""
    try:
        return store.history_message(session_id, message_id), None
    except StoreError as own_refusal:
        try:
            record = store.history_message(session_id, message_id, scope="workspace")
        except StoreError:
            raise own_refusal from None
    return record, session_label(store, record.session_id, session_id)


def reach_artifact(store: Store, session_id: str, handle: str) -> tuple[ArtifactRecord, bool]:
    """(the artifact, True if only another session of the workspace reaches it). StoreError (the
    session's own refusal) if no session does; VaultError for a bad or unknown handle."""
    try:
        return store.session_artifact(session_id, handle), False
    except StoreError as own_refusal:
        try:
            info = store.session_artifact(session_id, handle, scope="workspace")
        except StoreError:
            raise own_refusal from None
    return info, True
