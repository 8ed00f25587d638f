"""Files that are not regular files, and images that are not in the workspace.

A FIFO a command made in the workspace must not hang the turn when a file tool meets it (opening
one for reading waits for a writer forever): the tool refuses at once and says what it is. An
image the user attaches by name (`@logo.png`, `/image`, a path a custom command's text names) is
read like file_read reads: a symlink out of the workspace, or any symlink, is refused before a
byte of the image is read or sent.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from myrm_tui.agent.user_input.attachments import AttachmentError
from myrm_tui.tui.prompt.image_input import PendingImages
from tests.security.file_attacks import call, myrm, script_file, turn

# How long a file tool may take to refuse a FIFO: it opens it non-blocking, so milliseconds; the
# watchdog unblocks a tool that waits (the old behaviour) only after this, so the test ends.
PROMPT_S = 3.0
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def _unblock_later(fifo: Path, done: threading.Event) -> threading.Thread:
    """Play the writer a blocked reader waits for, but only PROMPT_S after a reader showed up (a
    tool that refuses the FIFO never opens it, and this never writes)."""

    def feed() -> None:
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # succeeds only while a reader waits
            except OSError:
                time.sleep(0.01)
                continue
            done.wait(PROMPT_S)
            os.write(fd, b"mode = from the pipe\n")
            os.close(fd)
            return

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "tool, args",
    [
        ("file_read", {}),
        ("file_write", {"content": "x = 1\n"}),
        ("file_edit", {"old": "mode", "new": "node"}),
    ],
)
async def test_a_fifo_is_refused_at_once_instead_of_hanging_the_turn(tmp_path: Path, tool: str, args: dict):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fifo = workspace / "config.toml"
    os.mkfifo(fifo)
    done = threading.Event()
    watchdog = _unblock_later(fifo, done)
    try:
        log = await turn(workspace, tmp_path / "scripts", [call(tool, "c1", path="config.toml", **args)])
    finally:
        done.set()
        watchdog.join(timeout=5)
    (result,) = log.finished
    assert result.duration_s < PROMPT_S, f"{tool} waited {result.duration_s:.1f} s on a FIFO"
    assert result.status == "error" and "named pipe (FIFO)" in result.content, result.content
    assert fifo.exists() and not fifo.is_file()  # left as it was


def _workspace_with_linked_logo(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    private = tmp_path / "home" / "Pictures" / "passport.png"
    private.parent.mkdir(parents=True)
    private.write_bytes(PNG)
    (workspace / "logo.png").symlink_to(private)
    return workspace, private


def test_an_image_named_in_the_chat_that_links_out_of_the_workspace_is_refused(tmp_path: Path):
    workspace, private = _workspace_with_linked_logo(tmp_path)
    pending = PendingImages()
    linked_out = r"logo\.png is a symbolic link, or passes through one, to .*passport\.png, outside the workspace"
    with pytest.raises(AttachmentError, match=linked_out):
        pending.for_message("what does @logo.png show?", workspace)
    with pytest.raises(AttachmentError, match="outside the workspace"):
        pending.add("logo.png", workspace)  # /image logo.png
    with pytest.raises(AttachmentError, match="outside the workspace"):
        pending.add(str(private), workspace)  # /image with the target's own path
    assert pending.queued == []


def test_an_image_path_in_a_custom_commands_text_is_fenced_like_file_read(tmp_path: Path):
    """A repository's `.myrm/commands/describe.md` names an image in the user's home: `myrm run
    /describe` refuses it instead of sending the user's picture to the provider."""
    workspace, private = _workspace_with_linked_logo(tmp_path)
    (workspace / ".git").mkdir()
    commands = workspace / ".myrm" / "commands"
    commands.mkdir(parents=True)
    (commands / "describe.md").write_text(f"Describe this picture: {private}\n")
    model = script_file(tmp_path / "scripts", {"text": "a passport"})
    result = myrm(workspace, tmp_path / "user-config", "run", "--model", model, "/describe")
    assert result.returncode != 0, result.stdout
    assert "passport.png" in result.stderr and "outside the workspace" in result.stderr, result.stderr
    assert "a passport" not in result.stdout


def test_the_post_compaction_reread_skips_a_fifo_instead_of_hanging_the_turn(tmp_path: Path):
    """After compaction the engine rereads the files the model had open; a FIFO among them (the
    file was replaced by one since) must read as nothing, at once."""
    from myrm_tui.context.workspace_reader import workspace_reader

    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "notes.md")
    done = threading.Event()
    watchdog = _unblock_later(workspace / "notes.md", done)
    started = time.monotonic()
    try:
        text = workspace_reader(workspace)("notes.md")
    finally:
        done.set()
        watchdog.join(timeout=5)
    assert time.monotonic() - started < PROMPT_S
    assert text is None
