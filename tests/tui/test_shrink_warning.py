"""The "Switch to a smaller window?" figures: the prompt part the new model will carry, against
its own prompt limit, whatever source the last reading came from."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import cast

from myrm_tui.tui.figures.event_figures import ContextReading
from myrm_tui.tui.screens.chat.dialogs import _shrink_warning
from myrm_tui.tui.screens.chat.parts import ChatParts
from tests.tui.tui_pilot_helpers import scripted_settings


def _screen(reading: ContextReading, model: str) -> ChatParts:
    """The two things the warning reads of the chat screen: the settings and the last reading."""
    settings = scripted_settings(model)
    chat = SimpleNamespace(effective_settings=lambda: settings)
    return cast(ChatParts, SimpleNamespace(chat=chat, context=SimpleNamespace(reading=reading)))


def test_after_a_compaction_a_chat_only_model_is_judged_without_the_fixed_part(tmp_path):
    """A compaction's reading has no history figure (its `used` is our own count, system prompt
    and tool schemas included): 6k of which 3k fixed is 3k for the embedded model, under half
    its ~7.4k limit. A model with tools and a 16k window carries all 6k: over half its 11.6k."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"context_window": 16000, "turns": [{"text": "x"}]}))
    compaction = ContextReading(used=6000, fixed_tokens=3000, history_tokens=None, source="compaction")
    assert _shrink_warning(_screen(compaction, f"scripted/{tools}"), "local/smollm2") is None
    warned = _shrink_warning(_screen(compaction, "local/smollm2"), f"scripted/{tools}")
    assert warned is not None and "needs about 6.0k tokens" in warned, warned
    usage = ContextReading(used=6000, fixed_tokens=3000, history_tokens=3000, source="usage")
    assert _shrink_warning(_screen(usage, f"scripted/{tools}"), "local/smollm2") is None
