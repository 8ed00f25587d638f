"""Every tunable of the store in one place, each with the reason for its value."""

from __future__ import annotations

# Layout of a workspace's private folder. `.gitignore` holds "*" so a session log (which may
# contain secrets pasted into the chat) is never committed by accident.
DIR_NAME = ".myrm"
DB_NAME = "sessions.db"
ARTIFACTS_DIR = "artifacts"
GITIGNORE_NAME = ".gitignore"
GITIGNORE_TEXT = "*\n"
# Per-session writer locks (`<session id>.lock`) and the store lock (session_lock.py).
LOCKS_DIR = "locks"

# Owner-only: transcripts and tool output can hold credentials. Applied with chmod after
# creation so the user's umask can neither widen nor narrow them.
DIR_MODE = 0o700
FILE_MODE = 0o600

# How long a writer waits for another process's write lock before giving up. Writes are single
# small transactions, so 5 s only runs out if another process is stuck.
BUSY_TIMEOUT_MS = 5_000

# synchronous=FULL in WAL mode fsyncs the WAL at every commit. NORMAL would already keep every
# committed message across a SIGKILL of the process (the bytes sit in the OS page cache, which
# the kernel flushes anyway); FULL additionally keeps them across power loss or a kernel crash.
# The store promises "lose nothing" and commits at human/model pace (a handful of appends per
# turn), so one fsync per append (~1-10 ms) is a price worth paying.
SYNCHRONOUS = "FULL"

# After a checkpoint, truncate the WAL back to this size, so one burst of large tool outputs
# does not leave a huge -wal file behind forever.
JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

# 6 random bytes = 12 hex chars: short enough to type as `--resume`, 48 bits so that collisions
# within one workspace are practically impossible (and retried when they happen).
SESSION_ID_BYTES = 6

# Vault handles show the first 12 hex digits of the sha256 (48 bits): short in prompts, and
# ambiguous only after millions of artifacts (an ambiguous handle is an error, never a guess).
HANDLE_HEX_CHARS = 12

# The result stored for a tool call that never got one (process killed, interrupt, crash).
# Worded for the model: it must not assume the call ran.
INTERRUPTED_TOOL_CONTENT = "[interrupted: the session stopped before this tool call finished; it did not complete]"

# --- session search (FTS5) -------------------------------------------------------------------
# Word index: porter stemming so "failing" finds "failed"; remove_diacritics 2 so "cafe" finds
# "café" (mode 2 also folds letters with several diacritics correctly).
WORD_TOKENIZER = "porter unicode61 remove_diacritics 2"
# Substring index: trigrams find what a word tokenizer cannot (Chinese/Japanese runs without
# spaces, `NEEDLE-3fa9`, the middle of `camelCaseName`). The tokenizer exists since 3.34.0.
TRIGRAM_MIN_SQLITE = (3, 34, 0)
# Text indexed per message. Outputs bigger than this are expected to be spilled to the vault
# (indexed separately, below); the cap keeps a pasted megabyte blob from stalling the append
# that commits it (trigram indexing costs ~0.4 s per MB on this class of machine).
MESSAGE_INDEX_MAX_CHARS = 1_000_000
# Text indexed per vault artifact. Spilled tool output is where "that error from earlier"
# usually hides, so this is generous; beyond 5 MB an artifact is a dump (logs, data files)
# whose tail is reachable with ctx_expand, and indexing it would take seconds and bloat the DB.
ARTIFACT_INDEX_MAX_CHARS = 5_000_000
# Bytes sniffed for NUL to call an artifact binary (git and grep use the same heuristic).
BINARY_SNIFF_BYTES = 8192
# Snippet shaping: tokens around the match for FTS5 snippet(), characters around the match for
# substring hits, and a hard cap so ten hits stay a few hundred tokens in the prompt.
SNIPPET_TOKENS = 24
SNIPPET_CONTEXT_CHARS = 110
SNIPPET_MAX_CHARS = 320
# FTS5 snippet() scores every match position of a document: fine for a chat message, seconds for
# a 200 KB log where the word occurs on every line. Bigger texts get a plain-text window.
SNIPPET_FTS_MAX_CHARS = 32_000
SNIPPET_OPEN = "«"
SNIPPET_CLOSE = "»"
# Reciprocal-rank fusion constant: the usual 60 damps the head of each list enough that a hit
# found by both indexes beats one found at the top of only one of them.
RRF_K = 60
# Added to the fused score of a row that holds a multi-word query as a phrase, so it outranks
# every row that holds the words apart: a fused score is at most (rankings + RECENCY_WEIGHT) /
# (RRF_K + 1), about 0.1, so 1.0 lifts a phrase row over any of them.
PHRASE_TIER_BONUS = 1.0
# Weight of the recency ranking in the fusion, relative to 1.0 for a text ranking: enough to
# order near-equal hits newest first, too little to lift a weak hit over a strong one.
RECENCY_WEIGHT = 0.5
# bm25 ranks closer than this are treated as equal relevance (then the newer row wins): two
# reads of one file that differ in a single value score within a few hundredths.
RANK_TIE = 0.25
# Rows taken from each index before fusion: enough for fusion to reorder, few enough that a
# common word in 5,000 messages does not fetch every row.
SEARCH_CANDIDATES_FACTOR = 4
