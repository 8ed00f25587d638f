"""Where a map's items come from: an inline list, a JSONL file (or vault handle), the files a
glob matches, or the hits of a ctx_search.

Why here, with the file tools: items are read the way file_read reads (fenced to the workspace,
no link followed, binaries refused), and the vault handle of an earlier map's JSONL is an items
file too, so maps chain. Every item is redacted before it is sent: the map's model may be the
lite model of another provider, and secrets never leave for a second provider.
"""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.agent.map.spec import MAX_ITEM_CHARS, MAX_ITEMS
from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.agent.tools.files.paths import display_path, fence
from myrm_tui.agent.tools.files.read import looks_binary, read_fenced
from myrm_tui.agent.tools.search import glob_files
from myrm_tui.redact import redact
from myrm_tui.store.vault import Vault

SOURCES = ("items", "items_file", "files", "search")
# The biggest items file read: 5,000 items of a few kilobytes each.
MAX_ITEMS_FILE_BYTES = 32 * 1024 * 1024
# Bytes read of one file of a `files` map: a few times what one item may send, so a cut is seen.
MAX_FILE_BYTES = 4 * MAX_ITEM_CHARS
# Hits one `search` map may take (the store's ranking stops helping long before that).
MAX_SEARCH_HITS = 200


def as_item(value: Any) -> str:
    """A string item is sent as it is; any other JSON value as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def gather(args: dict[str, Any], ctx: ToolContext) -> list[str]:
    """The call's items, redacted, in order; ToolError naming what to fix."""
    given = [name for name in SOURCES if args.get(name) not in (None, "", [])]
    if len(given) != 1:
        named = ", ".join(given) if given else "none"
        raise ToolError(f"give exactly one item source of {', '.join(SOURCES)} (got: {named}).")
    source = given[0]
    if source == "items":
        raw = args["items"]
        if not isinstance(raw, list):
            raise ToolError("items must be a JSON array (strings or objects).")
        items = [as_item(value) for value in raw]
    elif source == "items_file":
        items = _jsonl(str(args["items_file"]), ctx)
    elif source == "files":
        items = _files(str(args["files"]), ctx)
    else:
        items = _hits(str(args["search"]), ctx)
    if not items:
        raise ToolError(f"{source} gave no items; nothing to map.")
    if len(items) > MAX_ITEMS:
        raise ToolError(f"{source} gave {len(items):,} items; one map takes at most {MAX_ITEMS:,}. Split it.")
    return [redact(item).text for item in items]


def _jsonl(path: str, ctx: ToolContext) -> list[str]:
    if path.startswith(Vault.HANDLE_PREFIX):
        if ctx.vault is None:
            raise ToolError("no vault is open in this session, so a vault:// items_file cannot be read.")
        try:
            data = ctx.vault.read_bytes(path)
        except Exception as exc:  # VaultError and OS errors read the same to the model
            raise ToolError(f"cannot read {path}: {exc}") from exc
        label = path
    else:
        fenced = fence(path, ctx)
        label = display_path(fenced.path, ctx)
        found = read_fenced(fenced, label, limit=MAX_ITEMS_FILE_BYTES + 1)
        if found is None:
            raise ToolError(f"{label} does not exist; check the path (glob can list files).")
        if len(found) > MAX_ITEMS_FILE_BYTES:
            raise ToolError(f"{label} is over {MAX_ITEMS_FILE_BYTES // (1024 * 1024)} MB; split it.")
        data = found
    items = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(as_item(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"{label} line {number} is not JSON ({exc.msg}); items_file takes one JSON value a line."
            ) from None
    return items


def _files(pattern: str, ctx: ToolContext) -> list[str]:
    pattern = pattern.strip()
    if not pattern:
        raise ToolError("files is an empty pattern; e.g. 'src/**/*.py'.")
    items = []
    for rel in glob_files(pattern, ctx.workspace):
        fenced = fence(rel, ctx)
        data = read_fenced(fenced, rel, limit=MAX_FILE_BYTES)
        if data is None or looks_binary(data):
            continue  # gone since the walk, or not text: not an item
        items.append(f"path: {rel}\n{data.decode('utf-8', errors='replace')}")
    return items


def _hits(query: str, ctx: ToolContext) -> list[str]:
    from myrm_tui.context.recall.answers import search_hits

    if ctx.store is None or not ctx.session_id:
        raise ToolError("search needs the session's store, and none is open here.")
    hits = search_hits(ctx.store, ctx.session_id, query, MAX_SEARCH_HITS)
    return [f"{hit.handle}\n{hit.snippet}" for hit in hits]
