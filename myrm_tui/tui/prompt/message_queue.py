"""Messages typed while a turn runs (pure; no Textual).

They wait here, visible and editable, and go as ONE message when the turn ends well: the model
answers everything the user added in one reply, instead of one model call per line typed while
it was busy. After an interrupt or a failure they are not sent: they go back to the prompt, so
the user decides what still makes sense (an interrupt usually means the plan changed).

No "steer now" injection into a running turn: see README ("Typing while the model works").
"""

from __future__ import annotations

# Between two queued messages in the one message that is sent: a blank line keeps them apart
# as paragraphs, the way a person would have written them in one go.
QUEUE_JOIN = "\n\n"


class MessageQueue:
    def __init__(self) -> None:
        self._items: list[str] = []

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, text: str) -> None:
        if text.strip():
            self._items.append(text)

    def pop_last(self) -> str | None:
        """The newest queued message, taken out (cancel, or recall it for editing)."""
        return self._items.pop() if self._items else None

    def take_all(self) -> str:
        """Everything queued as the one message to send (or give back); the queue is emptied."""
        text, self._items = QUEUE_JOIN.join(self._items), []
        return text
