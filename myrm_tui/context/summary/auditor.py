"""Zero-LLM quality checks of a summary against the chunk it replaces.

Why these checks: a summary is accepted into the prompt for the rest of the session, so a bad
one is expensive. Structure catches empty or malformed output; entity retention catches the
typical loss (a summary that says "fixed the config" instead of naming `deploy/app.yaml`);
size guarantees a summary never costs more than what it replaces. Given the chunk's messages
(a leaf), five more catch what a plausible-looking summary gets wrong (measured on a labeled
corpus, `python -m bench.auditor_corpus`): a rule the user set that is not kept, an identifier
or a number the chunk never had (invented or misremembered), an open request of the user that
is dropped, and a file the chunk modified that is not named.

Why against the chunk: retention and density are measured against the CHUNK, not the
whole history (a 240k-token history made every summary "too sparse" and burned three paid
attempts), and entities are the identifiers an agent needs back (paths, ids, hashes, URLs,
error codes, env vars, ports), ranked by how often the chunk uses them.

Every problem is phrased as an instruction, because it is pasted into the retry prompt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.summary.outcomes import ANSWERED, span_facts
from myrm_tui.context.summary.schema import FIELD_CAPS, StructuredSummary, body_text
from myrm_tui.redact import redact

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
# A user sentence that sets a rule (what the user allowed, forbade or required).
RULE_SENTENCE = re.compile(
    r"\b(?:never|do not|don't|must|mustn't|always|only|avoid|no longer|without asking|not allowed|"
    r"make sure|keep\b.{0,60}\b(?:unchanged|as is|intact))\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Words that carry a sentence's content (a rule, an ask): at least this long, not a stopword.
MIN_WORD_CHARS = 4
_WORD = re.compile(r"[A-Za-z0-9][\w./-]*")
_STOPWORDS = frozenset(
    " ".join(
        (
            "this that with from have will would should could about into there their then than them they",
            "what when where which while your yours ours also just please some more most very been being",
            "does done make sure keep only never always must avoid don't mustn't over under after before",
            "again here each every",
        )
    ).split()
)
# Share of a rule's or an open ask's content words a summary must keep somewhere (a paraphrase
# keeps most nouns: "never modify tests/fixtures" → "tests/fixtures must not be modified").
MIN_WORD_SHARE = 0.5
# Of a long rule or ask (a pasted log, a key) only its opening is checked: that is what the retry
# feedback quotes, and no capable summary copies a pasted page into active_task.
MAX_CHECKED_CHARS = 300
# A token with a digit (a number, a version, a port, a duration, an id) of at least this many
# characters: the summary must have it from the chunk. Shorter ones are counts ("3 files").
MIN_NUMBER_CHARS = 3
_DIGITS = re.compile(r"[\w.:/+-]*\d[\w.:/+-]*")
# At most this many unknown identifiers or numbers are named in the feedback.
MAX_NAMED = 6
_PLACEHOLDER = re.compile(r"\[REDACTED:\w+\]")
# A hyphenated name of three or more parts (`ledger-sync-worker`, `eu-west-3`): a service, host
# or package name, which a summary must copy, not coin. English compounds of that shape are not.
_KEBAB = re.compile(r"(?<![\w./-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+){2,}(?![\w/-])")
_COMPOUNDS = frozenset(
    [
        "up-to-date",
        "out-of-date",
        "end-to-end",
        "day-to-day",
        "one-to-one",
        "one-to-many",
        "many-to-many",
        "state-of-the-art",
        "out-of-the-box",
        "step-by-step",
        "side-by-side",
        "face-to-face",
        "back-to-back",
        "peer-to-peer",
        "point-to-point",
        "run-of-the-mill",
        "built-in-only",
    ]
)
# Our own message handles (msg:123) and transcript labels are not content.
# A transcript's call ids (`result of call_3]`, `→ call bash (call_3)`) are plumbing, not content.
_HANDLE = re.compile(r"\bmsg:\d+\b|\[#\d+ | result of [^\]\n]*\]|(?<=→ call )\S+ \([^)\n]*\)")
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


def _keep_tool_name(match: re.Match[str]) -> str:
    """A handle or label goes; of a call line's `name (id)` the name stays (it is content)."""
    text = match.group(0)
    return text.split(" (", 1)[0] if text.endswith(")") and " (" in text else " "


