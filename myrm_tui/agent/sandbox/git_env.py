"""Git inside the sandbox never runs a hook, whatever repository it is pointed at.

Why through the environment: a nested repository (vendored code, a repo the command itself
creates with `git init`) can be anywhere under the workspace, deeper than any scan, so its
`hooks/` folder cannot always be mounted read-only. A hook planted there would run at the next
`git commit` in the sandbox, a command the destructive-command check judges harmless. Git's
`GIT_CONFIG_COUNT/KEY/VALUE` variables set `core.hooksPath` for every git the command starts, at
the highest precedence a repository's own config cannot override; /dev/null is a path under
which no hook can exist. myrm's own git calls on the host pass the same setting (undo/git_snapshots).

What this cannot cover: a person's own `git commit` later in their terminal, in a repository a
command created or changed inside the workspace (docs/security.md says so).
"""

from __future__ import annotations

from collections.abc import MutableMapping

NO_HOOKS = "/dev/null"
# `-c` arguments for myrm's own git calls on the host: no hooks, no fsmonitor command (the
# snapshot calls also never read the repository's config: agent/undo/git_snapshots.py).
HOST_GIT_ARGS = ("-c", f"core.hooksPath={NO_HOOKS}", "-c", "core.fsmonitor=false")


def force_no_hooks(env: MutableMapping[str, str]) -> None:
    """Append `core.hooksPath=/dev/null` to the GIT_CONFIG_* settings already in `env` (the user's
    own entries are kept; a malformed count is replaced)."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    if count < 0:
        count = 0
    env[f"GIT_CONFIG_KEY_{count}"] = "core.hooksPath"
    env[f"GIT_CONFIG_VALUE_{count}"] = NO_HOOKS
    env["GIT_CONFIG_COUNT"] = str(count + 1)
