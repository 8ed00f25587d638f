"""The tokenised seatbelt: every destructive variant of the corpus asks, no harmless look-alike
does, and the judgement follows what runs (wrapping a command hides nothing; quoting it makes
it harmless text)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.sandbox_corpus import DESTRUCTIVE, HARMLESS, all_destructive
from myrm_tui.agent.permissions.seatbelt import destructive_reason
from myrm_tui.shell_lex import split_commands
from tests.hypothesis_profiles import examples


def test_the_corpus_is_big_enough_to_mean_something():
    assert len(all_destructive()) >= 80 and len(HARMLESS) >= 20
    assert len(DESTRUCTIVE) >= 7


@pytest.mark.parametrize("group,command", all_destructive(), ids=[f"{g}:{c[:40]}" for g, c in all_destructive()])
def test_every_destructive_variant_asks(group, command):
    assert destructive_reason(command), f"{group}: {command!r} passed the seatbelt"


@pytest.mark.parametrize("command", HARMLESS)
def test_harmless_look_alikes_do_not_ask(command):
    assert destructive_reason(command) is None


# Ways to run a command that must not hide it.
WRAPPERS = (
    lambda c: f"bash -c {shlex.quote(c)}",
    lambda c: f"true && {c}",
    lambda c: f"( {c}\n)",
    lambda c: f"echo start; {c}",
    lambda c: f"sh -c {shlex.quote('bash -c ' + shlex.quote(c))}",
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"nohup bash -c {shlex.quote(c)} &",
)


@pytest.mark.parametrize("wrap", range(len(WRAPPERS)))
def test_wrapping_a_destructive_command_does_not_hide_it(wrap):
    missed = [c for _, c in all_destructive() if not destructive_reason(WRAPPERS[wrap](c))]
    assert missed == []


def test_a_destructive_command_quoted_as_data_is_harmless():
    for _, command in all_destructive():
        for line in (
            f"echo {shlex.quote(command)}",
            f"grep -rn -- {shlex.quote(command)} .",
            f"git commit -m {shlex.quote(command)}",
            f"printf '%s\\n' {shlex.quote(command)} > notes.txt",
        ):
            assert destructive_reason(line) is None, line


def test_reasons_name_the_danger():
    assert destructive_reason("rm -rf build") == "recursive delete"
    assert destructive_reason("echo x >> ~/.bashrc") == "writes to a shell startup file"
    assert (destructive_reason("git push --mirror") or "").startswith("force push")
    assert (destructive_reason("curl -s u | sh") or "").startswith("pipes text into a shell")
    assert destructive_reason("$(curl -s u) now") == "runs a command whose name is computed at run time"


def test_unknown_variables_as_command_names_are_judged_by_what_is_known():
    # `$EDITOR file` is everyday use; a variable set on the same line is followed.
    assert destructive_reason("$EDITOR notes.md") is None
    assert destructive_reason("CMD=rm; $CMD -rf build") == "recursive delete"
    assert destructive_reason("CMD=$(echo rm); $CMD -rf build") == "recursive delete"
    assert destructive_reason("CMD=rm; CMD=ls; $CMD -rf build") is None


def test_heredoc_into_a_shell_is_read_but_a_heredoc_into_a_file_is_data():
    assert destructive_reason("bash <<'EOF'\nrm -rf build\nEOF") == "recursive delete"
    assert destructive_reason("cat > notes.md <<'EOF'\nrm -rf build\nEOF\necho ok") is None


def test_deep_nesting_asks_instead_of_giving_up_silently():
    line = "ls"
    for _ in range(12):
        line = f"bash -c {shlex.quote(line)}"
    assert destructive_reason(line) == "nests commands too deeply to check"


_DANGEROUS_WORDS = st.sampled_from(
    [
        "rm",
        "-rf",
        "sudo",
        "reboot",
        "|",
        "sh",
        ";",
        "&&",
        "$(",
        ")",
        "`",
        ">>",
        "~/.bashrc",
        "git",
        "push",
        "--force",
        "find",
        "-delete",
        "shutil.rmtree('x')",
        "{rm,-rf,/}",
        "'",
        '"',
        "\\",
        "\n",
        "EOF",
        "<<",
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.one_of(_DANGEROUS_WORDS, st.text(max_size=12)), max_size=12))
def test_any_text_quoted_as_an_argument_is_harmless(words):
    text = " ".join(words)
    assert destructive_reason(f"grep -rn -- {shlex.quote(text)} src/") is None
    assert destructive_reason(f"echo {shlex.quote(text)} >> notes.txt") is None


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=200))
def test_the_check_never_raises_on_arbitrary_text(text):
    reason = destructive_reason(text)
    assert reason is None or (isinstance(reason, str) and reason)
    split_commands(text)  # the lexer itself is total too
