"""Every line the CLI writes, made safe on its way to the terminal.

Why one door: CLI output quotes what a cloned repository wrote (a setting key it misspelled on
purpose, a `[models."…"]` name, a `[keymap]` id, an `.mcp.json` server name, a filter file name,
the workspace folder's own name) and what a program said (an MCP server's last stderr line, an
MCP URL with its password). Printed raw, an escape sequence in any of them is obeyed by the
terminal (clear the screen, rewrite the clipboard, retitle the window), and a token in any of
them ends up in an issue the user pastes doctor's output into. So `say` (stdout), `err`
(stderr) and `ask` (a question on stderr) first redact credentials (sinks.CLI_OUTPUT: a secret
must be seen whole, before an escape could split it) and then show every control character as a
visible escape (terminal_text.for_terminal). `tests/security/test_cli_output_escapes.py` fails
when a module of the CLI writes to stdout or stderr any other way.

The exceptions are named functions too, each with its reason:
- `answer` and `answer_json` write `myrm run`'s answer (the streamed text, the --json document):
  escapes are made inert, nothing is redacted. The answer is what the user asked the model for
  and scripts read its exact text (the store keeps it byte for byte as well).
- `json_out` writes the other JSON documents (`sessions list --json`, `models --json`): values are
  redacted, and `json_for_terminal` makes the document inert without changing what it says.
- `json_lines_stdout` is the stream `myrm replay` writes its JSON Lines to without `--out`: each
  line made inert losslessly, nothing redacted (a replay reproduces exact prompts).
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO, cast

from myrm_tui.terminal_text import for_terminal, json_for_terminal


def shown(text: str) -> str:
    """`text` as the CLI may show it: credentials redacted, then control characters escaped."""
    from myrm_tui.sinks import CLI_OUTPUT, scrub

    return for_terminal(scrub(CLI_OUTPUT, text))


def say(text: str, *, end: str = "\n") -> None:
    """Output of a command, on stdout."""
    print(shown(text), end=end, flush=True)


def err(text: str) -> None:
    """One line for the user on stderr (stdout is reserved for the command's output)."""
    print(shown(text), file=sys.stderr, flush=True)


def ask(question: str) -> None:
    """A question on stderr, the answer typed on the same line."""
    print(shown(question), end=" ", file=sys.stderr, flush=True)


def answer(text: str) -> str:
    """A piece of `myrm run`'s streamed answer on stdout, flushed: inert, not redacted (module
    doc). Returns what was written."""
    shown_text = for_terminal(text)
    sys.stdout.write(shown_text)
    sys.stdout.flush()
    return shown_text


def answer_json(document: str) -> None:
    """`myrm run --json`'s one document (json.dumps(..., ensure_ascii=False)): inert, not redacted."""
    print(json_for_terminal(document))


class _InertJsonLines:
    """A text stream over stdout for JSON documents written whole (json.dumps + newline)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(json_for_terminal(text))

    def flush(self) -> None:
        sys.stdout.flush()


def json_lines_stdout() -> TextIO:
    """Where `myrm replay` writes without --out (module doc)."""
    return cast(TextIO, _InertJsonLines())


def json_out(value: Any) -> None:
    """A JSON document of a listing command, values redacted, made inert losslessly."""
    from myrm_tui.sinks import CLI_OUTPUT, scrub_obj

    print(json_for_terminal(json.dumps(scrub_obj(CLI_OUTPUT, value), ensure_ascii=False, indent=2)), flush=True)
