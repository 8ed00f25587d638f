"""Which occurrence of a query a snippet or a listed line shows (pure text, no store)."""

from __future__ import annotations

from myrm_tui.store.match_spots import SCAN_MATCHES_PER_NEEDLE, best_spot, line_order, token_bounded


def test_token_bounded_counts_the_ends_that_are_token_ends():
    text = 'test_key_ok SETTINGS["key"] key_x x_key key-y'
    assert token_bounded(text, text.index("key"), text.index("key") + 3) == 0  # inside test_key_ok
    quoted = text.index('"key"') + 1
    assert token_bounded(text, quoted, quoted + 3) == 2
    at = text.index("key_x")
    assert token_bounded(text, at, at + 3) == 1  # starts a token, ends inside one
    at = text.index("x_key") + 2
    assert token_bounded(text, at, at + 3) == 1
    assert token_bounded("key", 0, 3) == 2  # the text's own ends count
    assert token_bounded("a-b", 0, 2) == 2  # a match ending on punctuation ends a token
    assert token_bounded("abc", 1, 1) == 0  # an empty match is no token


def test_best_spot_prefers_more_terms_then_a_whole_token_then_the_earliest():
    text = "alpha beta " + "x " * 100 + "alpha_beta " + "y " * 100 + "alpha gamma beta"
    # "alpha beta" at 0 and "alpha gamma beta" both hold the two terms as whole tokens: the first wins.
    start, end = best_spot(text, ["alpha", "beta"], ["alpha", "beta"], 20) or (0, 0)
    assert text[start:end] == "alpha" and start == 0
    # Counting "gamma" too, only the last "alpha" has all three in reach.
    start, _ = best_spot(text, ["alpha"], ["alpha", "beta", "gamma"], 20) or (0, 0)
    assert text[start:].startswith("alpha gamma")
    start, _ = best_spot("ab_key cd key", ["key"], ["key"], 0) or (0, 0)
    assert start == 10  # the whole token, though later
    assert best_spot("nothing here", ["absent"], ["absent"], 50) is None
    assert best_spot("Key", ["", "KEY"], [], 5) == (0, 3)  # case-insensitive; empty needles skipped


def test_best_spot_earlier_needle_wins_a_tie():
    text = "one two " + "z " * 50 + "two one"
    start, end = best_spot(text, ["two one", "one"], ["one", "two"], 5) or (0, 0)
    assert text[start:end] == "two one"


def test_best_spot_looks_at_a_bounded_number_of_occurrences():
    text = "k_ " * (SCAN_MATCHES_PER_NEEDLE + 5) + "k"
    assert best_spot(text, ["k"], ["k"], 1) == (0, 1)  # the whole token past the cap is not scanned
    assert best_spot("k_ " * 3 + "k", ["k"], ["k"], 1) == (9, 10)


def test_line_order_ranks_words_then_whole_tokens_then_position():
    lines = [
        "test_lease_ring_ok PASSED",
        "the lease is held",
        'assert CONFIG["lease_ring"] == "v-1"',
        "lease ring resized",
        "lease_ring: 4",
    ]
    assert line_order(lines, [1, 3, 5], "lease_ring") == [3, 5, 1]
    # Both words beat one word; the literal phrase as a token beats the words apart.
    assert line_order(lines, [2, 4, 1], "lease ring") == [4, 1, 2]
    assert line_order(lines, [], "x") == []
