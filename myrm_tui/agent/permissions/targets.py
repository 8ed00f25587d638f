"""File paths and web hosts against rule patterns (`Edit(src/**)`, `WebFetch(domain:*.python.org)`).

Paths are compared resolved, so a symlink cannot dress one path up as another; hosts lowercased
without a trailing dot (see rules for the grammar).
"""

from __future__ import annotations

import re
from pathlib import Path

from myrm_tui.settings.sections.permission_syntax import Rule


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        for ch in part:
            out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        if not last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def path_matches(rule: Rule, path: Path, workspace: Path) -> bool:
    """Whether a resolved path falls under a path rule's glob."""
    pattern = rule.pattern
    if pattern is None:
        return True
    if pattern.startswith("~/"):
        pattern = str(Path.home()) + pattern[1:]
    if pattern.startswith("/"):
        base = Path(pattern.split("*", 1)[0].split("?", 1)[0] or "/")
        resolved_root = _resolved_prefix(base)
        target = path.as_posix()
        if resolved_root != base:  # /tmp -> /private/tmp: compare in resolved form
            pattern = resolved_root.as_posix() + pattern[len(base.as_posix()) :]
        return _glob_regex(pattern).fullmatch(target) is not None
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return False
    return _glob_regex(pattern).fullmatch(relative.as_posix()) is not None


def _resolved_prefix(base: Path) -> Path:
    try:
        return base.resolve(strict=False)
    except (OSError, RuntimeError):
        return base


def url_host(url: str) -> str | None:
    """The host a URL names (lowercased, no trailing dot), or None when it names none."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def host_matches(rule: Rule, host: str | None) -> bool:
    if rule.pattern is None:
        return True
    if not host:
        return False
    name = rule.pattern.removeprefix("domain:")
    if name.startswith("*."):
        return host.endswith(name[1:])
    return host == name
