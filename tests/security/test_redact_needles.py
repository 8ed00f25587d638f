"""The words `_redact` looks for before running a key-name pattern must be in every text the
pattern matches; a word missing from one match is a secret that stays in a summary."""

from __future__ import annotations

import re
import string
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui import redact as redaction
from myrm_tui.redact import redact
from tests.hypothesis_profiles import examples

GATED = [(kind, pattern, needles) for kind, pattern, _group, needles in redaction._CREDENTIALS if needles]


def test_the_key_name_patterns_are_gated():
    """The gate is what makes a short text's redaction cheap (benchmark B1): the patterns that
    scan every word start for a key name must have words."""
    kinds = {kind for kind, _, _ in GATED}
    assert {"json_secret", "assigned_secret", "yaml_secret", "env_secret"} <= kinds


@pytest.mark.parametrize(("kind", "pattern", "needles"), GATED, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(GATED)])
@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_gated_pattern_holds_one_of_its_words(kind, pattern, needles, data):
    text = data.draw(st.from_regex(pattern))
    if pattern.search(text):
        assert any(word in text.casefold() for word in needles), (kind, text)


@cache
def _ascii_case_twins() -> dict[str, list[str]]:
    """Each ASCII letter and the characters `re.IGNORECASE` matches it with."""
    candidates = [
        chr(cp)
        for cp in range(0x80, 0x110000)
        if any(c in string.ascii_letters for c in chr(cp).lower() + chr(cp).upper() + chr(cp).casefold())
    ] + ["\u017f", "\u212a", "\u0131", "\u0130"]
    return {
        letter: [c for c in candidates if re.fullmatch(letter, c, re.IGNORECASE)] for letter in string.ascii_lowercase
    }


def test_the_words_of_a_case_blind_pattern_survive_casefold():
    """Under (?i) "ſ" matches "s" and the Kelvin sign "k" (casefold maps both there), but "İ" and
    "ı" match "i" and casefold elsewhere: a word with an "i" would let "prıvate_key" through."""
    twins = _ascii_case_twins()
    for kind, pattern, needles in GATED:
        if pattern.flags & re.IGNORECASE:
            for word in needles:
                for letter in word:
                    if letter in twins:
                        assert all(c.casefold() == letter for c in twins[letter]), (kind, word, letter)


def test_a_key_name_written_with_look_alike_letters_is_still_redacted():
    """Checked against the text's lower() instead of its casefold(), the gate would skip these."""
    assert "hunter2-correct-horse" not in redact('db_pa\u017f\u017fword = "hunter2-correct-horse"').text
    assert "Zx81-secret-value" not in redact('"api_\u212aey": "Zx81-secret-value"').text


def test_texts_without_a_key_word_are_untouched_and_those_with_one_are_redacted():
    assert redact("bash: make ci (msg:812)").text == "bash: make ci (msg:812)"
    assert "hunter2" not in redact("export DB_PASSWORD=hunter2x").text
    assert "t0ps3cret99" not in redact("run it with --token t0ps3cret99").text
    assert "ada@example.com" not in redact("mail ada@example.com").text
