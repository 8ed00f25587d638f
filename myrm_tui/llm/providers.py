"""Register myrm's own litellm providers ("scripted" and "local") once per process.

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
        import litellm
        from litellm.utils import custom_llm_setup

        import myrm_tui  # noqa: F401  (offline env before litellm)
        from myrm_tui.llm import local_provider, scripted

        wanted = {scripted.PROVIDER: scripted.make_handler, local_provider.PROVIDER: local_provider.make_handler}
        present = {item["provider"] for item in litellm.custom_provider_map}
        for name, factory in wanted.items():
            if name not in present:
                litellm.custom_provider_map.append({"provider": name, "custom_handler": factory()})
        # litellm copies the map into its provider lists on its next call; do it now so model
        # name parsing ("scripted/..." -> provider "scripted") works for helpers such as
        # get_llm_provider before the first completion.
        custom_llm_setup()
        _REGISTERED = True
