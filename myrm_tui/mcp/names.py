"""The names MCP tools have in the prompt: `mcp__<server>__<tool>`, Claude Code's convention.

Why that shape: users moving from Claude Code already have permission rules written against it
(`mcp__github`, `mcp__github__create_issue`). Why sanitised and capped: providers accept function
names matching `^[A-Za-z0-9_-]{1,64}$` (OpenAI and Anthropic both); a server called "my server"
or a 70-character tool name must still produce a valid, stable name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
SEPARATOR = "__"
# The providers' limit on a function name's length.
MAX_NAME_CHARS = 64
# Hex digits of the hash that makes a shortened or colliding name unique (collisions among a few
# hundred tools are then a 1 in 4 billion event, and the suffix still reads as a suffix).
_HASH_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def clean(part: str) -> str:
    """A server or tool name with every character a provider would refuse replaced by `_`."""
    return _UNSAFE.sub("_", part) or "_"


def _hashed(name: str, server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]
    return f"{name[: MAX_NAME_CHARS - _HASH_CHARS - 1]}_{digest}"


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{clean(server)}{SEPARATOR}{clean(tool)}"
    return name if len(name) <= MAX_NAME_CHARS else _hashed(name, server, tool)


def server_prefix(server: str) -> str:
    """`mcp__<server>`: what a per-server permission rule names."""
    return f"{PREFIX}{clean(server)}"


def unique_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(server, tool) → prompt name, unique across the set. Two pairs that clean to the same name
    (`a.b` and `a_b`) both get a hash suffix, so neither depends on which was listed first."""
    pairs = sorted(set(pairs))
    plain = {pair: tool_name(*pair) for pair in pairs}
    counts: dict[str, int] = {}
    for name in plain.values():
        counts[name] = counts.get(name, 0) + 1
    return {pair: (name if counts[name] == 1 else _hashed(name, *pair)) for pair, name in plain.items()}
