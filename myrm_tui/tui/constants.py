"""Tuning values of the TUI, in one place, each with the reason for its value."""

from __future__ import annotations

# The streaming reply's frame rate, the one constant for it (widgets/blocks/live_reply.py; the
# reasoning box too). 50 ms (20 Hz) reads as live typing. Each frame costs the UI thread one layout
# of the screen and a repaint of the scroll bar (measured with bench/tui_stream.py on this 2-core
# box, empty transcript: ~4-6 ms CPU) plus the live block's render in a thread, whatever the token
# rate: a higher frame rate would add that cost per second, at a slow model's rate too.
STREAM_FLUSH_INTERVAL_S = 0.05
# The most a streaming frame waits for a typed key to be painted first (tui/input_priority.py).
# One frame interval: a key's own screen update takes a few ms, so this only bounds the case of a
# key that paints nothing or a held-down key repeating, where the stream drops to at worst half
# its frame rate (all text still shows, a frame later) instead of stopping.
INPUT_HOLD_MAX_S = STREAM_FLUSH_INTERVAL_S

# Live bash output while a command runs: the tail is what the user watches; more lines would
# push the rest of the transcript away and cost a re-render per chunk.
LIVE_OUTPUT_TAIL_LINES = 12
# Characters of live output kept in memory per running tool (the stored result is the record).
LIVE_OUTPUT_BUFFER_CHARS = 20_000

# A finished tool's output shown in its expanded block. The full text is in the store (and the
# vault for big ones); the block is a preview, not the archive.
TOOL_OUTPUT_DISPLAY_CHARS = 4_000
# The full-output viewer (screens/tool_output.py) draws at most this much of an output. Reading
# and sanitising run in a thread (2 MB: ~0.03 s), but TextArea.load_text runs on the UI thread
# and grows with the text (measured on a 2-core box: 0.5 MB 0.11 s, 1 MB 0.20 s, 2 MB 0.5-0.7 s);
# 0.5 MB keeps the freeze under a frame-skip a person notices. Past it the viewer names the rest.
TOOL_VIEWER_MAX_CHARS = 500_000

# While a reply streams, the status line's elapsed time and tokens/s are redrawn this often:
# often enough to read as a running clock, rare enough to cost nothing next to the stream.
STATUS_TICK_S = 0.5
# The status line names what the first token waits on (loading the model, connecting, compacting)
# only once the wait passed this: a fast answer shows no flicker of phases, and past a second a
# user starts to wonder what is going on.
WAIT_TEXT_AFTER_S = 1.0
# Live tokens/s is estimated from streamed characters (the provider's count only arrives with
# usage at the end of the call): ~4 characters per token for English text with BPE tokenizers.
LIVE_CHARS_PER_TOKEN = 4

# One-line argument summary in a tool block header.
ARG_SUMMARY_CHARS = 100

# Diff lines shown inside an approval prompt before "… N more lines".
APPROVAL_DIFF_LINES = 200
# A key (or click) this soon after an approval appears never answers it: nobody reads a command
# and decides in 0.3 s, so such a key was meant for something else (typing, a reflex). About the
# fastest human reaction to something new on screen, so a deliberate answer is never held up.
APPROVAL_ANSWER_GUARD_S = 0.3

# Resumed transcripts mount only their tail: every mounted Markdown reply costs ~30 DOM nodes and
# a few hundred replies make keypresses and resizes visibly slow (docs/tui-benchmarks.md, T2).
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

# Context health ring levels (share of the prompt limit used by the last request). 75%: the
# point where a fork into a fresh session is still cheap and the engine has started its full
# tier; 90%: the engine's emergency tier, where compaction is no longer optional.
RING_WARN_RATIO = 0.75
RING_CRIT_RATIO = 0.90

