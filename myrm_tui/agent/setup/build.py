"""Everything an Agent is built from, resolved once: model info, tools, system prompt, hash.

Why a separate value: the SessionRuntime builds it to compare fingerprints, and hands the same
object to the Agent it creates, so workspace rules are read once per build and the prompt the
fingerprint covers is byte-for-byte the prompt that is sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.agent.setup.fingerprint import execution_fingerprint
from myrm_tui.agent.setup.prompts import SystemPrompt, build_system_prompt, offers_tool
from myrm_tui.agent.tools.base import Tool
from myrm_tui.agent.tools.llm_map import MAP_MIN_WINDOW
from myrm_tui.agent.tools.registry import ToolRegistry, default_tools
from myrm_tui.llm.models.capability_class import effective_model
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.settings import Settings


def resolve_model_info(settings: Settings, *, cap: bool = True) -> ModelInfo:
    """Registry facts for the configured model with the user's per-model overrides on top;
    the `api_base` setting, when set, is the endpoint of the main model. With `cap`, the window
    is the one the engine plans with: lowered by the `window_cap` setting (llm/models/capability_class.py)."""
    from myrm_tui.llm.models.registry import info

    model = info(settings.model, settings.models)
    if settings.api_base and model.api_base != settings.api_base:
        model = dataclasses.replace(model, api_base=settings.api_base)
    if cap:
        model = effective_model(model, str(settings.window_cap), settings.models)
    return model


@dataclass(frozen=True)
class AgentBuild:
    settings: Settings
    model: ModelInfo
    tools: ToolRegistry  # empty when the model cannot call tools
    system_prompt: SystemPrompt
    fingerprint: str


def build_agent(
    settings: Settings,
    workspace: Path,
    extra_tools: Sequence[Tool] = (),
    model: ModelInfo | None = None,
    mcp_tools: Sequence[Tool] = (),
) -> AgentBuild:
    """`mcp_tools`: the MCP servers' tools at this moment (McpManager.tools); they are part of the
    tool schemas, so the fingerprint changes exactly when that sorted list does."""
    model = model or resolve_model_info(settings)
    mode = settings.prompt_mode
    maps = model.context_window >= MAP_MIN_WINDOW  # agent/tools/llm_map.py: what their schemas cost
    offered = default_tools(extra_tools, mcp_tools, maps=maps) if model.supports_tools else ()
    tools = ToolRegistry([tool for tool in offered if offers_tool(mode, tool.name)])
    prompt = build_system_prompt(mode, workspace, tools_enabled=model.supports_tools, model=model.name)
    fingerprint = execution_fingerprint(settings, tools.schemas(), prompt.text)
    return AgentBuild(settings, model, tools, prompt, fingerprint)
