"""Verbatim quotes of what the user and the assistant said, kept in summary nodes.

Why: when old turns leave the prompt, the cheapest and most valuable part of them is the
conversation itself: the user's requests, facts they typed once ("the staging port is 4821"),
and the assistant's stated decisions. A summary may paraphrase or drop them; a quote cannot.
So every leaf keeps the newest of these messages word for word (user first, then the
assistant's closing message of each turn, then its other remarks), within a cap that scales
with the budget, and folds keep the newest quotes of their children. Everything cut here is
still one `ctx_expand` away; the quotes only save that call for what matters most. Beside a
body a model wrote (accepted by the auditor) the cap is `model_quote_ratio`, 0 by default: that
body already carries the stated values word for word (`SummaryArea.quote_tokens`).

Quote lines look like `> user (msg:12): text` so folds can re-select them without any stored state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import msg_handle
from myrm_tui.context.summary.schema import neutralize
from myrm_tui.redact import redact

QUOTES_HEADER = "Said (verbatim, newest kept):"
QUOTE_PREFIX = "> "
# One message is quoted up to this many characters (a typed request or decision fits; a pasted
# file does not, and is cut on a word boundary with an ellipsis; the whole stays expandable).
MAX_QUOTE_CHARS = 600
# Assistant text sent along with tool calls is quoted only from this length on: shorter is
# narration ("Gathering context in parallel."); longer usually states a plan or a decision.
MIN_REMARK_CHARS = 100
# Priority of a quote when the cap forces a choice (lower is kept first).
USER, CLOSING, REMARK = 0, 1, 2
_ROLE_PRIORITY = {"user": USER, "assistant": REMARK}
_LINE = re.compile(r"^> (user|assistant) \(msg:\d+\): ")
_SPACE = re.compile(r"\s+")


def _clip(text: str, cap: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= cap:
        return text
    cut = text.rfind(" ", 0, cap - 1)
    return text[: cut if cut > cap // 2 else cap - 1] + "…"


def _head(role: str, message_id: int) -> str:
    return f"{QUOTE_PREFIX}{role} ({msg_handle(message_id)}): "


@dataclass(frozen=True)
class _Candidate:
    priority: int
    position: int
    head: str
    raw: str  # the message text, whole: redaction must see a secret's end before anything is cut
    finished: bool = False

    @property
    def line(self) -> str:
        return self.head + (self.raw if self.finished else _clip(self.raw, MAX_QUOTE_CHARS))

    def finish(self) -> _Candidate:
        """Secrets redacted (on the whole text, then clipped) and headers neutralised. Done on
        selected lines only: redaction runs a dozen patterns, and doing it for every candidate
        made a removal of 500 messages cost 50 ms."""
        if self.finished:
            return self
        return _Candidate(self.priority, self.position, self.head, finished_text(self.raw), True)


# Finished quote texts remembered (a pure function of the message text): a leaf redacts the
# twenty-odd messages it quotes, most of a compaction event's redaction, and a fold or a rebuild
# quotes the same messages again. The values are clipped, the keys the history's own strings;
# 1,024 spans the quotable messages of a long session.
FINISHED_MEMO_ENTRIES = 1_024


@lru_cache(maxsize=FINISHED_MEMO_ENTRIES)
def finished_text(raw: str) -> str:
    """A quoted message's text as a summary shows it: redacted whole, clipped, neutralised."""
    return neutralize(_clip(redact(raw).text, MAX_QUOTE_CHARS))


