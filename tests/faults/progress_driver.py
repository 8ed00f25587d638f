"""Drives a session through the real engine and store the way the agent does, with faults.

Why not the Agent itself: the property needs fixed prefixes from 0 to 45 % of windows from 4k to
1M tokens, which the real system prompt cannot provide; everything below the prompt text is the
real thing (Store on disk, ContextEngine, summary DAG, views), and the agent's store discipline
is reproduced with its own functions (`reusable_user_message`, dangling-call repair).

Faults: a kill mid-turn (a tool call stored without its result, the engine gone, the store
reopened), a kill mid-compaction (the summarizer raises a BaseException inside the event's
transaction, as a SIGKILL would stop it: the store rolls the event back, the engine is gone), and
failed turns that the user resends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.agent.turn.resend import reusable_user_message
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.prompt import AssembledPrompt, ContextExhausted
from myrm_tui.context.rows.ingest import ingest_message
from myrm_tui.context.rows.views import REMOVED
from myrm_tui.context.window.room import FLOOR_TOKENS, fixed_prefix_tokens
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.llm.fake_providers.replay_summarizers import head_summarizer
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.store import Store

MODEL = "gpt-4o"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
# Common English words, one token each after a space in o200k: text of N words is ~N tokens.
_VOCAB_TEXT = (
    "the of and to in is it that for was on are with as at be this have from or one had by but not "
    "what all were when we there can an your which their said if do will each about how up out them "
    "then she many some so these would other into has more her two like him see time could no make "
    "than first been its who now people my made over did down only way find use may water long little "
    "very after words called just where most know get through back much before go good new write our "
    "used me man too any day same right look think also around another came come work three word must "
    "because does part even place well such here take why things help put years different away again "
    "off went old number great tell men say small every found still between name should home big give "
    "air line set own under read last never us left end along while might next sound below saw "
    "something thought both few those always looked show large often together asked house world going "
    "want school important until form food keep children feet land side without boy once animals life "
    "enough took four head above kind began almost live page got earth need far hand high year mother "
    "light country father let night picture being study second soon story since white ever paper hard "
    "near sentence better best across during today however sure knew try told young sun thing whole "
    "hear example heard several change answer room sea against top turned learn point city play toward "
    "five himself usually money seen didn't car morning I'm body upon family later turn move face door "
    "cut done group true leave color red friends easy music close"
)
VOCAB = tuple(_VOCAB_TEXT.split())
# Test outputs above this many characters go to the vault on arrival, as the agent's spill does
# (the engine then sees a bounded preview), so a 1M window does not mean megabytes per message.
CAP_CHARS = 100_000


class Killed(BaseException):
    """The process died here (BaseException: nothing in the engine catches it, like SIGKILL)."""


def words(count: int, salt: int = 0) -> str:
    return " ".join(VOCAB[(i * 7 + salt) % len(VOCAB)] for i in range(max(0, count)))


@dataclass(frozen=True)
class TurnPlan:
    user_tokens: int
    steps: tuple[int, ...]  # tool output tokens per tool step
    reply_tokens: int
    fate: str = "ok"  # ok | kill_mid_turn | kill_mid_compaction | provider_error
    restart: bool = False  # the process restarted before this turn (fresh engine, store reopened)


@dataclass(frozen=True)
class SessionPlan:
    window: int
    fixed_tokens: int  # wanted size of system prompt + tools
    max_output: int
    turns: tuple[TurnPlan, ...]
    summarizer: str = "head"  # head (the fake summarizer slot) or extractive (no model: the agent's default)


@dataclass
class Outcome:
    starts: int = 0  # assembles at a turn start (step 1)
    steps: int = 0  # assembles inside a turn
    exhausted_allowed: int = 0  # ContextExhausted where the precondition did not hold
    kills: int = 0
    resends: int = 0
    floors: int = 0  # prompts that needed the floor pass
    briefs: int = 0  # prompts showing a summary in one line
    depths: set[int] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)  # progress violations (must stay empty)
    fixed: int = 0
    prompt_limit: int = 0


def system_prompt_of(tokens: int) -> str:
    base = "You are a test agent. Follow the rules. "
    text = base + words(max(0, tokens - count_message_tokens({"role": "system", "content": base}, MODEL)))
    return text


class Driver:
    def __init__(self, root: Path, plan: SessionPlan, check: Callable[[Store, str, AssembledPrompt], None]):
        self.root = root
        self.plan = plan
        self.check = check
        self.system = system_prompt_of(max(0, plan.fixed_tokens - _tools_tokens()))
        self.info = ModelInfo(
            name=MODEL,
            provider="openai",
            context_window=plan.window,
            max_output_tokens=plan.max_output,
            supports_tools=True,
            supports_vision=False,
            supports_prompt_caching=True,
        )
        self.store = Store.open(root)
        self.session = self.store.create_session(MODEL).id
        self.engine: ContextEngine | None = None
        self.kill_at: int | None = None  # summarizer call that "kills the process"
        self.calls = 0
        self.out = Outcome(fixed=fixed_prefix_tokens(self.system, TOOLS, MODEL))

    # -- process lifetime -------------------------------------------------------------------
    def _summarize(self, messages: Sequence[dict[str, Any]]) -> str:
        self.calls += 1
        if self.kill_at is not None and self.calls >= self.kill_at:
            self.kill_at = None
            raise Killed("killed mid-compaction")
        return head_summarizer(messages)

    def fresh_engine(self) -> ContextEngine:
        summarizer = self._summarize if self.plan.summarizer == "head" else None
        self.engine = ContextEngine(self.store, self.session, summarizer=summarizer)
        return self.engine

    def restart(self) -> None:
        self.engine = None
        self.store.close()
        self.store = Store.open(self.root)

    def close(self) -> None:
        self.store.close()

    # -- the store discipline of Agent.turn ----------------------------------------------------
    def append(self, message: dict[str, Any]) -> None:
        if message["role"] == "tool":
            message = ingest_message(message, self.store.vault, cap_chars=CAP_CHARS)
        self.store.append_message(self.session, message, count_message_tokens(message, MODEL))

    def turn_input(self) -> TurnInput:
        return TurnInput(self.system, TOOLS, self.info, self.plan.max_output)

    def assemble(self, *, start: bool) -> AssembledPrompt | None:
        """One assemble; None when it failed in an allowed way (the turn ends)."""
        engine = self.engine or self.fresh_engine()
        try:
            prompt = engine.assemble(self.turn_input())
        except ContextExhausted as exc:
            need = self.need(engine, start=start)
            if need <= exc.budget.prompt_limit:
                self.out.failures.append(
                    f"ContextExhausted although fixed + latest message + floor = {need:,} fit "
                    f"{exc.budget.prompt_limit:,} (window {self.plan.window:,}, {'start' if start else 'step'}): "
                    f"{exc.user_text()}"
                )
            else:
                self.out.exhausted_allowed += 1
            return None
        self.out.prompt_limit = prompt.budget.prompt_limit
        if start:
            self.out.starts += 1
        else:
            self.out.steps += 1
        report_event = prompt.report.get("event") or {}
        if report_event.get("trigger") == "preflight-floor":
            self.out.floors += 1
        if any("· brief ·" in (m.get("content") or "") for m in prompt.messages if isinstance(m.get("content"), str)):
            self.out.briefs += 1
        for node in self.store.summaries(self.session, status="active"):
            self.out.depths.add(node["depth"])
        self.check(self.store, self.session, prompt)
        return prompt

    def need(self, engine: ContextEngine, *, start: bool) -> int:
        """fixed prefix + the latest user message as shown + the floor (+ the unit a step answers):
        what the engine promises to fit whenever it fits the prompt limit."""
        rows = self.store.messages(self.session)
        users = [i for i, r in enumerate(rows) if r.role == "user"]
        if not users:
            return self.out.fixed + FLOOR_TOKENS
        latest = rows[users[-1]]
        view = engine.views.get(latest.id)
        shown = view.tokens if view is not None and view.kind != REMOVED else latest.tokens
        need = self.out.fixed + shown + FLOOR_TOKENS
        if not start:
            # The newest unit (the call being answered and its results) is kept whole.
            last = len(rows) - 1
            while last > users[-1] and rows[last].role == "tool":
                last -= 1
            need += sum(r.tokens for r in rows[last:] if r.role != "user")
        return need

    def send(self, text: str) -> AssembledPrompt | None:
        """Store the ask (reused when the failed attempt's copy is still unanswered), assemble.
        A kill mid-compaction restarts the process and the user sends the same text again."""
        for _ in range(4):
            engine = self.engine or self.fresh_engine()
            if reusable_user_message(engine.last_row(), text) is None:
                self.append({"role": "user", "content": text})
            else:
                self.out.resends += 1
            try:
                return self.assemble(start=True)
            except Killed:
                self.out.kills += 1
                self.restart()
        return None

    # -- one planned turn ---------------------------------------------------------------------
    def run_turn(self, index: int, turn: TurnPlan) -> None:
        if turn.restart:
            self.restart()
        if turn.fate == "kill_mid_compaction":
            self.kill_at = self.calls + 1
        text = f"turn {index}: " + words(turn.user_tokens, index)
        prompt = self.send(text)
        self.kill_at = None
        if prompt is None:
            return
        if turn.fate == "provider_error":
            # The call failed before any text: nothing more is stored; the user resends as is.
            prompt = self.send(text)
            if prompt is None:
                return
        for step, output_tokens in enumerate(turn.steps):
            call_id = f"c{index}_{step}"
            self.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "bash", "arguments": json.dumps({"command": f"make step{step}"})},
                        }
                    ],
                }
            )
            if turn.fate == "kill_mid_turn" and step == len(turn.steps) - 1:
                self.out.kills += 1
                self.restart()
                self.store.repair_dangling_tool_calls(self.session)  # what the next turn does first
                return
            self.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": "bash",
                    "content": "\n".join(f"out {i} {words(20, i)}" for i in range(max(1, output_tokens // 24))),
                }
            )
            try:
                if self.assemble(start=False) is None:
                    return  # the turn failed; the next one starts with a new ask
            except Killed:
                self.out.kills += 1
                self.restart()
                return
        if turn.reply_tokens:
            self.append({"role": "assistant", "content": f"done {index}: " + words(turn.reply_tokens, index)})

    def run(self) -> Outcome:
        try:
            for index, turn in enumerate(self.plan.turns):
                self.run_turn(index, turn)
        finally:
            self.close()
        return self.out


def _tools_tokens() -> int:
    from myrm_tui.context.window.tokens import count_tools_tokens

    return count_tools_tokens(TOOLS, MODEL)


# -- what every assembled prompt must be ------------------------------------------------------


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def reachable_ids(messages: list[dict[str, Any]], store: Store, session_id: str) -> set[int]:
    """Ids the prompt names: handles, `msg:A … msg:B` ranges, and what the shown summary nodes
    (full or brief) cover, which ctx_expand walks back to."""
    blob = json.dumps(messages, ensure_ascii=False)
    ids = {int(m) for m in re.findall(r"msg:(\d+)", blob)}
    for first, last in re.findall(r"msg:(\d+) … msg:(\d+)", blob):
        ids.update(range(int(first), int(last) + 1))
    for handle in re.findall(r"\[summary (S\d+)", blob):
        node = store.get_summary(session_id, handle)
        assert node is not None and node["status"] == "active", f"{handle} is shown but not an active node"
        ids.update(range(node["first_id"], node["last_id"] + 1))
    return ids


def check_prompt(store: Store, session_id: str, prompt: AssembledPrompt) -> None:
    """Within budget, provider-valid, and lossless: every stored message is shown or reachable."""
    assert prompt.tokens <= prompt.budget.prompt_limit, (prompt.tokens, prompt.budget)
    messages = prompt.messages
    assert messages[0]["role"] == "system"
    i = 1
    while i < len(messages):
        message = messages[i]
        assert message["role"] != "tool", f"a tool result at {i} does not follow its call"
        i += 1
        if message["role"] == "assistant" and message.get("tool_calls"):
            expected = [c["id"] for c in message["tool_calls"]]
            got = []
            while i < len(messages) and messages[i]["role"] == "tool":
                got.append(messages[i]["tool_call_id"])
                i += 1
            assert got == expected
    wire = json.dumps(messages, ensure_ascii=False)
    named = reachable_ids(messages, store, session_id)
    texts = {text_of(m) for m in messages}
    for row in store.messages(session_id):
        if row.id in named:
            continue
        content = text_of(row.message)
        shown = (
            row.message in messages
            or content in texts
            or bool(content and json.dumps(content, ensure_ascii=False)[1:-1] in wire)
        )
        assert shown, f"msg:{row.id} ({row.role}) is neither shown nor reachable"
