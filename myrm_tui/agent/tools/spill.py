"""Big outputs go to the vault; the prompt gets a real excerpt and the handle to the rest.

Why an excerpt chosen by the smart filter: for a known command it keeps the lines a developer
looks at (failures, errors, summaries) plus head and tail; the marker names the exact call that
reads the rest, so nothing is lost to the model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from myrm_tui.context.ingest import spill_text
from myrm_tui.store.vault import Vault

_log = logging.getLogger(__name__)


def _index_quietly(store: Any, session_id: str, handle: str, text: str) -> None:
    """Indexing is a convenience on top of a spill that already succeeded: if it fails the
    output is still in the vault and its handle in the result, so log and carry on."""
    try:
        store.index_artifact(session_id, handle, text)
    except Exception:  # noqa: BLE001 - any failure here must not lose the tool's output
        _log.warning("could not index spilled output %s for search", handle, exc_info=True)


def spill_if_large(text: str, cap: int, vault: Vault | None, *, store: Any = None,
                   session_id: str | None = None, tool: str = "",
                   arguments: Mapping[str, Any] | None = None) -> tuple[str, str | None]:
    """Return (inline text, vault handle or None). Above `cap` the full text goes to the vault
    and the inline text is the smart filter's excerpt (errors, failures, summaries, head and
    tail) headed by the handle; the same path `myrm replay` uses (context/ingest.py).

    Given a store and session, the spilled artifact is also indexed so ctx_search finds text
    from the part the prompt no longer shows."""
    inline, handle = spill_text(text, tool=tool, arguments=arguments or {}, cap_chars=cap, vault=vault)
    if handle is not None and store is not None and session_id:
        _index_quietly(store, session_id, handle, text)
    return inline, handle
