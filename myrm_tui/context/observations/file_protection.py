"""File reads and edits protected from compaction's cuts (the seed's tool protection whitelist).

Why: a read that is masked or excerpted while the model still works on that file sends it into
read → cut → re-read loops, and an edit cut to its first 300 characters no longer says what the
file now holds. What "protected" means, so that a 5 MB file cannot hold the prompt hostage:

- a `file_read` output is protected while it shows the file's current version: no later write,
  edit or read of that path, and no later shell command naming it (the bash snapshot is not
  consulted here: naming it is a cheap over-approximation, and a stale read only loses its
  protection). Current reads are protected newest first up to a token total (a share of B,
  `EngineConfig.file_protect_ratio`), so many big reads cannot fill the prompt; a 5 MB file is
  already in the vault (`hard_cap_chars`, file_read's page cap) and its page counts like any read.
- a `file_write`/`file_edit` argument keeps `EngineConfig.edit_keep_chars` characters, head and
  tail, around a stub saying how much was left out and the handle to the whole text
  (context/observations/argument_cuts.py).

The emergency tier's own steps (the 90 % safety net) may still mask a protected read and cut an
edit to its head: fitting the window comes first, and everything stays one `ctx_expand` away.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from myrm_tui.store.records import MessageRecord

READ_TOOL = "file_read"
EDIT_TOOLS = frozenset({"file_write", "file_edit"})
SHELL_TOOL = "bash"


def _norm(path: object) -> str:
    """A path argument compared as the model wrote it, with `./` and `a/../` spelled out."""
    return posixpath.normpath(path.strip()) if isinstance(path, str) and path.strip() else ""


def current_reads(
    rows: Sequence[MessageRecord],
    start: int,
    calls: Mapping[str, tuple[str, dict[str, Any]]],
    tokens: Callable[[int], int],
    limit: int,
) -> frozenset[int]:
    """Indices (from `start`) of the `file_read` outputs that show their file's current version,
    newest first while their prompt tokens (`tokens`) add up to at most `limit`."""
    touched: set[str] = set()  # paths written, edited or read again later than the row looked at
    commands: list[str] = []  # later shell commands
    protected: set[int] = set()
    total = 0
    for i in range(len(rows) - 1, start - 1, -1):
        message = rows[i].message
        if rows[i].role == "assistant":
            for call in message.get("tool_calls") or ():
                name, args = calls.get(call.get("id", ""), ("", {}))
                if name in EDIT_TOOLS:
                    touched.add(_norm(args.get("path")))
                elif name == SHELL_TOOL and isinstance(args.get("command"), str):
                    commands.append(args["command"])
            continue
        if rows[i].role != "tool":
            continue
        name, args = calls.get(message.get("tool_call_id", ""), ("", {}))
        if name != READ_TOOL:
            continue
        path = _norm(args.get("path"))
        if not path or path in touched or path.startswith("vault://"):
            continue
        touched.add(path)  # an older read of it shows an older view
        base = posixpath.basename(path)
        if any(base in command for command in commands):
            continue
        cost = tokens(i)
        if total + cost <= limit:
            protected.add(i)
            total += cost
    return frozenset(protected)
