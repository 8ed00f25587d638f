"""Searching a session's history (fork ancestry included) and its artifacts (reads only), or,
for cross-session recall, every session of the store: the store is one workspace's `.myrm/`, so
"the whole store" is exactly "this workspace" and never reaches another one.

The user's (or model's) text never reaches FTS5 as query syntax: every term is a quoted
phrase, so `foo-bar "baz`, `C++` or `NOT` are searched for, never parsed. Three retrievers run
and their rankings are fused (reciprocal rank): porter words with BM25 (all terms, then any
term), and trigram substrings (the whole query, then each term) for identifiers and scripts
without spaces. When the trigram index is missing (old SQLite) or a query is too short for
trigrams (two CJK characters), a LIKE scan takes its place. A row holding a multi-word query
as a phrase ranks above rows holding its words apart; a snippet shows the best spot of a row
(`match_spots`), not its first match.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from myrm_tui.store.constants import (
    HANDLE_HEX_CHARS,
    PHRASE_TIER_BONUS,
    RANK_TIE,
    RECENCY_WEIGHT,
    RRF_K,
    SEARCH_CANDIDATES_FACTOR,
    SNIPPET_CLOSE,
    SNIPPET_CONTEXT_CHARS,
    SNIPPET_FTS_MAX_CHARS,
    SNIPPET_MAX_CHARS,
    SNIPPET_OPEN,
    SNIPPET_TOKENS,
)
from myrm_tui.store.database.search_index import ARTIFACTS_TRIGRAM, MESSAGES_TRIGRAM, trigram_usable
from myrm_tui.store.match_spots import best_spot
from myrm_tui.store.records import SearchHit

# (owning session, last visible message id or None): `log_sql.segments` of the searched session.
Segments = Sequence[tuple[str, int | None]]

# What a recall may reach: the session's own history (fork ancestry included), or every session
# of its workspace's store (`ctx_search(scope="workspace")`, handles found that way).
RecallScope = Literal["session", "workspace"]
RECALL_SCOPES: tuple[RecallScope, ...] = ("session", "workspace")


@dataclass(frozen=True)
class WholeStore:
    """Every live session of this store (= this workspace), instead of one session's segments.

    Rows of deleted sessions are gone from the index already; filtering on the sessions table
    still keeps a row whose session vanished mid-read out of the answer."""


WHOLE_STORE = WholeStore()
# What a search or access check looks at: one history, or the whole store.
Visible = Segments | WholeStore


def visible_for(segments: Segments, scope: RecallScope) -> Visible:
    """The rows `scope` reaches from the session whose history is `segments`."""
    return WHOLE_STORE if scope == "workspace" else segments


MAX_LIMIT = 100
# Trigram needs 3 characters to look anything up; shorter strings match nothing.
_TRIGRAM_MIN = 3
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# --- query sanitising (pure) ---------------------------------------------------------------


@dataclass(frozen=True)
class SearchQuery:
    phrase: str  # the whole query, whitespace collapsed
    terms: tuple[str, ...]  # whitespace-separated pieces with at least one letter or digit


def parse_query(text: str) -> SearchQuery | None:
    """None for a query with nothing to search for."""
    cleaned = " ".join(_CONTROL.sub(" ", text or "").split())
    if not cleaned:
        return None
    terms = tuple(dict.fromkeys(t for t in cleaned.split(" ") if any(ch.isalnum() for ch in t)))
    return SearchQuery(phrase=cleaned, terms=terms)


def quote(term: str) -> str:
    """An FTS5 string literal: the only syntax FTS5 sees from a query is this quoting."""
    return '"' + term.replace('"', '""') + '"'


def word_match(terms: Sequence[str], operator: str) -> str | None:
    return f" {operator} ".join(quote(t) for t in terms) or None


def trigram_match(terms: Sequence[str]) -> str | None:
    usable = [t for t in terms if len(t) >= _TRIGRAM_MIN]
    return " AND ".join(quote(t) for t in usable) or None


def like_pattern(phrase: str) -> str:
    escaped = phrase.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# --- visibility filters ----------------------------------------------------------------------


def _message_filter(segments: Visible, alias: str) -> tuple[str, list]:
    if isinstance(segments, WholeStore):
        return f"{alias}.session_id IN (SELECT id FROM sessions)", []
    parts: list[str] = []
    params: list = []
    for owner, limit in segments:
        if limit is None:
            parts.append(f"{alias}.session_id = ?")
            params.append(owner)
        else:
            parts.append(f"({alias}.session_id = ? AND {alias}.rowid <= ?)")
            params.extend((owner, limit))
    return "(" + " OR ".join(parts) + ")", params


def _link_filter(segments: Visible) -> tuple[str, list]:
    """Artifacts linked to a visible part of the history (see `artifact_links`)."""
    if isinstance(segments, WholeStore):
        return "l.session_id IN (SELECT id FROM sessions)", []
    parts: list[str] = []
    params: list = []
    for owner, limit in segments:
        if limit is None:
            parts.append("l.session_id = ?")
            params.append(owner)
        else:
            parts.append("(l.session_id = ? AND l.after_message_id < ?)")
            params.extend((owner, limit))
    return "(" + " OR ".join(parts) + ")", params


def visible_artifact_ids_sql(segments: Visible) -> tuple[str, list]:
    where, params = _link_filter(segments)
    return f"SELECT l.artifact_id FROM artifact_links l WHERE {where}", params


# --- retrievers ------------------------------------------------------------------------------

Key = tuple[str, int]  # ("msg" | "art", rowid)


class _Retriever:
    def __init__(self, conn: sqlite3.Connection, segments: Visible, candidates: int):
        self.conn = conn
        self.candidates = candidates
        self.msg_where, self.msg_params = _message_filter(segments, "f")
        self.art_sql, self.art_params = visible_artifact_ids_sql(segments)

    def words(self, match: str) -> list[Key]:
        msgs = self.conn.execute(
            f"SELECT f.rowid, f.rank FROM messages_fts f WHERE messages_fts MATCH ? AND {self.msg_where} "
            "ORDER BY f.rank LIMIT ?",
            (match, *self.msg_params, self.candidates),
        ).fetchall()
        arts = self.conn.execute(
            f"SELECT a.rowid, a.rank FROM artifacts_fts a WHERE artifacts_fts MATCH ? "
            f"AND a.rowid IN ({self.art_sql}) ORDER BY a.rank LIMIT ?",
            (match, *self.art_params, self.candidates),
        ).fetchall()
        ranked = [(rank, ("msg", rowid)) for rowid, rank in msgs] + [(rank, ("art", rowid)) for rowid, rank in arts]
        # bm25 ranks (more negative = better) are comparable across the two word tables.
        # Near-equal ranks count as equal and go newest first (a re-read file's new value).
        ranked.sort(key=lambda item: (_rank_bucket(item[0]), -item[1][1]))
        return [key for _, key in ranked]

    def trigrams(self, match: str) -> list[Key]:
        msgs = self.conn.execute(
            f"SELECT f.rowid, f.rank FROM {MESSAGES_TRIGRAM} f WHERE {MESSAGES_TRIGRAM} MATCH ? "
            f"AND {self.msg_where} ORDER BY f.rank LIMIT ?",
            (match, *self.msg_params, self.candidates),
        ).fetchall()
        arts = self.conn.execute(
            f"SELECT a.rowid, a.rank FROM {ARTIFACTS_TRIGRAM} a WHERE {ARTIFACTS_TRIGRAM} MATCH ? "
            f"AND a.rowid IN ({self.art_sql}) ORDER BY a.rank LIMIT ?",
            (match, *self.art_params, self.candidates),
        ).fetchall()
        msgs.sort(key=lambda r: (_rank_bucket(r[1]), -r[0]))
        arts.sort(key=lambda r: (_rank_bucket(r[1]), -r[0]))
        return _interleave([("msg", r[0]) for r in msgs], [("art", r[0]) for r in arts])

    def like(self, phrase: str) -> list[Key]:
        """Full scan of the visible rows; newest first (recent context is likelier wanted)."""
        pattern = like_pattern(phrase)
        msgs = self.conn.execute(
            f"SELECT f.rowid FROM messages_fts f WHERE f.text LIKE ? ESCAPE '\\' AND {self.msg_where} "
            "ORDER BY f.rowid DESC LIMIT ?",
            (pattern, *self.msg_params, self.candidates),
        ).fetchall()
        arts = self.conn.execute(
            f"SELECT a.rowid FROM artifacts_fts a WHERE a.text LIKE ? ESCAPE '\\' "
            f"AND a.rowid IN ({self.art_sql}) ORDER BY a.rowid DESC LIMIT ?",
            (pattern, *self.art_params, self.candidates),
        ).fetchall()
        return _interleave([("msg", r[0]) for r in msgs], [("art", r[0]) for r in arts])


def _rank_bucket(rank: float) -> float:
    """bm25 ranks within RANK_TIE of each other are a tie (documents differing only in a value)."""
    return round(rank / RANK_TIE)


def _interleave(first: list[Key], second: list[Key]) -> list[Key]:
    out: list[Key] = []
    for index in range(max(len(first), len(second))):
        out.extend(lst[index] for lst in (first, second) if index < len(lst))
    return out


def _fuse(rankings: list[list[Key]]) -> list[tuple[Key, float]]:
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for position, key in enumerate(ranking):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + position + 1)
    # Recency as one more, lighter ranking: of two equally relevant rows (a file read before
    # and after an edit), the newer one wins, so recall does not hand back stale values.
    newest_first = sorted((k for k in scores if k[0] == "msg"), key=lambda k: -k[1])
    for position, key in enumerate(newest_first):
        scores[key] += RECENCY_WEIGHT / (RRF_K + position + 1)
    # Ties (same fused score) go to the newer row: deterministic and recency-leaning.
    return sorted(scores.items(), key=lambda item: (-item[1], item[0][0], -item[0][1]))


def _phrase_first(fused: list[tuple[Key, float]], phrased: set[Key]) -> list[tuple[Key, float]]:
    """Rows holding the query's words together and in order (as typed, or as stemmed words) ahead
    of rows that only hold them apart, fused order kept within each group; their score is lifted
    by PHRASE_TIER_BONUS so hits stay in score order. Why: bm25 favours short rows and rows that
    repeat one of the words, so a long document with the phrase once ranked below notes that
    each used `window` or `ingest` alone, and a recall for `ingest window` missed it."""
    lifted = [(key, score + PHRASE_TIER_BONUS) for key, score in fused if key in phrased]
    return lifted + [(key, score) for key, score in fused if key not in phrased]


# --- snippets --------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cap(text: str) -> str:
    text = _one_line(text)
    if len(text) <= SNIPPET_MAX_CHARS:
        return text
    return text[: SNIPPET_MAX_CHARS - 1].rstrip() + "…"


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def window_snippet(text: str, needles: Sequence[str], terms: Sequence[str] = ()) -> str:
    """Characters around the best case-insensitive occurrence of a needle (`match_spots.best_spot`:
    the one whose window holds the most distinct `terms`, then a whole-token one, then the
    earliest), not merely the first: a key named on a test's header lines before the line with
    its value, or a phrase's words used apart before the sentence that joins them."""
    spot = best_spot(text, needles, terms or needles, SNIPPET_CONTEXT_CHARS)
    if spot is None:
        head = text[: SNIPPET_CONTEXT_CHARS * 2]
        return _cap(head + ("…" if len(text) > len(head) else ""))
    at, until = spot
    start = max(0, at - SNIPPET_CONTEXT_CHARS)
    end = min(len(text), until + SNIPPET_CONTEXT_CHARS)
    before = _spaces(text[start:at]).lstrip()
    after = _spaces(text[until:end]).rstrip()
    matched = _spaces(text[at:until])
    room = max(0, SNIPPET_MAX_CHARS - len(matched) - len(SNIPPET_OPEN) - len(SNIPPET_CLOSE) - 2)
    cut_before = cut_after = False
    if len(before) + len(after) > room:
        half = room // 2
        keep_before = min(len(before), max(half, room - len(after)))
        keep_after = room - keep_before
        cut_before, cut_after = keep_before < len(before), keep_after < len(after)
        before = before[len(before) - keep_before :]
        after = after[:keep_after]
    lead = "…" if start > 0 or cut_before else ""
    tail = "…" if end < len(text) or cut_after else ""
    return f"{lead}{before}{SNIPPET_OPEN}{matched}{SNIPPET_CLOSE}{after}{tail}"


