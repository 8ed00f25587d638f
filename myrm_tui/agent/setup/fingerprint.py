"""The execution fingerprint: one hash of everything that shapes the agent's behaviour.

Why: the TUI's settings screen changes values at any time; the agent must be rebuilt exactly
when something that reaches the model or the tools changed (model, endpoint, prompt, policy,
limits, tool schemas, workspace rules), and not when only the theme did, because a rebuild
resets the model's tool list and can cost a prompt-cache miss. Hashing canonical JSON of the
inputs makes "changed" a string comparison.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.settings import Settings


def fingerprint_inputs(
    settings: Settings, tool_schemas: Sequence[Mapping[str, Any]], system_prompt: str
) -> dict[str, Any]:
    """The exact data hashed (useful to show *what* changed when a fingerprint differs)."""
    shaping = {spec.key: getattr(settings, spec.key) for spec in SETTINGS if spec.shapes_agent}
    overrides = dict(settings.models.get(settings.model, {}) or {})
    data: dict[str, Any] = {
        "settings": shaping,
        "model_overrides": overrides,
        "tools": list(tool_schemas),
        "system_prompt": system_prompt,
    }
    if settings.output_filters:
        # The declarative output filters decide what the model reads of an output, so trusting a
        # workspace mid-session (its filters join the settings) rebuilds the agent that uses them.
        # Only when there are any: the fingerprints of sessions without filters stay as they were.
        data["output_filters"] = [f"{f.scope}:{f.name}:{f.path}" for f in settings.output_filters]
    return data


def execution_fingerprint(settings: Settings, tool_schemas: Sequence[Mapping[str, Any]], system_prompt: str) -> str:
    data = fingerprint_inputs(settings, tool_schemas, system_prompt)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
