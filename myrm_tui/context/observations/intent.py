"""Compression intent: what the current task is about, so compaction spares it.

Built from the latest user message and the in-flight tool calls (the current turn), never from
older history, so it reflects the task the model is working on right now.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from myrm_tui.context.rows.views import parse_arguments
from myrm_tui.messages import content_text
from myrm_tui.store.records import MessageRecord

# Path-looking tokens: a slash or a dotted extension of 1–8 letters (src/app.py, README.md).
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}|(?:[\w.-]+/)+[\w.-]+)(?![\w/])")
# At most this many focus paths (and as many modules, as many symbols): more and "protected"
# stops meaning anything.
MAX_FOCUS = 12
# Dotted names of identifiers (myrm_tui.context.observations.intent, os.path); a file name (app.py) is a path.
_DOTTED = re.compile(r"(?<![\w./-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/(])")
# Last parts that make a dotted name a file, not a module.
_FILE_SUFFIX_WORDS = (
    "py pyi md rst txt json jsonl toml yaml yml cfg ini lock js jsx ts tsx rs go c h cc cpp hpp java kt "
    "rb php sh bash zsh html css csv tsv log sql xml svg png jpg gif pdf"
)
_FILE_SUFFIXES = frozenset(_FILE_SUFFIX_WORDS.split())
# Symbols a query names: CamelCase (two humps), snake_case (an underscore) and called names.
_CAMEL = re.compile(r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?!\w)")
_SNAKE = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w/.-])")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
# Shorter names (id, run, get) occur in every output: protecting them would protect everything.
MIN_SYMBOL_CHARS = 4


@dataclass(frozen=True)
class Intent:
    focus_paths: frozenset[str] = field(default_factory=frozenset)
    failed_call_ids: frozenset[str] = field(default_factory=frozenset)
    pinned_paths: frozenset[str] = field(default_factory=frozenset)
    # Modules under discussion, dotted and as a path stem (pkg.mod and pkg/mod), and the code
    # symbols the query names: an output mentioning one is about the task even without a path.
    focus_modules: frozenset[str] = field(default_factory=frozenset)
    focus_symbols: frozenset[str] = field(default_factory=frozenset)

    @cached_property
    def terms(self) -> tuple[str, ...]:
        """Every string whose presence makes a text part of the task, sorted (a stable order)."""
        return tuple(sorted(self.focus_paths | self.pinned_paths | self.focus_modules | self.focus_symbols))

    def protects(self, text: str, call_id: str = "") -> bool:
        if call_id and call_id in self.failed_call_ids:
            return True
        return any(term in text for term in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms or self.failed_call_ids)


def compaction_text(message: Mapping[str, Any]) -> str:
    """A message's text as compaction has always read it: parts joined by " ", an image an empty
    piece. Dedup hashes, filters and the summaries are built from this text, so its bytes are
    part of the prompt: keep the options, not the defaults of `content_text`."""
    return content_text(message.get("content"), sep=" ", image="", keep_empty=True)


def looks_failed(content: str) -> bool:
    head = content[:300].lower()
    return head.startswith(("error", "[error", "refused", "timeout")) or "traceback (most recent call last)" in head


def build_intent(rows: Sequence[MessageRecord], last_user_index: int | None, pinned: Sequence[str] = ()) -> Intent:
    if last_user_index is None:
        return Intent(pinned_paths=frozenset(pinned))
    paths: list[str] = []
    failed: set[str] = set()
    paths.extend(m.group(1) for m in _PATH.finditer(compaction_text(rows[last_user_index].message)))
    for row in rows[last_user_index + 1 :]:
        message = row.message
        for call in message.get("tool_calls") or ():
            args = parse_arguments(call.get("function", {}).get("arguments"))
            for key in ("path", "pattern"):
                if isinstance(args.get(key), str):
                    paths.append(args[key])
        if message.get("role") == "tool" and looks_failed(compaction_text(message)):
            failed.add(message.get("tool_call_id", ""))
    unique = list(dict.fromkeys(p for p in paths if len(p) >= 3))[:MAX_FOCUS]
    query = compaction_text(rows[last_user_index].message)
    return Intent(
        frozenset(unique),
        frozenset(failed),
        frozenset(pinned),
        focus_modules(query, unique),
        focus_symbols(query),
    )


def focus_modules(query: str, paths: Sequence[str] = ()) -> frozenset[str]:
    """The modules a query is about, each in both spellings: `pkg.mod` (imports, tracebacks)
    and `pkg/mod` (paths, which also matches `pkg/mod.py` and the package `pkg/mod/`). A Python
    path with a directory counts too (`pkg/mod.py` is `pkg.mod`); a bare file name does not
    (`app.py` would make every "app" a focus)."""
    dotted = [m.group(1) for m in _DOTTED.finditer(query) if m.group(1).rsplit(".", 1)[1].lower() not in _FILE_SUFFIXES]
    dotted += [p[: -len(".py")].replace("/", ".") for p in paths if p.endswith(".py") and "/" in p.strip("/")]
    names = [n.strip(".") for n in dict.fromkeys(dotted)][:MAX_FOCUS]
    return frozenset(spelling for name in names for spelling in (name, name.replace(".", "/")))


def focus_symbols(query: str) -> frozenset[str]:
    """CamelCase and snake_case identifiers and called names (`name(`) in the query, the first
    MAX_FOCUS of them; names shorter than MIN_SYMBOL_CHARS are too common to mean anything."""
    found = [m.group(1) for pattern in (_CAMEL, _SNAKE, _CALLED) for m in pattern.finditer(query)]
    ordered = sorted(dict.fromkeys(s for s in found if len(s) >= MIN_SYMBOL_CHARS), key=query.find)
    return frozenset(ordered[:MAX_FOCUS])


def current_query(rows: Sequence[MessageRecord], last_user_index: int | None, max_chars: int = 4_000) -> str:
    """What the current task is about, as text to rank history against: the latest user message
    and the arguments of the calls made since (what the model is looking at now), capped."""
    if last_user_index is None or last_user_index < 0:
        return ""
    parts = [compaction_text(rows[last_user_index].message)]
    for row in rows[last_user_index + 1 :]:
        for call in row.message.get("tool_calls") or ():
            arguments = call.get("function", {}).get("arguments")
            parts.append(arguments if isinstance(arguments, str) else "")
    return " ".join(parts)[:max_chars]


def focus_last_in_band(order: Sequence[int], focus: Sequence[bool], band: int) -> list[int]:
    """Removal's gentler use of the intent (`EngineConfig.removal_focus_band`): `order` (the
    removal order of groups) cut into consecutive bands of `band` groups, each band with its
    focus groups (`focus[k]` for group k) moved after its other groups. A focus group waits at
    most `band - 1` places, so removal stays near-contiguous (whole-list focus-last left dozens
    of small gaps and fragmented the summaries); `band` < 2 gives `order` back."""
    if band < 2:
        return list(order)
    out: list[int] = []
    for start in range(0, len(order), band):
        chunk = order[start : start + band]
        out += [k for k in chunk if not focus[k]] + [k for k in chunk if focus[k]]
    return out