def _stems(terms: Sequence[str]) -> list[str]:
    """Crude prefixes standing in for porter stems ("failing" → "fail") when a snippet must be
    found by plain text search: better a window at the stemmed match than the document head."""
    return [term[: max(4, len(term) - 3)] for term in terms if len(term) >= 6]


def _word_snippet(conn: sqlite3.Connection, table: str, match: str, rowid: int) -> str | None:
    row = conn.execute(
        f"SELECT snippet({table}, 0, ?, ?, '…', ?) FROM {table} WHERE {table} MATCH ? AND rowid = ?",
        (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_TOKENS, match, rowid),
    ).fetchone()
    return _cap(row[0]) if row and row[0] else None


# --- the search ------------------------------------------------------------------------------


def search(conn: sqlite3.Connection, segments: Visible, query: str, limit: int = 10) -> list[SearchHit]:
    """Ranked hits over the visible history (or whole store) and artifacts; [] for an empty query."""
    parsed = parse_query(query)
    if parsed is None or not segments:
        return []
    limit = max(1, min(int(limit), MAX_LIMIT))
    retriever = _Retriever(conn, segments, limit * SEARCH_CANDIDATES_FACTOR)
    trigram = trigram_usable(conn)

    word_all = word_match(parsed.terms, "AND")
    word_any = word_match(parsed.terms, "OR") if len(parsed.terms) > 1 else None
    # The words in order and adjacent (porter stems, so "ingesting windows" matches too).
    word_phrase = quote(" ".join(parsed.terms)) if len(parsed.terms) > 1 else None
    phrase_tri = trigram_match([parsed.phrase]) if trigram else None
    terms_tri = trigram_match(parsed.terms) if trigram and len(parsed.terms) > 1 else None
    # (ranking, how to snippet it) in snippet priority: exact substring first, then words.
    sources: list[tuple[list[Key], str]] = []
    if phrase_tri:
        sources.append((retriever.trigrams(phrase_tri), "phrase"))
    if word_phrase:
        sources.append((retriever.words(word_phrase), "words phrase"))
    if word_all:
        sources.append((retriever.words(word_all), "all"))
    if terms_tri:
        sources.append((retriever.trigrams(terms_tri), "terms"))
    if word_any:
        sources.append((retriever.words(word_any), "any"))
    if not trigram or not any(ranking for ranking, _ in sources):
        sources.append((retriever.like(parsed.phrase), "phrase"))
    fused = _fuse([ranking for ranking, _ in sources])
    if len(parsed.terms) > 1:
        fused = _phrase_first(fused, {key for ranking, kind in sources if "phrase" in kind for key in ranking})
    fused = fused[:limit]
    if not fused:
        return []

    how: dict[Key, str] = {}
    for ranking, kind in sources:
        for key in ranking:
            how.setdefault(key, kind)
    meta = _metadata(conn, [key for key, _ in fused], segments)
    hits: list[SearchHit] = []
    for key, score in fused:
        info = meta.get(key)
        if info is None:
            continue
        handle, message_id, role, tool, created_at, text_table, owner = info
        kind = how[key]
        text = conn.execute(f"SELECT text FROM {text_table} WHERE rowid = ?", (key[1],)).fetchone()[0]
        snippet = None
        # A phrase row's snippet marks each word (FTS5 would mark the phrase as one span).
        words = {"all": word_all, "any": word_any, "words phrase": word_all}.get(kind)
        if words and len(text) <= SNIPPET_FTS_MAX_CHARS:
            snippet = _word_snippet(conn, text_table, words, key[1])
        if snippet is None:
            needles = [parsed.phrase] if kind == "phrase" else list(parsed.terms)
            snippet = window_snippet(text, needles + list(parsed.terms) + _stems(parsed.terms), parsed.terms)
        hits.append(SearchHit(handle, message_id, role, tool, created_at, snippet, round(score, 6), owner))
    return hits


