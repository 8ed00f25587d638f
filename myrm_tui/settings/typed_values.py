"""Typed read access to every setting. GENERATED from settings/schema.py: do not edit.

Change the schema, then run `python -m myrm_tui.settings.gen_typed`; tests/settings/test_typed_values.py
fails while this file is out of date. Why it exists: `Settings` used a `__getattr__`, so every
`settings.<key>` was `Any` to mypy; these properties give each one the schema's type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from myrm_tui.settings.schema import SPECS_BY_KEY

# The values a setting with `choices` can take.
RestateObjective = Literal["auto", "on", "off"]
PromptMode = Literal["full", "lean", "naked", "search"]
Approval = Literal["ask", "auto-edit", "yolo", "deny"]
Sandbox = Literal["workspace-write", "read-only", "off"]
ReasoningEffort = Literal["off", "low", "medium", "high"]
EvictionOrder = Literal["auto", "recency", "relevance"]


class SettingChanges(TypedDict, total=False):
    """The keyword arguments of `Settings.with_values`: any schema key, with its type."""

    model: str
    lite_model: str
    summary_wait: bool
    restate_objective: RestateObjective
    cache_preheat: bool
    cache_keepalive: bool
    arrival_summary: bool
    api_base: str
    prompt_mode: PromptMode
    approval: Approval
    max_steps: int
    max_output_tokens: int
    bash_timeout: float
    bash_timeout_max: float
    tool_output_cap: int
    allow_outside_workspace: bool
    sandbox: Sandbox
    sandbox_network: bool
    sandbox_hide: str
    sandbox_max_processes: int
    sandbox_max_memory_mb: int
    shell_env_passthrough: str
    mcp_startup_timeout: float
    mcp_tool_timeout: float
    mcp_trust_read_only: bool
    web_fetch_timeout: float
    web_fetch_allow_private: bool
    reasoning_effort: ReasoningEffort
    llm_timeout: float
    llm_first_token_timeout: float
    llm_max_attempts: int
    local_threads: int
    protected_tools: str
    eviction_order: EvictionOrder
    prefix_anchor_turns: int
    removal_focus_band: int
    file_read_exempt: bool
    compact_while_answering: bool
    thinking_keep_turns: int
    eviction_min_age: int
    observation_keep_window: int
    window_cap: str
    theme: str
    animations: bool


class SettingValues:
    """Base of `Settings`: one read-only property per schema key (a value not set is the default)."""

    __slots__ = ()
    values: Mapping[str, Any]

    def _value(self, key: str) -> Any:
        # Any: `values` holds whatever the layers loaded; the schema checked each value's type when it
        # was set, which is why the properties below may `cast` it to that type.
        return self.values.get(key, SPECS_BY_KEY[key].default)

    @property
    def model(self) -> str:
        return cast(str, self._value("model"))

    @property
    def lite_model(self) -> str:
        return cast(str, self._value("lite_model"))

    @property
    def summary_wait(self) -> bool:
        return cast(bool, self._value("summary_wait"))

    @property
    def restate_objective(self) -> RestateObjective:
        return cast(RestateObjective, self._value("restate_objective"))

    @property
    def cache_preheat(self) -> bool:
        return cast(bool, self._value("cache_preheat"))

    @property
    def cache_keepalive(self) -> bool:
        return cast(bool, self._value("cache_keepalive"))

    @property
    def arrival_summary(self) -> bool:
        return cast(bool, self._value("arrival_summary"))

    @property
    def api_base(self) -> str:
        return cast(str, self._value("api_base"))

    @property
    def prompt_mode(self) -> PromptMode:
        return cast(PromptMode, self._value("prompt_mode"))

    @property
    def approval(self) -> Approval:
        return cast(Approval, self._value("approval"))

    @property
    def max_steps(self) -> int:
        return cast(int, self._value("max_steps"))

    @property
    def max_output_tokens(self) -> int:
        return cast(int, self._value("max_output_tokens"))

    @property
    def bash_timeout(self) -> float:
        return cast(float, self._value("bash_timeout"))

    @property
    def bash_timeout_max(self) -> float:
        return cast(float, self._value("bash_timeout_max"))

    @property
    def tool_output_cap(self) -> int:
        return cast(int, self._value("tool_output_cap"))

    @property
    def allow_outside_workspace(self) -> bool:
        return cast(bool, self._value("allow_outside_workspace"))

    @property
    def sandbox(self) -> Sandbox:
        return cast(Sandbox, self._value("sandbox"))

    @property
    def sandbox_network(self) -> bool:
        return cast(bool, self._value("sandbox_network"))

    @property
    def sandbox_hide(self) -> str:
        return cast(str, self._value("sandbox_hide"))

    @property
    def sandbox_max_processes(self) -> int:
        return cast(int, self._value("sandbox_max_processes"))

    @property
    def sandbox_max_memory_mb(self) -> int:
        return cast(int, self._value("sandbox_max_memory_mb"))

    @property
    def shell_env_passthrough(self) -> str:
        return cast(str, self._value("shell_env_passthrough"))

    @property
    def mcp_startup_timeout(self) -> float:
        return cast(float, self._value("mcp_startup_timeout"))

    @property
    def mcp_tool_timeout(self) -> float:
        return cast(float, self._value("mcp_tool_timeout"))

    @property
    def mcp_trust_read_only(self) -> bool:
        return cast(bool, self._value("mcp_trust_read_only"))

    @property
    def web_fetch_timeout(self) -> float:
        return cast(float, self._value("web_fetch_timeout"))

    @property
    def web_fetch_allow_private(self) -> bool:
        return cast(bool, self._value("web_fetch_allow_private"))

    @property
    def reasoning_effort(self) -> ReasoningEffort:
        return cast(ReasoningEffort, self._value("reasoning_effort"))

    @property
    def llm_timeout(self) -> float:
        return cast(float, self._value("llm_timeout"))

    @property
    def llm_first_token_timeout(self) -> float:
        return cast(float, self._value("llm_first_token_timeout"))

    @property
    def llm_max_attempts(self) -> int:
        return cast(int, self._value("llm_max_attempts"))

    @property
    def local_threads(self) -> int:
        return cast(int, self._value("local_threads"))

    @property
    def protected_tools(self) -> str:
        return cast(str, self._value("protected_tools"))

    @property
    def eviction_order(self) -> EvictionOrder:
        return cast(EvictionOrder, self._value("eviction_order"))

    @property
    def prefix_anchor_turns(self) -> int:
        return cast(int, self._value("prefix_anchor_turns"))

    @property
    def removal_focus_band(self) -> int:
        return cast(int, self._value("removal_focus_band"))

    @property
    def file_read_exempt(self) -> bool:
        return cast(bool, self._value("file_read_exempt"))

    @property
    def compact_while_answering(self) -> bool:
        return cast(bool, self._value("compact_while_answering"))

    @property
    def thinking_keep_turns(self) -> int:
        return cast(int, self._value("thinking_keep_turns"))

    @property
    def eviction_min_age(self) -> int:
        return cast(int, self._value("eviction_min_age"))

    @property
    def observation_keep_window(self) -> int:
        return cast(int, self._value("observation_keep_window"))

    @property
    def window_cap(self) -> str:
        return cast(str, self._value("window_cap"))

    @property
    def theme(self) -> str:
        return cast(str, self._value("theme"))

    @property
    def animations(self) -> bool:
        return cast(bool, self._value("animations"))
