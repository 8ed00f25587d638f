"""pytest and unittest output.

What matters in a test run: which tests failed, the assertion and the last frames of each
traceback (the first frames are the runner), the short summary and the final count line.
Passing tests, dots, the platform/rootdir/plugins preamble and per-test progress go.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier

_SECTION = re.compile(r"^(?:=|_|-){3,} ?(.*?) ?(?:=|_|-){3,}$")
_SUMMARY = re.compile(
    r"^=*\s*(?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)"
    r"|no tests ran)\b.*\bin [\d.]+s"
)
_PREAMBLE = re.compile(
    r"^(?:platform |rootdir:|configfile:|inifile:|plugins:|cachedir:|cache dir|"
    r"Using --randomly-seed|hypothesis profile|asyncio: |benchmark: |timeout: )"
)
_VERBOSE_RESULT = re.compile(r"::\S*.*? (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_DOTS = re.compile(r"^\S+\.py [.sxXFE]+\s*(?:\[\s*\d+%\])?\s*$|^[.sxXFE]+\s*(?:\[\s*\d+%\])?\s*$")
_LOCATION = re.compile(r"^\S+\.py:\d+: \w+")
_ERROR_WORD = re.compile(r"\b(?:Error|error|FAIL|Exception)\b")


def compress_pytest(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(
        _SUMMARY.match(ln) or "test session starts" in ln or _VERBOSE_RESULT.search(ln)
        for ln in lines[-200:] + lines[:50]
    ):
        return None
    ex = Excerpt("pytest")
    drop = Dropper(ex, Tier.CONTEXT)
    section = ""
    block: list[int] = []  # line indices of the current failure block

    def flush_block() -> None:
        # Inside one failure: `E` lines, `>` lines and `file.py:N: Error` lines are the cause;
        # the last frames give context; the top frames are kept only if space allows.
        n = len(block)
        for pos, j in enumerate(block):
            text = lines[j]
            if text.startswith(("E ", ">")) or _LOCATION.match(text):
                tier = Tier.IMPORTANT
            elif pos >= n - C.FAILURE_TAIL_LINES:
                tier = Tier.CONTEXT
            else:
                tier = Tier.BULK
            drop.keep(text, tier, j, rank=n - pos)
        block.clear()

    for i, line in enumerate(lines):
        # A heading starts with one of its rule characters; a verbose result holds "::" (the
        # substring tests skip the regex on most lines of a long run).
        heading = _SECTION.match(line) if line[:1] in ("=", "_", "-") else None
        if heading and (line.startswith("=") or section in {"FAILURES", "ERRORS"}):
            flush_block()
            title = heading.group(1)
            if line.startswith("="):
                section = title.upper() if title.upper() in {"FAILURES", "ERRORS"} else title.lower()
            if _SUMMARY.match(line):
                drop.keep(line, Tier.IMPORTANT, i)
            else:
                tier = {"=": Tier.STRUCTURE, "_": Tier.IMPORTANT}.get(line[0], Tier.CONTEXT)
                drop.keep(line, tier, i)
            continue
        if section in {"FAILURES", "ERRORS"}:
            block.append(i)
        elif _SUMMARY.match(line) or section == "short test summary info" or line.startswith(("FAILED ", "ERROR ")):
            drop.keep(line, Tier.IMPORTANT, i)
        elif _PREAMBLE.match(line) or not line.strip():
            drop.drop(i, "preamble" if line.strip() else "")
        elif "::" in line and (m := _VERBOSE_RESULT.search(line)) is not None:
            if m.group(1) in {"FAILED", "ERROR", "XPASS"}:
                drop.keep(line, Tier.IMPORTANT, i)
            else:
                drop.drop(i, m.group(1))
        elif _DOTS.match(line):
            drop.drop(i, "progress")
        elif line.startswith(("collected ", "collecting ")):
            drop.keep(line, Tier.STRUCTURE, i)
        elif "warnings summary" in section:
            drop.keep(line, Tier.BULK, i)
        else:
            drop.keep(line, Tier.IMPORTANT if _ERROR_WORD.search(line) else Tier.CONTEXT, i)
    flush_block()
    drop.flush()
    return ex


_UT_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): \S")
_UT_RESULT = re.compile(r" \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$")
_UT_FINAL = re.compile(r"^(?:Ran \d+ tests? in |OK\b|FAILED \()")


def compress_unittest(lines: list[str], cmd: Command) -> Excerpt | None:
    if not any(_UT_FINAL.match(ln) for ln in lines[-50:]):
        return None
    ex = Excerpt("unittest")
    drop = Dropper(ex, Tier.CONTEXT)
    block: list[int] = []

    def flush_block() -> None:
        n = len(block)
        for pos, j in enumerate(block):
            text = lines[j]
            last = pos >= n - 3 and text.strip() and not text.startswith("-" * 10)
            if _UT_HEADER.match(text) or (last and not text.startswith(" ")):
                tier = Tier.IMPORTANT
            elif pos >= n - C.FAILURE_TAIL_LINES:
                tier = Tier.CONTEXT
            else:
                tier = Tier.BULK
            drop.keep(text, tier, j, rank=n - pos)
        block.clear()

    in_failure = False
    for i, line in enumerate(lines):
        if line.startswith("=" * 20):
            flush_block()
            in_failure = True
            drop.drop(i, "separator")
        elif _UT_FINAL.match(line):
            flush_block()
            in_failure = False
            drop.keep(line, Tier.IMPORTANT, i)
        elif in_failure:
            if line.startswith("-" * 20) and (not block or not _UT_HEADER.match(lines[block[-1]])):
                flush_block()
                in_failure = False
                drop.drop(i, "separator")
            elif not line.startswith("-" * 20):
                block.append(i)
        elif (m := _UT_RESULT.search(line)) is not None:
            if m.group(1) in {"FAIL", "ERROR", "unexpected success"}:
                drop.keep(line, Tier.IMPORTANT, i)
            else:
                drop.drop(i, "passed" if m.group(1) == "ok" else m.group(1))
        elif re.fullmatch(r"[.sxFEu]+", line.strip() or "-"):
            drop.keep(line, Tier.CONTEXT, i) if {"F", "E"} & set(line) else drop.drop(i, "progress")
        elif not line.strip() or line.startswith("-" * 20):
            drop.drop(i, "")
        else:
            drop.keep(line, Tier.CONTEXT, i)
    flush_block()
    drop.flush()
    return ex
