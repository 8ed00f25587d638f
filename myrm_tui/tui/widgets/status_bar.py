"""The bottom line: model, workspace, session and what the agent is doing.

Before a call's first token the line says "thinking"; once that wait passed WAIT_TEXT_AFTER_S it
says what the wait is instead (loading the model, connecting to the host, waiting for the first
token, compacting), from the turn's WaitPhase events.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import STATUS_TICK_S, WAIT_TEXT_AFTER_S
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures.reply_figures_text import StreamMeter
from myrm_tui.tui.formatting import format_tokens, short_id


@dataclass(frozen=True)
class StatusInfo:
    model: str | None = None
    workspace: Path | None = None
    session_id: str | None = None
    state: str = ""  # "", "thinking", "running bash", "waiting for approval", …
    prompt_tokens: int | None = None  # the last request's prompt, as the ring reads it (context_source)
    sandbox: str | None = None  # "sandbox off", "no sandbox", …: only when bash is not in the default sandbox


def _home_relative(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


class StatusBar(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, info: StatusInfo | None = None, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.info = info or StatusInfo()
        self._meter: StreamMeter | None = None
        self._meter_suffix = ""
        self._ticker: Timer | None = None
        self._wait_since: float | None = None  # when the wait for the next token began
        self._wait_reason = ""  # what it waits on (the last WaitPhase)
        self._wait_timer: Timer | None = None  # shows the reason once the wait is long enough

    def on_mount(self) -> None:
        self._render_info()

    def set(self, **changes: object) -> None:
        """Change some fields (`model=`, `state=`, …) and redraw once."""
        self.info = replace(self.info, **changes)  # type: ignore[arg-type]
        if self.is_mounted:
            self._render_info()

    def follow(self, meter: StreamMeter | None, suffix: str = "") -> None:
        """Show a streaming call's elapsed time and speed as the state, redrawn on a short timer
        while it runs (None stops it; the next `set(state=…)` says what happens instead)."""
        self._meter, self._meter_suffix = meter, suffix
        if meter is None:
            if self._ticker is not None:
                self._ticker.stop()
                self._ticker = None
            return
        self._tick()
        if self._ticker is None and self.is_mounted:
            self._ticker = self.set_interval(STATUS_TICK_S, self._tick)

    def _tick(self) -> None:
        if self._meter is not None:
            self.set(state=self._meter.text(self._wait_text()) + self._meter_suffix)

    # the wait before the first token --------------------------------------------------------

    def wait_began(self) -> None:
        """A message went or a tool finished: the next token is awaited from now."""
        self.wait_over()
        self._wait_since = time.monotonic()

    def wait_for(self, reason: str) -> None:
        """What the wait is now; shown once it lasted WAIT_TEXT_AFTER_S."""
        if self._wait_since is None:
            self._wait_since = time.monotonic()
        self._wait_reason = reason
        due = self._wait_since + WAIT_TEXT_AFTER_S - time.monotonic()
        if due <= 0:
            self._show_wait()
        elif self._wait_timer is None and self.is_mounted:
            self._wait_timer = self.set_timer(due, self._show_wait)

    def wait_over(self) -> None:
        """Output arrived (or the turn stopped waiting on the model)."""
        self._wait_since, self._wait_reason = None, ""
        if self._wait_timer is not None:
            self._wait_timer.stop()
            self._wait_timer = None

    def _wait_text(self) -> str | None:
        since = self._wait_since
        if not self._wait_reason or since is None or time.monotonic() - since < WAIT_TEXT_AFTER_S:
            return None
        return self._wait_reason

    def _show_wait(self) -> None:
        self._wait_timer = None
        if self._meter is not None:
            self._tick()
            return
        text = self._wait_text()
        if text:
            self.set(state=text)

    def plain(self) -> str:
        return self._content().plain

    def _content(self) -> Content:
        info = self.info
        parts: list[str | tuple[str, str]] = [
            (for_terminal(info.model or "no model"), "bold" if info.model else "$text-warning"),
        ]
        if info.workspace is not None:
            parts += ["  ", (_home_relative(info.workspace), "$text-muted")]
        parts += ["  ", (f"session {short_id(info.session_id)}", "$text-muted")]
        if info.prompt_tokens is not None:
            parts += ["  ", (f"ctx {format_tokens(info.prompt_tokens)} tok", "$text-muted")]
        if info.sandbox:
            parts += ["  ", (info.sandbox, "$text-warning")]
        if info.state:
            parts += ["  ", (f"● {for_terminal(info.state)}", "$text-accent")]  # names a tool the model chose
        return Content.assemble(*parts)

    def _render_info(self) -> None:
        """A repaint, not a layout: the bar fills what the status line leaves, one row high
        (status_bar.tcss: `width: 1fr; height: 1`), so its text never changes its size; while a
        reply streams the clock ticks every STATUS_TICK_S, and a layout is a reflow of the whole
        screen (~2.6 ms CPU with an empty transcript against ~1.5 ms for the repaint)."""
        self.update(self._content(), layout=False)
