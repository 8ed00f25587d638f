"""The real binary in a real terminal (tmux): a custom command from `.myrm/commands/` is offered by
the slash popup, accepted with Tab and sent; `@README.md` attaches the file and says so. The model
is the scripted provider, which records every request it receives."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tui.tmux_helpers import capture, quit_and_exit_code, start_myrm, tmux, wait_for

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed; the real-terminal smoke test needs it"
)


def sent_user_texts(record: Path) -> list[str]:
    out = []
    for line in record.read_text().splitlines():
        content = [m for m in json.loads(line) if m["role"] == "user"][-1]["content"]
        out.append(content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content))
    return out


@pytest.mark.slow
def test_custom_command_from_the_popup_and_an_at_file(tmp_path: Path):
    record = tmp_path / "requests.jsonl"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "record": str(record),
                "turns": [{"text": "Hello, Ada! Welcome aboard."}, {"text": "The README says: run make dev."}],
            }
        )
    )
    name, workspace, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        # The command and the README appear while myrm runs: the popup re-reads the folders.
        commands = workspace / ".myrm" / "commands"
        commands.mkdir(parents=True, exist_ok=True)
        (commands / "greet.md").write_text(
            "---\ndescription: Greet a new teammate\nargument-hint: NAME\n---\n"
            "Greet $1 warmly and point them at the README.\n"
        )
        (workspace / "README.md").write_text("# Demo\n\nRun `make dev` to start the demo server.\n")
        wait_for(name, "Message myrm")
        tmux("send-keys", "-t", name, "-l", "/gre")
        screen = wait_for(name, "Greet a new teammate")
        assert "/greet NAME" in screen
        tmux("send-keys", "-t", name, "Tab")
        tmux("send-keys", "-t", name, "-l", "Ada")
        tmux("send-keys", "-t", name, "Enter")
        screen = wait_for(name, "Hello, Ada! Welcome aboard.")
        assert "/greet from .myrm/commands/greet.md" in screen
        assert sent_user_texts(record)[-1] == "Greet Ada warmly and point them at the README."

        tmux("send-keys", "-t", name, "-l", "what does @README.md say?")
        tmux("send-keys", "-t", name, "Enter")
        screen = wait_for(name, "The README says: run make dev.")
        assert "attached README.md, " in screen and " tokens]" in screen
        sent = sent_user_texts(record)[-1]
        assert sent.startswith('what does @README.md say?\n<attached_file path="README.md">')
        assert "Run `make dev` to start the demo server." in sent
        assert quit_and_exit_code(name, exit_file) == "0"
        assert "Message myrm" not in capture(name)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
