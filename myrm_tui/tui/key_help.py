"""The key table of F1: one row per key, in the notation the README and the welcome use.

Why one row per key: several bindings share a key in different places (Esc interrupts a turn,
closes the popup, leaves an approval's reason), and a table listing Esc four times in four
notations reads as four different keys. Here every key appears once, with everything it does;
keys that do exactly the same thing (the three newline keys) share a row. Pure: the chat
screen collects the bindings (keymap applied) and hands them over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from myrm_tui.tui.formatting import pretty_key


@dataclass(frozen=True)
class BoundKey:
    binding_id: str  # e.g. "chat.fork": the name [keymap] rebinds it by
    description: str
    key: str  # one Textual key name, e.g. "ctrl+n"


@dataclass(frozen=True)
class KeyRow:
    keys: tuple[str, ...]  # shown names, each once in the whole table
    actions: tuple[tuple[str, str], ...]  # (description, binding id), in binding order


def shown_key(key: str) -> str:
    """A letter as typed (`y`, as the approval block and the README write it: `Y` would read as
    Shift+Y); anything else as pretty_key writes it (Ctrl+O, F2, Enter)."""
    return key if len(key) == 1 else pretty_key(key)


def key_rows(bound: Iterable[BoundKey]) -> list[KeyRow]:
    """Bindings grouped by shown key, then keys with the same actions merged, sorted by key."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for item in bound:
        actions = by_key.setdefault(shown_key(item.key), [])
        if (item.description, item.binding_id) not in actions:
            actions.append((item.description, item.binding_id))
    merged: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for key, actions in by_key.items():
        merged.setdefault(tuple(actions), []).append(key)
    rows = [KeyRow(tuple(keys), actions) for actions, keys in merged.items()]
    return sorted(rows, key=lambda row: _sort_key(row.keys[0]))


def _sort_key(shown: str) -> tuple[int, int, str]:
    """Function keys first in number order, then keys with modifiers, then plain keys."""
    *mods, last = shown.split("+")
    if not mods and last[:1] == "F" and last[1:].isdigit():
        return (0, int(last[1:]), "")
    return (1 if mods else 2, 0, shown.casefold())


# Bindings that only answer in one place say where, so a shared key's row stays readable.
CONTEXTS = {"approval": "in an approval", "tool": "on a tool block"}


def _in_context(description: str, binding_id: str) -> str:
    prefix = binding_id.split(".", 1)[0]
    where = CONTEXTS.get(prefix)
    return f"{description} ({where})" if where and prefix not in description.lower() else description


def key_table(rows: Iterable[KeyRow]) -> list[str]:
    """Markdown table lines: key(s) | what it does | id(s) to rebind it with."""
    lines = ["| key | what it does | id |", "|---|---|---|"]
    for row in rows:
        keys = " / ".join(f"`{key}`" for key in row.keys)
        what = " · ".join(
            _in_context(description, binding_id).replace("|", "/") for description, binding_id in row.actions
        )
        ids = ", ".join(f"`{binding_id}`" for _, binding_id in row.actions)
        lines.append(f"| {keys} | {what} | {ids} |")
    return lines
