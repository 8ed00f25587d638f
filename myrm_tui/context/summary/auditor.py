"""Zero-LLM quality checks of a summary against the chunk it replaces.

Why these checks: a summary is accepted into the prompt for the rest of the session, so a bad
one is expensive. Structure catches empty or malformed output; entity retention catches the
typical loss (a summary that says "fixed the config" instead of naming `deploy/app.yaml`);
size guarantees a summary never costs more than what it replaces.

Why against the chunk: retention and density are measured against the CHUNK, not the
whole history (a 240k-token history made every summary "too sparse" and burned three paid
attempts), and entities are the identifiers an agent needs back (paths, ids, hashes, URLs,
error codes, env vars, ports), ranked by how often the chunk uses them.

Every problem is phrased as an instruction, because it is pasted into the retry prompt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from myrm_tui.context.summary.schema import FIELD_CAPS, StructuredSummary, body_text

# Share of the chunk's top entities that must appear in the summary. Why 0.6: it is the share a
# careful human summary of a coding session keeps in our fixtures (the rest are one-off mentions);
# a 0.3 threshold over the whole history accepted summaries that lost most file names.
DEFAULT_MIN_RETENTION = 0.6
# Retention is judged on the most-mentioned entities only: no summary can keep 300 identifiers,
# and the frequently used ones are the load-bearing ones.
MAX_AUDITED_ENTITIES = 30
# Entities shorter than this are mostly noise (ids like `a_b`, ports are checked separately).
MIN_ENTITY_CHARS = 4
# Density bounds relative to the chunk. Above MAX_DENSITY a summary hardly compresses; below
# MIN_DENSITY of a large chunk it cannot hold the facts. MIN_DENSITY only applies from
# DENSITY_FLOOR_SOURCE tokens: a 300-token chunk may fairly become a 2-line summary.
MAX_DENSITY = 0.6
MIN_DENSITY = 0.01
DENSITY_FLOOR_SOURCE = 3_000
MIN_GOAL_CHARS = 3

_URL = re.compile(r"\bhttps?://[^\s\"'<>`)\]]+")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")
_PATH = re.compile(
    r"(?<![\w/.:-])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b")
_WITH_DIGITS = re.compile(r"\b(?=[A-Za-z_]*\d)(?=\w*[A-Za-z]{2})[A-Za-z][A-Za-z0-9_]*\d[A-Za-z0-9_]*\b")
_ERROR_CODE = re.compile(r"\b[A-Z]{1,4}\d{3,5}\b")
_HTTP = re.compile(r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?: code)?|returned|got)[\s:=]*([45]\d\d)\b", re.IGNORECASE)
_ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure|Warning)\b")
_ENV = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_PORT = re.compile(
    r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[a-z][\w-]*(?:\.[\w-]+)+):(\d{2,5})\b"
    r"|\bport\s+(\d{2,5})\b",
    re.IGNORECASE,
)
# Our own message handles (msg:123) and transcript labels are not content.
_HANDLE = re.compile(r"\bmsg:\d+\b|\[#\d+ ")
# Path-shaped noise: abbreviations and version strings.
_NOT_PATHS = {"e.g", "i.e", "etc.", "vs.", "a.m", "p.m"}


@dataclass(frozen=True)
class Entity:
    kind: str
    value: str
    forms: tuple[str, ...]  # any of these in the summary counts as kept


@dataclass(frozen=True)
class AuditResult:
    ok: bool
    problems: list[str] = field(default_factory=list)
    retained_share: float = 1.0
    entities_checked: int = 0
    missing: list[str] = field(default_factory=list)  # most-mentioned entities first
    summary_tokens: int = 0
    source_tokens: int = 0
    density: float = 0.0

    def feedback(self) -> str:
        """The problems as a retry instruction."""
        return "Fix these problems and answer with the corrected JSON only:\n" + "\n".join(
            f"- {p}" for p in self.problems
        )


def _add(
    found: Counter[str], kinds: dict[str, Entity], kind: str, value: str, forms: tuple[str, ...] | None = None
) -> None:
    value = value.strip().rstrip(".,;:")
    if len(value) < MIN_ENTITY_CHARS and kind != "port":
        return
    found[value] += 1
    kinds.setdefault(value, Entity(kind, value, forms or (value,)))


def extract_entities(text: str) -> list[Entity]:
    """Identifiers in `text`, most mentioned first (ties: first seen)."""
    found: Counter[str] = Counter()
    kinds: dict[str, Entity] = {}
    text = _HANDLE.sub(" ", text)
    urls = [m.group(0).rstrip(".,;:") for m in _URL.finditer(text)]
    for url in urls:
        _add(found, kinds, "url", url)
    stripped = _URL.sub(" ", text)
    for m in _UUID.finditer(stripped):
        _add(found, kinds, "uuid", m.group(0))
    no_uuid = _UUID.sub(" ", stripped)
    for m in _HEX.finditer(no_uuid):
        value = m.group(0)
        # A hash is kept if its 7-char prefix survives (how people quote git hashes).
        _add(found, kinds, "hash", value, (value[:7],))
    for m in _PATH.finditer(no_uuid):
        value = m.group(1)
        if value.lower() in _NOT_PATHS or re.fullmatch(r"v?\d+(?:\.\d+)+[\w.-]*", value):
            continue
        base = value.rstrip("/").rsplit("/", 1)[-1]
        forms = (value, base) if "/" in value and len(base) >= MIN_ENTITY_CHARS and "." in base else (value,)
        _add(found, kinds, "path", value, forms)
    for m in _HTTP.finditer(no_uuid):
        _add(found, kinds, "http", f"HTTP {m.group(1)}", (m.group(1),))
    for pattern, kind in ((_ERROR_NAME, "error"), (_ERROR_CODE, "code"), (_ENV, "env")):
        for m in pattern.finditer(no_uuid):
            _add(found, kinds, kind, m.group(0))
    # One count per occurrence even when several identifier shapes match the same text.
    idents: dict[int, str] = {}
    for pattern in (_SNAKE, _CAMEL, _WITH_DIGITS):
        for m in pattern.finditer(no_uuid):
            idents.setdefault(m.start(), m.group(0))
    for value in idents.values():
        if value not in kinds or kinds[value].kind == "ident":
            _add(found, kinds, "ident", value)
    for m in _PORT.finditer(no_uuid):
        port = m.group(1) or m.group(2)
        _add(found, kinds, "port", f":{port}" if m.group(1) else f"port {port}", (port,))
    # Identifiers that are part of a longer entity (a path's stem) are not counted twice.
    longer = [v for v in kinds if kinds[v].kind in ("path", "url")]
    order = {v: i for i, v in enumerate(kinds)}
    entities = [
        kinds[v] for v in kinds if not (kinds[v].kind in ("ident", "env") and any(v != p and v in p for p in longer))
    ]
    entities.sort(key=lambda e: (-found[e.value], order[e.value]))
    return entities


def _kept(entity: Entity, summary_text: str) -> bool:
    for form in entity.forms:
        if form.isdigit():
            if re.search(rf"(?<!\d){form}(?!\d)", summary_text):
                return True
        elif form in summary_text:
            return True
    return False


def _structure_problems(summary: StructuredSummary, depth: int) -> list[str]:
    problems: list[str] = []
    if len(summary.user_goal.strip()) < MIN_GOAL_CHARS:
        problems.append("user_goal is empty: state the user's overall goal in one sentence.")
    if depth == 0 and not summary.active_task.strip():
        problems.append(
            "active_task is empty: copy the user's latest unfulfilled request verbatim "
            '(write "none" only if every request was fulfilled).'
        )
    if depth > 0 and not (summary.narrative.strip() or summary.completed_actions or summary.decisions):
        problems.append("narrative is empty: write the timeline/trajectory this level asks for.")
    for name, cap in FIELD_CAPS.items():
        n = len(getattr(summary, name))
        if n > cap:
            problems.append(f"{name} has {n} items; keep at most {cap} (merge or drop the least important).")
    bad_files = [f.path for f in summary.files_modified if " " in f.path.strip() and "/" not in f.path]
    if bad_files:
        problems.append(
            'files_modified items must be objects {"path": ..., "change": ...} with a real '
            f"path; these are not paths: {', '.join(bad_files[:3])}."
        )
    return problems


def audit(
    summary: StructuredSummary,
    *,
    source_text: str,
    source_tokens: int,
    depth: int = 0,
    min_retention: float = DEFAULT_MIN_RETENTION,
    count: Callable[[str], int] | None = None,
    check_retention: bool = True,
) -> AuditResult:
    """Check `summary` against the chunk it replaces (`source_text`, `source_tokens`)."""
    if count is None:
        from myrm_tui.context.tokens import count_text_tokens

        count = count_text_tokens
    text = body_text(summary)
    tokens = count(text)
    problems = _structure_problems(summary, depth)

    entities = extract_entities(source_text)[:MAX_AUDITED_ENTITIES]
    missing = [e.value.strip() for e in entities if not _kept(e, text)]
    share = 1.0 if not entities else 1 - len(missing) / len(entities)
    if check_retention and share < min_retention:
        problems.append(
            f"Only {share:.0%} of the key identifiers survived (need {min_retention:.0%}). Keep these "
            f"exactly as written: {', '.join(missing[:12])}."
        )

    density = tokens / source_tokens if source_tokens else 1.0
    if tokens >= source_tokens:
        problems.append(
            f"The summary ({tokens} tokens) is not smaller than the messages it replaces "
            f"({source_tokens} tokens): be much shorter; keep only load-bearing facts."
        )
    elif density > MAX_DENSITY and source_tokens >= DENSITY_FLOOR_SOURCE:
        problems.append(
            f"The summary is {density:.0%} of its source; compress to under "
            f"{MAX_DENSITY:.0%} (about {int(source_tokens * MAX_DENSITY * 0.8)} tokens)."
        )
    elif density < MIN_DENSITY and source_tokens >= DENSITY_FLOOR_SOURCE:
        problems.append(
            f"The summary ({tokens} tokens) is too sparse for {source_tokens} tokens of "
            "history: add the concrete actions, files, errors and decisions."
        )
    return AuditResult(
        ok=not problems,
        problems=problems,
        retained_share=share,
        entities_checked=len(entities),
        missing=missing,
        summary_tokens=tokens,
        source_tokens=source_tokens,
        density=density,
    )
