"""Lenient readers for the JSON the engine stores, and the mapping view of a typed record.

Why lenient: stored events outlive the code that wrote them. An older session holds smaller
reports, and a hand-edited or truncated store holds anything; a reader (the TUI, the bench) must
get None for a missing or malformed figure, never an exception or a made-up zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any


def int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


def float_or_none(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def mapping_or_empty(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class JsonView(Mapping[str, Any]):
    """A typed record that also reads as its stored JSON (`record["event"]`, `dict(record)`).

    Why: code outside the engine stored and indexed these records as dicts before they were
    typed (the agent stores `dict(prompt.report)`); the mapping view keeps that working while
    readers move to the typed fields. The view is computed once and must not be mutated.
    """

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @cached_property
    def _json(self) -> dict[str, Any]:
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json)

    def __len__(self) -> int:
        return len(self._json)
