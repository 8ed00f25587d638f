"""The opt-in cache preheat at session open (`cache_preheat`): the first message finds a warm cache.

Why at open and in a worker: the seed's "agent initialization" preheat pays the cache write of the
system prompt and tools while the user is still typing. The TUI otherwise builds the agent with
the first message, so here the agent is built as soon as the model is resolved (after the first
paint, off the UI's critical path) and never while the workspace trust question is open: the
answer decides the settings, and so the prefix. A failure costs only the warm cache, so it is a
quiet note, never an error.
"""

from __future__ import annotations

from typing import Any

# How long the quiet note of a failed preheat stays up.
FAILURE_NOTICE_S = 4.0


def start_session_preheat(app: Any) -> bool:
    """Start the preheat of `app`'s current session when it is due; True when started. Called when
    the model is resolved and when a trust decision is made (whichever comes last starts it)."""
    chat = getattr(app, "chat", None)
    if chat is None or chat.preheat_started or chat.model is None or getattr(app, "trust_prompt", None) is not None:
        return False
    if not chat.effective_settings().cache_preheat:
        return False
    chat.preheat_started = True
    app.run_worker(_preheat(app, chat), group="cache-preheat", exit_on_error=False)
    return True


async def _preheat(app: Any, chat: Any) -> None:
    from myrm_tui.agent.cache_warmth import CacheWarmth
    from myrm_tui.llm.models import registry

    try:
        settings = chat.effective_settings()
        if not registry.info(settings.model, settings.models).supports_prompt_caching:
            return  # no provider cache to warm: no agent (and no session row) before the first message
        agent = chat.open_agent()
        probe = await CacheWarmth(agent).preheat(at_open=True)
    except Exception as exc:  # noqa: BLE001 - a failed preheat only means a cold first request
        app.notify(f"Cache preheat skipped: {exc}", severity="information", timeout=FAILURE_NOTICE_S)
        return
    chat.preheat_probe = probe