# Transcript windowing (docs/tui-benchmarks.md, T2: ~50 mounted Markdown replies keep keypresses and
# resizes under ~200 ms on a 2-core box). Live sessions prune back to the window once they pass
# the high-water mark, so pruning happens every ten turns, not every turn.
TURN_WINDOW = 50
TURN_WINDOW_HIGH = 60
# Turns mounted per "load earlier" (a screenful or two of ~900-character replies). Small because
# the page-up that reaches the top waits for the batch: every mounted reply parses its Markdown and
# relayouts the whole transcript, so 20 turns took ~5 s on a 2-core box, 5 about 1 s
# (docs/tui-benchmarks.md, "Issue 17").
LOAD_EARLIER_TURNS = 5
# Columns a stored reply loses to its padding inside the transcript (assistant_message.tcss:
# `padding: 0 1`): the width its lines are pre-rendered for before any reply is mounted.
REPLY_GUTTER_CELLS = 2
# On resume, the newest replies of the window rendered before the first paint (they fill the
# screen the user sees first); the older ones render in a thread after it. 5 ~900-character
# replies are more than a 40-row screen.
RESUME_RENDERED_REPLIES = 5

# Slash / @file popup rows (an OptionList renders only visible rows, but a short list reads faster).
POPUP_MAX_ROWS = 8
# Workspace files listed for @file completion: enough for any project a human navigates by name,
# bounded so a checkout with a huge vendored tree cannot stall the worker.
FILE_COMPLETION_MAX_PATHS = 20_000
# Model picker: rows asked from the registry per query.
MODEL_PICKER_LIMIT = 60

# Sparkline of prompt tokens per call on the health screen: the newest calls that fit one row.
SPARKLINE_WIDTH = 48

# The live block of a streamed reply (the one still growing) is parsed and rendered again every
# frame; past this many characters (a long code fence, paragraph, single line or list) it is cut
# into pieces rendered once each, keeping at least LIVE_BLOCK_KEEP_CHARS live (widgets/live_markdown.py).
# ~2,000 characters of prose parse and render in 2-5 ms on this box (20 fps: <= 10 % of a core, in a
# worker thread).
LIVE_BLOCK_CHARS = 2_000
LIVE_BLOCK_KEEP_CHARS = 500
# A code fence costs ~30 times more per character (Pygments and Rich's Syntax: 1,600 characters of
# Python, 46 ms on this box), and a thread that renders most of the time holds the GIL the UI's
# frames need, so a live fence is cut much sooner. Its pieces are whole lines highlighted on their
# own, which looks the same for nearly all code (a multi-line string may recolour at the end).
LIVE_FENCE_CHARS = 600
LIVE_FENCE_KEEP_CHARS = 200
# A finished streamed reply up to this size becomes Textual's Markdown widget (selection and links
# at once; building its blocks costs ~1 ms per 1,000 characters). A longer one stays rows, as a stored
# reply does (widgets/stored_reply.py: a Markdown tree of hundreds of blocks costs a relayout of
# 100 ms or more to mount); a click swaps the Markdown widget in.
FINISHED_MARKDOWN_CHARS = 1_500

# During a streamed turn full garbage collections are held back (agent/gc_policy.py); the one
# held runs IDLE_COLLECT_DELAY_S after the turn, while the user reads the reply ...
IDLE_COLLECT_DELAY_S = 0.5
# ... and only once no key reached the prompt for this long: the pass (0.2-0.4 s on this box) blocks
# the loop, so a key typed during it waits for it. Keys come 0.1-0.3 s apart in a burst of typing;
# a second's pause is a break between sentences or a moment of reading, when a key is least likely.
COLLECT_KEY_QUIET_S = 1.0

# Prompt history reaches back over this many of the workspace's most recently updated sessions:
# enough to find last week's prompts, bounded so opening a workspace with thousands of sessions
# reads a bounded number of histories (it runs in a thread, but still at every start).
HISTORY_SESSIONS = 50
# Entries kept in the prompt history: far more than anyone walks with Up; the search reaches them all.
HISTORY_ENTRIES = 1_000
# Matches listed by the prompt-history search: more than anyone scans (refining the query is
# faster), and the list draws only the visible rows anyway.
PROMPT_SEARCH_ROWS = 200
# A paste of more lines than this shows in the prompt as a `[pasted N lines]` chip: the prompt
# shows at most 10 lines of text (prompt.tcss: max-height 12 minus the border), so a taller paste
# would push what was typed around it out of view. The full text is what gets sent.
PASTE_CHIP_LINES = 10

# Below this terminal width the compaction panel (50 columns) takes the transcript's place while it
# is shown instead of sitting beside it: at 80 columns the chat was left ~28 columns, too narrow to
# read a reply. From 100 on, 50 columns of chat remain.
PANEL_BESIDE_MIN_WIDTH = 100
