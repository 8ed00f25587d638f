"""pip / uv pip install.

Kept: errors (with pip's `×`/`│`/`╰─>` boxes), warnings, and what got installed. Dropped with
per-kind counts: Collecting, Downloading and its progress bars, Using cached, Requirement
already satisfied, wheel-building chatter, the pip self-update notice.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Piece, Tier
from myrm_tui.context.filters.patterns import IMPORTANT, PROGRESS

_SPAM = (
    (re.compile(r"^\s*Collecting "), "Collecting"),
    (re.compile(r"^\s*Downloading "), "Downloading"),
    (re.compile(r"^\s*Using cached "), "Using cached"),
    (re.compile(r"^\s*Requirement already satisfied"), "Requirement already satisfied"),
    (
        re.compile(
            r"^\s*(?:Obtaining|Processing|Looking in (?:indexes|links)|Building wheels? for|"
            r"Created wheel for|Stored in directory|Installing build dependencies|Getting requirements|"
            r"Preparing (?:editable )?metadata|Checking if build backend|Building editable|"
            r"Installing backend dependencies|Attempting uninstall|Found existing installation|"
            r"Uninstalling |Successfully uninstalled|Resolved \d|Prepared \d|Audited \d|Downloaded \d|"
            r"Building |Built )"
        ),
        "build steps",
    ),
    (re.compile(r"^\[notice\]"), "notice"),
)
_BOILERPLATE = re.compile(r"^\s*(?:note|hint): ")  # pip's fixed advice lines under an error
_IMPORTANT = re.compile(
    r"^\s*(?:ERROR|error|×|│|╰─>|Successfully installed|Successfully built|"
    r"Installed \d|Uninstalled \d|Would install|[+-] \S+==)"
)
_WARNING = re.compile(r"^\s*(?:WARNING|DEPRECATION|warning)")
_MARK = re.compile(
    r"Collecting |Requirement already|Successfully|ERROR|Installing collected|Would install|"
    r"Resolved \d|Installed \d|Processing |Obtaining "
)


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(_MARK.search(ln) for ln in lines[:200] + lines[-100:]):
        return None
    ex = Excerpt("pip")
    drop = Dropper(ex, Tier.CONTEXT)
    for i, line in enumerate(lines):
        if _BOILERPLATE.match(line):
            drop.keep(line, Tier.CONTEXT, i)
            continue
        if _IMPORTANT.match(line):
            drop.keep(line, Tier.IMPORTANT, i)
            continue
        if _WARNING.match(line):
            drop.keep(line, Tier.STRUCTURE, i)
            continue
        if IMPORTANT.search(line):  # e.g. the build backend's own error inside pip's box
            drop.keep(line, Tier.IMPORTANT, i)
            continue
        for pattern, name in _SPAM:
            if pattern.match(line):
                drop.drop(i, name)
                break
        else:
            if not line.strip():
                drop.drop(i, "")
            elif PROGRESS.search(line):
                drop.drop(i, "progress")
            else:
                drop.keep(line, Tier.CONTEXT if line.startswith("Installing collected") else Tier.BULK, i)
    drop.flush()
    counts = drop.totals
    parts = [f"{name} ×{counts[name]:,}" for _, name in _SPAM if counts.get(name)]
    if parts:
        ex.pieces.insert(0, _info(ex, "dropped " + ", ".join(parts)))
    return ex


def _info(ex: Excerpt, what: str) -> Piece:
    ex.note(what, Tier.STRUCTURE)
    return ex.pieces.pop()
