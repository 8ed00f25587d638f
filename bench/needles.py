"""Needles: unique `NEEDLE-<10 hex> field=value` facts planted in a session, and their probes.

Why this shape: the id makes a needle findable by exact search (the handle a model would type),
the field gives a second, fuzzier query term, and `value` is what must come back. Values use only
[A-Za-z0-9_.-], so a needle never needs escaping inside JSON and the scorer can check word
boundaries (`port=4821` must not match `port=48213`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from bench.content import MODULES, NAMES, NOUNS, VERBS

# Probe lags, in turns after planting (docs/benchmarks.md, "Workloads"): short, medium, past a compaction, long.
PROBE_LAGS = (5, 20, 50, 120)

CARRIERS = {
    1: "user-sentence",
    2: "tool-output-middle",
    3: "big-json",
    4: "reread-file",
    5: "assistant-decision",
    6: "first-message-constraint",
}

_REGIONS = ("eu-west-3", "us-east-2", "ap-south-1", "sa-east-1", "eu-central-1", "ca-central-1")
FIELD_VALUES = {
    "port": lambda r: str(r.randrange(1024, 65536)),
    "region": lambda r: r.choice(_REGIONS),
    "owner": lambda r: f"{r.choice(NAMES)}.{r.choice(NAMES)}",
    "build_id": lambda r: f"b{r.getrandbits(32):08x}",
    "timeout_ms": lambda r: str(r.randrange(100, 30000)),
    "max_retries": lambda r: str(r.randrange(1, 13)),
    "api_version": lambda r: f"v{r.randrange(1, 5)}.{r.randrange(0, 20)}.{r.randrange(0, 30)}",
    "queue": lambda r: f"{r.choice(NOUNS)}-q{r.randrange(1, 99)}",
    "bucket": lambda r: f"{r.choice(MODULES)}-{r.choice(NOUNS)}-{r.getrandbits(16):04x}",
    "flag": lambda r: f"{r.choice(VERBS)}_{r.choice(NOUNS)}_v{r.randrange(2, 9)}",
    "replicas": lambda r: str(r.randrange(2, 49)),
    "db_host": lambda r: f"db-{r.randrange(1, 64)}.{r.choice(('internal', 'prod', 'stg'))}",
}
VALUE_CHARS = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass
class Needle:
    id: str
    field: str
    value: str
    carrier: int
    planted_turn: int
    updated_turn: int | None = None  # carrier 4: the turn the file is re-read with the new value
    old_value: str | None = None
    probes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"NEEDLE-{self.id} {self.field}={self.value}"

    @property
    def old_text(self) -> str | None:
        return None if self.old_value is None else f"NEEDLE-{self.id} {self.field}={self.old_value}"

    @property
    def query(self) -> str:
        """What a model would search for: the handle and the field name."""
        return f"NEEDLE-{self.id} {self.field}"

    @property
    def probe_base(self) -> int:
        """Lags count from the moment the expected value is in the history."""
        return self.updated_turn if self.updated_turn is not None else self.planted_turn

    def schedule_probes(self, last_turn: int, lags: tuple[int, ...] = PROBE_LAGS) -> None:
        self.probes = [
            {"turn": self.probe_base + lag, "lag": lag, "query": self.query}
            for lag in lags
            if self.probe_base + lag <= last_turn
        ]

    def as_answer(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "id": self.id,
            "needle": self.text,
            "field": self.field,
            "value": self.value,
            "carrier": self.carrier,
            "carrier_name": CARRIERS[self.carrier],
            "planted_turn": self.planted_turn,
        }
        if self.updated_turn is not None:
            answer.update(updated_turn=self.updated_turn, old_value=self.old_value, old_needle=self.old_text)
        answer["probes"] = self.probes
        return answer


class NeedleFactory:
    """Draws needles with unique ids and well-formed values from one seeded Random."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._ids: set[str] = set()
        self.needles: list[Needle] = []

    def new(self, carrier: int, turn: int, field_name: str | None = None, value: str | None = None) -> Needle:
        rng = self._rng
        while True:
            needle_id = f"{rng.getrandbits(40):010x}"
            if needle_id not in self._ids:
                self._ids.add(needle_id)
                break
        name = field_name or rng.choice(sorted(FIELD_VALUES))
        needle = Needle(needle_id, name, value or FIELD_VALUES[name](rng), carrier, turn)
        self.needles.append(needle)
        return needle

    def changed_value(self, needle: Needle) -> str:
        """A new value for a re-read file: different, and neither a prefix of the other."""
        while True:
            value = FIELD_VALUES[needle.field](self._rng)
            if not value.startswith(needle.value) and not needle.value.startswith(value):
                return value


def needle_pattern(text: str) -> re.Pattern[str]:
    """Matches `text` only where the value ends (no longer value starting with it)."""
    return re.compile(re.escape(text) + r"(?![\w-]|\.[\w-])")


def probe_lines(needles: list[Needle]) -> dict[int, list[dict[str, Any]]]:
    """Probe lines grouped by turn, in planting order within a turn."""
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for needle in needles:
        for probe in needle.probes:
            by_turn.setdefault(probe["turn"], []).append({"probe": {"turn": probe["turn"], "query": probe["query"]}})
    return by_turn
