"""`myrm` with only the chat's flags skips typer (cli_commands/plain_launch.py): the short parser
must read every argv it accepts exactly as typer does, and hand everything else to typer."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from myrm_tui.cli import app
from myrm_tui.cli_commands import tui as tui_module
from myrm_tui.cli_commands.plain_launch import parse_plain_launch
from myrm_tui.settings.schema import SPECS_BY_KEY
from tests.hypothesis_profiles import examples

CHOICES = SPECS_BY_KEY["approval"].choices


def test_no_arguments_is_a_plain_launch_with_defaults():
    assert parse_plain_launch([], CHOICES) == {
        "model": None,
        "session": None,
        "continue_last": False,
        "approve": None,
        "trust": False,
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "hi"],
        ["--help"],
        ["--version"],
        ["--model"],  # no value: typer says so
        ["-m", "--continue"],  # a value that looks like a flag
        ["-mgpt"],  # attached short value
        ["--approve", "sometimes"],  # not a choice: typer's message lists them
        ["--model", "a", "--model", "b"],  # repeated
        ["--continue", "sessions"],
        ["--"],
    ],
)
def test_anything_else_goes_to_typer(argv):
    assert parse_plain_launch(argv, CHOICES) is None


FLAG_WORDS = st.lists(
    st.one_of(
        st.sampled_from(["--model", "-m", "--session", "-s", "--approve"]).flatmap(
            lambda flag: st.sampled_from(["x", "gpt-4o", "", *CHOICES, "-x", "a=b"]).map(lambda v: [flag, v])
        ),
        st.sampled_from(["--model=", "--session=", "--approve="]).flatmap(
            lambda flag: st.sampled_from(["x", "", *CHOICES, "a=b"]).map(lambda v: [flag + v])
        ),
        st.sampled_from([["--continue"], ["-c"], ["--trust"], ["--help"], ["models"], ["-z"]]),
    ),
    max_size=5,
).map(lambda parts: [word for part in parts for word in part])


@settings(max_examples=examples(80), deadline=None)
@given(argv=FLAG_WORDS)
def test_an_accepted_argv_means_what_typer_makes_of_it(argv):
    """Every argv the short parser accepts, typer parses to the same tui_command arguments."""
    parsed = parse_plain_launch(argv, CHOICES)
    if parsed is None:
        return
    seen: list[dict[str, Any]] = []

    def fake_tui_command(**kwargs: Any) -> int:
        seen.append(kwargs)
        return 0

    original = tui_module.tui_command
    tui_module.tui_command = fake_tui_command  # hypothesis and function-scoped monkeypatch do not mix
    try:
        result = CliRunner().invoke(app, argv)
    finally:
        tui_module.tui_command = original
    assert result.exit_code == 0, result.output
    assert seen == [dict(parsed)]


def test_a_plain_launch_imports_no_typer_and_keeps_the_usage_errors(myrm):
    """Through `python -m myrm_tui`: the both-flags error comes from tui_command, without typer."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "myrm_tui", "--session", "abc", "--continue"],
        cwd=myrm.workspace,
        env=myrm.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "use either --session ID or --continue" in result.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "import time:" in line]
    assert "myrm_tui.cli_commands.tui" in imported and "typer" not in imported and "click" not in imported


def test_a_bad_choice_still_gets_typers_message(myrm):
    result = myrm("--approve", "sometimes")
    assert result.returncode == 2
    assert "sometimes" in result.stderr and "ask" in result.stderr
