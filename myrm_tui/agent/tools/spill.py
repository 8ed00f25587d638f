"""Big outputs go to the vault; the prompt gets a real excerpt and the handle to the rest.

Why an excerpt chosen by the smart filter: for a known command it keeps the lines a developer
looks at (failures, errors, summaries) plus head and tail; the marker names the exact call that
reads the rest, so nothing is lost to the model.

Indexing is not done here: the agent stores the result that names the handle together with the
artifact's search index, in one transaction (`Store.append_message(..., artifacts=...)`), so a
tool that spills (bash does, inside its run) and one whose output the agent spills afterwards
are both searchable, and a kill can never leave a handle without its index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from myrm_tui.context.rows.ingest import spill_text
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.store.vault import Vault


def spill_if_large(
    text: str,
    cap: int,
    vault: Vault | None,
    *,
    tool: str = "",
    arguments: Mapping[str, Any] | None = None,
    filters: Sequence[FilterSpec] = (),
) -> tuple[str, str | None]:
    """Return (inline text, vault handle or None). Above `cap` the full text goes to the vault
    and the inline text is the smart filter's excerpt (errors, failures, summaries, head and
    tail) headed by the handle. The caller stores the handle's text with the result. `filters`:
    the session's declarative output filters (`Settings.output_filters`)."""
    return spill_text(text, tool=tool, arguments=arguments or {}, cap_chars=cap, vault=vault, filters=filters)
