"""cargo (build/check/clippy/test/run), make and C/C++ compilers.

Errors are kept with their span (`--> file:line:col`, the code frame, the caret, `= note`);
warnings are counted and shown only as space allows; `Compiling x v1.2` / `Entering directory`
chatter goes; the final verdict (`could not compile`, `test result:`, `make: *** ... Error 2`,
`collect2: error`) is always kept.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier
from myrm_tui.context.filters.patterns import DIAGNOSTIC, IMPORTANT

_CARGO_PROGRESS = re.compile(
    r"^\s*(?:Compiling|Checking|Downloading|Downloaded|Updating|Locking|Adding|"
    r"Blocking|Unpacking|Fresh|Documenting|Packaging|Verifying|Installing|"
    r"Installed|Replacing|Building \[|Fetch \[|Removed)\b"
)
_CARGO_FINAL = re.compile(
    r"^\s*(?:Finished|Running|Executable|Doc-tests)\b|^test result:|^running \d+ tests?|"
    r"^error: (?:could not compile|test failed|aborting)|^(?:warning|error): .*generated \d+"
)
_RUST_DIAG = re.compile(r"^(error|warning)(?:\[\w+\])?: ")
_CARGO_TEST = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored|bench)")


def compress_cargo(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(
        _CARGO_PROGRESS.match(ln) or _RUST_DIAG.match(ln) or _CARGO_FINAL.match(ln) or _CARGO_TEST.match(ln)
        for ln in lines
    ):
        return None
    ex = Excerpt("cargo")
    drop = Dropper(ex, Tier.CONTEXT)
    warnings = errors = 0
    block_tier = None  # tier of the diagnostic block we are in (None = outside)
    block_pos = 0
    in_failures = False
    for i, line in enumerate(lines):
        if _CARGO_PROGRESS.match(line):
            block_tier = None
            drop.drop(i, line.split()[0])
            continue
        if _CARGO_FINAL.match(line):
            block_tier = None
            in_failures = False
            drop.keep(line, Tier.IMPORTANT, i)
            continue
        m = _RUST_DIAG.match(line)
        if m:
            block_pos = 0
            if m.group(1) == "error":
                errors += 1
                block_tier = Tier.CONTEXT
                drop.keep(line, Tier.IMPORTANT, i)
            else:
                warnings += 1
                block_tier = Tier.BULK
                drop.keep(line, Tier.STRUCTURE, i, rank=warnings)
            continue
        t = _CARGO_TEST.match(line)
        if t:
            if t.group(2) == "FAILED":
                drop.keep(line, Tier.IMPORTANT, i)
            else:
                drop.drop(i, f"test {t.group(2)}")
            continue
        if line.startswith(("failures:", "---- ")):
            in_failures = True
            block_tier = None
            drop.keep(line, Tier.IMPORTANT if line.startswith("---- ") else Tier.STRUCTURE, i)
            continue
        if block_tier is not None and line.strip():
            block_pos += 1
            tier = block_tier
            if tier == Tier.CONTEXT and (line.lstrip().startswith("-->") or "^" in line):
                tier = Tier.IMPORTANT  # the location and the caret line of an error
            drop.keep(line, tier if block_pos <= C.DIAGNOSTIC_CONTEXT * 3 else Tier.BULK, i, rank=block_pos)
            continue
        if block_tier is not None and not line.strip():
            block_tier = None
            drop.drop(i, "")
            continue
        if in_failures and line.strip():
            tier = Tier.IMPORTANT if re.search(r"panicked at|assertion|left:|right:|Error", line) else Tier.CONTEXT
            drop.keep(line, tier, i)
        elif not line.strip():
            drop.drop(i, "")
        else:
            drop.keep(line, Tier.IMPORTANT if IMPORTANT.search(line) else Tier.BULK, i)
    drop.flush()
    if warnings or errors:
        ex.note(f"{errors:,} errors, {warnings:,} warnings", Tier.IMPORTANT)
    return ex


_MAKE_NOISE = re.compile(r"^make(?:\[\d+\])?: (?:Entering|Leaving) directory|^make(?:\[\d+\])?: Nothing to be done")
_MAKE_ERROR = re.compile(
    r"^(?:g?make(?:\[\d+\])?: \*\*\*|collect2: |ld: |/usr/bin/ld: |\S*ld(?:\.\w+)?: |"
    r"\d+ (?:warnings? and \d+ )?errors? generated|ninja: build stopped|FAILED: |"
    r"Makefile:\d+: )"
)
_FRAME = re.compile(r"^\s*(?:\d+\s*)?\|")  # gcc/clang code frame `  5 |   x = y;` and `    |   ^~~`
_IN_FUNCTION = re.compile(
    r"^\S[^:]*: (?:In (?:function|member function|constructor|instantiation)|"
    r"At (?:top level|global scope))|^In file included from|^\s+from \S+:\d+"
)


def compress_cc(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(
        DIAGNOSTIC.match(ln)
        or _MAKE_ERROR.match(ln)
        or _MAKE_NOISE.match(ln)
        or ln.startswith(("make", "gcc", "cc ", "g++", "clang"))
        for ln in lines
    ):
        return None
    ex = Excerpt("compiler")
    drop = Dropper(ex, Tier.CONTEXT)
    warnings = errors = 0
    block_tier = None
    block_pos = 0
    for i, line in enumerate(lines):
        d = DIAGNOSTIC.match(line)
        if d:
            sev = d.group("sev")
            block_pos = 0
            if sev in {"error", "fatal error"}:
                errors += 1
                block_tier = Tier.CONTEXT
                drop.keep(line, Tier.IMPORTANT, i)
            elif sev == "warning":
                warnings += 1
                block_tier = Tier.BULK
                drop.keep(line, Tier.STRUCTURE, i, rank=warnings)
            else:  # note/remark belong to the diagnostic above
                drop.keep(line, block_tier if block_tier is not None else Tier.BULK, i)
            continue
        if _MAKE_ERROR.match(line) or "undefined reference to" in line:
            block_tier = None
            drop.keep(line, Tier.IMPORTANT, i)
        elif _MAKE_NOISE.match(line):
            drop.drop(i, "make directory")
        elif _IN_FUNCTION.match(line):
            drop.keep(line, Tier.CONTEXT, i)
        elif block_tier is not None and _FRAME.match(line):
            block_pos += 1
            tier = Tier.IMPORTANT if block_tier == Tier.CONTEXT and "^" in line else block_tier
            drop.keep(line, tier if block_pos <= C.DIAGNOSTIC_CONTEXT else Tier.BULK, i)
        elif not line.strip():
            block_tier = None
            drop.drop(i, "")
        else:
            block_tier = None
            # echoed compile commands and tool chatter: only if space allows
            drop.keep(line, Tier.IMPORTANT if IMPORTANT.search(line) else Tier.BULK, i)
    drop.flush()
    if warnings or errors:
        ex.note(f"{errors:,} errors, {warnings:,} warnings", Tier.IMPORTANT)
    return ex
