"""The one settings schema: every configurable value, its type, default and help.

Config files, `MYRM_*` environment variables, CLI flags, `myrm doctor` and the TUI settings
screen are all generated from SETTINGS, so a value is declared exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SettingSpec:
    key: str  # dotted-free snake_case; TOML key, `MYRM_<KEY>` env var, `--key` flag
    type: type  # str, int, float or bool
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    section: str = "general"  # groups the settings screen; "advanced" is collapsed
    # Whether changing it changes the agent (part of the execution fingerprint).
    shapes_agent: bool = True


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec("model", str, "", "Main model, a litellm name (e.g. anthropic/claude-sonnet-4-5) or "
                "local/smollm2. Empty: the first provider with an API key, else the local model."),
    SettingSpec("lite_model", str, "", "Cheaper model for summaries; empty: the main model."),
    SettingSpec("api_base", str, "", "Custom OpenAI-compatible endpoint for the main model "
                "(Ollama, vLLM, LM Studio…)."),
    SettingSpec("prompt_mode", str, "full", "System prompt density.", choices=("full", "lean", "naked")),
    SettingSpec("approval", str, "ask", "Which tool calls need a yes: ask (bash and writes), "
                "auto-edit (bash only), yolo (none but destructive commands), deny (refuse all).",
                choices=("ask", "auto-edit", "yolo", "deny")),
    SettingSpec("max_steps", int, 50, "Most model calls in one turn before the agent stops."),
    SettingSpec("max_output_tokens", int, 4096, "Output tokens reserved and requested per call."),
    # 120 s: long enough for a test suite or a build, short enough that a hung command is noticed.
    SettingSpec("bash_timeout", float, 120.0, "Seconds before a bash command's process group is killed.",
                section="tools"),
    # 30k chars (~8k tokens): above this a tool output goes to the vault with a head+tail preview.
    SettingSpec("tool_output_cap", int, 30_000, "Characters of a tool output kept inline; the rest "
                "is stored in the vault and previewed.", section="tools"),
    SettingSpec("allow_outside_workspace", bool, False, "Let file tools touch paths outside the "
                "workspace root.", section="tools"),
    SettingSpec("llm_timeout", float, 600.0, "Seconds before a model call is abandoned.", section="advanced"),
    # 4 tries: enough to ride out a short rate-limit burst without hanging the user for minutes.
    SettingSpec("llm_max_attempts", int, 4, "Tries for a transient provider failure.", section="advanced"),
    SettingSpec("local_threads", int, 0, "CPU threads for the embedded model; 0 = all cores.",
                section="advanced"),
    SettingSpec("theme", str, "myrm-dark", "TUI theme name.", section="appearance", shapes_agent=False),
    SettingSpec("animations", bool, True, "Spinners and smooth scrolling in the TUI.",
                section="appearance", shapes_agent=False),
)

SPECS_BY_KEY: dict[str, SettingSpec] = {s.key: s for s in SETTINGS}
