"""Limits of the smart filter in one place, each with the reason for its value."""

from __future__ import annotations

# --- line shaping -------------------------------------------------------------------------
# Smallest width a long line is cut to: enough for a `path:line:col: error: message` prefix.
MIN_LINE_CAP = 80
# A long line may use at most this share of the budget, so one minified blob cannot crowd out
# every error line around it.
LINE_CAP_BUDGET_SHARE = 4
# Inputs with at most this many lines are "one blob": their lines may use the whole budget.
FEW_LINES = 4

# --- generic head/tail --------------------------------------------------------------------
# Share of the kept bulk that comes from the head; the tail gets more because that is where
# a command says how it ended (exit status, summaries, the last error).
HEAD_WEIGHT = 0.4
TAIL_WEIGHT = 0.6
# Lines of context kept before and after an important line in the generic filter: an error
# line alone often lacks the file or call that produced it.
IMPORTANT_CONTEXT = 1
# Lines always kept at the very start (what ran) and end (how it ended) of a generic excerpt,
# even when error lines alone could fill the budget.
GENERIC_HEAD_PIN = 2
GENERIC_TAIL_PIN = 5

# --- when a compressor "reduced enough" ---------------------------------------------------
# A shell compressor that rates more than this share of the input characters above bulk did
# not really understand the output; structural sniffing gets a chance instead.
COMPRESSOR_MAX_KEEP_RATIO = 0.9

# --- structural trimmers ------------------------------------------------------------------
# JSON/YAML skeleton limits: depth 4 shows record shape of typical API payloads
# (`data.items[].attributes.x`); 12 keys and 6 array items show the schema without the rows.
TREE_MAX_DEPTH = 4
TREE_MAX_KEYS = 12
TREE_MAX_ITEMS = 6
# CSV/TSV sample rows from the head and from the tail.
TABLE_HEAD_ROWS = 8
TABLE_TAIL_ROWS = 3
# XML/HTML: tag names listed in the tag-count marker.
MARKUP_TOP_TAGS = 12
# Logs: level counts are always shown; the tail shows how the run ended.
LOG_TAIL_LINES = 15
# Markdown: first lines of each section kept under its heading.
MARKDOWN_SECTION_LINES = 2
# Source code: import lines shown before they are summarised by a count.
CODE_MAX_IMPORTS = 8

# --- shell compressors --------------------------------------------------------------------
# git diff: changed lines kept per hunk before the rest of the hunk is counted.
DIFF_HUNK_LINES = 40
# git diff: files named in the stat summary marker (a 500-file diff gets a count for the rest).
DIFF_STAT_FILES = 50
# git log: commits listed (one line each) before the rest is counted.
LOG_MAX_COMMITS = 200
# pytest/unittest: traceback lines kept at the end of each failure (the last frames and the
# assertion are where the cause is; the top frames are usually the runner).
FAILURE_TAIL_LINES = 25
# ls/find/tree and grep: entries shown per directory/file before the rest is counted.
LISTING_PER_DIR = 8
GREP_PER_FILE = 5
# Compiler/cargo errors: lines kept after an `error:` line (the span and the caret).
DIAGNOSTIC_CONTEXT = 8
