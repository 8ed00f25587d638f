"""A switch to a thinking model mid-session: the earlier tool turns go out with `reasoning_content`.

Why through the agent: DeepSeek, Qwen, GLM, Kimi, MiniMax and MiMo reject a request whose
assistant tool-call turns lack `reasoning_content` while thinking is on. The turns a
non-thinking model answered have none, so the request the new model gets after the switch (the
TUI rebuilds the agent through `SessionRuntime`, as `/model` does) is what must carry it, empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.context.rows.family import REASONING_TOOLS, family_of
from tests.agent.agent_helpers import drive, settings_for

# The three families the switch was reported for (all of `REASONING_TOOLS`, which Kimi, MiniMax
# and MiMo share): the family is read from the model name, here the script file name.
THINKING_MODELS = ("deepseek-reasoner", "qwen3-max", "glm-4.6")


def _script(folder: Path, name: str, record: Path, *turns: dict) -> str:
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"turns": list(turns), "record": str(record)}))
    return f"scripted/{path}"


@pytest.mark.parametrize("thinking", THINKING_MODELS)
async def test_after_a_switch_to_a_thinking_model_earlier_tool_turns_carry_reasoning_content(
    thinking, store, workspace, tmp_path
):
    (workspace / "notes.txt").write_text("the notes\n")
    record = tmp_path / "requests.jsonl"
    folder = tmp_path / "models"
    plain = _script(
        folder,
        "plain",
        record,
        {"tool_calls": [{"id": "r1", "name": "file_read", "arguments": {"path": "notes.txt"}}]},
        {"text": "read them"},
    )
    second = _script(
        folder,
        thinking,
        record,
        # A script answers by the count of assistant messages in the request: the first two
        # were the plain model's.
        {"text": "unused"},
        {"text": "unused"},
        {"tool_calls": [{"id": "r2", "name": "file_read", "arguments": {"path": "notes.txt"}}]},
        {"text": "again", "reasoning": "thought about it"},
    )
    assert family_of(plain) != REASONING_TOOLS and family_of(second) == REASONING_TOOLS
    session = store.create_session(model=plain)
    runtime = SessionRuntime(store=store, session_id=session.id, workspace=workspace)
    await drive(runtime.agent_for(settings_for(plain, approval="yolo")), "read the notes")
    await drive(runtime.agent_for(settings_for(second, approval="yolo")), "read them again")

    requests = [json.loads(line) for line in record.read_text().splitlines()]
    before_switch, after_switch = requests[:2], requests[2:]
    assert len(after_switch) == 2
    for request in after_switch:
        tool_turns = [m for m in request if m["role"] == "assistant" and m.get("tool_calls")]
        assert tool_turns, "the earlier tool turn is in the request"
        assert all("reasoning_content" in m for m in tool_turns), tool_turns
    # The plain model's own requests are unchanged: no reasoning key it would not understand.
    assert not any("reasoning_content" in m for request in before_switch for m in request)
