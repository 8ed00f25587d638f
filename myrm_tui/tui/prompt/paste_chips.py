"""Big pastes as `[pasted 312 lines]` chips in the prompt (pure; no Textual).

The prompt keeps the chip's label as text (so the cursor, undo and editing work as on any text)
and this table keeps what each label stands for. Sending, $EDITOR and "expand" replace every
label still in the draft with its paste; a label the user broke by editing is plain text again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from myrm_tui.tui.constants import PASTE_CHIP_LINES


def line_count(text: str) -> int:
    return len(text.splitlines()) or 1


def is_big(text: str, limit: int = PASTE_CHIP_LINES) -> bool:
    return line_count(text) > limit


@dataclass
class PasteChips:
    pastes: dict[str, str] = field(default_factory=dict)  # label → the pasted text

    def add(self, text: str) -> str:
        """A new chip for `text`; its label is unique in the draft (`#2` for a second paste of
        the same size), so expanding one never expands another."""
        base = f"pasted {line_count(text)} lines"
        label, number = f"[{base}]", 1
        while label in self.pastes:
            number += 1
            label = f"[{base} #{number}]"
        self.pastes[label] = text
        return label

    def expand(self, draft: str) -> str:
        for label, text in self.pastes.items():
            draft = draft.replace(label, text)
        return draft

    def retain(self, draft: str) -> None:
        """Forget the chips no longer in `draft` (sent, deleted, or expanded)."""
        self.pastes = {label: text for label, text in self.pastes.items() if label in draft}

    def __bool__(self) -> bool:
        return bool(self.pastes)
