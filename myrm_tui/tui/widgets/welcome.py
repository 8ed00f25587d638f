"""The first thing an empty session shows: which model answers, what it can do, how to change it.

Why: a newcomer on the embedded model otherwise asks it to read a file and gets a confident guess
(a 135M chat model has no tools). The welcome names the model and its limits before the first
message, and the two ways out: another model (quick switch, settings) or a provider key. It is
removed as soon as the first message is sent.

The model description is built from the name alone at first paint (no registry lookup: that
imports litellm, which takes seconds) and refined once the app has warmed up.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

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


def welcome_text(model: str | None, keys: WelcomeKeys, window: int | None = None, tools: bool | None = None) -> str:
    lines = [
        "Welcome to myrm.",
        f"Model: {describe_model(model, window, tools)}.",
        f"Another model: {keys.switch_model} (quick switch) or {keys.settings} (settings).",
        f"A hosted model: export its key ({KEY_EXAMPLES}; `myrm doctor` lists the names) and restart.",
        f"{keys.help} lists every key · / commands · @ attaches a workspace path.",
    ]
    return "\n".join(lines)


class Welcome(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, model: str | None, keys: WelcomeKeys, *, id: str | None = None) -> None:
        super().__init__(Content(for_terminal(welcome_text(model, keys))), id=id)
        self.model = model
        self.keys = keys

    def refine(self, model: str | None, window: int | None, tools: bool | None) -> None:
        """Fill in what the registry knows once it is loaded (after the first paint)."""
        self.model = model
        self.update(Content(for_terminal(welcome_text(model, self.keys, window, tools))))