def _add(
    found: Counter[str], kinds: dict[str, Entity], kind: str, value: str, forms: tuple[str, ...] | None = None
) -> None:
    value = value.strip().rstrip(".,;:")
    if len(value) < MIN_ENTITY_CHARS and kind != "port":
        return
    found[value] += 1
    # Forms lose the sentence's punctuation too ("read src/a.py." keeps src/a.py): with it, a
    # path that ends a sentence was never found kept.
    clean = tuple(dict.fromkeys(f.strip().rstrip(".,;:") for f in forms)) if forms else (value,)
    kinds.setdefault(value, Entity(kind, value, clean))


def extract_entities(text: str) -> list[Entity]:
    """Identifiers in `text`, most mentioned first (ties: first seen)."""
    found: Counter[str] = Counter()
    kinds: dict[str, Entity] = {}
    text = _HANDLE.sub(_keep_tool_name, text)
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


def _words(text: str) -> list[str]:
    words = (w.strip(".,;:!?()[]'\"`").lower() for w in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) >= MIN_WORD_CHARS and w not in _STOPWORDS))


def _covered(text: str, summary_lower: str) -> bool:
    words = _words(_comparable(text)[:MAX_CHECKED_CHARS])
    return not words or sum(w in summary_lower for w in words) >= MIN_WORD_SHARE * len(words)


def _comparable(text: str) -> str:
    """`text` with its secrets out: the accepted summary is redacted whole, so a key the user
    pasted into a request is never content a summary must keep (or could keep)."""
    return " ".join(_PLACEHOLDER.sub(" ", redact(text).text).split())


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _load_bearing(messages: Sequence[dict[str, Any]]) -> list[Entity]:
    """The identifiers a leaf must keep, most mentioned first: those of the conversation (what
    the user and the assistant wrote, the calls' arguments), and of the tool outputs only the
    errors they name. An output's body is full of incidental identifiers (a listing's names, a
    log's hashes, a source file's variables) that no careful summary lists; counting them made
    good summaries of output-heavy chunks fail (A1: `bench/auditor_corpus.py`)."""
    said: list[str] = []
    outputs: list[list[Entity]] = []
    for message in messages:
        if message.get("role") == "tool":
            outputs.append(extract_entities(_message_text(message)))
            continue
        said.append(_message_text(message))
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            said.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    # A key the user pasted is no identifier to keep: every summary is redacted whole.
    conversation = extract_entities(_PLACEHOLDER.sub(" ", redact("\n".join(said)).text))
    seen = {e.value for e in conversation}
    extra: dict[str, Entity] = {}
    for found in outputs:
        for e in found:
            if e.value not in seen and e.kind in ("error", "code", "http"):
                extra.setdefault(e.value, e)
    return conversation + list(extra.values())


def _fidelity_problems(summary: StructuredSummary, text: str, source_text: str) -> list[str]:
    """Identifiers and numbers of the summary that the chunk does not have."""
    problems: list[str] = []
    if not source_text.strip():
        return problems  # nothing to check against
    source_lower = _HANDLE.sub(_keep_tool_name, source_text).lower()
    # A secret is redacted in every summary anyway (and never worth naming in feedback).
    own = _PLACEHOLDER.sub(" ", redact(_HANDLE.sub(_keep_tool_name, text)).text)
    unknown = [e.value for e in extract_entities(own) if not any(f.lower() in source_lower for f in e.forms)]
    unknown += [
        k for k in dict.fromkeys(_KEBAB.findall(own)) if k.lower() not in source_lower and k.lower() not in _COMPOUNDS
    ]
    if unknown:
        problems.append(
            "These identifiers are not in the history; copy identifiers exactly from it or leave "
            f"them out: {', '.join(unknown[:MAX_NAMED])}."
        )
    numbers = [
        t.strip(".,:;/+-")
        for t in _DIGITS.findall(own)
        if len(t.strip(".,:;/+-")) >= MIN_NUMBER_CHARS and t.strip(".,:;/+-").lower() not in source_lower
    ]
    numbers = [n for n in dict.fromkeys(numbers) if n not in unknown]
    if numbers:
        problems.append(
            "These values are not in the history (a number, version or id misremembered?); copy "
            f"each exactly as written there: {', '.join(numbers[:MAX_NAMED])}."
        )
    return problems


