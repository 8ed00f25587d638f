"""What the turn runner tells the chat screen, as Textual messages.

Why messages and not calls: the runner owns workers (warm-up, the turn, the compact command) and
knows nothing of the widgets; it posts what happened to the screen's queue and the screen decides
what the user sees (`on_...` handlers in screens/chat.py). Posting is synchronous, so the turn
worker is still only ever suspended inside the agent's generator (an interrupt lands there), and
the screen handles the messages in the order they were posted: a turn's events arrive after its
`TurnStarted` and before its `TurnEnded`. They stop at the screen (no bubbling): nothing above it
has a use for them.
"""

from __future__ import annotations

from typing import Any, Literal

from textual.message import Message
from textual.worker import WorkerState

from myrm_tui.agent.events import AgentEvent

Severity = Literal["information", "warning", "error"]


class TurnStarted(Message, bubble=False):
    """A message went: show the user's bubble (`shown`: the text with its attachment chips)."""

    def __init__(self, shown: str, state: str) -> None:
        super().__init__()
        self.shown = shown
        self.state = state  # the status line while the turn starts


class TurnEvent(Message, bubble=False):
    """One event of the running turn, in the order the agent yielded it (text deltas included:
    the reply widget batches them into frames, widgets/live_reply.py)."""

    def __init__(self, event: AgentEvent) -> None:
        super().__init__()
        self.event = event


class TurnEnded(Message, bubble=False):
    """The turn's worker ended (`state`: success, error or cancelled)."""

    def __init__(self, state: WorkerState, error: BaseException | None, draft: str) -> None:
        super().__init__()
        self.state = state
        self.error = error
        self.draft = draft  # what the prompt held when the message went (given back on a failure)


class StatusChanged(Message, bubble=False):
    """What the agent is doing now, for the status line ("" when idle)."""

    def __init__(self, state: str, session_id: str | None = None) -> None:
        super().__init__()
        self.state = state
        self.session_id = session_id


class ChatNote(Message, bubble=False):
    """A line for the transcript that belongs to no turn's reply (a model switch, onboarding)."""

    def __init__(self, text: str, level: str = "info", hint: str = "") -> None:
        super().__init__()
        self.text = text
        self.level = level
        self.hint = hint


class EnginePrepared(Message, bubble=False):
    """The warm-up finished: `problem` when the model could not be resolved, `window_problem`
    when its window cannot hold a conversation."""

    def __init__(self, problem: str | None, window_problem: str | None) -> None:
        super().__init__()
        self.problem = problem
        self.window_problem = window_problem


class IdleWorkDone(Message, bubble=False):
    """The engine's idle step after a turn finished; it may have run the next turn's compaction
    (`ContextEngine.compact_ahead`), so the ring and the dividers are read again."""


class CompactProgress(Message, bubble=False):
    """The compact command's progress line (the screen adds the key that cancels it)."""

    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


class CompactEnded(Message, bubble=False):
    """The compact command ended: `result` is the engine's report (None when cancelled or failed),
    `problem` what went wrong."""

    def __init__(self, result: dict[str, Any] | None, problem: str | None, severity: Severity = "error") -> None:
        super().__init__()
        self.result = result
        self.problem = problem
        self.severity = severity
