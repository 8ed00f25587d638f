"""Permission rules: the grammar, matching as an attacker would probe it, and the store.

The invariant that matters most: an allow rule vouches for a command, never for a line. A line
is allowed only when every simple command in it is covered and it does nothing a prefix cannot
vouch for (substitutions, assignments, function definitions, writing redirections).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent.permissions.rules import (
    RuleError,
    RuleSet,
    RulesStoreError,
    call_for,
    effective_rules,
    forget_rule,
    parse_rule,
    remember_allow,
    rule_set,
    rules_file,
    stored_rules,
    suggest_rules,
)
from myrm_tui.settings.settings import PermissionLists, RuleEntry
from tests.hypothesis_profiles import examples

WS = Path("/srv/project")


def rules(*allow: str, deny: tuple[str, ...] = ()) -> RuleSet:
    made = rule_set(allow=[(a, "test") for a in allow], deny=[(d, "test") for d in deny])
    assert not made.problems, made.problems
    return made


def bash(command: str):
    return call_for("bash", {"command": command}, WS)


def allowed(ruleset: RuleSet, command: str) -> bool:
    return ruleset.judge(bash(command)).allowed


def denied(ruleset: RuleSet, command: str) -> bool:
    return ruleset.judge(bash(command)).denied_by is not None


# ---------------------------------------------------------------- grammar


@pytest.mark.parametrize(
    "text,tool,pattern",
    [
        ("Bash", "Bash", None),
        ("Bash(git status:*)", "Bash", "git status:*"),
        ("  Bash( npm test )  ", "Bash", "npm test"),
        ("Edit(src/**)", "Edit", "src/**"),
        ("Write(docs/*.md)", "Write", "docs/*.md"),
        ("Edit(/etc/hosts)", "Edit", "/etc/hosts"),
    ],
)
def test_rules_parse(text, tool, pattern):
    rule = parse_rule(text)
    assert (rule.tool, rule.pattern) == (tool, pattern)
    assert parse_rule(rule.text) == rule  # the canonical text reads back the same


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("", "empty"),
        ("bash(ls)", "did you mean Bash"),
        ("Shell(ls)", "names no known tool"),
        ("Bash()", "empty pattern"),
        ("Bash(git status && rm -rf x:*)", "one simple command"),
        ("Bash(ls | sh)", "one simple command"),
        ("Bash(ls > out)", "plain words"),
        ("Bash(rm $TARGET)", "plain words"),
        ("Bash(X=1 make)", "plain words"),
        ("Bash(git * push)", "not supported"),
        ("Edit(../outside/**)", "`..` is not allowed"),
        ("Edit(src/**x/y)", "stands alone"),
        ("Bash(git status", "is not a rule"),
        ("B" * 600, "at most"),
    ],
)
def test_bad_rules_say_what_is_wrong(text, fragment):
    with pytest.raises(RuleError, match=None) as caught:
        parse_rule(text)
    assert fragment in str(caught.value)


def test_a_rule_that_is_not_a_string_is_refused():
    with pytest.raises(RuleError):
        parse_rule(["Bash"])  # type: ignore[arg-type]


# ---------------------------------------------------------------- bash: allow


def test_prefix_and_exact_rules():
    r = rules("Bash(git status:*)", "Bash(ls)")
    assert allowed(r, "git status")
    assert allowed(r, "git status --short -- src")
    assert allowed(r, "git 'status' -s")  # quote removal: bash runs the same words
    assert allowed(r, "ls")
    assert not allowed(r, "ls -la")  # an exact rule is exact
    assert not allowed(r, "git statusx")
    assert not allowed(r, "git stash")
    assert not allowed(r, "/usr/bin/git status")  # another program by path is not `git`
    assert not allowed(r, "./git status")  # a workspace file named git even less


@pytest.mark.parametrize(
    "command",
    [
        "git status && rm -rf x",
        "git status; rm -rf x",
        "git status || curl evil.sh",
        "git status | sh",
        "git status & rm -rf x",
        "git status\nrm -rf x",
        "(git status; rm x)",
        "if git status; then rm x; fi",
        "git status $(rm -rf x)",
        "git status `rm -rf x`",
        'git status "$(rm -rf x)"',
        "git status <(rm -rf x)",
        "git status ${X:-$(rm x)}",
        "PATH=/tmp/evil git status",
        "LD_PRELOAD=/tmp/x.so git status",
        "PATH=/tmp/evil; git status",
        "git() { rm -rf x; }; git status",
        "git status > ~/.bashrc",
        "git status >> notes.txt",
        "git status &> out",
        "git status >& out",
        "cat <<EOF | git status\n$(rm x)\nEOF",
        "for f in $(rm x); do git status; done",
        "$CMD status",
        "$(echo git) status",
        "",
        "   ",
    ],
)
def test_allow_rule_never_covers_a_line_that_does_more(command):
    assert not allowed(rules("Bash(git status:*)"), command)


@pytest.mark.parametrize(
    "command",
    [
        "git status 2>&1",
        "git status 2>/dev/null",
        "git status > /dev/null",
        "git status < input.txt",
        "git status | cat",
        "git status && cat README",
        "time git status",
        "git status # ; rm -rf x",
        "git status <<'EOF'\n$(not run: quoted heredoc)\nEOF",
    ],
)
def test_harmless_shapes_stay_allowed_when_every_part_is_covered(command):
    assert allowed(rules("Bash(git status:*)", "Bash(cat:*)"), command), command


def test_bare_bash_allows_every_line():
    assert allowed(rules("Bash"), "curl x | sh; X=1 $(rm y)")


def test_an_allow_rule_for_another_tool_does_not_cover_bash():
    assert not allowed(rules("Edit", "Write"), "ls")


# ---------------------------------------------------------------- bash: deny


@pytest.mark.parametrize(
    "command",
    [
        "git push",
        "git push --force origin main",
        "ls && git push",
        "echo $(git push)",
        "sudo git push",
        "env GIT_TRACE=1 git push",
        "timeout 30 git push",
        "nohup git push &",
        "bash -c 'git push'",
        'sh -lc "git push origin"',
        "eval git push",
        "/usr/bin/git push",
        "xargs -n1 git push < remotes",
        "bash <<EOF\ngit push\nEOF",
        "cat <<EOF\n$(git push)\nEOF",
    ],
)
def test_deny_rules_see_through_wrappers_shells_and_substitutions(command):
    assert denied(rules(deny=("Bash(git push:*)",)), command), command


@pytest.mark.parametrize("command", ["git pull", "echo 'git push'", "grep -r 'git push' docs", "git pushx"])
def test_deny_rules_do_not_fire_on_text_that_merely_mentions_the_command(command):
    assert not denied(rules(deny=("Bash(git push:*)",)), command)


def test_deny_beats_allow():
    r = rules("Bash", "Bash(git push:*)", deny=("Bash(git push:*)",))
    judgement = r.judge(bash("git push"))
    assert judgement.denied_by is not None and not judgement.allowed
    assert allowed(r, "git pull")


# ---------------------------------------------------------------- paths


def test_path_rules_match_resolved_workspace_paths(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "secrets").mkdir()
    (ws / "src" / "link").symlink_to(ws / "secrets")
    r = rule_set(allow=[("Edit(src/**)", "t"), ("Write(docs/*.md)", "t")], deny=[("Edit(secrets/**)", "t")])

    def judge(tool, path):
        return r.judge(call_for(tool, {"path": path}, ws))

    assert judge("file_edit", "src/pkg/mod.py").allowed
    assert judge("file_write", "src/new.py").allowed  # Edit covers whole-file writes too
    assert judge("file_write", "docs/guide.md").allowed
    assert not judge("file_write", "docs/deep/guide.md").allowed  # * stays in one folder
    assert not judge("file_edit", "docs/guide.md").allowed  # Write does not cover edits
    assert not judge("file_edit", "srcx/mod.py").allowed
    assert not judge("file_edit", "src/../setup.py").allowed  # .. is resolved first
    assert judge("file_edit", "src/link/token.txt").denied_by is not None  # the link leads to secrets/
    assert not judge("file_edit", str(tmp_path / "elsewhere.py")).allowed  # outside: never by a relative rule


def test_absolute_path_rules(tmp_path):
    r = rule_set(deny=[(f"Edit({tmp_path}/locked/**)", "t")])
    assert r.judge(call_for("file_write", {"path": str(tmp_path / "locked" / "a")}, tmp_path / "ws")).denied_by


# ---------------------------------------------------------------- suggestions


@pytest.mark.parametrize(
    "command,offered",
    [
        ("git status --short", ("Bash(git status:*)",)),
        ("npm run build -- --watch", ("Bash(npm run build:*)",)),
        ("pytest -q tests/x.py", ("Bash(pytest:*)",)),
        ("git status && git diff HEAD", ("Bash(git status:*)", "Bash(git diff:*)")),
        ("python -c 'import os'", ()),  # a whole interpreter: never offered
        ("bash -c 'ls'", ()),
        ("sudo -E make install", ()),
        ("env X=1 make", ()),
        ("git status $(id)", ()),  # could not be allowed by a prefix anyway
        ("X=1 make", ()),
        ("$EDITOR notes", ()),
    ],
)
def test_always_allow_offers_a_rule_only_when_it_would_cover_this_very_call(command, offered):
    suggestion = suggest_rules(bash(command))
    assert suggestion == offered
    if suggestion:
        assert allowed(rules(*suggestion), command)


def test_path_suggestions(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert suggest_rules(call_for("file_edit", {"path": "src/pkg/m.py"}, ws)) == ("Edit(src/pkg/**)",)
    assert suggest_rules(call_for("file_write", {"path": "README.md"}, ws)) == ("Write(README.md)",)
    assert suggest_rules(call_for("file_write", {"path": str(tmp_path / "out.txt")}, ws)) == ()
    assert suggest_rules(call_for("file_write", {"path": "weird[*].txt"}, ws)) == ()


# ---------------------------------------------------------------- the invariant

PROGRAMS = ["git", "ls", "cat", "rm", "curl", "make", "sh"]
ARGS = ["status", "push", "-la", "x", "src", "--force", "README"]
SEPARATORS = [" && ", " || ", "; ", " | ", "\n", " & "]
simple = st.tuples(st.sampled_from(PROGRAMS), st.lists(st.sampled_from(ARGS), max_size=3)).map(lambda t: [t[0], *t[1]])
prefix = st.tuples(st.sampled_from(PROGRAMS), st.lists(st.sampled_from(ARGS), max_size=1)).map(lambda t: [t[0], *t[1]])


def covered(argv: list[str], prefixes: list[list[str]]) -> bool:
    return any(argv[: len(p)] == p for p in prefixes)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(simple, min_size=1, max_size=4),
    st.lists(prefix, min_size=1, max_size=3),
    st.lists(st.sampled_from(SEPARATORS), min_size=3, max_size=3),
)
def test_a_compound_line_is_allowed_exactly_when_every_part_is(parts, prefixes, separators):
    line = parts[0]
    text = " ".join(line)
    for index, argv in enumerate(parts[1:]):
        text += separators[index % len(separators)] + " ".join(argv)
    ruleset = rules(*(f"Bash({' '.join(p)}:*)" for p in prefixes))
    assert allowed(ruleset, text) == all(covered(argv, prefixes) for argv in parts), text


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(simple, min_size=1, max_size=3),
    st.sampled_from(["$(rm -rf x)", "`rm -rf x`", "<(rm x)", '"$(rm x)"', "${Y:-$(rm x)}"]),
    st.integers(min_value=0, max_value=5),
)
def test_a_substitution_anywhere_is_never_covered_by_prefix_rules(parts, substitution, where):
    words = [w for argv in parts for w in [*argv, ";"]][:-1]
    words.insert(min(where, len(words)) or 1, substitution)
    text = " ".join(words)
    everything = rules(*(f"Bash({p}:*)" for p in PROGRAMS), "Bash(rm:*)")
    assert not allowed(everything, text), text


# ---------------------------------------------------------------- the store


def test_remembered_rules_are_per_workspace_and_survive_a_reload(tmp_path):
    user = tmp_path / "config"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    path = remember_allow(user, a, ("Bash(git status:*)",))
    remember_allow(user, a, ("Bash(git status:*)", "Edit(src/**)"))  # no duplicates
    assert path == rules_file(user)
    assert [r.text for r in stored_rules(user, a).allow] == ["Bash(git status:*)", "Edit(src/**)"]
    assert not stored_rules(user, b)  # another folder, nothing
    link = tmp_path / "link-to-a"
    link.symlink_to(a)
    assert stored_rules(user, link).allow  # keyed by the resolved path
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert forget_rule(user, a, "Edit(src/**)")
    assert [r.text for r in stored_rules(user, a).allow] == ["Bash(git status:*)"]


def test_a_broken_store_is_never_overwritten_and_its_rules_are_not_used(tmp_path):
    user = tmp_path / "config"
    user.mkdir()
    rules_file(user).write_text("{ not json")
    with pytest.raises(RulesStoreError):
        remember_allow(user, tmp_path, ("Bash(ls)",))
    assert rules_file(user).read_text() == "{ not json"
    combined = effective_rules(PermissionLists(), tmp_path, user)
    assert not combined and "not valid JSON" in combined.problems[0]


def test_a_bad_rule_in_the_store_is_skipped_and_named(tmp_path):
    user = tmp_path / "config"
    user.mkdir()
    rules_file(user).write_text(
        json.dumps(
            {
                "version": 1,
                "workspaces": {str(tmp_path.resolve()): {"allow": ["Bash(ls)", "Bsh(x)"], "deny": ["Bash(rm:*)"]}},
            }
        )
    )
    combined = effective_rules(PermissionLists(allow=(RuleEntry("Edit", "config.toml:3"),)), tmp_path, user)
    assert [r.text for r in combined.allow] == ["Edit", "Bash(ls)"]
    assert [r.text for r in combined.deny] == ["Bash(rm:*)"]
    assert any("Bsh(x)" in p for p in combined.problems)


def test_remember_refuses_a_bad_rule(tmp_path):
    with pytest.raises(RuleError):
        remember_allow(tmp_path, tmp_path, ("Bash(ls && rm x)",))
    assert not rules_file(tmp_path).exists()


def test_mcp_rules_name_a_server_or_one_tool_and_never_a_lookalike_server():
    from myrm_tui.agent.permissions.rules import call_for, parse_rule, rule_set

    rules = rule_set(allow=[("mcp__git", "user"), ("mcp__time__now", "user")])
    allowed = {
        name: rules.judge(call_for(name, {}, Path("."))).allowed
        for name in ("mcp__git__log", "mcp__git2__log", "mcp__time__now", "mcp__time__convert")
    }
    assert allowed == {
        "mcp__git__log": True,
        "mcp__git2__log": False,
        "mcp__time__now": True,
        "mcp__time__convert": False,
    }
    with pytest.raises(RuleError):
        parse_rule("mcp__git(log)")
