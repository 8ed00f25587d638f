"""Per-family discipline blocks in the system prompt, and the read-only `search` prompt mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.agent.setup.discipline import (
    CLAUDE,
    DEEPSEEK_QWEN_GLM,
    DISCIPLINE_FAMILIES,
    GEMINI,
    GPT,
    discipline_block,
    discipline_family,
)
from myrm_tui.agent.setup.prompts import PROMPT_MODES, SEARCH_TOOLS, base_prompt, build_system_prompt
from myrm_tui.agent.tools.base import Tool
from myrm_tui.settings.schema import SETTINGS
from tests.agent.agent_helpers import drive, settings_for

# One real-looking name per family, as users and the registry spell them.
FAMILY_MODELS = {
    GPT: ("gpt-5", "openai/gpt-4.1", "o3-mini", "codex-mini-latest", "xai/grok-4", "openrouter/openai/gpt-oss-120b"),
    GEMINI: ("gemini/gemini-2.5-pro", "vertex_ai/gemini-2.5-flash", "ollama/gemma3:4b"),
    CLAUDE: ("claude-sonnet-4-5", "anthropic/claude-opus-4-1", "bedrock/anthropic.claude-3-haiku"),
    DEEPSEEK_QWEN_GLM: ("deepseek/deepseek-chat", "openrouter/qwen/qwen3-coder", "zai/glm-4.6", "moonshot/kimi-k2"),
}
NO_FAMILY = ("", "scripted/a.json", "replay/session-1", "local/smollm2-135m", "mistral/devstral-small")


@pytest.mark.parametrize("family", DISCIPLINE_FAMILIES)
def test_each_family_gets_its_block_and_only_its_block(family, workspace):
    others = [discipline_block(FAMILY_MODELS[f][0]) for f in DISCIPLINE_FAMILIES if f != family]
    for model in FAMILY_MODELS[family]:
        assert discipline_family(model) == family, model
        block = discipline_block(model)
        assert block.startswith("<discipline>\n") and block.endswith("\n</discipline>")
        text = build_system_prompt("full", workspace, model=model).text
        assert text == f"{base_prompt('full')}\n\n{block}"
        assert not any(other in text for other in others)


def test_the_four_blocks_differ():
    blocks = {discipline_block(FAMILY_MODELS[f][0]) for f in DISCIPLINE_FAMILIES}
    assert len(blocks) == len(DISCIPLINE_FAMILIES)


@pytest.mark.parametrize("model", NO_FAMILY)
def test_unknown_family_prompt_is_the_mode_text_alone(model, workspace):
    """Scripted and replayed models map to no family: their prompts (and the replay digests) are unchanged."""
    assert discipline_family(model) is None and discipline_block(model) == ""
    for mode in PROMPT_MODES:
        assert build_system_prompt(mode, workspace, model=model).text == base_prompt(mode)


def test_block_sits_between_the_mode_text_and_the_rules(workspace):
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    prompt = build_system_prompt("lean", workspace, model="gpt-5")
    assert prompt.discipline == discipline_block("gpt-5")
    assert prompt.text == f"{base_prompt('lean')}\n\n{prompt.discipline}\n\n{prompt.rules}"


def test_block_only_in_the_full_and_lean_modes_with_tools(workspace):
    model = "claude-sonnet-4-5"
    assert build_system_prompt("naked", workspace, model=model).text == base_prompt("naked")
    assert build_system_prompt("search", workspace, model=model).text == base_prompt("search")
    chat = build_system_prompt("full", workspace, tools_enabled=False, model=model)
    assert chat.text == base_prompt("full", tools_enabled=False) and chat.discipline == ""


def test_block_is_byte_identical_across_builds(workspace):
    """Cache-safe: nothing in the block depends on the turn, the time or the process."""
    for family in DISCIPLINE_FAMILIES:
        model = FAMILY_MODELS[family][0]
        texts = {build_system_prompt("full", workspace, model=model).text for _ in range(3)}
        assert len(texts) == 1


def test_fingerprint_differs_per_family(workspace):
    settings = settings_for("scripted/a.json")
    prints = set()
    for family in DISCIPLINE_FAMILIES:
        model = FAMILY_MODELS[family][0]
        build = build_agent(settings.with_values(model=model), workspace)
        assert discipline_block(model) in build.system_prompt.text
        assert build_agent(settings.with_values(model=model), workspace).fingerprint == build.fingerprint
        prints.add(build.fingerprint)
    assert len(prints) == len(DISCIPLINE_FAMILIES)


def _script(folder: Path, name: str, record: Path, *texts: str) -> str:
    """A scripted model whose file name puts it in a family (the name is what family detection reads)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"turns": [{"text": t} for t in texts], "record": str(record)}))
    return f"scripted/{path}"