# handle, message id, role, tool, created at, text table, owning session
_Meta = tuple[str, int | None, str, str | None, float, str, str]


def _metadata(conn: sqlite3.Connection, keys: list[Key], segments: Visible) -> dict[Key, _Meta]:
    out: dict[Key, _Meta] = {}
    msg_ids = [rowid for kind, rowid in keys if kind == "msg"]
    art_ids = [rowid for kind, rowid in keys if kind == "art"]
    if msg_ids:
        marks = ",".join("?" * len(msg_ids))
        for mid, role, created_at, tool, owner in conn.execute(
            f"SELECT m.id, m.role, m.created_at, f.tool, m.session_id FROM messages m "
            f"JOIN messages_fts f ON f.rowid = m.id WHERE m.id IN ({marks})",
            msg_ids,
        ):
            out[("msg", mid)] = (f"msg:{mid}", mid, role, tool, created_at, "messages_fts", owner)
    if art_ids:
        marks = ",".join("?" * len(art_ids))
        where, params = _link_filter(segments)
        # With MIN(), SQLite takes the bare l.session_id from the same (earliest visible) link.
        for aid, digest, linked_at, owner in conn.execute(
            f"SELECT a.id, a.digest, MIN(l.created_at), l.session_id FROM artifacts a JOIN artifact_links l "
            f"ON l.artifact_id = a.id WHERE a.id IN ({marks}) AND {where} GROUP BY a.id",
            (*art_ids, *params),
        ):
            handle = "vault://" + digest[:HANDLE_HEX_CHARS]
            out[("art", aid)] = (handle, None, "artifact", None, linked_at, "artifacts_fts", owner)
    return out


def mentions(conn: sqlite3.Connection, segments: Visible, needle: str) -> bool:
    """Whether a visible message's indexed text contains `needle` (case-insensitive)."""
    if not segments or not needle:
        return False
    where, params = _message_filter(segments, "f")
    if trigram_usable(conn) and len(needle) >= _TRIGRAM_MIN:
        row = conn.execute(
            f"SELECT 1 FROM {MESSAGES_TRIGRAM} f WHERE {MESSAGES_TRIGRAM} MATCH ? AND {where} LIMIT 1",
            (quote(needle), *params),
        ).fetchone()
    else:
        row = conn.execute(
            f"SELECT 1 FROM messages_fts f WHERE f.text LIKE ? ESCAPE '\\' AND {where} LIMIT 1",
            (like_pattern(needle), *params),
        ).fetchone()
    return row is not None
