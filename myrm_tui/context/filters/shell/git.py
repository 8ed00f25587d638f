"""git status / diff / show / log / network commands.

What a developer reads: for status, the branch line, each section and its files (hints like
`(use "git add <file>...")` are noise); for a diff, which files changed, the hunk headers and
the changed lines (index lines and unchanged context go first when space is short, and a
per-file stat summary says what was cut); for a log, each commit's hash and subject; for
push/pull/fetch/clone, everything except the object-counting progress.
"""

from __future__ import annotations

import re

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Piece, Tier

_STATUS_HINT = re.compile(r'^\s*\(use "git |^\s*\(commit or discard|^\s*\(fix conflicts|^\s*\(all conflicts')
_STATUS_SECTION = re.compile(
    r"^(Changes to be committed|Changes not staged for commit|Untracked files|"
    r"Unmerged paths|Ignored files):\s*$"
)
_STATUS_BRANCH = re.compile(
    r"^(On branch |HEAD detached |Your branch |nothing to commit|nothing added|"
    r"no changes added|You have unmerged|All conflicts fixed|You are currently|"
    r"rebase in progress|interactive rebase)"
)
_PORCELAIN = re.compile(r"^(?:[ MADRCU?!]{2}) \S|^## ")
_PROGRESS = re.compile(
    r"^(?:remote: )?(?:Enumerating|Counting|Compressing|Receiving|Resolving|Writing|"
    r"Unpacking|Total|Delta compression|Updating files|Checking out files)\b"
)


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    sub = cmd.sub
    if sub == "status":
        return _status(lines)
    if sub in {"diff", "show"} or any(ln.startswith("diff --git ") for ln in lines[:2000]):
        return _diff(lines, sub)
    if sub in {"log", "reflog", "shortlog"}:
        return _log(lines)
    if sub in {
        "push",
        "pull",
        "fetch",
        "clone",
        "checkout",
        "switch",
        "merge",
        "rebase",
        "commit",
        "add",
        "gc",
        "submodule",
        "cherry-pick",
        "am",
        "stash",
    }:
        return _operation(lines)
    return None


def _status(lines: list[str]) -> Excerpt | None:
    ex = Excerpt("git-status")
    if sum(1 for ln in lines[:50] if _PORCELAIN.match(ln)) >= min(3, len(lines)):
        return _porcelain(lines)
    if not any(_STATUS_SECTION.match(ln) or _STATUS_BRANCH.match(ln) for ln in lines):
        return None
    in_section = 0
    counts: dict[str, int] = {}
    section = ""
    for i, line in enumerate(lines):
        if _STATUS_HINT.match(line) or not line.strip():
            continue  # hints and blank lines carry nothing
        if _STATUS_SECTION.match(line):
            section = line.rstrip(":")
            in_section = 0
            ex.keep(line, Tier.STRUCTURE, line=i)
        elif _STATUS_BRANCH.match(line) or "both modified:" in line or "deleted by" in line:
            ex.keep(line, Tier.IMPORTANT, line=i)
        else:
            in_section += 1
            counts[section] = counts.get(section, 0) + 1
            # rank: the first files of every section before the 100th file of any one
            ex.keep(line, Tier.CONTEXT if in_section <= C.LISTING_PER_DIR else Tier.BULK, rank=in_section, line=i)
    if counts:
        ex.pieces.insert(0, _note(ex, "files: " + ", ".join(f"{k or 'other'} {v:,}" for k, v in counts.items())))
    return ex


def _porcelain(lines: list[str]) -> Excerpt:
    ex = Excerpt("git-status")
    counts: dict[str, int] = {}
    for i, line in enumerate(lines):
        if line.startswith("## "):
            ex.keep(line, Tier.IMPORTANT, line=i)
            continue
        code = line[:2].strip() or "?"
        counts[code] = counts.get(code, 0) + 1
        tier = Tier.IMPORTANT if "U" in code or code in {"AA", "DD"} else Tier.CONTEXT
        ex.keep(line, tier if counts[code] <= C.LISTING_PER_DIR else Tier.BULK, rank=counts[code], line=i)
    ex.pieces.insert(0, _note(ex, "status codes: " + ", ".join(f"{k} ×{v:,}" for k, v in counts.items())))
    return ex


def _note(ex: Excerpt, what: str) -> Piece:
    ex.note(what, Tier.IMPORTANT)
    return ex.pieces.pop()


