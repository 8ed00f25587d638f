"""Every place text leaves the message it was written in, and how it is redacted on the way.

Why one list: a secret pasted once is stored (the log is lossless, and the model needs what the
user gave it), but any copy of it that outlives the message (a summary sent on every later
turn, an export file, a line on a CI log) is a leak. Each such copy is made by one function,
named here with the policy it applies; `tests/faults/test_redaction_sinks.py` drives every sink
in this list through its real code path with the secret corpus, and fails when a sink is added
here without a test, so a new side door cannot be opened quietly.

Session notes are the model's own memory: they stay verbatim in their `session_note` call, and
are redacted when they leave it (footers, markers, exports).

What is deliberately not a sink: the live prompt (tool outputs and messages as stored; the model
needs them) and `ctx_expand`, which returns stored originals on the model's explicit request.

Why not everything with the same policy: text bound for the prompt or for a file someone else
may read drops personal data as well (emails, phones, cards); lines shown to the user who typed
them (doctor, `run` stderr, logs on their machine) drop credentials only, so `git config
user.email` still reads right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from myrm_tui.redact import (
    CREDENTIALS_ONLY,
    DEFAULT_POLICY,
    RedactionPolicy,
    redact,
    redact_obj,
)


@dataclass(frozen=True)
class Sink:
    name: str
    where: str  # the code that writes there; it calls `scrub(<this sink>, …)` (or redact_summary)
    policy: RedactionPolicy


SUMMARY_BODY = Sink(
    "summary_body",
    "context.summary.extractive._facts (each text whole, before it is "
    "flattened and clipped), context.summary.client._redacted_answer (a model's answer, before "
    "parsing clips it), then redact_summary in context.dag (leaf, fold), client.summarize and "
    "agent.fork before a node is stored",
    DEFAULT_POLICY,
)
SUMMARY_FOOTER = Sink(
    "summary_footer",
    "context.summary.footer: commands and error lines before they "
    "are clipped, and the rendered footer (used by context.compaction.node_footer, markers and "
    "agent.fork)",
    DEFAULT_POLICY,
)
SESSION_NOTE = Sink(
    "session_note",
    "context.markers.session_notes: a note lifted out of its call into a footer or a marker",
    DEFAULT_POLICY,
)
OMISSION_MARKER = Sink(
    "omission_marker", "context.markers.omission_marker: user asks and the whole marker", DEFAULT_POLICY
)
VIEW_PLACEHOLDER = Sink(
    "view_placeholder",
    "context.views.tool_identity and masked_text: the call's "
    "argument and the output's first line kept in a placeholder (context_views) when an "
    "old output or call leaves the prompt",
    DEFAULT_POLICY,
)
OBJECTIVE_NOTE = Sink(
    "objective_note",
    "context.objective_note.note_text: the human anchor (and the newest summary's blockers and next "
    "steps) restated at the end of every prompt after a compaction",
    DEFAULT_POLICY,
)
SYNTHETIC_ROW = Sink(
    "synthetic_row",
    "context.stages.post_compaction_reread.build_reread (summary and "
    "marker rows arrive already scrubbed by the sinks above)",
    DEFAULT_POLICY,
)
EXPORT = Sink(
    "export",
    "transcripts.export.export_session: `myrm sessions export`, /export and the sessions screen",
    DEFAULT_POLICY,
)
DOCTOR = Sink("doctor", "cli_commands.doctor: effective settings and model overrides", CREDENTIALS_ONLY)
CLI_OUTPUT = Sink(
    "cli_output",
    "cli_commands.output: every line of the CLI (doctor, models, sessions, trust, undo, recover, `run`'s "
    "stderr notes, an MCP server's quoted stderr line); `run`'s own answer is exempt (output.answer)",
    CREDENTIALS_ONLY,
)
RUN_ECHO = Sink(
    "run_echo",
    "cli_commands.run_report: tool lines (arguments, failures) on stderr; acp.updates, acp.permission and "
    "acp.history: tool titles, arguments, results and notices sent to an ACP client",
    CREDENTIALS_ONLY,
)
PROVIDER_ERROR = Sink(
    "provider_error",
    "llm.classify: the endpoint and provider text quoted in an error (shown, stored as an error event)",
    CREDENTIALS_ONLY,
)
SESSION_TITLE = Sink(
    "session_title",
    "sinks.session_title, called by cli_commands.run and tui.chat_session "
    "when a session is named after its first prompt (lists, exports, the sessions screen)",
    DEFAULT_POLICY,
)
LOG = Sink(
    "log",
    "every logging record (myrm's and litellm's), via log_redaction.install (called by cli.main); "
    "log_files.append_log; mcp.connection._stderr_hint (an MCP server's last stderr line, quoted in its status)",
    CREDENTIALS_ONLY,
)

SINKS: tuple[Sink, ...] = (
    SUMMARY_BODY,
    SUMMARY_FOOTER,
    SESSION_NOTE,
    OMISSION_MARKER,
    VIEW_PLACEHOLDER,
    SYNTHETIC_ROW,
    OBJECTIVE_NOTE,
    SESSION_TITLE,
    EXPORT,
    DOCTOR,
    CLI_OUTPUT,
    RUN_ECHO,
    PROVIDER_ERROR,
    LOG,
)

# Characters of a text redacted before a clipped copy of it is made (a title, a footer line, an
# ask in a marker, a stderr line): a secret must be seen whole to be recognised (a clipped key is
# no longer a key, yet its start still leaks), and any secret that starts within a clipped
# line's length ends within 4 KB (the longest in the corpus, an RSA-4096 PEM key, is 3.3 KB).
SCAN_CHARS = 4_096


def scrub(sink: Sink, text: str) -> str:
    """`text` as it may leave through `sink`."""
    return redact(text, sink.policy).text


def scrub_obj(sink: Sink, value: Any) -> Any:
    """A JSON-like value as it may leave through `sink` (keys kept, JSON inside strings walked)."""
    return redact_obj(value, sink.policy).value


def session_title(prompt: str, chars: int) -> str:
    """A session title from its first prompt: redacted while whole, flattened, then clipped."""
    flat = " ".join(scrub(SESSION_TITLE, prompt[:SCAN_CHARS]).split())
    return flat if len(flat) <= chars else flat[: max(chars - 1, 0)] + "…"
