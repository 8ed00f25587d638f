"""A task call: the child agent's work as a collapsible block nested under one header.

Why its own widget: a delegated task can make dozens of calls; the parent's transcript should
read as one action ("subagent · 12 calls · done") until the user opens it. Opened, it shows the
child's steps and calls as they happen, then the handover (completed, pending, risks, files)
apart from the raw answer. It is a ToolBlock, so approvals, the full-output viewer and history
treat it like any other call.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from myrm_tui.agent.subagent.progress import Progress, parse_progress
from myrm_tui.agent.subagent.result import split_distilled
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock

# How many of the child's latest lines the nested list keeps: enough to follow a triage, short
# enough that an open block does not push the conversation off screen.
SHOWN_PROGRESS_LINES = 40
_GLYPHS = {"session": "◇", "step": "›", "call": "  ▸", "result": "    ✓", "end": "■"}


def _line(item: Progress) -> str:
    if item.kind == "session":
        return f"{_GLYPHS['session']} child session {item.text}"
    if item.kind == "step":
        return f"{_GLYPHS['step']} step {item.text}"
    return f"{_GLYPHS.get(item.kind, '·')} {item.text}"


class SubagentBlock(ToolBlock):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any] | str | None) -> None:
        super().__init__(call_id, name, arguments)
        self.progress: list[Progress] = []
        self.handover_text = ""
        self._base_summary = self.summary
        self._steps = Static("", classes="steps")
        self._handover = Static("", classes="handover")

    def compose(self) -> ComposeResult:
        yield self._header
        if self._card is not None:
            yield self._card  # a spilled answer's vaulted-result card (ToolBlock._place_card)
        yield self._steps
        yield self._handover
        yield self._output

    def progress_text(self) -> str:
        """The nested list as plain text (what tests and screen readers see)."""
        return "\n".join(_line(item) for item in self.progress[-SHOWN_PROGRESS_LINES:])

    def start(self, arguments: dict[str, Any] | None = None) -> None:
        super().start(arguments)
        self._base_summary = self.summary

    def _count_calls(self) -> None:
        """The header says how much the child did, so the collapsed block is still informative."""
        calls = sum(1 for item in self.progress if item.kind == "call")
        self.summary = f"{self._base_summary} · {calls} call{'' if calls == 1 else 's'}"
        if self.is_mounted:
            self._render_header()

    def append_live(self, text: str) -> None:
        # Only whole lines are parsed: a chunk may end mid-line.
        self.live_text += text
        complete, _, _ = self.live_text.rpartition("\n")
        self.progress = parse_progress(complete)
        self._steps.update(Content(for_terminal(self.progress_text())))
        self._count_calls()

    def finish(self, status: str, content: str, duration_s: float | None, vault_handle: str | None = None) -> None:
        self.handover_text, _raw = split_distilled(content)
        super().finish(status, content, duration_s, vault_handle)
        if self.handover_text:
            self._handover.update(Content(for_terminal(self.handover_text)))
        self._count_calls()
