"""A per-message computation over the prompt, redone only past the part that came back unchanged.

Why: the cache-break detector digests every history message of every request, and a request's
history is the previous one plus a few messages at the end (a compaction event changes a
suffix). Looking each message up on its entry still walked the whole prompt through a dict per
request; comparing objects against the previous request's list finds the unchanged prefix at a
fraction of that, and only the rest is looked up. Only for lists whose head is stable: a list
that starts with an object made anew per request shares no prefix and pays a little more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_
from typing import Any, Generic, TypeVar

Out = TypeVar("Out")


class PrefixMemo(Generic[Out]):
    """`map(messages)` = `[compute(m) for m in messages]`, for a `compute` that gives the same
    answer for the same object (messages are never changed in place). Keeps the previous list
    and its answers (references: a prompt's worth of messages)."""

    def __init__(self, compute: Callable[[dict[str, Any]], Out]) -> None:
        self.compute = compute
        self._inputs: list[dict[str, Any]] = []
        self._outputs: list[Out] = []

    def map(self, messages: Sequence[dict[str, Any]]) -> list[Out]:
        kept = shared_prefix(messages, self._inputs)
        outputs = self._outputs[:kept] + [self.compute(m) for m in messages[kept:]]
        self._inputs, self._outputs = list(messages), outputs
        return list(outputs)

    def clear(self) -> None:
        self._inputs, self._outputs = [], []


def shared_prefix(new: Sequence[object], old: Sequence[object]) -> int:
    """How many leading items of `new` are the very objects `old` starts with. The comparison
    runs in C (`map` over `operator.is_`): a Python loop over the shared prefix was itself a
    per-request cost growing with the session."""
    same = list(map(is_, new, old))
    try:
        return same.index(False)
    except ValueError:
        return len(same)
