"""Custom slash commands from Markdown files: loading and what is refused (and said), argument
substitution, a workspace command's model only in a trusted workspace, and in the app: the popup,
F1, the palette entry and the message the scripted model receives; then `myrm run "/name args"`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.command_files import MAX_COMMAND_BYTES
from myrm_tui.settings.paths import user_config_dir
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.prompt.custom_commands import (
    CustomCommand,
    command_model,
    load_custom_commands,
    workspace_trusted,
)
from myrm_tui.tui.prompt.slash_commands import SLASH_COMMANDS, SlashCommand, parse_command
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.completion_popup import CompletionPopup
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILTIN = [c.name for c in SLASH_COMMANDS]


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def cmd(body: str) -> CustomCommand:
    return CustomCommand("/x", "", "", "", body, Path("x.md"), "user")


# ------------------------------------------------------------------ loading


def test_both_folders_load_with_front_matter_and_clashes_are_reported(tmp_path: Path):
    workspace, user = tmp_path / "ws", tmp_path / "user"
    own = user / "commands"
    repo = workspace / ".myrm" / "commands"
    write(
        own,
        "review.md",
        "---\ndescription: Review my diff\nargument-hint: [path]\nmodel: openai/gpt-4o\n---\n"
        "Review the changes in $ARGUMENTS.\n",
    )
    write(repo, "review.md", "Review it the team's way.")
    write(repo, "release-notes.md", "---\ndescription: 'Draft the notes'\ncolour: blue\n---\nDraft notes for $1.")
    write(repo, "compact.md", "Pretend to compact.")
    write(repo, "bad name.md", "x")
    write(repo, "empty.md", "---\ndescription: nothing\n---\n\n")
    write(repo, "open.md", "---\ndescription: never closed\nbody")
    write(repo, "huge.md", "x" * (MAX_COMMAND_BYTES + 1))
    write(repo, "notes.txt", "not markdown, not a command")
    loaded = load_custom_commands(workspace, user, BUILTIN)
    by_name = {c.name: c for c in loaded.commands}
    assert sorted(by_name) == ["/open", "/release-notes", "/review"]
    review = by_name["/review"]
    assert (review.scope, review.description, review.argument_hint, review.model) == (
        "user",
        "Review my diff",
        "[path]",
        "openai/gpt-4o",
    )
    assert review.body == "Review the changes in $ARGUMENTS."
    assert by_name["/release-notes"].description == "Draft the notes"
    assert by_name["/open"].body.startswith("---\ndescription: never closed"), "read as text, and said"
    problems = "\n".join(loaded.problems)
    assert "/compact is a built-in command; the built-in one runs" in problems
    assert "also one of your own commands" in problems and str(repo / "review.md") in problems
    assert "`colour` is not a command setting" in problems
    assert "`bad name` cannot be a command name" in problems
    assert "empty.md: the command has no text to send" in problems
    assert "never closed" in problems and "huge.md: over 64 KB" in problems
    assert "notes.txt" not in problems


def test_arguments_are_substituted():
    assert cmd("Fix $ARGUMENTS now").expand("  the flaky test  ") == "Fix the flaky test now"
    assert cmd("Compare $1 with $2 ($3)").expand("'src/a b.py' main") == "Compare src/a b.py with main ()"
    assert cmd("Compare $1 with $2").expand("'unbalanced main") == "Compare 'unbalanced with main"
    assert cmd("Summarise the repo.").expand("focus on tests") == "Summarise the repo.\n\nfocus on tests"
    assert cmd("Summarise the repo.").expand("") == "Summarise the repo."
    assert cmd("Costs $5 and $ARGUMENTS").expand("x") == "Costs  and x", "$5 is a placeholder, documented"


@given(st.text(max_size=60))
def test_expanding_never_loses_the_arguments(arguments):
    for body in ("Do it.", "Do $ARGUMENTS.", "A $ARGUMENTS and $ARGUMENTS"):
        out = cmd(body).expand(arguments)
        assert arguments.strip() in out


def test_parse_knows_custom_commands_but_builtins_win():
    custom = [SlashCommand("/review", "[path]", "x", "/tmp/review.md"), SlashCommand("/fork", "", "evil", "/t/f.md")]
    parsed = parse_command("/review src/app.py", custom)
    assert parsed is not None and parsed.command is not None and parsed.command.source == "/tmp/review.md"
    assert parsed.argument == "src/app.py"
    fork = parse_command("/fork", custom)
    assert fork is not None and fork.command is not None and fork.command.source == ""


def test_a_workspace_command_model_needs_trust(tmp_path: Path):
    workspace, user = tmp_path / "ws", tmp_path / "user"
    write(workspace / ".myrm" / "commands", "deep.md", "---\nmodel: anthropic/claude-opus-4-1\n---\nThink.")
    write(user / "commands", "mine.md", "---\nmodel: openai/gpt-4o\n---\nMine.")
    loaded = load_custom_commands(workspace, user, BUILTIN)
    deep, mine = loaded.get("/deep"), loaded.get("/MINE")
    assert deep is not None and mine is not None
    assert command_model(mine, trusted=False) == ("openai/gpt-4o", "")
    model, note = command_model(deep, trusted=False)
    assert model == "" and "not trusted" in note
    assert not workspace_trusted(workspace, user), "never trusted"
    config = write(workspace / ".myrm", "config.toml", 'theme = "myrm-dark"\n')
    assert not workspace_trusted(workspace, user)
    commands = (("/deep", "anthropic/claude-opus-4-1"),)  # the digest covers the models commands name
    T.record_trust(user, workspace, T.workspace_digest(config.read_bytes(), None, (), commands))
    assert workspace_trusted(workspace, user)
    assert command_model(deep, trusted=True) == ("anthropic/claude-opus-4-1", "")
    config.write_text('theme = "other"\n')
    assert not workspace_trusted(workspace, user), "an edited file asks again"


# ------------------------------------------------------------------ in the app


def script_with_record(tmp_path: Path, *texts: str) -> tuple[str, Path]:
    record = tmp_path / "requests.jsonl"
    path = tmp_path / "custom.json"
    path.write_text(json.dumps({"turns": [{"text": t} for t in texts], "record": str(record)}))
    return f"scripted/{path}", record


def last_user_text(record: Path) -> str:
    request = json.loads(record.read_text().splitlines()[-1])
    content = [m for m in request if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


async def test_popup_help_palette_and_the_sent_message(workspace, store, tmp_path):
    write(
        workspace / ".myrm" / "commands",
        "explain.md",
        "---\ndescription: Explain a file simply\nargument-hint: FILE\n---\nExplain $1 to a new teammate.",
    )
    write(user_config_dir() / "commands", "help.md", "Shadowing a built-in.")
    model, record = script_with_record(tmp_path, "It loads config.", "again")
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: any("built-in" in n.text for n in screen.query(Note)), what="clash note")
        await type_text(pilot, "/expl")
        popup = screen.query_one(CompletionPopup)
        await wait_until(pilot, lambda: popup.display and popup.option_count == 1, what="popup")
        label = str(popup.get_option_at_index(0).prompt)
        assert "/explain FILE" in label and "Explain a file simply" in label
        await pilot.press("tab")
        await type_text(pilot, "src/config.py")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turns_ended == 1, what="turn")
        assert last_user_text(record) == "Explain src/config.py to a new teammate."
        bubble = screen.query(UserMessage).last().text
        assert "Explain src/config.py" in bubble and "/explain from .myrm/commands/explain.md" in bubble
        help_text = screen.help_markdown()
        assert "| `/explain FILE` | Explain a file simply (custom, .myrm/commands) |" in help_text
        assert "/help is a built-in command" in help_text
        titles = [command.title for command in app.get_system_commands(screen)]
        assert "/explain — Explain a file simply" in titles


async def test_an_untrusted_workspace_command_model_is_not_used(workspace, store, tmp_path):
    write(workspace / ".myrm" / "commands", "deep.md", "---\nmodel: scripted/elsewhere.json\n---\nThink hard.")
    model, record = script_with_record(tmp_path, "ok")
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        screen.prompt.load_text("/deep")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turns_ended == 1, what="turn")
        assert any("not trusted" in n.text for n in screen.query(Note))
        assert last_user_text(record) == "Think hard."
        assert store.get_session(app.chat.session_id).model == model


# ------------------------------------------------------------------ myrm run


def _myrm(workspace: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(MYRM_CONFIG_DIR=str(config), PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("how", ["untrusted", "trusted", "flag"])
def test_myrm_run_expands_a_custom_command(tmp_path: Path, how: str):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    main, main_record = script_with_record(tmp_path, "from main")
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other, other_record = script_with_record(other_dir, "from the command's model")
    write(workspace / ".myrm" / "commands", "tests.md", f"---\nmodel: {other}\n---\nWrite tests for $ARGUMENTS.")
    write(workspace / ".myrm", "config.toml", 'theme = "myrm-dark"\n')
    config = tmp_path / "config"
    write(config, "config.toml", f'model = "{main}"\n')
    args = {
        "untrusted": ["run", "/tests the parser"],
        "trusted": ["run", "--trust", "/tests the parser"],
        "flag": ["run", "--trust", "--model", main, "/tests the parser"],
    }[how]
    result = _myrm(workspace, config, *args)
    assert "note: /tests from " in result.stderr
    if how == "untrusted":  # the command's model needs trust, like `model` in .myrm/config.toml
        assert result.returncode == 2 and "command /tests (tests.md) model" in result.stderr, result.stderr
        assert not main_record.exists() and not other_record.exists()
        return
    assert result.returncode == 0, result.stderr
    if how == "trusted":
        assert result.stdout.strip() == "from the command's model"
        assert last_user_text(other_record) == "Write tests for the parser."
        assert not main_record.exists()
    else:
        assert result.stdout.strip() == "from main"
        assert last_user_text(main_record) == "Write tests for the parser."
        assert not other_record.exists()
        assert "you have not trusted" not in result.stderr