def _chunk_problems(summary: StructuredSummary, text: str, messages: Sequence[dict[str, Any]]) -> list[str]:
    """What a leaf must carry from its chunk: the user's rules, open asks and modified files."""
    problems: list[str] = []
    # A rule belongs where the schema puts rules (or in the goal, task or decisions it shapes): a
    # resolved question that quotes the user's message, cut mid-rule, does not keep it.
    ruled = [
        summary.user_goal,
        summary.active_task,
        summary.narrative,
        *summary.constraints_and_preferences,
        *summary.decisions,
        *summary.pending_user_asks,
        *summary.next_steps,
        *summary.blocked_items,
    ]
    rule_text = _comparable("\n".join(ruled)).lower()
    rules = [
        " ".join(sentence.split())
        for message in messages
        if message.get("role") == "user"
        for sentence in _SENTENCE.split(_message_text(message))
        if RULE_SENTENCE.search(sentence)
    ]
    lost = [rule for rule in dict.fromkeys(rules) if not _covered(rule, rule_text)]
    if lost:
        problems.append(
            "constraints_and_preferences must keep every rule the user set; missing: "
            + " | ".join(f'"{_comparable(rule)[:MAX_CHECKED_CHARS]}"' for rule in lost[:3])
            + "."
        )
    span = span_facts(messages)
    asks = " ".join([summary.active_task, *summary.pending_user_asks, *summary.next_steps, *summary.blocked_items])
    open_asks = [a.text for a in span.asks if a.fate != ANSWERED]
    kept_asks = _comparable(asks).lower()
    dropped = [ask for ask in open_asks if not _covered(ask, kept_asks)]
    if dropped:
        problems.append(
            "An open user request is missing: keep it in active_task (the newest) or "
            f'pending_user_asks: "{_comparable(dropped[-1])[:MAX_CHECKED_CHARS]}".'
        )
    lower = text.lower()
    files = [p for p in span.files_modified() if p.lower() not in lower and p.rsplit("/", 1)[-1].lower() not in lower]
    if files:
        named = ", ".join(files[:MAX_NAMED])
        problems.append(f"files_modified must name every file the history changed; missing: {named}.")
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
    messages: Sequence[dict[str, Any]] | None = None,
) -> AuditResult:
    """Check `summary` against the chunk it replaces (`source_text`, `source_tokens`; the
    chunk's `messages` too for a leaf, whose rules, open asks and files it must keep)."""
    if count is None:
        from myrm_tui.context.window.tokens import count_text_tokens

        count = count_text_tokens
    text = body_text(summary)
    tokens = count(text)
    problems = _structure_problems(summary, depth)

    entities = (_load_bearing(messages) if messages is not None and depth == 0 else extract_entities(source_text))[
        :MAX_AUDITED_ENTITIES
    ]
    missing = [e.value.strip() for e in entities if not _kept(e, text)]
    share = 1.0 if not entities else 1 - len(missing) / len(entities)
    if check_retention and share < min_retention:
        problems.append(
            f"Only {share:.0%} of the key identifiers survived (need {min_retention:.0%}). Keep these "
            f"exactly as written: {', '.join(missing[:12])}."
        )

    problems += _fidelity_problems(summary, text, source_text)
    if messages is not None and depth == 0:
        problems += _chunk_problems(summary, text, messages)

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
