"""Tuning values of the TUI, in one place, each with the reason for its value."""

from __future__ import annotations

# 50 ms (20 Hz): fast enough to read as live typing, slow enough that a 100 tok/s stream costs
# ~20 Markdown appends a second instead of 100 (measured: halves CPU on a 2-core box).
STREAM_FLUSH_INTERVAL_S = 0.05

# Live bash output while a command runs: the tail is what the user watches; more lines would
# push the rest of the transcript away and cost a re-render per chunk.
LIVE_OUTPUT_TAIL_LINES = 12
# Characters of live output kept in memory per running tool (the stored result is the record).
LIVE_OUTPUT_BUFFER_CHARS = 20_000

# A finished tool's output shown in its expanded block. The full text is in the store (and the
# vault for big ones); the block is a preview, not the archive.
TOOL_OUTPUT_DISPLAY_CHARS = 4_000

# One-line argument summary in a tool block header.
ARG_SUMMARY_CHARS = 100

# Diff lines shown inside an approval prompt before "… N more lines".
APPROVAL_DIFF_LINES = 200

# Resumed transcripts mount only their tail: every mounted Markdown reply costs ~30 DOM nodes and
# a few hundred replies make keypresses and resizes visibly slow (see research, section 5).
HISTORY_TAIL_ITEMS = 120

# Second Ctrl+C within this window quits; long enough for a deliberate double press.
CTRL_C_QUIT_WINDOW_S = 2.0

# Quitting mid-turn waits this long for the agent to store its interrupt records and stop its
# processes (its own SIGTERM→SIGKILL grace is shorter) before the store is closed.
SHUTDOWN_TURN_WAIT_S = 8.0

# Status glyphs of tool blocks, by ToolFinished.status (plus "running" and "pending").
TOOL_STATUS_GLYPHS: dict[str, str] = {
    "pending": "·",
    "running": "◌",
    "ok": "✓",
    "error": "✗",
    "denied": "⊘",
    "timeout": "⏱",
    "interrupted": "■",
}
