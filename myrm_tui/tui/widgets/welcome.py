"""The first thing an empty session shows: which model answers, what it can do, how to change it.

Why: a newcomer on the embedded model otherwise asks it to read a file and gets a confident guess
(a 135M chat model has no tools). The welcome names the model and its limits before the first
message, and the two ways out: another model (quick switch, settings) or a provider key. It is
removed as soon as the first message is sent.

The model description is built from the name alone at first paint (no registry lookup: that
imports litellm, which takes seconds) and refined once the app has warmed up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css

# What the embedded model is, in the words a newcomer needs (it cannot use tools).
EMBEDDED_DESCRIPTION = (
    "the embedded SmolLM2-135M: runs offline with no key, but it is a small chat-only "
    "model — no tools, so it cannot read, edit or run anything"
)
# Provider variables named in the hint; `myrm doctor` lists all of them.
KEY_EXAMPLES = "ANTHROPIC_API_KEY or OPENAI_API_KEY"


@dataclass(frozen=True)
class WelcomeKeys:
    """The keys the welcome names, as currently bound (the keymap may move them)."""

    switch_model: str = "Ctrl+O"
    settings: str = "F2"
    help: str = "F1"


def describe_model(model: str | None, window: int | None = None, tools: bool | None = None) -> str:
    """One line about the model; window and tools when known."""
    if not model:
        return "being chosen (the first provider whose key is set, else the embedded model)"
    if model.startswith("local/"):
        return f"{model} — {EMBEDDED_DESCRIPTION}"
    facts = []
    if window:
        facts.append(f"{window // 1000:,}k-token window" if window >= 1000 else f"{window}-token window")
    if tools is not None:
        facts.append(
            "reads, edits and runs things with tools (asks before changes)" if tools else "no tool calling: plain chat"
        )
    return f"{model}" + (f" — {', '.join(facts)}" if facts else "")


def wants_key_hint(
    model: str | None, *, own_endpoint: bool = False, provider: str | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Whether the welcome tells the user to export a provider key: for the embedded model (or
    none yet), the way out to a hosted one; for a hosted model whose provider's key is not set.
    Not for a model with an endpoint of the user's own (an `api_base`) nor one no listed
    provider's key opens (Ollama, a declared server): a newcomer would go and get a key the model
    does not need. `provider`: the registry's, once known (else the name's prefix)."""
    if not model or model.startswith("local/"):
        return True
    if own_endpoint:
        return False
    provider = provider or (model.split("/", 1)[0] if "/" in model else None)
    env = os.environ if env is None else env
    for name, var, _prefix in PROVIDER_KEYS:
        if name == provider:
            return not env.get(var, "").strip()
    return False


def welcome_text(
    model: str | None,
    keys: WelcomeKeys,
    window: int | None = None,
    tools: bool | None = None,
    *,
    key_hint: bool = True,
) -> str:
    lines = [
        "Welcome to myrm.",
        f"Model: {describe_model(model, window, tools)}.",
        f"Another model: {keys.switch_model} (quick switch) or {keys.settings} (settings).",
    ]
    if key_hint:
        lines.append(f"A hosted model: export its key ({KEY_EXAMPLES}; `myrm doctor` lists the names) and restart.")
    lines.append(f"{keys.help} lists every key · / commands · @ attaches a workspace path.")
    return "\n".join(lines)


class Welcome(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(
        self, model: str | None, keys: WelcomeKeys, *, own_endpoint: bool = False, id: str | None = None
    ) -> None:
        """`own_endpoint`: the model is reached at an `api_base` the user configured (no key hint)."""
        hint = wants_key_hint(model, own_endpoint=own_endpoint)
        super().__init__(Content(for_terminal(welcome_text(model, keys, key_hint=hint))), id=id)
        self.model = model
        self.keys = keys
        self.own_endpoint = own_endpoint

    def refine(self, model: str | None, window: int | None, tools: bool | None, provider: str | None = None) -> None:
        """Fill in what the registry knows once it is loaded (after the first paint)."""
        self.model = model
        hint = wants_key_hint(model, own_endpoint=self.own_endpoint, provider=provider)
        self.update(Content(for_terminal(welcome_text(model, self.keys, window, tools, key_hint=hint))))
