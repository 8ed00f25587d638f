"""Which tool calls need a human yes, from the `approval` policy and the command itself.

Policies: ask (bash and file changes ask), auto-edit (file changes run, bash asks), yolo
(nothing asks), deny (bash and file changes are refused without asking). Destructive commands
(seatbelt: a tokenised check of the programs a line runs) always ask, even in yolo; in deny
they are refused like the rest.
Reads never ask: they change nothing.

Permission rules (permissions/rules.py: `Bash(git status:*)`, `Edit(src/**)`) refine the policy
for one call: a matching deny rule refuses it without asking (in every policy); an allow rule
lets it run without asking where the policy would ask. Neither touches the seatbelt: a
destructive command still asks whatever the allow rules say. The TUI and headless `myrm run`
both decide here, so the same rules mean the same thing in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from myrm_tui.agent.permissions.rules import RuleCall, RuleSet
from myrm_tui.agent.permissions.seatbelt import destructive_reason

POLICIES = ("ask", "auto-edit", "yolo", "deny")


class Verdict(Enum):
    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    destructive: bool = False
    reason: str = ""  # why it asks or is refused, shown to the user
    rules: tuple[str, ...] = ()  # the permission rule(s) that decided, with where they came from
    # The tool itself asked for a person whatever the policy (Tool.required_approval: bash asking
    # for the network, web_fetch): no --approve flag lets such a call run headless.
    forced: bool = False


def decide(
    policy: str,
    tool_kind: str,
    command: str | None = None,
    *,
    rules: RuleSet | None = None,
    call: RuleCall | None = None,
) -> Decision:
    """The verdict for one call. `tool_kind` is read, write or exec (see tools.base.Tool.kind);
    `rules` and `call` (what the call touches) bring in the user's permission rules."""
    if policy not in POLICIES:
        # An unknown policy must fail safe: ask for everything that changes something.
        policy = "ask"
    if tool_kind == "read":
        return Decision(Verdict.ALLOW)
    danger = destructive_reason(command) if (tool_kind == "exec" and command) else None
    if policy == "deny":
        return Decision(Verdict.REFUSE, destructive=danger is not None, reason="approval policy is deny")
    judgement = rules.judge(call) if (rules and call is not None) else None
    if judgement is not None and judgement.denied_by is not None:
        rule = judgement.denied_by
        return Decision(
            Verdict.REFUSE,
            destructive=danger is not None,
            reason=f"the deny rule {rule.text} matches it",
            rules=(_with_source(rule.text, rule.source),),
        )
    if danger:
        return Decision(Verdict.ASK, destructive=True, reason=f"destructive: {danger}")
    if policy == "yolo":
        return Decision(Verdict.ALLOW)
    if policy == "auto-edit" and tool_kind == "write":
        return Decision(Verdict.ALLOW)
    if judgement is not None and judgement.allowed:
        used = judgement.allowed_by
        return Decision(
            Verdict.ALLOW,
            reason=f"allowed by {', '.join(r.text for r in used)}",
            rules=tuple(_with_source(r.text, r.source) for r in used),
        )
    return Decision(Verdict.ASK, reason=f"approval policy is {policy}")


def _with_source(text: str, source: str) -> str:
    return f"{text} (from {source})" if source else text


@dataclass(frozen=True)
class Refusal:
    """A call that would ask, refused in a headless run: one text for the model, one for the user."""

    for_model: str
    for_user: str


# The `--approve` value that lets a call of this kind run without asking (when one can at all).
_FLAG_THAT_ALLOWS = {"write": "auto-edit", "exec": "yolo"}


def headless_refusal(
    decision: Decision, tool_kind: str, summary: str, policy: str, command: str | None = None
) -> Refusal:
    """Why a headless run did not run a call, naming the real policy and reason, and a flag only
    when that flag would really let the call run."""
    flag = _FLAG_THAT_ALLOWS.get(tool_kind)
    if flag is not None and (
        decision.destructive or decision.forced or decide(flag, tool_kind, command).verdict is not Verdict.ALLOW
    ):
        flag = None
    if decision.destructive:
        why = (
            f"{decision.reason.removeprefix('destructive: ')} is destructive, and headless runs never run "
            "destructive commands, whatever --approve says; run it yourself if it is intended"
        )
    elif flag is not None:
        why = f"the approval policy is {policy} and nobody can be asked in a headless run; --approve {flag} allows it"
    else:
        why = f"{decision.reason or 'it needs approval'}, and nobody can be asked in a headless run"
    return Refusal(
        for_model=(
            f"not run: {summary} needs a person's approval ({decision.reason or 'approval required'}), "
            "and this headless run has nobody to ask. Do not retry it; tell the user what you wanted "
            "to do and why."
        ),
        for_user=f"not run: {summary} — {why}.",
    )


# A denial reason is one line the user typed for the model; longer belongs in their next message.
DENIAL_REASON_MAX_CHARS = 500


def denial_result(summary: str, reason: str = "") -> str:
    """The stored tool result of a person's no; their reason, when given, goes to the model."""
    text = f"denied by user: {summary}"
    reason = " ".join(reason.split())[:DENIAL_REASON_MAX_CHARS]
    if reason:
        text += f". The user's reason: {reason}"
    return text


def rule_refusal(summary: str, decision: Decision) -> Refusal:
    """A call refused by one of the user's deny rules: the model hears that the user does not
    allow it, the user hears which rule (and where it is written)."""
    return Refusal(
        for_model=(
            f"refused: {summary} ({decision.reason}: the user does not allow this). Do not retry it "
            "or work around it; tell the user what you wanted to do."
        ),
        for_user=f"not run: {summary} — refused by your deny rule {', '.join(decision.rules)}.",
    )


def sandbox_note(mode: str, active: bool, network_setting: bool, network_requested: bool) -> str:
    """What the sandbox lets a bash command do, in a few words for the approval block."""
    if mode == "off":
        where = "no sandbox (sandbox = off): it can write anywhere you can"
    elif not active:
        where = "no sandbox (bwrap unavailable): it can write anywhere you can"
    elif mode == "read-only":
        where = "sandbox: read-only, only /tmp writable"
    else:
        where = "sandbox: writes only in the workspace and /tmp"
    if not active or mode == "off" or network_setting:
        net = "network allowed"
    elif network_requested:
        net = "network only if you allow this call"
    else:
        net = "no network"
    return f"{where}; {net}"
