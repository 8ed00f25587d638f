"""Allow and deny rules for tool calls (`Bash(git status:*)`, `Edit(src/**)`): parse, match, store.

Why rules next to the policy: "ask for every bash call" trains people to say yes without reading;
a short list of commands the user has vouched for once (per workspace, or in their own config)
keeps the questions for the calls that deserve one.

Rules are trusted input, so they only come from the user: their config file (`[permissions]`,
allow and deny) and the rules store in their config folder (what "Always allow" in the TUI
writes, keyed by the resolved workspace path, like the trust store). A workspace's own
`.myrm/config.toml` may add deny rules only: stricter, never looser.

Grammar (one rule per string):

- `Bash` every bash call; `Bash(git status)` exactly that command; `Bash(git status:*)` that
  command followed by any arguments. Words are compared after quote removal, so the rule
  `Bash(git status:*)` and the line `git 'status' -s` agree.
- `Edit(GLOB)` file_edit and file_write; `Write(GLOB)` file_write only; bare `Edit` / `Write` any
  path. GLOB is relative to the workspace (`*` inside one folder, `**` across folders, `?` one
  character); one starting with `/` or `~/` is an absolute path. Paths are compared resolved
  (symlinks, `..`), so a link cannot dress a path up as another.
- `WebFetch(domain:docs.python.org)` web_fetch of that host exactly; `WebFetch(domain:*.python.org)`
  its subdomains (not the bare domain); bare `WebFetch` any host. Hosts compare lowercased,
  without a trailing dot; the port and path do not matter.

How a command line is judged (shell_lex splits it into simple commands):

- allow: every simple command on the line must match an allow rule, and the line must not do what
  no prefix can vouch for: `$(...)` or backticks, `<(...)`, variable assignments (`PATH=...`,
  `LD_PRELOAD=...`), function definitions, or redirections that write a file. So
  `git status && rm -rf x` is not allowed by `Bash(git status:*)`.
- deny: a rule matches if any program the line visibly runs matches it, also inside `$(...)`,
  `bash -c "..."`, `eval`, and behind wrappers like `sudo`, `env`, `timeout`, `xargs`; the program
  is compared by its base name (`/bin/rm` is `rm`). A name computed at run time escapes a deny
  rule: deny rules are a convenience, the sandbox is the wall.

Deny beats allow. The destructive-command seatbelt and the protected paths are not rules: they
hold whatever the rules say (approvals.decide, tools/paths.py).

The pieces: ruleset (RuleCall, RuleSet: judging one call), bash_lines (command
lines), targets (paths, hosts), suggest ("Always allow" rules),
rule_store (the stored rules). Callers import from here.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.permissions.bash_lines import MAX_DENY_DEPTH, plain_commands, reachable_commands
from myrm_tui.agent.permissions.rule_store import (
    RULES_FILE_NAME,
    RULES_FILE_VERSION,
    RulesStoreError,
    forget_rule,
    remember_allow,
    rules_file,
    stored_rules,
)
from myrm_tui.agent.permissions.ruleset import Judgement, RuleCall, RuleSet, call_for, combine, rule_set
from myrm_tui.agent.permissions.suggest import MAX_SUGGESTED_WORDS, RUNS_ANYTHING, SUGGESTED_RULE_TOOL, suggest_rules
from myrm_tui.agent.permissions.targets import host_matches, path_matches, url_host
from myrm_tui.settings.sections.permission_syntax import Rule, RuleError, parse_rule

__all__ = [
    "MAX_DENY_DEPTH",
    "MAX_SUGGESTED_WORDS",
    "RULES_FILE_NAME",
    "RULES_FILE_VERSION",
    "RUNS_ANYTHING",
    "SUGGESTED_RULE_TOOL",
    "Judgement",
    "Rule",
    "RuleCall",
    "RuleError",
    "RuleSet",
    "RulesStoreError",
    "call_for",
    "combine",
    "effective_rules",
    "forget_rule",
    "host_matches",
    "parse_rule",
    "path_matches",
    "plain_commands",
    "reachable_commands",
    "remember_allow",
    "rule_set",
    "rules_file",
    "stored_rules",
    "suggest_rules",
    "url_host",
]


def effective_rules(permissions: object, workspace: Path, user_dir: Path) -> RuleSet:
    """The rules in force for one call: the configured ones (`settings.permissions`: the user
    file's allow and deny, the workspace file's deny) and the ones stored for this workspace. An
    unreadable store adds no rules and says so in `problems` (read fresh each time: another
    myrm, or the user editing the file, changes it while this one runs)."""
    allow = [(e.text, e.source) for e in getattr(permissions, "allow", ())]
    deny = [(e.text, e.source) for e in getattr(permissions, "deny", ())]
    configured = rule_set(allow, deny)
    try:
        stored = stored_rules(user_dir, workspace)
    except RulesStoreError as exc:
        stored = RuleSet(problems=(f"{exc}; the rules stored there are not used until it is fixed",))
    return combine(configured, stored)
