"""Saving a setting (what the TUI's settings screen and /theme do) edits the user's hand-written
config in place: only the changed value moves, every comment, blank line and key order stays."""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path

from myrm_tui.settings.config_files.loader import save_user_settings

COMMENTED = """\
# My myrm config. Keep this note!
model = "openai/gpt-4o"   # the one work pays for

# Turned down after the loop incident.
max_steps = 8
theme = "dracula"

[keymap]
# muscle memory from vim
"app.quit" = "ctrl+q"

[models."openai/gpt-4o"]
# the proxy lies about this one
context_window = 64000  # really 128k
supports_tools = true
"""


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _config(tmp_path: Path, mode: int = 0o640) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(COMMENTED, encoding="utf-8")
    os.chmod(cfg, mode)
    return cfg


def test_changing_one_value_rewrites_only_that_line_and_keeps_its_comment(tmp_path):
    cfg = _config(tmp_path)
    save_user_settings({"model": "anthropic/claude", "max_steps": 20}, cfg)
    after = cfg.read_text(encoding="utf-8")
    assert _changed_lines(COMMENTED, after) == [
        '-model = "openai/gpt-4o"   # the one work pays for',
        '+model = "anthropic/claude"   # the one work pays for',
        "-max_steps = 8",
        "+max_steps = 20",
    ]
    assert os.stat(cfg).st_mode & 0o777 == 0o640  # the user's file mode survives the atomic replace
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_new_keys_and_tables_are_added_without_touching_existing_lines(tmp_path):
    cfg = _config(tmp_path)
    save_user_settings(
        {
            "animations": False,
            "keymap": {"chat.send": "ctrl+s"},
            "models": {"openai/gpt-4o": {"max_output_tokens": 4096}, "ollama/llama3": {"api_base": "http://h/v1"}},
        },
        cfg,
    )
    after = cfg.read_text(encoding="utf-8")
    removed = [line for line in _changed_lines(COMMENTED, after) if line.startswith("-")]
    assert removed == []
    # every original line is still there, in the original order
    original = [line for line in COMMENTED.splitlines() if line]
    assert [line for line in after.splitlines() if line in original] == original
    data = tomllib.loads(after)
    assert data["animations"] is False
    assert data["keymap"] == {"app.quit": "ctrl+q", "chat.send": "ctrl+s"}
    assert data["models"]["openai/gpt-4o"] == {
        "context_window": 64000,
        "supports_tools": True,
        "max_output_tokens": 4096,
    }
    assert data["models"]["ollama/llama3"] == {"api_base": "http://h/v1"}
    # top-level keys stay above the first table, where TOML needs them to stay top-level
    assert after.index("animations = false") < after.index("[keymap]")


def test_removing_a_model_field_keeps_the_comments_in_that_table(tmp_path):
    cfg = _config(tmp_path)
    save_user_settings({"models": {"openai/gpt-4o": {"supports_tools": None}}, "theme": None}, cfg)
    after = cfg.read_text(encoding="utf-8")
    assert _changed_lines(COMMENTED, after) == ['-theme = "dracula"', "-supports_tools = true"]
    assert "# the proxy lies about this one\ncontext_window = 64000  # really 128k\n" in after
