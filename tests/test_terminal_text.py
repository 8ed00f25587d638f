"""The terminal sanitiser: what an attacker can put in text never reaches a terminal as a control.

The attacks (tests/escape_attacks.py) are ones a terminal obeys: the tests check that
every control character of it comes out as a visible escape and that ordinary text, newlines
and tabs come out unchanged.
"""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.terminal_text import for_terminal, json_for_terminal
from tests.escape_attacks import ATTACKS, BIDI, C1, CONTROL_C0, FORBIDDEN, inert


def test_every_attack_becomes_visible_escapes():
    for name, attack in ATTACKS.items():
        shown = for_terminal(f"before {attack} after")
        assert inert(shown), name
        assert shown.startswith("before ") and shown.endswith(" after"), name


def test_the_escapes_read_like_python_literals():
    assert for_terminal("\x1b]52;c;QQ==\x07") == "\\x1b]52;c;QQ==\\x07"
    assert for_terminal("\x9b2J") == "\\x9b2J"
    assert for_terminal("a\u202eb\u2069") == "a\\u202eb\\u2069"
    assert for_terminal("\x00\x7f") == "\\x00\\x7f"
    assert for_terminal("x\ud83d") == "x\\ud83d"  # half an emoji from a model's JSON


def test_each_forbidden_character_alone_is_escaped():
    for char in sorted(FORBIDDEN - {"\r"}):
        shown = for_terminal(char)
        expected = f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
        assert shown == expected, repr(char)


def test_newline_and_tab_and_ordinary_unicode_are_kept():
    text = "def f():\n\treturn '上下文' + 'émoji 👍🏽' + 'مرحبا' + 'שלום'  # ZWJ 👩\u200d💻\n"
    assert for_terminal(text) == text


def test_crlf_reads_as_newline_but_a_lone_cr_is_shown():
    assert for_terminal("one\r\ntwo\r\n") == "one\ntwo\n"
    assert for_terminal("rm -rf ~\rls") == "rm -rf ~\\x0dls"
    assert for_terminal("\r\r\n") == "\\x0d\n"


def test_an_escape_split_across_streamed_chunks_stays_inert():
    attack = ATTACKS["OSC 52 clipboard write"] + ATTACKS["CSI clear screen + home"]
    for cut in range(len(attack) + 1):
        head, tail = attack[:cut], attack[cut:]
        pieces = for_terminal(head) + for_terminal(tail)
        assert pieces == for_terminal(attack)
        assert inert(pieces)


def test_json_output_keeps_the_data_and_makes_it_inert():
    value = {"text": "".join(ATTACKS.values()) + "\ud800", "list": ["\x85", "\u2066"]}
    document = json_for_terminal(json.dumps(value, ensure_ascii=False, indent=2))
    assert inert(document)
    assert "\\u001b]52;c;" in document and "\\u009b2J" in document and "\\u202e" in document
    assert json.loads(document) == value  # lossless for any JSON reader


@given(st.text())
def test_property_output_is_always_inert(text: str):
    assert inert(for_terminal(text))


@given(st.text(alphabet=st.sampled_from(sorted(FORBIDDEN) + ["a", "\\", "\n", "\t", "é", "\ud83d"])))
def test_property_dense_control_text_is_inert_and_idempotent(text: str):
    once = for_terminal(text)
    assert inert(once)
    assert for_terminal(once) == once


@given(st.text(), st.text())
def test_property_chunking_never_matters_except_a_split_crlf(head: str, tail: str):
    if head.endswith("\r") and tail.startswith("\n"):
        return
    assert for_terminal(head) + for_terminal(tail) == for_terminal(head + tail)


@given(st.text(alphabet=st.characters(blacklist_characters=sorted(FORBIDDEN), blacklist_categories=["Cs"])))
def test_property_text_without_controls_is_unchanged(text: str):
    assert for_terminal(text) == text


def _reference(text: str) -> str:
    """The rule written the slow, obvious way: one character at a time."""

    def one(char: str) -> str:
        if inert(char):
            return char
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return "".join(one(c) for c in text.replace("\r\n", "\n"))


@given(st.text())
def test_property_only_forbidden_characters_change(text: str):
    assert for_terminal(text) == _reference(text)


@given(st.lists(st.sampled_from(sorted(FORBIDDEN) + ["\\x1b", "a", "\n", "\r\n", "\ud800"])))
def test_property_matches_the_reference_on_dense_controls(pieces: list[str]):
    text = "".join(pieces)
    assert for_terminal(text) == _reference(text)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )
)
def test_property_json_for_terminal_is_lossless_and_inert(value):
    document = json_for_terminal(json.dumps(value, ensure_ascii=False))
    assert inert(document)
    assert json.loads(document) == value


def test_forbidden_set_matches_unicode_properties():
    """The bidi list is Unicode's Bidi_Control set (format characters of bidi class LRE…PDI)."""
    bidi_classes = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
    found = {
        chr(c)
        for c in range(0x110000)
        if unicodedata.category(chr(c)) == "Cf" and unicodedata.bidirectional(chr(c)) in bidi_classes
    }
    assert found <= BIDI
    assert all(unicodedata.category(c) == "Cc" for c in CONTROL_C0 | C1)
