"""What a summarizer reads: the covered messages with bulky payloads cut to excerpts.

Why: summarizer input is paid at the full (uncached) rate, and most of it used to be tool
output the model had long stopped looking at (a 200 KB JSON, a 1 MB log already in the vault).
A summary needs what was asked, decided and found, not every byte: so the conversation text
is passed whole, while each tool result keeps its head and tail (where commands print their
verdict) and long tool-call arguments and images shrink to a line. The originals stay in the
store, and the node's footer points at them, so nothing is lost by summarizing less.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from myrm_tui.context.filters.notable import notable_lines, noted_facts

# A tool result is summarized from this many characters at most (about 100 tokens: a
# command's first lines and its verdict at the end), and the results of one batch of parallel
# calls share `BATCH_CHARS` (a storm of 8 reads is one step of the story, not eight), never
# below `MIN_RESULT_CHARS` each. Measured on the bench's 400-turn sessions: summarizer input
# fell from 1.3-1.5 M to 0.16-0.5 M tokens with no change in what the prompt keeps.
TOOL_RESULT_CHARS = 400
BATCH_CHARS = 1_200
MIN_RESULT_CHARS = 150
HEAD_SHARE = 0.6  # of a cut result: the head (what ran, first lines); the rest is the tail (verdict)
# Tool-call argument strings (file bodies, patches) are cut to this many characters each.
ARGUMENT_CHARS = 300
# Even conversation text is capped (a pasted file in a user message): far above a typed message.
TEXT_CHARS = 8_000


# Texts at most this much over their cap pass whole: the cut marker would cost about as much.
CUT_SLACK = 80
# A cut tool result also shows this many notable lines from its hidden middle (`notable.py`):
# the one-off facts an excerpt of head and tail never shows, at ~50 tokens each.
NOTABLE_PER_RESULT = 2
# Closes the notable lines, so a reader tells them from the tail that follows.
NOTABLE_END = "[… end of the lines not shown]"


def _cut(text: str, cap: int, notable: int = 0) -> str:
    """Head and tail of `text`, and up to `notable` lines of the middle that break its pattern.
    The marker names no handle: the summarizer's auditor would take it for an identifier the
    summary must keep (the node's footer says how to expand)."""
    if len(text) <= cap + CUT_SLACK:
        return text
    head = int(cap * HEAD_SHARE)
    tail = cap - head
    # An excerpt already carries its notable lines as notes (a spilled output); else find them.
    hidden = noted_facts(text[head:-tail]) if tail else []
    middle = hidden[:notable] or [line.text for line in notable_lines(text, notable, skip_head=head, skip_tail=tail)]
    marker = f"[… {len(text) - cap:,} chars not shown here]"
    if middle:
        marker = (
            f"[… {len(text) - cap:,} chars not shown here; notable lines among them:]\n"
            + "\n".join(middle)
            + f"\n{NOTABLE_END}"
        )
    return f"{text[:head]}\n{marker}\n{text[-tail:]}"


def _content(content: Any, cap: int, notable: int = 0) -> Any:
    if isinstance(content, str):
        return _cut(content, cap, notable)
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append({"type": "text", "text": _cut(str(part.get("text", "")), cap, notable)})
            elif isinstance(part, dict):
                parts.append({"type": "text", "text": f"[{part.get('type', 'part')} omitted]"})
        return parts
    return content


def _calls(calls: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        function = dict(call.get("function") or {})
        raw = function.get("arguments")
        if isinstance(raw, str) and len(raw) > ARGUMENT_CHARS:
            try:
                args = json.loads(raw)
            except ValueError:
                args = None
            if isinstance(args, dict):
                args = {
                    k: (v[:ARGUMENT_CHARS] + "…" if isinstance(v, str) and len(v) > ARGUMENT_CHARS else v)
                    for k, v in args.items()
                }
                function["arguments"] = json.dumps(args, ensure_ascii=False)[: 4 * ARGUMENT_CHARS]
            else:
                function["arguments"] = raw[:ARGUMENT_CHARS] + "…"
        out.append({**call, "function": function})
    return out


def summarizer_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` as the summarizer should read them (same roles, order and pairing)."""
    out = []
    result_cap = TOOL_RESULT_CHARS
    for message in messages:
        role = message.get("role")
        if role == "tool":
            new = {**message, "content": _content(message.get("content"), result_cap, NOTABLE_PER_RESULT)}
        else:
            new = {**message, "content": _content(message.get("content"), TEXT_CHARS)}
            batch = len(message.get("tool_calls") or ())
            result_cap = (
                max(MIN_RESULT_CHARS, min(TOOL_RESULT_CHARS, BATCH_CHARS // batch)) if batch else TOOL_RESULT_CHARS
            )
            if message.get("tool_calls"):
                new["tool_calls"] = _calls(message["tool_calls"])
        out.append(new)
    return out
