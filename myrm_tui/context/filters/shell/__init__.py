"""Per-command output compressors: each knows what a developer reads in one tool's output.

A compressor takes the output lines and the parsed command and returns an `Excerpt` (lines
with keep-priorities and markers for what it dropped), or None when the output does not look
like that tool's (e.g. `command not found`), so the caller falls back to structure sniffing.
"""

from __future__ import annotations

from collections.abc import Callable

from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Excerpt
from myrm_tui.context.filters.shell import build, docker, git, js, listing, pip, search, tests

Compressor = Callable[[list[str], Command], Excerpt | None]


def pick(cmd: Command) -> Compressor | None:
    """The compressor for a detected command, or None."""
    tool = cmd.tool
    if tool == "git":
        return git.compress
    if tool in {"pytest", "tox", "nox"}:
        return tests.compress_pytest
    if tool == "unittest":
        return tests.compress_unittest
    if tool in {"npm", "yarn", "pnpm", "bun", "jest"}:
        return js.compress
    if tool == "pip":
        return pip.compress
    if tool == "cargo":
        return build.compress_cargo
    if tool in {"make", "cc"}:
        return build.compress_cc
    if tool == "docker-build":
        return docker.compress
    if tool in {"ls", "find", "tree", "fd"}:
        return listing.compress
    if tool == "grep":
        return search.compress
    return None
