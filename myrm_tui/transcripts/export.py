"""The one session export: Markdown or JSON, redacted, written atomically.

Why one module for the CLI (`myrm sessions export`) and the TUI (`/export`, the sessions
screen): an export leaves the private `.myrm` folder (it gets attached to issues, pasted into
chats, committed), so credentials and personal data are replaced by typed placeholders; two
code paths drifted once already (the TUI wrote raw Markdown). The stored session keeps the
originals. No Textual here: the TUI calls these functions.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.fenced_paths import replace_file
from myrm_tui.store.records import MessageRecord, SessionRecord
from myrm_tui.terminal_text import json_for_terminal
from myrm_tui.transcripts.transcript import export_json, render_markdown

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

FORMATS = ("md", "json")


@dataclass(frozen=True)
class SessionExport:
    text: str
    counts: dict[str, int] = field(default_factory=dict)  # redactions by kind

    def summary(self) -> str:
        """ "redacted: 2 openai_key, 1 email" (empty when nothing was redacted)."""
        if not self.counts:
            return ""
        return "redacted: " + ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items()))


def export_session(session: SessionRecord, messages: Sequence[MessageRecord], fmt: str = "md") -> SessionExport:
    """The session as `fmt` ("md" or "json"), redacted.

    Values are redacted before rendering, as decoded strings (tool-call arguments are JSON whose
    escaped quotes and newlines would hide a `"password": "…"` or a YAML line), then the rendered
    text is scanned once more for anything the rendering put together.
    """
    from myrm_tui.redact import redact, redact_obj
    from myrm_tui.sinks import EXPORT

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    counts: Counter[str] = Counter()

    def clean(value: Any) -> Any:
        result = redact_obj(value, EXPORT.policy)
        counts.update(result.counts)
        return result.value

    session = dataclasses.replace(session, title=clean(session.title))
    messages = [dataclasses.replace(m, message=clean(m.message)) for m in messages]
    if fmt == "json":
        # json_for_terminal: JSON leaves C1 and bidi controls raw; \u-escaping them is lossless.
        text = json_for_terminal(json.dumps(clean(export_json(session, messages)), ensure_ascii=False, indent=2)) + "\n"
    else:
        final = redact(render_markdown(session, messages), EXPORT.policy)
        counts.update(final.counts)
        text = final.text
    return SessionExport(text, dict(counts))


def write_atomic(path: Path, text: str) -> Path:
    """Temp file + rename (myrm_tui/fenced_files.py), so an existing export is never left half-written;
    a new export is readable by the user only: it holds the conversation."""
    replace_file(path, text)
    return path


def export_to_file(store: Store, session_id: str, path: Path, fmt: str = "md") -> tuple[Path, SessionExport]:
    """Read the session from `store`, export it redacted to `path`."""
    session = store.get_session(session_id)
    exported = export_session(session, store.messages(session.id), fmt)
    return write_atomic(path, exported.text), exported
