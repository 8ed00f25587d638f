"""A real terminal: an approval that appears while the user types never takes the typed keys.

The user sends a message and keeps typing "yes please …" one key at a time (a person's pace)
while the model's bash call arrives. Before this was fixed, the approval took the keyboard when
it appeared and the `y` of "yes" approved the command. Now the command must not run, every typed
character must be in the prompt, and answering takes the deliberate key (Ctrl+Y) first.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from myrm_tui.store import Store
from tests.tui.tmux_helpers import capture, quit_and_exit_code, start_myrm, tmux, wait_for

PHRASE = "yes please "
KEY_GAP_S = 0.05  # a fast typist: 20 keys a second
# Keys typed after the approval is on screen: well past its 0.3 s guard, so the guard alone
# could not be what keeps them out.
KEYS_AFTER_APPEARING = 24
# The model answers after ~2 s (two chunks, 1 s apart), so the approval lands mid-typing.
MODEL_DELAY_MS = 1000
# Bounds the typing loop if the approval never comes (the test then fails with the screen).
MAX_KEYS = 600


def flat(text: str) -> str:
    """Without whitespace and box drawing, so the wrapped prompt still reads as one string."""
    return re.sub(r"[\s\u2500-\u259f]", "", text)


@pytest.mark.slow
def test_keys_typed_while_an_approval_appears_stay_in_the_prompt(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "tool_calls": [
                            {"id": "call_m", "name": "bash", "arguments": {"command": "touch approved-marker"}}
                        ],
                        "chunk_size": 200,
                        "delay_ms": MODEL_DELAY_MS,
                    },
                    {"text": "Understood, not run: done-marker"},
                ]
            }
        ),
        encoding="utf-8",
    )
    name, workspace, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        wait_for(name, "Message myrm")
        tmux("send-keys", "-t", name, "-l", "make the marker")
        tmux("send-keys", "-t", name, "Enter")
        typed = ""
        after = None
        while len(typed) < MAX_KEYS and (after is None or len(typed) - after < KEYS_AFTER_APPEARING):
            key = PHRASE[len(typed) % len(PHRASE)]
            tmux("send-keys", "-t", name, "-l", key)
            typed += key
            time.sleep(KEY_GAP_S)
            if after is None and len(typed) % 3 == 0 and "Allow bash" in capture(name):
                after = len(typed)
        assert after is not None, f"the approval never appeared; the screen was:\n{capture(name)}"
        assert after >= 3, "the approval came before any typing: the test proves nothing"
        time.sleep(0.5)  # let the last keys land
        screen = capture(name)
        assert not (workspace / "approved-marker").exists(), f"typed keys approved the call:\n{screen}"
        assert "Ctrl+Y to answer" in screen, screen  # still waiting
        assert flat(typed) in flat(screen), f"typed text lost from the prompt:\n{screen}"

        # Answering takes the deliberate key first; then `n` denies.
        tmux("send-keys", "-t", name, "C-y")
        wait_for(name, "back to your message")
        tmux("send-keys", "-t", name, "n")
        screen = wait_for(name, "done-marker")
        assert not (workspace / "approved-marker").exists()
        assert flat(typed) in flat(screen), f"the draft did not survive the answer:\n{screen}"
        assert quit_and_exit_code(name, exit_file) == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
    with Store.open(workspace) as store:
        (session,) = store.list_sessions()
        results = [r.message["content"] for r in store.messages(session.id) if r.message.get("role") == "tool"]
    assert results == ["denied by user: touch approved-marker"]
