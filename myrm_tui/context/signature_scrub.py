"""Signature replay scrubber (Comis's Pipeline layer 2): on a replay that re-bills the prompt,
signed reasoning the provider does not need back is not sent again.

Why: Anthropic wants the signed thinking blocks of the assistant message whose tool calls are
being answered (the newest one); blocks of the earlier steps of the same turn it accepts but does
not need. While the prompt cache is warm they cost a cache read; on a replay that breaks the cache
(a compaction rewrote the history, the cache went cold, the model changed) every one of them is
billed again at the full input price. So on such a replay the current turn's earlier steps lose
their blocks, and keep that form afterwards: the scrub is sticky (`RenderedHistory.scrub_before`),
so the next requests extend the scrubbed prompt and the new cache entry stays valid. Blocks
signed by another provider family are never replayed at all (`thinking_cleanup.same_signer`).
"""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.store.records import MessageRecord


def replay_breaks_cache(compacted: bool, cache_warm: bool, model_changed: bool) -> bool:
    """Whether this request re-sends the history uncached: a compaction event rewrote it, the
    provider cache has gone cold (or there is none), or another model answers now."""
    return compacted or model_changed or not cache_warm


def scrub_boundary(rows: Sequence[MessageRecord], last_user: int | None) -> int | None:
    """The newest assistant row of the current turn (the one whose blocks must go back), when an
    earlier assistant row of that turn carries signed blocks; None when there is nothing to scrub."""
    if last_user is None:
        return None
    assistants = [i for i in range(last_user + 1, len(rows)) if rows[i].role == "assistant"]
    if len(assistants) < 2 or not any(rows[i].message.get("thinking_blocks") for i in assistants[:-1]):
        return None
    return assistants[-1]
