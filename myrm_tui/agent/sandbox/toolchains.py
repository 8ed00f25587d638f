"""Toolchains that live under /tmp stay visible in the sandbox's private /tmp (read-only).

Why: the sandbox mounts an empty tmpfs over /tmp (the host's temp files and the sockets there
are none of a command's business), which also hid an interpreter, a virtualenv or a checkout
that lives there (a repository cloned under /tmp, a CI cache): `python -m pytest` then failed
inside for a reason that has nothing to do with the command. The running interpreter (prefix,
base prefix, the folders on its import path) and the PATH entries under /tmp are bound back at
the same place, read-only; the workspace itself is bound writable after them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

TMP = Path("/tmp")


def _candidates(env: Mapping[str, str]) -> Iterable[str]:
    yield sys.prefix
    yield sys.base_prefix
    yield sys.exec_prefix
    yield os.path.dirname(sys.executable)
    yield os.path.dirname(os.path.realpath(sys.executable))
    yield from (p for p in sys.path if p)
    for entry in env.get("PATH", "").split(os.pathsep):
        # A `bin` folder belongs to a prefix that holds the rest of the toolchain: a venv's
        # pyvenv.cfg and site-packages, node's lib/node_modules, a Go root.
        yield os.path.dirname(entry.rstrip("/")) if os.path.basename(entry.rstrip("/")) in ("bin", "sbin") else entry
    yield env.get("VIRTUAL_ENV", "")


def tmp_toolchains(workspace: Path, env: Mapping[str, str]) -> tuple[Path, ...]:
    """Existing folders under /tmp that the command's interpreter and PATH need, outermost
    first, without those inside the workspace (already bound, writable) or inside another."""
    root = workspace.resolve()
    found: set[Path] = set()
    for text in _candidates(env):
        if not text or not os.path.isabs(text):
            continue
        for path in {Path(os.path.normpath(text)), Path(os.path.realpath(text))}:
            if path != TMP and path.is_relative_to(TMP) and path.is_dir() and not path.is_relative_to(root):
                found.add(path)
    ordered = sorted(found, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in ordered:
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return tuple(kept)
