"""Rows of the session store as typed, immutable records (the store's public boundary)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SessionRecord:
    id: str
    title: str
    created_at: float
    updated_at: float
    model: str
    # A fork shares its parent's messages up to and including `fork_message_id` by reference.
    parent_id: str | None = None
    fork_message_id: int | None = None


@dataclass(frozen=True)
class MessageRecord:
    """One provider message, stored exactly as sent or received (`message` is the JSON dict)."""

    id: int  # global, monotonically increasing; doubles as the stable handle `msg:<id>`
    session_id: str  # the session that owns the row (a fork's ancestors own shared rows)
    seq: int  # position within the owning session, 0-based
    role: str
    message: dict[str, Any]
    tokens: int
    created_at: float
    tool_call_id: str | None = None
    tool_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class EventRecord:
    """A typed record emitted by the engine or the agent (compaction, error, usage, switch…)."""

    id: int
    session_id: str
    kind: str
    data: dict[str, Any]
    created_at: float


@dataclass(frozen=True)
class SearchHit:
    """One result of `Store.search`: a message of the session's history or a vault artifact."""

    handle: str  # "msg:<id>" or "vault://<hex>": what ctx_expand / ctx_inspect accept
    message_id: int | None  # None for artifacts
    role: str  # the message role, or "artifact"
    tool: str | None  # tool result name / called tool names (space-separated), if any
    created_at: float
    snippet: str  # one line, matches marked «like this», at most SNIPPET_MAX_CHARS
    score: float  # fused rank score, higher is better; comparable within one search only
    session_id: str | None = None  # the session that stored it (a workspace search labels hits with it)


@dataclass(frozen=True)
class ArtifactRecord:
    """A vault artifact as one session sees it (`Store.session_artifact`/`index_artifact`)."""

    handle: str  # canonical "vault://<12 hex>"
    digest: str  # full sha256 hex
    size_bytes: int
    binary: bool
    indexed: bool  # catalogued for search (False: only known because a message names it)
    indexed_chars: int
    truncated: bool  # only the first ARTIFACT_INDEX_MAX_CHARS are searchable
    linked_at: float | None  # when it was indexed for this session (None if not indexed)
