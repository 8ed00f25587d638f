"""The capability-class cap on the context window (Comis's "capability-class cap").

Why: a model's advertised window is how much it accepts, not how much it uses well. Long-context
evaluations (RULER, NoLiMa) find recall falling well before the advertised length, and falling
first and furthest for small models: a 7-8B model served locally that accepts 128k answers from a
60k prompt worse than from a 30k one. The engine sizes every threshold from the window, so capping
the window is what makes a small model's prompts stay in the length it reads well; the history
left out stays recoverable (ctx_search / ctx_expand), which beats an answer from a prompt the
model no longer reads.

The cap only lowers the window. An explicit `[models."NAME"] context_window` beats the class
table (the user said what that model does); the `window_cap` setting's number beats both.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from myrm_tui.llm.models.info import ModelInfo

LOCAL, SMALL, FRONTIER = "local", "small", "frontier"
# The `window_cap` setting's words; any other value is a number of tokens.
CAP_AUTO, CAP_OFF = "auto", "off"
# Per class, the most window the engine plans with (None: the model's own). Not measured here
# (no replay can tell how well a model reads): a judgement from the published evaluations above,
# where most open models of ~8B keep their recall to about 32k, small hosted models to about 128k,
# and the frontier ones stay usable over their whole advertised window.
CLASS_CAPS: dict[str, int | None] = {LOCAL: 32_768, SMALL: 128_000, FRONTIER: None}
# Providers that run the model on the user's machine or server (a small open model, as a rule).
LOCAL_PROVIDERS = frozenset({"local", "ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm", "vllm"})
# Names of the small tier of each family: -mini, -nano, Haiku, Flash-Lite and Flash, -small, and
# open models by parameter count up to 14B (`qwen2.5-7b`, `llama-3.1-8b`, `phi-3`).
_SMALL_NAME = re.compile(
    r"(?:^|[/_\-.:])(?:mini|nano|haiku|flash(?:-lite)?|small|tiny|phi[-\d]*|gemma[-\d.]*)(?:$|[/_\-.:])"
    r"|(?:^|[/_\-.:])(?:[1-9]|1[0-4])(?:\.\d)?b(?:$|[/_\-.:])",
    re.IGNORECASE,
)
# The test and replay providers: a script states its window, as a declaration would.
SCRIPTED_PROVIDERS = frozenset({"scripted", "recorded", "replay-summarizer"})
_LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0")  # noqa: S104 - a host name compared, nothing bound


def capability_class(model: ModelInfo) -> str:
    """LOCAL (served on this machine or the user's own server), SMALL (a family's small tier) or
    FRONTIER (everything else)."""
    if model.provider in SCRIPTED_PROVIDERS:
        return FRONTIER
    host = urlparse(model.api_base).hostname if model.api_base else None
    if model.provider in LOCAL_PROVIDERS or model.name.split("/", 1)[0] in LOCAL_PROVIDERS or host in _LOOPBACK:
        return LOCAL
    if _SMALL_NAME.search(model.name):
        return SMALL
    return FRONTIER


def window_cap(model: ModelInfo, setting: str, declared: bool) -> int | None:
    """The cap on `model`'s window under the `window_cap` setting (None: no cap). `declared`: the
    user set this model's `context_window`, which the automatic table does not override."""
    value = setting.strip().lower()
    if value == CAP_OFF:
        return None
    if value == CAP_AUTO:
        return None if declared else CLASS_CAPS[capability_class(model)]
    return int(value)


def capped(model: ModelInfo, setting: str, declared: bool) -> ModelInfo:
    """`model` with its window lowered to the cap (its output reserve too, when it would not fit)."""
    cap = window_cap(model, setting, declared)
    if cap is None or model.context_window <= cap:
        return model
    return dataclasses.replace(model, context_window=cap, max_output_tokens=min(model.max_output_tokens, cap))


def effective_model(model: ModelInfo, setting: str, overrides: Mapping[str, Mapping[str, Any]]) -> ModelInfo:
    """`model` as the engine plans with it: `capped`, with `declared` read from the user's
    `[models."NAME"]` entries (`overrides`)."""
    declared = (overrides.get(model.name) or {}).get("context_window") is not None
    return capped(model, setting, declared)


def window_text(model: ModelInfo, uncapped: int) -> str:
    """The window as doctor and the settings screen show it: the effective figure, and the
    advertised one with the class when the cap lowered it."""
    klass = capability_class(model)
    if model.context_window < uncapped:
        return f"{model.context_window:,} tokens ({klass} model, capped from {uncapped:,} by window_cap)"
    return f"{model.context_window:,} tokens ({klass} model)"
