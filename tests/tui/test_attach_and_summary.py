"""The TUI side of images and fork summaries: images attached from the prompt (`@shot.png`, `/image PATH`) reach
the model through the real agent and scripted provider, and a fork's summary shows as its own
block, never as a user bubble with `<context-note>` tags."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.fork import FORK_SUMMARY, SYNTHETIC_KEY
from myrm_tui.context.summary.schema import FileChange, StructuredSummary, render
from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.context_note_block import ContextNoteBlock
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.snapshot_helpers import SNAP_SIZE, make_app, settle
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, wait_until


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def vision_script(tmp_path: Path, *texts: str, vision: bool = True) -> tuple[str, Path]:
    record = tmp_path / "requests.jsonl"
    path = tmp_path / "vision.json"
    path.write_text(
        json.dumps({"turns": [{"text": t} for t in texts], "supports_vision": vision, "record": record.name})
    )
    return f"scripted/{path}", record


def images_sent(record: Path) -> list[int]:
    """Image parts in the newest user message of each request."""
    out = []
    for line in record.read_text().splitlines():
        user = [m for m in json.loads(line) if m["role"] == "user"][-1]
        content = user["content"]
        out.append(sum(p.get("type") == "image_url" for p in content) if isinstance(content, list) else 0)
    return out


async def submit(pilot, app, text: str) -> None:
    screen = app.chat_screen
    screen.prompt.load_text(text)
    await pilot.press("enter")


async def test_at_image_and_slash_image_reach_the_model(workspace, store, tmp_path):
    (workspace / "shot.png").write_bytes(png())
    (workspace / "notes.png").write_text("not an image")
    model, record = vision_script(tmp_path, "I see red", "still red", "no image this time")
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        ended = screen.turns_ended
        await submit(pilot, app, "what is @shot.png?")
        await wait_until(pilot, lambda: screen.turns_ended > ended, what="turn 1")
        assert images_sent(record) == [1]
        assert "[image: shot.png]" in screen.query(UserMessage).last().text
        # /image with a file that is not an image: refused, said, nothing queued
        await submit(pilot, app, "/image notes.png")
        await wait_until(pilot, lambda: any("not a PNG" in n for n in notices(app)), what="refusal")
        await submit(pilot, app, "/image shot.png")
        await wait_until(
            pilot, lambda: any("goes with your next message" in n.text for n in screen.query(Note)), what="queued note"
        )
        ended = screen.turns_ended
        await submit(pilot, app, "and now?")
        await wait_until(pilot, lambda: screen.turns_ended > ended, what="turn 2")
        ended = screen.turns_ended
        await submit(pilot, app, "plain text")
        await wait_until(pilot, lambda: screen.turns_ended > ended, what="turn 3")
        assert images_sent(record) == [1, 1, 0], "the queued image went once, with the next message only"


async def test_a_missing_image_stops_the_send_and_keeps_the_draft(workspace, store, tmp_path):
    model, record = vision_script(tmp_path, "never")
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await submit(pilot, app, "compare @before.png")
        await wait_until(pilot, lambda: any("before.png" in n for n in notices(app)), what="error")
        assert screen.prompt.text == "compare @before.png"
        assert screen.turns_ended == 0 and not record.exists() and app.chat.session_id is None


async def test_a_model_without_vision_shows_the_placeholder_note(workspace, store, tmp_path):
    (workspace / "shot.png").write_bytes(png())
    model, record = vision_script(tmp_path, "I cannot see", vision=False)
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await submit(pilot, app, "@shot.png describe")
        await wait_until(pilot, lambda: screen.turns_ended == 1, what="turn")
        notes = [n.text for n in screen.query(Note)]
        assert any("has no vision" in n and "vault://" in n for n in notes), notes
        assert images_sent(record) == [0]


async def test_a_fork_summary_is_a_block_not_a_user_bubble(workspace, store, tmp_path):
    turns = [{"text": f"answer {i}: " + "the details of what was done " * 12} for i in range(8)]
    path = tmp_path / "fork.json"
    path.write_text(json.dumps({"turns": turns}))
    model = f"scripted/{path}"
    session = store.create_session(model=model)
    agent = Agent(store=store, session_id=session.id, workspace=workspace, settings=Settings().with_values(model=model))
    for text in ("start the project", "add a README", "add tests", "run them"):
        async for _ in agent.turn(text):
            pass
    child = agent.fork_with_summary()
    app = MyrmApp(workspace, scripted_settings(model), session_id=child.id, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.query(ContextNoteBlock), what="summary block")
        bubbles = [u.text for u in screen.query(UserMessage)]
        assert bubbles == ["start the project", "add tests", "run them"]
        assert not any("context-note" in b or "[summary" in b for b in bubbles)
        block = screen.query_one(ContextNoteBlock)
        assert "Summary of 3 earlier messages" in block.title_text and "context-note" not in block.body_text
        assert "add a README" in block.body_text and not block.expanded
        block.query_one(".title").focus()
        await pilot.press("enter")
        assert block.expanded and "Resolved questions" in block.plain()
        # the summary is not something the user typed: Up does not bring it back
        assert "context-note" not in " ".join(screen.prompt.prompt_history.entries)


def seeded_fork(store) -> str:
    """A fork's stored shape with fixed values (deterministic pixels)."""
    sid = store.create_session("openai/gpt-4o", "fix the parser (fork with summary)").id
    store.append_message(sid, {"role": "user", "content": "Fix the failing parser test please."}, 9)
    summary = StructuredSummary(
        user_goal="Fix the failing parser test please.",
        completed_actions=["bash command=pytest -q", "file_edit path=parser.py", "answered: All 12 tests pass now."],
        files_modified=[FileChange("parser.py", "edit")],
        resolved_questions=["Fix the failing parser test please. → answered"],
        blocked_items=["denied, not run: bash command=rm -rf build"],
        fallback=True,
    )
    text = render(
        summary,
        handle="parent 5e55a0c1",
        depth=0,
        covered_count=6,
        time_range=(1_767_225_600.0,) * 2,
        footer="Files: parser.py (edit)\nTools: bash ×2, file_edit",
        originals="messages 2–7 of session 5e55a0c1, not part of this fork",
    )
    store.append_message(sid, {"role": "user", "content": text, SYNTHETIC_KEY: FORK_SUMMARY}, 120)
    store.append_message(sid, {"role": "user", "content": "Now add a test for empty input."}, 9)
    store.append_message(sid, {"role": "assistant", "content": "Added `test_parse_empty`."}, 9)
    return sid


def test_summary_block_snapshot(snap_compare, workspace, store):
    app = make_app(workspace, store, seeded_fork(store))

    async def open_block(pilot):
        await settle(pilot)
        block = pilot.app.chat_screen.query_one(ContextNoteBlock)
        block.expanded = True
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=open_block)
