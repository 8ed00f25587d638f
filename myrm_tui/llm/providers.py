"""Register myrm's own litellm providers ("scripted", "local", "replay", "replay-summarizer") once
per process.

Why a function and not import-time registration: registering needs litellm, and litellm is only
imported on the first model call. `stream()` calls this; other entry points that call
litellm.acompletion directly (a summarizer, `myrm doctor`) must call it too.
"""

from __future__ import annotations

import threading

_LOCK = threading.Lock()
_REGISTERED = False


def ensure_providers_registered() -> None:
    """Idempotent: add our handlers to litellm.custom_provider_map unless already there."""
    global _REGISTERED
    if _REGISTERED:
        return
    with _LOCK:
        if _REGISTERED:
            return
        from myrm_tui.llm.litellm_module import load_litellm

        litellm = load_litellm()
        from litellm.utils import custom_llm_setup

        from myrm_tui.llm.fake_providers import recorded, replay_summarizers, scripted
        from myrm_tui.llm.local import provider as local_provider

        wanted = {
            scripted.PROVIDER: scripted.make_handler,
            local_provider.PROVIDER: local_provider.make_handler,
            # `myrm replay`: recorded assistant turns and the benchmark's fake summarizers.
            recorded.PROVIDER: recorded.make_handler,
            replay_summarizers.PROVIDER: replay_summarizers.make_handler,
        }
        present = {item["provider"] for item in litellm.custom_provider_map}
        for name, factory in wanted.items():
            if name not in present:
                litellm.custom_provider_map.append({"provider": name, "custom_handler": factory()})
        # litellm copies the map into its provider lists on its next call; do it now so model
        # name parsing ("scripted/..." -> provider "scripted") works for helpers such as
        # get_llm_provider before the first completion.
        custom_llm_setup()
        _REGISTERED = True