def _systems(record: Path) -> list[str]:
    """Each request's system text (a cache-marked list of parts for some providers, joined)."""
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    out = []
    for request in requests:
        for message in request:
            if message["role"] == "system":
                content = message["content"]
                out.append(content if isinstance(content, str) else "".join(part["text"] for part in content))
    return out


async def test_a_model_switch_changes_the_block_and_turns_keep_it(store, workspace, tmp_path):
    record = tmp_path / "requests.jsonl"
    first = _script(tmp_path / "models", "claude-sonnet.json", record, "one", "two")
    second = _script(tmp_path / "models", "gpt-5.json", record, "three")
    assert (discipline_family(first), discipline_family(second)) == (CLAUDE, GPT)
    session = store.create_session(model=first)
    runtime = SessionRuntime(store=store, session_id=session.id, workspace=workspace)
    settings = settings_for(first)
    await drive(runtime.agent_for(settings), "hi")
    await drive(runtime.agent_for(settings), "again")
    switched = runtime.agent_for(settings.with_values(model=second))
    await drive(switched, "now you")
    one, two, three = _systems(record)
    assert one == two, "the block is the same bytes on every turn of one model"
    assert discipline_block(first) in one and discipline_block(second) not in one
    assert discipline_block(second) in three and discipline_block(first) not in three
    assert runtime.rebuilds == 2


class _Probe(Tool):
    def __init__(self, name: str):
        self.name = name
        self.description = "a probe"
        self.parameters = {"type": "object", "properties": {}}


def test_search_mode_offers_only_read_only_tools_and_its_prompt(workspace):
    settings = settings_for("scripted/a.json", prompt_mode="search")
    build = build_agent(settings, workspace, extra_tools=(_Probe("ctx_probe"),), mcp_tools=(_Probe("mcp__x__y"),))
    names = build.tools.names
    assert set(SEARCH_TOOLS) <= set(names)
    assert all(name in SEARCH_TOOLS or name.startswith("ctx_") for name in names), names
    assert "ctx_search" in names and "ctx_probe" in names
    for gone in (
        "file_write",
        "file_edit",
        "bash",
        "bash_output",
        "bash_kill",
        "web_fetch",
        "session_note",
        "mcp__x__y",
    ):
        assert gone not in names
    assert build.system_prompt.text == base_prompt("search")
    assert "read-only" in base_prompt("search") and "<" not in base_prompt("search")
    full = build_agent(settings.with_values(prompt_mode="full"), workspace)
    assert "bash" in full.tools.names and full.fingerprint != build.fingerprint


def test_prompt_modes_match_the_schema_choices():
    [spec] = [s for s in SETTINGS if s.key == "prompt_mode"]
    assert spec.choices == PROMPT_MODES


class _Manager:
    """The McpManager surface sync_mcp_tools reads: one ready server offering one tool."""

    def starting(self) -> list[str]:
        return []

    async def wait_started(self) -> None:
        return None

    def connections(self) -> list[object]:
        return []

    def tools(self, *, trust_read_only_hints: bool = False) -> tuple[Tool, ...]:
        return (_Probe("mcp__srv__lookup"),)

    def session_tools(self, store, session_id: str, *, trust_read_only_hints: bool = False) -> tuple[Tool, ...]:
        return self.tools(trust_read_only_hints=trust_read_only_hints)  # one tool: no order to keep

    def sync_turn(self, agent):
        from myrm_tui.mcp.agent_sync import sync_mcp_tools

        return sync_mcp_tools(agent)  # as the real manager does


async def test_search_mode_mcp_sync_does_not_rebuild_every_turn(store, workspace):
    from myrm_tui.agent.agent import Agent
    from myrm_tui.mcp.agent_sync import sync_mcp_tools

    session = store.create_session(model="scripted/a.json")
    settings = settings_for("scripted/a.json", prompt_mode="search")
    agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace, mcp=_Manager())
    before = agent.build
    notices = [notice async for notice in sync_mcp_tools(agent)]
    assert agent.build is before and notices == []
    assert "mcp__srv__lookup" not in agent.build.tools.names
