"""Verbatim quotes of what the user and the assistant said, kept in summary nodes.

Why: when old turns leave the prompt, the cheapest and most valuable part of them is the
conversation itself: the user's requests, facts they typed once ("the staging port is 4821"),
and the assistant's stated decisions. A summary may paraphrase or drop them; a quote cannot.
So every leaf keeps the newest of these messages word for word (user first, then the
assistant's closing message of each turn, then its other remarks), within a cap that scales
with the budget, and folds keep the newest quotes of their children. Everything cut here is
still one `ctx_expand` away; the quotes only save that call for what matters most.

Quote lines look like `> user (msg:12): text` so folds can re-select them without any stored state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from myrm_tui.context.summary.redact import redact
from myrm_tui.context.summary.schema import neutralize
from myrm_tui.context.views import msg_handle

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


def _text(content: Any) -> str:
    """The typed text of a message (list parts joined; images and other parts skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _clip(text: str, cap: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= cap:
        return text
    cut = text.rfind(" ", 0, cap - 1)
    return text[:cut if cut > cap // 2 else cap - 1] + "…"


def _head(role: str, message_id: int) -> str:
    return f"{QUOTE_PREFIX}{role} ({msg_handle(message_id)}): "


def _finish(line: str) -> str:
    """Secrets redacted and headers neutralised, on a selected line only (redaction runs a dozen
    patterns: doing it for every candidate made a removal of 500 messages cost 50 ms)."""
    head, _, text = line.partition("): ")
    return f"{head}): {neutralize(redact(text).text)}"


def _candidates(messages: Sequence[dict[str, Any]], ids: Sequence[int]) -> list[tuple[int, int, str]]:
    """(priority, position, raw line) for every quotable message (clipped, not yet redacted)."""
    out: list[tuple[int, int, str]] = []
    for position, (message, message_id) in enumerate(zip(messages, ids)):
        role = message.get("role")
        if role not in _ROLE_PRIORITY:
            continue
        text = _text(message.get("content"))
        if not text.strip():
            continue
        priority = _ROLE_PRIORITY[role]
        if role == "assistant" and not message.get("tool_calls"):
            priority = CLOSING  # the turn's answer: what was decided or found
        elif role == "assistant" and len(text) < MIN_REMARK_CHARS:
            continue  # narration next to tool calls ("Let me check.") says nothing the footer doesn't
        out.append((priority, position, _head(role, message_id) + _clip(text, MAX_QUOTE_CHARS)))
    return out


def _select(candidates: list[tuple[int, int, str]], cap_chars: int, *, finish: bool = True) -> list[str]:
    """Highest priority first, newest first within a priority, until the cap; then in order."""
    kept: list[tuple[int, int, str]] = []
    used = 0
    for priority, position, line in sorted(candidates, key=lambda c: (c[0], -c[1])):
        if used + len(line) + 1 > cap_chars:
            continue  # a shorter, older one may still fit
        kept.append((priority, position, line))
        used += len(line) + 1
    if finish:
        kept = [(priority, position, _finish(line)) for priority, position, line in kept]
        # A redaction placeholder can be longer than what it hides: drop the least valued until it fits.
        kept.sort(key=lambda c: (c[0], -c[1]))
        while kept and sum(len(line) + 1 for _, _, line in kept) > cap_chars:
            kept.pop()
    return [line for _, _, line in sorted(kept, key=lambda c: c[1])]


def render_quotes(lines: Sequence[str]) -> str:
    return "\n".join([QUOTES_HEADER, *lines]) if lines else ""


def quotes_for(messages: Sequence[dict[str, Any]], ids: Sequence[int], cap_chars: int) -> str:
    """The quote block of a leaf covering `messages` (store ids `ids`), at most `cap_chars`."""
    if cap_chars <= 0:
        return ""
    return render_quotes(_select(_candidates(messages, ids), cap_chars))


def parse_quotes(rendered: str) -> list[str]:
    return [line for line in rendered.splitlines() if _LINE.match(line)]


def merge_quotes(children_rendered: Sequence[str], cap_chars: int) -> str:
    """The quote block of a fold: its children's quotes re-selected under the fold's cap."""
    if cap_chars <= 0:
        return ""
    candidates: list[tuple[int, int, str]] = []
    for line in (line for rendered in children_rendered for line in parse_quotes(rendered)):
        role = _LINE.match(line).group(1)  # type: ignore[union-attr]
        candidates.append((USER if role == "user" else CLOSING, len(candidates), line))
    return render_quotes(_select(candidates, cap_chars, finish=False))  # children's lines are finished


def strip_quotes(rendered: str) -> str:
    """A node's text without its quote block (what a summarizer of folds needs to read)."""
    return "\n".join(line for line in rendered.splitlines() if line != QUOTES_HEADER and not _LINE.match(line))
