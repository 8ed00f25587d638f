"""The arrival allowances through the live agent and the scripted provider: a turn whose parallel
outputs each fit but together do not gets its biggest ones excerpted (the full text one
`ctx_expand` away), and the same output is excerpted in a near-full prompt but not in an empty one."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.agent import Agent
from myrm_tui.context.recall.answers import ctx_expand
from myrm_tui.context.rows.views import FILTERED, msg_handle
from myrm_tui.context.window.arrival_budget import ArrivalAllowances, arrival_allowances
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.context.window.tokens import count_text_tokens
from myrm_tui.store.records import MessageRecord
from tests.agent.agent_helpers import drive, make_agent

TURN_REASON = "over the turn's output allowance"
# The user message and the assistant's call message sit in the prompt before the outputs arrive.
BEFORE_OUTPUTS = 40
ROOM_LEFT = 1_600
TOOL_MESSAGE_EXTRA = 24
# Prose-like lines (about four characters a token, like most outputs): the excerpt's character
# budget assumes three, so denser text (bare numbers) would fit it whole.
SENTENCE = "checked the module against the recorded baseline and the reported value was"


def write_lines(path: Path, name: str, tokens: int) -> int:
    """A file whose `cat` output is about `tokens` tokens (the tool message adds its exit code
    line and overhead); returns its number of lines."""
    lines: list[str] = []
    while count_text_tokens("".join(lines)) < tokens - TOOL_MESSAGE_EXTRA:
        lines.append(f"row {len(lines)} of {name}: {SENTENCE} {len(lines) * 7}\n")
    path.write_text("".join(lines))
    return len(lines)


def allowances_of(agent: Agent) -> ArrivalAllowances:
    inp = agent.turn_input()
    return arrival_allowances(inp.budget().prompt_limit, inp.fixed_tokens() + BEFORE_OUTPUTS, DEFAULT_CONFIG)


def tool_rows(agent: Agent) -> list[MessageRecord]:
    return [row for row in agent.store.messages(agent.session_id) if row.role == "tool"]


async def test_parallel_outputs_each_under_the_allowance_are_cut_to_fit_the_turn(store, workspace, script):
    cats = 6
    for i in range(cats):
        count = write_lines(workspace / f"part{i}.txt", f"part{i}", 1_900)
    calls = [{"id": f"c{i}", "name": "bash", "arguments": {"command": f"cat part{i}.txt"}} for i in range(cats)]
    model = script({"tool_calls": calls}, {"text": "read them"}, context_window=64_000)
    agent = make_agent(store, workspace, model, approval="yolo")
    allowances = allowances_of(agent)
    await drive(agent, "read the six parts")

    rows = tool_rows(agent)
    assert len(rows) == cats
    sizes = [row.tokens for row in rows]
    assert all(allowances.floor < n <= allowances.output for n in sizes), (sizes, allowances)
    assert sum(row.tokens for row in rows) > allowances.turn, "together they do not"
    prompt = agent.engine.assemble(agent.turn_input())
    views = agent.engine.history.views
    cut = [row for row in rows if row.id in views]
    assert cut and len(cut) < cats, "the biggest are cut, not all"
    assert all(views[row.id].kind == FILTERED and views[row.id].reason == TURN_REASON for row in cut)
    shown = sum(views[row.id].tokens if row.id in views else row.tokens for row in rows)
    assert shown <= allowances.turn
    tool_messages = [m for m in prompt.messages if m.get("role") == "tool"]
    kept = {row.message["content"] for row in rows if row.id not in views}
    assert kept <= {m["content"] for m in tool_messages}, "the rest are verbatim"
    # Decided once: the next prompt, and a fresh agent on the same session (a reopened
    # session filters every row as new), show the same outputs byte for byte.
    again = agent.engine.assemble(agent.turn_input())
    reopened = Agent(store=store, session_id=agent.session_id, settings=agent.settings, workspace=workspace)
    fresh = reopened.engine.assemble(reopened.turn_input())
    for other in (again, fresh):
        assert [m for m in other.messages if m.get("role") == "tool"] == tool_messages
    # The full text of a cut output is one recall call away.
    victim = cut[0]
    name = victim.message["content"].split("row 0 of ", 1)[1].split(":", 1)[0]
    middle = count // 2
    line = f"row {middle} of {name}: {SENTENCE} {middle * 7}"
    cut_message = views[victim.id].message
    assert cut_message is not None
    assert line not in cut_message["content"]
    assert line in ctx_expand(store, agent.session_id, msg_handle(victim.id), query=f"row {middle} of {name}")


async def test_a_near_full_prompt_excerpts_an_output_an_empty_prompt_keeps(tmp_path, store, workspace, script):
    """The instruction files fill the fixed prefix (the one part no compaction shrinks), so the
    same output arrives with little room left in one session and plenty in the other."""
    crowded_ws = tmp_path / "crowded"
    crowded_ws.mkdir()
    (crowded_ws / "AGENTS.md").write_text("".join(f"rule {i}: keep mod_{i} tidy and tested\n" for i in range(700)))
    probe = make_agent(store, crowded_ws.resolve(), script({"text": "unused"}, context_window=64_000))
    # A window whose prompt limit leaves ~1,600 tokens beside the crowded prefix (limit = window
    # − 4,096 reserved − a 2 % margin).
    window = int((probe.turn_input().fixed_tokens() + ROOM_LEFT + 4_096) / 0.98)
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat out.txt"}}]},
        {"text": "done"},
        context_window=window,
    )
    roomy = make_agent(store, workspace, model, approval="yolo")
    crowded = make_agent(store, crowded_ws.resolve(), model, approval="yolo")
    empty, near = allowances_of(roomy), allowances_of(crowded)
    assert near.output < empty.output, "less room, smaller allowance"
    size = (near.output + empty.output) // 2
    for ws in (workspace, crowded_ws):
        write_lines(ws / "out.txt", "out", size)

    await drive(roomy, "show the output")
    await drive(crowded, "show the output")

    [whole], [cut] = tool_rows(roomy), tool_rows(crowded)
    assert near.output < cut.tokens <= empty.output and whole.tokens == cut.tokens
    assert whole.id not in roomy.engine.history.views
    view = crowded.engine.history.views[cut.id]
    assert view.kind == FILTERED and view.tokens < cut.tokens
    assert "row 1 of out" in ctx_expand(store, crowded.session_id, msg_handle(cut.id), query="row 1 of out")
