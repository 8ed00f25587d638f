"""What the parent's prompt gets back from a subagent: three tiers of protection.

Why three: a child that ran a test suite can answer with thousands of lines, and the parent
delegated precisely so its own window would not fill with them.
  1. a hard cap in tokens on everything inline (the last line of defense);
  2. above SPILL_CHARS the full answer goes to the vault and the prompt gets head + tail, the
     handle and the exact call that reads the rest (the agent indexes the handle with the stored
     result, in one transaction, so ctx_search finds what only the middle said);
  3. the structured handover, parsed out of the answer and shown apart from the raw text, so it
     survives any cut of the raw part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from myrm_tui.agent.subagent.handover import Handover
from myrm_tui.store.vault import Vault

# Tier 2: the size above which the answer goes to the vault. ~2k tokens: a handover plus a
# page of findings fits whole; a pasted log does not.
SPILL_CHARS = 8_000
# Tier 2: the answer's start and end kept inline. Findings tend to open and conclude a report;
# together they stay well under the tier-1 cap.
HEAD_CHARS = 2_400
TAIL_CHARS = 2_400
# Tier 1: most tokens the whole inline result may take (header, handover and raw part). 4k is
# ~3% of a 128k window: a delegated task must cost the parent less than doing the work itself.
MAX_RESULT_TOKENS = 4_000
# How many times tier 1 shrinks the raw part before cutting characters outright.
_SHRINK_ROUNDS = 4

_RESULT_HEADING = "result:"


@dataclass(frozen=True)
class Distilled:
    content: str  # what the parent's tool result says
    vault_handle: str | None  # the full answer, when tier 2 spilled it
    tier: int  # 1: capped inline, 2: spilled, 0: passed whole


def split_distilled(content: str) -> tuple[str, str]:
    """(header + handover, raw result) of a stored task result, for a display that shows the
    handover apart; ("", content) for text this module did not compose."""
    head, sep, raw = content.partition(f"\n{_RESULT_HEADING}\n")
    if not sep or not head.startswith("[subagent "):
        return "", content
    return head, raw


def _hint(handle: str) -> str:
    return (
        f'full result: {handle} · read it with ctx_expand("{handle}", query="…") or '
        f'file_read("{handle}", start_line=1, end_line=200)'
    )


def _head_tail(text: str, handle: str, head: int, tail: int) -> str:
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[… {omitted:,} chars omitted · {_hint(handle)} …]\n{text[-tail:]}"


def _cap(text: str, ratio: float) -> str:
    keep = max(200, int(len(text) * ratio))
    half = keep // 2
    return f"{text[:half]}\n[… cut to fit the result cap …]\n{text[-half:]}"


def distill(
    header: str,
    answer: str,
    handover: Handover,
    *,
    full_text: str,
    vault: Vault | None,
    count: Callable[[str], int],
    max_tokens: int = MAX_RESULT_TOKENS,
) -> Distilled:
    """`answer`: the child's final text without its handover block; `full_text`: everything it
    said (what the vault keeps). `count` counts tokens for the parent's model."""
    handle: str | None = None
    body, tier = answer, 0
    if len(answer) > SPILL_CHARS and vault is not None:
        handle = vault.put(full_text, suffix=".md")
        body, tier = _head_tail(answer, handle, HEAD_CHARS, TAIL_CHARS), 2

    # The handle's hint also sits above the raw part, so a tier-1 cut of the middle keeps it.
    where = f"\n{_hint(handle)}" if handle else ""

    def compose(raw: str) -> str:
        return f"{header}{where}\n{handover.render()}\n{_RESULT_HEADING}\n{raw}".rstrip()

    content = compose(body)
    rounds = 0
    while count(content) > max_tokens and rounds < _SHRINK_ROUNDS:
        body = _cap(body, 0.5 * max_tokens / max(1, count(content)))
        content, rounds = compose(body), rounds + 1
        tier = tier or 1
    if count(content) > max_tokens:  # a handover alone over the cap (a pathological child)
        content = content[: max_tokens * 2] + "\n[… cut to fit the result cap …]"
        tier = tier or 1
    return Distilled(content, handle, tier)
