"""Take the README screenshots from the real app: `python scripts/screenshots.py [out_dir]`.

Drives MyrmApp headless (App.run_test) through a representative session with the scripted
provider — a tool call, a streamed reply, a compaction, a context that fills past 75 % — and
saves SVGs: the chat, the amber ring with the compaction panel, the settings screen, the fork
choice and the context health screen.

Deterministic: fixed size (120×40), animations off, a fixed scratch folder (so paths and the
model name never change), the session id shown as a fixed placeholder and tool durations shown
as a fixed value. Only measured engine timings (stage ms on the health screen) vary by a few
tenths of a millisecond between runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

SIZE = (120, 40)
SCRATCH = Path("/tmp/myrm-screenshots")
SESSION_PLACEHOLDER = "5c4ee45a-0000-4000-8000-000000000000"
TOOL_DURATION_S = 0.05  # shown instead of the measured duration, for stable images
# A 32k window: the scripted reads fill it enough to compact, and the last call's usage puts the
# ring in the amber band (24k of a 27.2k prompt limit ≈ 88 %).
WINDOW = 32_000

REPLY = """The tests fail because `parse()` drops the last line when the file has no trailing newline.

```python
def parse(text: str) -> list[str]:
    return text.splitlines()  # keeps the last line
```

| file | change |
|---|---|
| `parser.py` | use `splitlines()` |
| `test_parser.py` | add a no-newline case |
"""

LOG = "\n".join(
    f"2026-05-0{i % 9 + 1} INFO worker-{i % 4} processed batch {i}: 128 items, 0 errors" for i in range(260)
)


def build_workspace() -> tuple[Path, str, Path]:
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    workspace = SCRATCH / "project"
    workspace.mkdir(parents=True)
    (workspace / "parser.py").write_text("def parse(text):\n    return text.split('\\n')[:-1]\n")
    (workspace / "test_parser.py").write_text(
        "from parser import parse\n\ndef test_parse():\n    assert parse('a\\nb') == ['a', 'b']\n"
    )
    (workspace / "worker.log").write_text(LOG)
    turns = [
        {
            "text": "Let me look at the code and run the tests.",
            "tool_calls": [
                {"id": "call_ls", "name": "bash", "arguments": {"command": "ls"}},
                {"id": "call_read", "name": "file_read", "arguments": {"path": "parser.py"}},
            ],
        },
        {"text": REPLY, "chunk_size": 6},
        {"tool_calls": [{"id": "call_log", "name": "file_read", "arguments": {"path": "worker.log"}}]},
        {"text": "The log shows 260 clean batches."},
        {"tool_calls": [{"id": "call_log2", "name": "bash", "arguments": {"command": "cat worker.log"}}]},
        {"text": "Same log again, still clean."},
        {"tool_calls": [{"id": "call_grep", "name": "bash", "arguments": {"command": "grep -c INFO worker.log"}}]},
        {
            "text": "All 260 lines are INFO: no errors.",
            "usage": {"prompt_tokens": 24_000, "completion_tokens": 40, "cached_read_tokens": 18_000},
        },
    ]
    script = SCRATCH / "demo.json"
    script.write_text(json.dumps({"context_window": WINDOW, "turns": turns}))
    return workspace, f"scripted/{script}", SCRATCH / "config"


async def send(pilot, app, text: str) -> None:
    screen = app.chat_screen
    ended = screen.turns_ended
    screen.prompt.insert(text)
    await pilot.press("enter")
    while screen.turns_ended == ended:
        await pilot.pause(0.05)


async def settle(pilot, app) -> None:
    from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
    from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock

    screen = app.chat_screen
    for reply in screen.query(AssistantMessage):
        while reply.streaming or reply.markdown.source != reply.text:
            await pilot.pause(0.05)
    for block in screen.query(ToolBlock):
        if block.content is not None:
            block.finish(block.status, block.content, TOOL_DURATION_S, block.vault_handle)
    screen.status.set(session_id=SESSION_PLACEHOLDER, state="")
    screen.prompt.cursor_blink = False
    await pilot.pause(0.2)


async def take(out_dir: Path) -> list[Path]:
    from myrm_tui.settings import Settings
    from myrm_tui.store import Store
    from myrm_tui.tui.app import MyrmApp
    from myrm_tui.tui.screens.health import HealthScreen

    workspace, model, config_dir = build_workspace()
    os.environ["MYRM_CONFIG_DIR"] = str(config_dir)
    settings = Settings().with_values(model=model, approval="yolo", animations=False)
    store = Store.open(workspace)
    app = MyrmApp(workspace, settings, store=store, watch_themes=False, config_path=config_dir / "config.toml")
    saved: list[Path] = []

    def shot(name: str) -> None:
        saved.append(Path(app.save_screenshot(f"{name}.svg", str(out_dir))))

    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.chat_screen
            while not screen.ready.is_set():
                await pilot.pause(0.05)
            await send(pilot, app, "The parser tests fail; find out why and fix it.")
            await settle(pilot, app)
            shot("chat")
            await send(pilot, app, "Check worker.log for errors.")
            await send(pilot, app, "And once more with cat, please.")
            await pilot.press("ctrl+l")  # compact now: the first log read leaves the prompt
            while screen.compacting:
                await pilot.pause(0.05)
            await send(pilot, app, "Any ERROR lines?")
            await settle(pilot, app)
            await pilot.press("ctrl+b")
            await pilot.pause(0.2)
            shot("ring-amber-compaction-panel")
            await pilot.press("ctrl+b")
            await pilot.press("f2")
            await pilot.pause(0.3)
            shot("settings")
            await pilot.press("escape")
            await pilot.press("ctrl+n")
            await pilot.pause(0.3)
            shot("fork-choice")
            await pilot.press("escape")
            await pilot.press("f3")
            while not (isinstance(app.screen, HealthScreen) and app.screen.report):
                await pilot.pause(0.05)
            await pilot.pause(0.2)
            shot("context-health")
    finally:
        store.close()
    return saved


def main() -> None:
    from myrm_tui.llm.fake_providers.switch import enable_in_this_process

    enable_in_this_process()  # the demo session's model is a scripted/ one
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "screenshots"
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(take(out_dir)):
        print(path)


if __name__ == "__main__":
    main()
