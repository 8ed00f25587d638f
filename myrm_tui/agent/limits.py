"""Tool and loop limits in one place, each with the reason for its value."""

from __future__ import annotations

# file_read without a range shows at most this many lines: about 20k tokens of typical code,
# enough for most files while keeping one read from eating a small model's window.
FILE_READ_MAX_LINES = 2000
# Bytes sniffed to tell a binary file from text (git uses the same 8 KiB NUL test).
BINARY_SNIFF_BYTES = 8192
# file_write/file_edit refuse files above this size: an exact search/replace on a 20 MB file is
# a mistake, and the approval diff would be unreadable.
EDIT_MAX_BYTES = 10 * 1024 * 1024
# Lines of unified diff shown in an approval request before it is cut (the full change is
# still applied; the cut only keeps the approval panel readable).
APPROVAL_DIFF_MAX_LINES = 400

# grep: enough hits to see the shape of a codebase search, few enough to stay ~10k tokens.
GREP_MAX_MATCHES = 200
# Characters of one matching line shown (minified JS lines can be megabytes).
GREP_MAX_LINE_CHARS = 300
# Files above this size are skipped by grep (logs, dumps); file_read with a range still works.
GREP_MAX_FILE_BYTES = 5 * 1024 * 1024
# glob: paths listed before the result is cut.
GLOB_MAX_RESULTS = 500
# Directories no search tool descends into: VCS internals, myrm's own store, caches.
SKIP_DIRS = frozenset({".git", ".myrm", "__pycache__", "node_modules", ".hg", ".svn"})

# bash keeps at most this much output in memory; a runaway `yes` must not exhaust RAM. What
# goes beyond is counted and reported, not kept.
BASH_MAX_CAPTURE_CHARS = 64 * 1024 * 1024
# Seconds between SIGTERM and SIGKILL for a process group: enough for a test runner to flush,
# short enough that an interrupt feels immediate.
KILL_GRACE_S = 1.0
# The upper bound for a bash timeout is the user's `bash_timeout_max` setting (settings/schema.py).


# Instruction files (AGENTS.md, CLAUDE.md: config folder, workspace, folders down to the cwd) share
# this many characters, ~10k tokens; past it they are cut (with a note): they are sent on every call.
WORKSPACE_RULES_MAX_CHARS = 40_000