def _candidates(messages: Sequence[dict[str, Any]], ids: Sequence[int]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for position, (message, message_id) in enumerate(zip(messages, ids, strict=True)):
        role = message.get("role")
        if role not in _ROLE_PRIORITY:
            continue
        text = compaction_text(message)  # list parts joined; images have no text
        if not text.strip():
            continue
        priority = _ROLE_PRIORITY[role]
        if role == "assistant" and not message.get("tool_calls"):
            priority = CLOSING  # the turn's answer: what was decided or found
        elif role == "assistant" and len(text) < MIN_REMARK_CHARS:
            continue  # narration next to tool calls ("Let me check.") says nothing the footer doesn't
        out.append(_Candidate(priority, position, _head(role, message_id), text))
    return out


def _block_chars(kept: Sequence[_Candidate]) -> int:
    return len(QUOTES_HEADER) + sum(len(c.line) + 1 for c in kept) if kept else 0


def _select(
    candidates: list[_Candidate], cap_chars: int, cap_tokens: int | None, count: Callable[[str], int] | None
) -> list[str]:
    """Highest priority first, newest first within a priority, until the caps; then in order.

    Selection runs on characters (cheap); the finished block is then measured once in tokens
    and trimmed, least valued first, so dense text (CJK, emoji: 1-3 tokens per character)
    cannot take more than its share of the budget.
    """
    ranked = sorted(candidates, key=lambda c: (c.priority, -c.position))
    kept: list[_Candidate] = []
    used = len(QUOTES_HEADER)
    for candidate in ranked:
        size = len(candidate.line) + 1
        if used + size > cap_chars:
            continue  # a shorter, older one may still fit
        kept.append(candidate)
        used += size
    kept = [c.finish() for c in kept]
    # A redaction placeholder can be longer than what it hides: drop the least valued until it fits.
    while kept and _block_chars(kept) > cap_chars:
        kept.pop()
    if count is not None and cap_tokens is not None:
        while kept:
            tokens = count(render_quotes([c.line for c in sorted(kept, key=lambda c: c.position)]))
            if tokens <= cap_tokens:
                break
            # Drop the excess share at once (one recount per round, not one per line).
            drop = max(1, int(len(kept) * (tokens - cap_tokens) / tokens))
            kept = kept[:-drop]
    return [c.line for c in sorted(kept, key=lambda c: c.position)]


def render_quotes(lines: Sequence[str]) -> str:
    return "\n".join([QUOTES_HEADER, *lines]) if lines else ""


def quotes_for(
    messages: Sequence[dict[str, Any]],
    ids: Sequence[int],
    cap_chars: int,
    *,
    cap_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
) -> str:
    """The quote block of a leaf covering `messages` (store ids `ids`): at most `cap_chars`
    characters and, when `count` is given, at most `cap_tokens` tokens."""
    if cap_chars <= 0:
        return ""
    return render_quotes(_select(_candidates(messages, ids), cap_chars, cap_tokens, count))


def parse_quotes(rendered: str) -> list[str]:
    """The quote lines of a node: only the block after its last quotes header (field text is
    neutralised so it cannot start a line that looks like a quote, and the real block is last)."""
    lines = rendered.splitlines()
    try:
        start = len(lines) - 1 - lines[::-1].index(QUOTES_HEADER)
    except ValueError:
        return []
    out = []
    for line in lines[start + 1 :]:
        if not _LINE.match(line):
            break
        out.append(line)
    return out


def merge_quotes(
    children_rendered: Sequence[str],
    cap_chars: int,
    *,
    cap_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
) -> str:
    """The quote block of a fold: its children's quotes re-selected under the fold's caps."""
    if cap_chars <= 0:
        return ""
    candidates: list[_Candidate] = []
    for line in (line for rendered in children_rendered for line in parse_quotes(rendered)):
        match = _LINE.match(line)
        assert match is not None  # parse_quotes returns matching lines only
        priority = USER if match.group(1) == "user" else CLOSING
        candidates.append(_Candidate(priority, len(candidates), line[: match.end()], line[match.end() :], True))
    return render_quotes(_select(candidates, cap_chars, cap_tokens, count))


def strip_quotes(rendered: str) -> str:
    """A node's text without its quote block (what a summarizer of folds needs to read)."""
    quoted = set(parse_quotes(rendered))
    return "\n".join(line for line in rendered.splitlines() if line != QUOTES_HEADER and line not in quoted)
