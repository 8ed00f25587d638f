"""docker build (BuildKit plain progress and the classic builder).

Kept: each step header (`#5 [2/4] RUN ...` / `Step 2/4 : RUN ...`), the output of a failing
step, the error box with the Dockerfile excerpt, `ERROR:` lines and the final image lines.
Dropped with counts: layer download/extract lines, `DONE`/`CACHED` bookkeeping, context
transfer, and the middle of long RUN outputs.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier
from myrm_tui.context.filters.patterns import IMPORTANT

_STEP = re.compile(r"^#\d+ \[[^\]]+\] |^Step \d+/\d+ : ")
_BOOKKEEPING = re.compile(
    r"^#\d+ (?:DONE|CACHED|resolve |sha256:|extracting |transferring |"
    r"\[internal\]|naming to|exporting layers|writing image|unpacking to)|"
    r"^ ---> |^Removing intermediate container|^#\d+\s*$|^#0 building with"
)
_RUN_OUTPUT = re.compile(r"^#(\d+) \d+\.\d+ ")
_ERROR = re.compile(
    r"^(?:#\d+ )?ERROR\b|^ERROR:|^error:|failed to solve|did not complete successfully|"
    r"^The command .* returned a non-zero code"
)
_FINAL = re.compile(r"^(?:#\d+ (?:naming to|writing image)|Successfully (?:built|tagged)|#\d+ exporting to image)")


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(_STEP.match(ln) or _ERROR.match(ln) for ln in lines):
        return None
    ex = Excerpt("docker-build")
    drop = Dropper(ex, Tier.BULK)
    in_box = False  # the `------` error box and the Dockerfile excerpt after it
    run_lines: dict[str, int] = {}
    for i, line in enumerate(lines):
        if _ERROR.match(line):
            drop.keep(line, Tier.IMPORTANT, i)
            in_box = False
        elif line.startswith(("------", " > [")) or re.match(r"^Dockerfile(?:\.\S+)?:\d+", line):
            in_box = True
            drop.keep(line, Tier.IMPORTANT if line.startswith((" > [", "Dockerfile")) else Tier.STRUCTURE, i)
        elif in_box and line.strip():
            drop.keep(line, Tier.IMPORTANT if ">>>" in line or IMPORTANT.search(line) else Tier.CONTEXT, i)
        elif _FINAL.match(line):
            drop.keep(line, Tier.STRUCTURE, i)
        elif _BOOKKEEPING.match(line) or not line.strip():
            drop.drop(i, "layer/bookkeeping" if line.strip() else "")
        elif _STEP.match(line):
            drop.keep(line, Tier.STRUCTURE, i)
        elif (m := _RUN_OUTPUT.match(line)) is not None:
            step = m.group(1)
            run_lines[step] = run_lines.get(step, 0) + 1
            tier = Tier.IMPORTANT if IMPORTANT.search(line) else Tier.BULK
            drop.keep(line, tier, i)
        else:
            drop.keep(line, Tier.IMPORTANT if IMPORTANT.search(line) else Tier.BULK, i)
    drop.flush()
    return ex
