"""`filter_output`: pick the filter for one oversized tool output and fit it to a budget.

Order: a user's declarative filter that matches the call (context/filters/declarative.py) → a
shell compressor for the detected command (bash tool only) → a structural trimmer
for the sniffed content type → generic head + tail + important lines. A compressor that keeps
most of the text (it did not understand the output) yields to a structural trimmer when the
content has a recognisable structure. Whatever is chosen, `excerpt.fit` guarantees the size
and that only real lines and marker lines appear. Pure: no I/O, no clock, no LLM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters import declarative, shell, structure
from myrm_tui.context.filters.detect import detect_command, sniff_content
from myrm_tui.context.filters.excerpt import Excerpt, Piece, Tier, fit
from myrm_tui.context.filters.generic import head_tail
from myrm_tui.context.filters.notable import notable_lines, note_line
from myrm_tui.context.filters.result import FilterResult
from myrm_tui.settings.sections.output_filters import FilterSpec

# Tool names whose `command` argument is a shell line.
SHELL_TOOLS = frozenset({"bash", "shell", "sh", "run_command", "exec"})
# One-off facts of a repetitive output (`notable.py`) an excerpt keeps beside its errors: a
# few lines, so the excerpt stays an excerpt.
NOTABLE_PER_EXCERPT = 3


def filter_output(
    content: str,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    budget_chars: int,
    filters: Sequence[FilterSpec] = (),
) -> FilterResult | None:
    """The excerpt of `content` to show in the prompt, or None when it already fits. `filters`:
    the session's declarative filters (`Settings.output_filters`); none = the shipped ones only."""
    if budget_chars <= 0:
        raise ValueError(
            f"budget_chars must be positive (got {budget_chars}); pass the characters the excerpt may use."
        )
    if len(content) <= budget_chars:
        return None
    lines = content.splitlines()
    excerpt = choose(content, lines, tool=tool, arguments=arguments, filters=filters)
    lift_notable(excerpt, lines)
    fitted = fit(excerpt, budget_chars, len(lines))
    return FilterResult(
        text=fitted.text,
        kind=excerpt.kind,
        original_chars=len(content),
        original_lines=len(lines),
        shown_lines=fitted.shown_lines,
        important_lines=fitted.important_lines,
    )


def lift_notable(excerpt: Excerpt, lines: list[str]) -> None:
    """Show the output's one-off facts (a config override in a build log, the one record with
    an extra field) as notes as important as its errors. Why here, before the fit: the excerpt
    is what the model reads and, once the rows leave the prompt, what its summary is made from;
    a fact in the middle of a long output reached neither and was found only by a search the
    model had to think of. A note, not the bare line, because a summary of the excerpt alone (a
    spilled output) must still recognise it (`notable.noted_facts`). A line the filter already
    ranks important (an error) stays as it is. Notes are kept first among the important lines."""
    for found in notable_lines("\n".join(lines), NOTABLE_PER_EXCERPT):
        # Kept before the tier's other lines (ranked by score, ahead of any position): a log has
        # hundreds of ERROR lines and the fit kept those nearest the head and tail, so a note
        # from the middle was the first cut of a tight excerpt (seen: a build log's one override
        # line cut from its ~760-token excerpt in the 32k tool-storm replay).
        note = Piece(note_line(found), int(Tier.IMPORTANT), is_marker=True, rank=-found.score, key=True)
        shown = next((i for i, p in enumerate(excerpt.pieces) if not p.is_marker and p.first == found.index), None)
        if shown is not None:
            if excerpt.pieces[shown].tier < Tier.IMPORTANT:
                excerpt.pieces[shown] = note
            continue
        at = next((i for i, p in enumerate(excerpt.pieces) if p.first > found.index), len(excerpt.pieces))
        excerpt.pieces.insert(at, note)


def _understood(excerpt: Excerpt, content_chars: int) -> bool:
    """A compressor understood the output when it dropped lines or ranked some above bulk
    without calling nearly everything essential."""
    essential = sum(len(p.text) + 1 for p in excerpt.pieces if p.tier > Tier.BULK and not p.is_marker)
    dropped = any(p.omits for p in excerpt.pieces)
    ranked = any(p.tier > Tier.BULK for p in excerpt.pieces if not p.is_marker)
    return (dropped or ranked) and essential <= C.COMPRESSOR_MAX_KEEP_RATIO * content_chars


def choose(
    content: str, lines: list[str], *, tool: str, arguments: Mapping[str, Any], filters: Sequence[FilterSpec] = ()
) -> Excerpt:
    """The unfitted excerpt from the most specific filter that understands the content: a
    user's declarative filter for this call first (the user knows their tool best)."""
    compressed: Excerpt | None = None
    command = arguments.get("command") if tool in SHELL_TOOLS and isinstance(arguments, Mapping) else None
    user_filter = declarative.pick(tool, command if isinstance(command, str) else None, filters)
    if user_filter is not None:
        return declarative.compress(user_filter, lines)
    if tool in SHELL_TOOLS:
        cmd = detect_command(command) if isinstance(command, str) else None
        compressor = shell.pick(cmd) if cmd is not None else None
        if compressor is not None and cmd is not None:
            compressed = compressor(lines, cmd)
        if compressed is not None and _understood(compressed, len(content)):
            return compressed
    kind = sniff_content(content)
    trimmer = structure.TRIMMERS.get(kind) if kind else None
    if trimmer is not None:
        trimmed = trimmer(content, lines)
        if trimmed is not None:
            return trimmed
    if compressed is not None:
        return compressed  # understood, just not much to drop: its tiers still guide the fit
    return head_tail(lines)
