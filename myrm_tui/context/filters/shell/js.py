"""npm / yarn / pnpm / bun: installs and test runs (jest, vitest, node --test).

Installs: errors and the final summary (`added N packages`, audit, vulnerabilities) matter;
deprecation warnings are counted with a few examples; fetch/progress lines go.
Tests: failing tests with their assertion and code frame, and the totals, matter; `PASS` and
`✓` lines go.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier

_INSTALL_SUBS = {
    "install",
    "i",
    "ci",
    "add",
    "update",
    "up",
    "upgrade",
    "remove",
    "rm",
    "uninstall",
    "audit",
    "dedupe",
    "prune",
    "link",
    "",
}
_ERROR = re.compile(r"^(?:npm (?:error|ERR!)|ERR_PNPM|error |yarn error|\s*ERR!|.*\berror\b.*:)", re.IGNORECASE)
_DEPRECATED = re.compile(
    r"^(?:npm warn deprecated|npm WARN deprecated|warning .*deprecated|"
    r"\s*WARN\s+deprecated|.*\bdeprecated\b)",
    re.IGNORECASE,
)
_WARN = re.compile(r"^(?:npm warn|npm WARN|warning |\s*WARN\b)", re.IGNORECASE)
_SUMMARY = re.compile(
    r"^(?:added \d|removed \d|changed \d|up to date|audited \d|found \d+ vulnerabilit|"
    r"\d+ (?:low|moderate|high|critical)|\d+ packages? (?:are|is) looking for funding|"
    r"Packages: [+-]|Done in |success |✨\s*Done|Lockfile is up to date|"
    r"Already up to date|\+ \S+ \d|dependencies:|devDependencies:|bun install|"
    r"\d+ packages? installed|Saved lockfile|Checked \d+ installs)"
)
_PROGRESS = re.compile(
    r"^(?:Progress: resolved|npm (?:http|timing|sill|verb|info)|\[\d+/\d+\] |info |"
    r"(?:Resolving|Fetching|Linking|Building) (?:packages|fresh packages|dependencies)|"
    r"[+\-]{5,}\s*$|\s*[⠁-⣿]|reify:|idealTree|Downloading |Downloaded )"
)

_TEST_MARK = re.compile(
    r"^\s*(?:Tests?:|Test Suites:|Test Files|# (?:tests|pass|fail)\b|ℹ (?:tests|pass|fail)\b|"
    r"(?:not )?ok \d+|✓|✔|×|✖|✗|PASS |FAIL |● )"
)
_TEST_PASS = re.compile(r"^\s*(?:PASS |✓ |✔ |√ |ok \d+ )")
_TEST_FAIL = re.compile(
    r"^\s*(?:FAIL |× |✖ |✗ |not ok \d+|● |AssertionError|Error:|Expected|Received|"
    r"expected|received|\+ |- |>\s*\d+ \||at .*:\d+:\d+\)?$)"
)
_TEST_SUMMARY = re.compile(
    r"^\s*(?:Tests?:|Test Suites:|Test Files|Snapshots:|Time:|Duration|Ran all test|"
    r"# (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)|"
    r"ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)|"
    r"\d+ (?:passing|failing|pending)|npm (?:error|ERR!) (?:Test failed|code|command))"
)


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    sample = lines[:300] + lines[-300:]
    looks_like_tests = (
        cmd.tool == "jest"
        or cmd.sub in {"test", "t", "tst", "run", "exec"}
        or sum(1 for ln in sample if _TEST_MARK.match(ln)) >= 3
    )
    if looks_like_tests and any(_TEST_SUMMARY.match(ln) or _TEST_MARK.match(ln) for ln in sample):
        return _tests(lines)
    if cmd.sub in _INSTALL_SUBS or cmd.tool in {"yarn", "bun"}:
        return _install(lines)
    return None


def _install(lines: list[str]) -> Excerpt | None:
    ex = Excerpt("package-install")
    drop = Dropper(ex, Tier.CONTEXT)
    deprecated = 0
    for i, line in enumerate(lines):
        if not line.strip():
            drop.drop(i, "")
        elif _SUMMARY.match(line) or _ERROR.match(line):
            drop.keep(line, Tier.IMPORTANT, i)
        elif _DEPRECATED.match(line):
            deprecated += 1
            # a few examples are enough to act on; the count says how many there are
            if deprecated <= 3:
                drop.keep(line, Tier.CONTEXT, i, rank=deprecated)
            else:
                drop.drop(i, "deprecated")
        elif _WARN.match(line):
            drop.keep(line, Tier.STRUCTURE, i)
        elif _PROGRESS.match(line):
            drop.drop(i, "progress")
        else:
            drop.keep(line, Tier.BULK, i)
    drop.flush()
    if deprecated:
        ex.note(f"{deprecated:,} deprecation warnings", Tier.IMPORTANT)
    return ex if ex.pieces else None


def _tests(lines: list[str]) -> Excerpt:
    ex = Excerpt("js-test")
    drop = Dropper(ex, Tier.CONTEXT)
    in_failure = 0  # lines since the last failing-test marker
    in_pass_yaml = False  # TAP: the `---`…`...` block under a passing `ok N` line
    for i, line in enumerate(lines):
        if in_pass_yaml:
            in_pass_yaml = line.strip() != "..."
            drop.drop(i, "passed")
            continue
        if re.match(r"^\s*# Subtest: ", line):
            drop.drop(i, "subtest header")
            continue
        if re.match(r"^\s*ok \d+ ", line):
            in_failure = 0
            in_pass_yaml = i + 1 < len(lines) and lines[i + 1].strip() == "---"
            drop.drop(i, "passed")
            continue
        if _TEST_SUMMARY.match(line):
            in_failure = 0
            drop.keep(line, Tier.IMPORTANT, i)
        elif _TEST_PASS.match(line):
            in_failure = 0
            drop.drop(i, "passed")
        elif _TEST_FAIL.match(line) or re.search(r"\b(?:Error|failed|FAIL)\b", line):
            if re.match(r"^\s*(?:FAIL |× |✖ |✗ |not ok |● )", line):
                in_failure = 1
            drop.keep(line, Tier.IMPORTANT, i)
        elif in_failure and line.strip():
            in_failure += 1
            drop.keep(line, Tier.CONTEXT if in_failure < 40 else Tier.BULK, i, rank=in_failure)
        elif not line.strip():
            drop.drop(i, "")
        else:
            drop.keep(line, Tier.BULK, i)
    drop.flush()
    return ex