def _diff(lines: list[str], sub: str) -> Excerpt | None:
    if not any(ln.startswith(("diff --git ", "--- a/", "+++ b/", "@@ ")) for ln in lines):
        return None
    ex = Excerpt("git-diff")
    drop = Dropper(ex, Tier.BULK)
    stats: list[list] = []  # [name, added, removed]
    in_header = sub == "show"  # `git show` starts with the commit header
    hunk_index = 0
    hunk_in_file = 0
    for i, line in enumerate(lines):
        if line.startswith("diff --git "):
            drop.flush()
            in_header = False
            name = line.split(" b/", 1)[-1] if " b/" in line else line[11:]
            stats.append([name, 0, 0])
            hunk_index = 0
            hunk_in_file = 0
            ex.keep(line, Tier.IMPORTANT, line=i)
        elif line.startswith("commit ") and re.match(r"^commit [0-9a-f]{7,}", line):
            drop.flush()
            in_header = True
            ex.keep(line, Tier.IMPORTANT, line=i)
        elif in_header:
            if not line.strip():
                continue
            if line.startswith(("Author:", "Date:", "Merge:")):
                ex.keep(line, Tier.CONTEXT, line=i)
            else:
                # the commit message: subject first, body as space allows
                ex.keep(line, Tier.STRUCTURE, line=i)
        elif line.startswith("@@"):
            # Rank = (hunk number in its file, change number in its hunk): when space is short
            # every file shows its first hunks before any file shows its tenth.
            drop.flush()
            hunk_index = 0
            hunk_in_file += 1
            ex.keep(line, Tier.CONTEXT, rank=hunk_in_file * 1000 + 1, line=i)
        elif line.startswith(("index ", "--- ", "+++ ", "similarity index", "dissimilarity index")):
            drop.drop(i, "header")
        elif line.startswith(
            (
                "new file mode",
                "deleted file mode",
                "rename from",
                "rename to",
                "old mode",
                "new mode",
                "Binary files",
                "copy from",
                "copy to",
            )
        ):
            ex.keep(line, Tier.STRUCTURE, line=i)
        elif line[:1] in {"+", "-"}:
            drop.flush()
            hunk_index += 1
            if stats:
                stats[-1][1 if line[0] == "+" else 2] += 1
            tier = Tier.CONTEXT if hunk_index <= C.DIFF_HUNK_LINES else Tier.BULK
            ex.keep(line, tier, rank=hunk_in_file * 1000 + hunk_index, line=i)
        elif line.startswith("\\ No newline"):
            drop.drop(i, "no-newline note")
        else:
            # unchanged context: shown only when space allows, nearest the change first
            drop.flush()
            ex.keep(line, Tier.BULK, rank=hunk_in_file * 1000 + hunk_index, line=i)
    drop.flush()
    if len(stats) > 1:
        shown = stats[: C.DIFF_STAT_FILES]
        summary = "; ".join(f"{n} +{a} -{r}" for n, a, r in shown)
        more = f"; and {len(stats) - len(shown):,} more files" if len(stats) > len(shown) else ""
        total_a = sum(s[1] for s in stats)
        total_r = sum(s[2] for s in stats)
        ex.pieces.insert(0, _note(ex, f"{len(stats):,} files changed, +{total_a:,} -{total_r:,}: {summary}{more}"))
    return ex


def _log(lines: list[str]) -> Excerpt | None:
    ex = Excerpt("git-log")
    drop = Dropper(ex, Tier.BULK)
    full = any(re.match(r"^commit [0-9a-f]{7,}", ln) for ln in lines[:5])
    commits = 0
    if full:
        expect_subject = False
        for i, line in enumerate(lines):
            if re.match(r"^commit [0-9a-f]{7,}", line):
                drop.flush()
                commits += 1
                ex.keep(line, Tier.STRUCTURE, rank=commits, line=i)
                expect_subject = True
            elif expect_subject and line.startswith("    ") and line.strip():
                ex.keep(line, Tier.STRUCTURE, rank=commits, line=i)
                expect_subject = False
            else:
                # Author/Date/Merge lines, bodies, `--stat` lines: recallable, rarely needed
                drop.drop(i, "author/date/body")
        drop.flush()
    else:
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            commits += 1 if re.match(r"^[*|\\/ ]*[0-9a-f]{7,40}\b", line) else 0
            ex.keep(line, Tier.STRUCTURE if commits <= C.LOG_MAX_COMMITS else Tier.BULK, rank=i, line=i)
        if not commits:
            return None
    ex.pieces.insert(0, _note(ex, f"{commits:,} commits"))
    return ex


def _operation(lines: list[str]) -> Excerpt:
    ex = Excerpt("git")
    drop = Dropper(ex, Tier.BULK)
    for i, line in enumerate(lines):
        core = line.rsplit("\r", 1)[-1]
        if _PROGRESS.match(core):
            drop.drop(i, "progress")
        elif re.search(r"\b(?:error|fatal|rejected|conflict|abort)", line, re.IGNORECASE):
            drop.keep(line, Tier.IMPORTANT, i)
        elif re.match(
            r"^\[[^\]]+ [0-9a-f]{7,}\]|^\s*\d+ files? changed|^To |^From |^ [+*!-] |^Already up to date", line
        ):
            drop.keep(line, Tier.STRUCTURE, i)
        else:
            drop.keep(line, Tier.BULK, i)
    drop.flush()
    return ex
