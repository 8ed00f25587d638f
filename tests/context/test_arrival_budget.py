"""The arrival allowances: they shrink with the room left, and a turn's outputs are capped together."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.window.arrival_budget import arrival_allowances, over_turn_allowance
from myrm_tui.context.window.config import EngineConfig

CONFIG = EngineConfig()
B = 58_000  # about a 64k window's prompt limit


def test_an_empty_prompt_keeps_the_fixed_output_share() -> None:
    allowances = arrival_allowances(B, 3_000, CONFIG)
    assert allowances.output == int(B * CONFIG.ingest_filter_ratio)
    assert allowances.item == int(B * CONFIG.max_item_ratio)


def test_the_output_allowance_shrinks_as_the_prompt_fills_and_stops_at_the_floor() -> None:
    empty, half, near, full = (arrival_allowances(B, used, CONFIG) for used in (0, B // 2, int(B * 0.92), B + 5_000))
    assert empty.output > near.output >= near.floor
    assert near.output == int((B - int(B * 0.92)) * CONFIG.arrival_room_ratio)
    assert full.output == full.floor == full.file_read
    # A file read keeps more room than other outputs, and shrinks too.
    assert empty.file_read > half.file_read > near.file_read > near.output


def test_the_turn_allowance_is_a_share_of_b_with_a_cap() -> None:
    assert arrival_allowances(B, 0, CONFIG).turn == int(B * CONFIG.turn_output_ratio)
    assert arrival_allowances(1_000_000, 0, CONFIG).turn == CONFIG.turn_output_cap


def to(excerpt: int):
    return lambda _key: excerpt


def test_the_biggest_outputs_are_cut_first_and_only_as_many_as_needed() -> None:
    arrivals = [(1, 1_500), (2, 2_000), (3, 1_800), (4, 300)]
    # 5,600 in all; each cut to 400 frees (size − 400): cutting 2 → 4,000, then 3 → 2,600.
    assert over_turn_allowance(0, arrivals, 3_000, 500, to(400)) == {2: 400, 3: 400}
    assert over_turn_allowance(0, arrivals, 6_000, 500, to(400)) == {}
    # Outputs the turn already showed count, though they are never cut again.
    assert over_turn_allowance(3_000, arrivals, 6_000, 500, to(400)) == {2: 400, 3: 400}


def test_the_real_excerpt_size_decides_when_to_stop() -> None:
    """An excerpt larger than hoped (dense text) makes the next biggest output go too."""
    arrivals = [(1, 1_500), (2, 2_000), (3, 1_800)]
    sizes = {1: 400, 2: 1_900, 3: 400}
    assert over_turn_allowance(0, arrivals, 4_000, 500, sizes.get) == {2: 1_900, 3: 400}
    # An output that cannot be cut (or whose cut saves nothing) is skipped, not counted.
    assert over_turn_allowance(0, arrivals, 4_000, 500, {1: 400, 3: 400}.get) == {3: 400}


def test_outputs_at_or_under_the_floor_are_never_cut_even_when_the_turn_cannot_fit() -> None:
    assert over_turn_allowance(0, [(1, 500), (2, 450), (3, 900)], 100, 500, to(250)) == {3: 250}


sizes = st.lists(st.integers(min_value=1, max_value=20_000), max_size=12)


@given(
    earlier=st.integers(min_value=0, max_value=30_000),
    tokens=sizes,
    allowance=st.integers(min_value=0, max_value=40_000),
    floor=st.integers(min_value=0, max_value=2_000),
    excerpts=st.lists(st.one_of(st.none(), st.integers(min_value=0, max_value=3_000)), min_size=12, max_size=12),
)
def test_the_cut_set_fits_the_turn_when_cutting_can_and_spares_small_outputs(
    earlier: int, tokens: list[int], allowance: int, floor: int, excerpts: list[int | None]
) -> None:
    arrivals = list(enumerate(tokens))
    size = dict(arrivals)
    chosen = over_turn_allowance(earlier, arrivals, allowance, floor, excerpts.__getitem__)
    assert all(size[key] > floor for key in chosen), "never cuts an output under the floor"
    assert all(chosen[key] == excerpts[key] and chosen[key] < size[key] for key in chosen), "only cuts that save"
    after = earlier + sum(chosen.get(key, t) for key, t in arrivals)
    saving = {k: t - e for k, t in arrivals if t > floor and (e := excerpts[k]) is not None and e < t}
    best = earlier + sum(tokens) - sum(saving.values())
    if best <= allowance:
        assert after <= allowance, "fits whenever cutting every candidate would"
        # Minimal in order: the turn was still over before the last (smallest) cut.
        if chosen:
            last = min(chosen, key=lambda key: (size[key], -key))
            assert after + size[last] - chosen[last] > allowance
    else:
        assert after == best, "when it cannot fit, every candidate is cut"
    if earlier + sum(tokens) <= allowance:
        assert chosen == {}
