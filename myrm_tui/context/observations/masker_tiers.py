"""The observation masker's three tiers: protected (kept), standard (masked to a stub), ephemeral.

Comis's engine document (Pipeline layer 7) masks old tool outputs in three tiers. Standard is the
planner's masking (`stages/compress.py:_Planner.mask`: a one-line stub naming the call, its size,
its first line and its handle). This module adds the other two:

- protected: tools whose outputs are never masked, filtered or superseded: `session_note` always,
  plus the user's `protected_tools` setting (validated here);
- ephemeral: outputs of pure status and listing calls (`git status`, `ls`, `glob`, ...) that are
  stale once a few turns old and cheap to run again. Once older than `EPHEMERAL_KEEP_TURNS` user
  turns they are dropped down to their handle alone, before any standard output is masked. Not
  removed as a message: a provider rejects a tool call without its result, so the result stays
  as the handle (about a dozen tokens), and the full text is one `ctx_expand` away in the store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from myrm_tui.context.filters.kept_facts import kept_facts
from myrm_tui.context.observations.fact_context import FactContext
from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import FILTERED, MASKED, VERBATIM, msg_handle
from myrm_tui.settings.schema import TOOL_NAME
from myrm_tui.store.records import MessageRecord

PROTECTED, STANDARD, EPHEMERAL = "protected", "standard", "ephemeral"
# Never masked whatever the setting says: the model's own notes are what it keeps on purpose.
ALWAYS_PROTECTED = frozenset({"session_note"})
# Tools whose every output is a listing (a file list is stale after the next write, and cheap).
EPHEMERAL_TOOLS = frozenset({"glob"})
# Shell tools whose command decides the tier.
SHELL_TOOLS = frozenset({"bash"})
# A single status or listing command: no pipe, redirect, chain or substitution (those make it
# something else, e.g. `ls | xargs rm`).
_EPHEMERAL_COMMAND = re.compile(
    r"^\s*(?:ls|pwd|tree|date|whoami|uptime|df|du|ps|"
    r"git\s+(?:status|branch|log|stash\s+list|remote))\b[^|;&<>`$\n]*$"
)
# The seed's `ephemeralKeepWindow`: an ephemeral output stays whole for this many user turns.
EPHEMERAL_KEEP_TURNS = 10


def parse_protected_tools(value: str) -> frozenset[str]:
    """The `protected_tools` setting (comma- or space-separated tool names) as a set, always with
    `ALWAYS_PROTECTED`. ValueError names the first entry that is not a tool name."""
    names = [part for part in re.split(r"[,\s]+", value.strip()) if part]
    for name in names:
        if not re.fullmatch(TOOL_NAME, name):
            raise ValueError(f"protected_tools: {name!r} is not a tool name (letters, digits, _ - .)")
    return ALWAYS_PROTECTED | frozenset(names)


def tool_tier(name: str, arguments: Mapping[str, Any], protected_tools: Iterable[str] = ALWAYS_PROTECTED) -> str:
    """The masker tier of an output of `name` called with `arguments`."""
    if name in ALWAYS_PROTECTED or name in protected_tools:
        return PROTECTED
    if name in EPHEMERAL_TOOLS:
        return EPHEMERAL
    command = arguments.get("command")
    if name in SHELL_TOOLS and isinstance(command, str) and _EPHEMERAL_COMMAND.match(command):
        return EPHEMERAL
    return STANDARD


def ephemeral_text(handle: str) -> str:
    """All an ephemeral output keeps once dropped: its handle (the call itself names the rest)."""
    return f'[stale status output dropped; ctx_expand("{handle}")]'


class _Planner(Protocol):
    """What `drop_ephemeral` needs of the compaction planner (stages/compress.py:_Planner)."""

    @property
    def inp(self) -> Any: ...

    @property
    def facts(self) -> FactContext: ...

    def done(self) -> bool: ...

    def view_kind(self, i: int) -> str: ...

    def young(self, i: int) -> bool: ...

    def tool_rows(self) -> Iterable[int]: ...

    def call_of(self, i: int) -> tuple[str, dict[str, Any]]: ...

    def tool_message(self, i: int, content: str) -> dict[str, Any]: ...

    def apply(
        self, i: int, kind: str, message: dict[str, Any] | None, op: str, reason: str, handle: str = ""
    ) -> None: ...


def user_turns_after(rows: Sequence[MessageRecord], start: int) -> dict[int, int]:
    """For each row index from `start` on, how many user messages follow it."""
    counts: dict[int, int] = {}
    seen = 0
    for i in range(len(rows) - 1, start - 1, -1):
        counts[i] = seen
        if rows[i].role == "user":
            seen += 1
    return counts


def drop_ephemeral(planner: _Planner, protected_tools: Iterable[str], keep_turns: int = EPHEMERAL_KEEP_TURNS) -> None:
    """The masker's first pass: ephemeral outputs at least `keep_turns` user turns old, oldest
    first, down to their handle (verbatim or filtered ones; a stub or pointer is already small),
    outside the age windows (`_Planner.young`)."""
    rows = planner.inp.rows
    candidates = list(planner.tool_rows())
    if not candidates:
        return
    age = user_turns_after(rows, candidates[0])
    for i in candidates:
        if planner.done():
            return
        if age[i] < keep_turns or planner.view_kind(i) not in (VERBATIM, FILTERED) or planner.young(i):
            continue
        name, args = planner.call_of(i)
        if tool_tier(name, args, protected_tools) != EPHEMERAL:
            continue
        handle = msg_handle(rows[i].id)
        # A line a later message named (`the quota-gate-shim entry`) stays with the handle.
        content = compaction_text(rows[i].message)
        text = "\n".join([ephemeral_text(handle), *kept_facts("", planner.facts.named(i, content))])
        planner.apply(i, MASKED, planner.tool_message(i, text), "ephemeral", "stale status output")
