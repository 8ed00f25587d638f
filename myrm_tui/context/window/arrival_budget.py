"""How much of the prompt a new output may take, from the room left and the turn's other outputs.

Why adaptive: a fixed share of B lets eight outputs each "under the allowance" arrive in a prompt
that is already 85 % full, and the preflight then has to remove older turns (a cache break) or
cut inside the fresh tail. Shrinking the allowance with the room left, and capping what one turn's
outputs add up to, excerpts the newest outputs instead: decided once, stored, byte-identical
afterwards, and the full text stays one `ctx_expand` away.

Pure functions: the arrival filter (`arrival_filter.py`) feeds them token counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from myrm_tui.context.window.config import EngineConfig

K = TypeVar("K")

# An output filtered only because its turn's outputs add up to too much gets an excerpt of this
# share of the floor: small enough that every such cut frees at least half the floor (the header
# line takes ~60 tokens of the rest), large enough to keep the failures and summaries it shows.
AGGREGATE_EXCERPT_SHARE = 0.5
# Tokens never worth filtering, whatever the window: an excerpt plus its header would save almost
# nothing (the floor is also a share of B, `EngineConfig.arrival_floor_ratio`; the larger wins).
MIN_FLOOR_TOKENS = 200


@dataclass(frozen=True)
class ArrivalAllowances:
    """Token allowances for the outputs of one batch of arrivals."""

    output: int  # a tool output (not a file read)
    file_read: int  # a file read: larger, so the model does not fall into read → cut → re-read
    item: int  # any other message (a long user or assistant message); not adaptive
    turn: int  # all filterable tool outputs of one turn together
    floor: int  # outputs at or under this many tokens are never filtered
    aggregate_excerpt: int  # what an output cut by the turn allowance is excerpted to


def arrival_allowances(prompt_limit: int, prompt_tokens: int, config: EngineConfig) -> ArrivalAllowances:
    """Allowances when the prompt holds `prompt_tokens` before the new rows.

    A single output may take at most `arrival_room_ratio` of the room left (a file read
    `file_read_room_ratio`), never less than the floor and never more than its fixed share of B;
    so while the room is large nothing changes, and near the limit a smaller output is excerpted."""
    floor = max(MIN_FLOOR_TOKENS, int(prompt_limit * config.arrival_floor_ratio))
    room = max(0, prompt_limit - prompt_tokens)

    def shrunk(share: float, room_share: float) -> int:
        return max(floor, min(int(prompt_limit * share), int(room * room_share)))

    if config.file_read_exempt:  # exempt from the per-output share, never from the room left
        file_read = max(floor, int(room * config.file_read_room_ratio))
    else:
        file_read = shrunk(config.file_read_filter_ratio, config.file_read_room_ratio)
    return ArrivalAllowances(
        output=shrunk(config.ingest_filter_ratio, config.arrival_room_ratio),
        file_read=file_read,
        item=int(prompt_limit * config.max_item_ratio),
        turn=max(floor, min(int(prompt_limit * config.turn_output_ratio), config.turn_output_cap)),
        floor=floor,
        aggregate_excerpt=int(floor * AGGREGATE_EXCERPT_SHARE),
    )


def over_turn_allowance(
    earlier: int,
    arrivals: Sequence[tuple[K, int]],
    allowance: int,
    floor: int,
    excerpt_of: Callable[[K], int | None],
) -> dict[K, int]:
    """Which new outputs to excerpt so the turn's outputs fit `allowance`, biggest first, and the
    tokens each excerpt takes.

    `earlier`: tokens the turn's outputs already in the prompt take (decided before, untouchable);
    `arrivals`: (key, tokens) of the new outputs, each already within its single allowance;
    `excerpt_of(key)`: the tokens of that output's excerpt (None when it cannot be cut; a cut
    that saves nothing is not made). Outputs at or under `floor` are never cut. Biggest first
    frees the most per cut, and cutting stops as soon as the turn fits; when even cutting every
    candidate cannot fit, all are cut (the preflight handles the rest)."""
    total = earlier + sum(tokens for _, tokens in arrivals)
    chosen: dict[K, int] = {}
    for key, tokens in sorted((item for item in arrivals if item[1] > floor), key=lambda item: -item[1]):
        if total <= allowance:
            break
        shown = excerpt_of(key)
        if shown is None or shown >= tokens:
            continue
        chosen[key] = shown
        total -= tokens - shown
    return chosen
