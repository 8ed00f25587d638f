"""The one way myrm imports litellm: offline-safe and silent.

Why one place: litellm prints banners ("Provider List: …", "Give Feedback / Get Help") with plain
`print` on stdout when a call or a lookup fails, unless `suppress_debug_info` is set. On stdout
they corrupt `myrm run --json` (which must print exactly one JSON object) and the TUI's screen.
Every module that needs litellm calls `load_litellm()`, so the flag is set before anything of
litellm's can print. The import itself stays lazy (it costs seconds; the UI paints first).
"""

from __future__ import annotations

from typing import Any


def load_litellm() -> Any:
    import litellm

    import myrm_tui  # noqa: F401  (sets LITELLM_LOCAL_MODEL_COST_MAP before litellm loads)

    litellm.suppress_debug_info = True
    return litellm
