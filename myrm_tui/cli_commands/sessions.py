"""`myrm sessions list|show|export`: read the workspace's stored sessions."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from myrm_tui.cli_commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    bootstrap,
    err,
    format_table,
    one_line,
    open_store,
)
from myrm_tui.cli_commands.transcript import export_json, render_markdown, render_text, stamp

TITLE_COLUMN_CHARS = 50
ID_COLUMN_CHARS = 12  # ids are long; a 12-char prefix is unique in practice and accepted back


def list_command(json_out: bool) -> int:
    context = bootstrap()
    if context is None:
        return EXIT_USAGE
    store = open_store(context.workspace)
    if store is None:
        return EXIT_USAGE
    try:
        sessions = store.list_sessions()
        counts = {s.id: len(store.messages(s.id)) for s in sessions}
    finally:
        store.close()
    if json_out:
        rows = [
            {"id": s.id, "title": s.title, "model": s.model, "created_at": s.created_at,
             "updated_at": s.updated_at, "messages": counts[s.id], "parent_id": s.parent_id}
            for s in sessions
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not sessions:
        err("no sessions in this workspace yet; start one with `myrm` or `myrm run PROMPT`.")
        return EXIT_OK
    table = [
        [s.id[:ID_COLUMN_CHARS], stamp(s.updated_at), s.model, str(counts[s.id]),
         one_line(s.title, TITLE_COLUMN_CHARS)]
        for s in sessions
    ]
    print(format_table(["ID", "UPDATED", "MODEL", "MSGS", "TITLE"], table, right={3}))
    return EXIT_OK


def _load(session_ref: str):
    """(session, messages) for an id or unique prefix, or None after printing why not."""
    from myrm_tui.store.store import StoreError

    context = bootstrap()
    if context is None:
        return None
    store = open_store(context.workspace)
    if store is None:
        return None
    try:
        session = store.get_session(session_ref)
        return session, store.messages(session.id)
    except StoreError as exc:
        err(f"error: {exc}")
        return None
    finally:
        store.close()


def show_command(session_ref: str) -> int:
    loaded = _load(session_ref)
    if loaded is None:
        return EXIT_USAGE
    print(render_text(*loaded), end="")
    return EXIT_OK


def export_command(session_ref: str, fmt: str, out: Path | None) -> int:
    loaded = _load(session_ref)
    if loaded is None:
        return EXIT_USAGE
    from myrm_tui.context.summary.redact import redact, redact_obj

    # Exports leave the private .myrm folder: credentials and PII are replaced by typed
    # placeholders (the stored session keeps the originals).
    if fmt == "json":
        redacted = redact_obj(export_json(*loaded))
        text = json.dumps(redacted.value, ensure_ascii=False, indent=2) + "\n"
        counts = redacted.counts
    else:
        result = redact(render_markdown(*loaded))
        text, counts = result.text, result.counts
    if counts:
        err("redacted: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
    if out is None:
        print(text, end="")
        return EXIT_OK
    try:
        _write_atomic(out, text)
    except OSError as exc:
        err(f"error: cannot write {out}: {exc}. Pick another --out path.")
        return EXIT_USAGE
    err(f"wrote {out}")
    return EXIT_OK


def _write_atomic(path: Path, text: str) -> None:
    """Temp file + rename, so an existing export is never left half-written."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
