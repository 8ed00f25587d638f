"""JSON, YAML and CSV/TSV.

JSON is parsed and re-rendered as a skeleton in the canonical 2-space layout (so a minified
1-line payload becomes readable): keys to a depth, the first items of arrays, counts of the
rest. Walking the parsed value costs only what is shown, not the size of the document.
YAML and tables keep their own lines: YAML by indentation outline, tables as header + first
and last rows with the row/column count.
"""

from __future__ import annotations

import json
import re
from typing import Any

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import table_delimiter
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Piece, Tier

INDENT = "  "


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return f"object with {len(value):,} keys"
    if isinstance(value, list):
        return f"array of {len(value):,} items"
    return type(value).__name__


def trim_json(text: str, lines: list[str]) -> Excerpt | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    ex = Excerpt("json")
    ex.note(f"JSON {_shape(value)}; skeleton to depth {C.TREE_MAX_DEPTH}, canonical 2-space layout", Tier.IMPORTANT)
    _walk(ex, value, depth=0, prefix="", last=True, order=[0])
    return ex


def _walk(ex: Excerpt, value: Any, depth: int, prefix: str, last: bool, order: list[int]) -> None:
    """Emit `prefix + value` in json.dumps(indent=2) layout, with limits."""
    pad = INDENT * depth
    comma = "" if last else ","
    order[0] += 1
    tier = Tier.STRUCTURE if depth <= 1 else (Tier.CONTEXT if depth <= 2 else Tier.BULK)
    rank = depth * 1_000_000 + order[0]
    is_dict = isinstance(value, dict)
    if not isinstance(value, (dict, list)) or not value:
        text = ("{}" if is_dict else "[]") if isinstance(value, (dict, list)) else _scalar(value)
        ex.keep(f"{pad}{prefix}{text}{comma}", tier, rank=rank)
        return
    open_, close = ("{", "}") if is_dict else ("[", "]")
    ex.keep(f"{pad}{prefix}{open_}", tier, rank=rank)
    inner = INDENT * (depth + 1)
    if depth + 1 > C.TREE_MAX_DEPTH:
        ex.note(_shape(value), tier, indent=inner, rank=rank)
    else:
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        limit = C.TREE_MAX_KEYS if is_dict else C.TREE_MAX_ITEMS
        shown = items[:limit]
        for k, (key, child) in enumerate(shown):
            child_prefix = f"{_scalar(str(key))}: " if is_dict else ""
            is_last = k == len(items) - 1
            _walk(ex, child, depth + 1, child_prefix, is_last, order)
        if len(items) > limit:
            noun = "keys" if is_dict else "items"
            ex.note(f"{len(items) - limit:,} more {noun}", tier, indent=inner, rank=rank)
    ex.keep(f"{pad}{close}{comma}", tier, rank=rank)


def _indent_of(line: str) -> float:
    stripped = line.lstrip(" ")
    indent = float(len(line) - len(stripped))
    if stripped.startswith("- "):
        indent += 0.5  # `key:\n- item` — the item is a child of the key at the same column
    return indent


def outline(
    lines: list[str], kind: str, max_depth: int = C.TREE_MAX_DEPTH, promote: re.Pattern[str] | None = None
) -> Excerpt:
    """Indentation outline of real lines: at most `max_depth` levels and TREE_MAX_KEYS
    children per parent; dropped subtrees become `… N lines omitted (lines a–b) …`.
    Lines matching `promote` (titles, headings) are kept wherever they are."""
    ex = Excerpt(kind)
    drop = Dropper(ex, Tier.CONTEXT)
    stack: list[tuple[float, int]] = []  # (indent, children seen) of open ancestors
    top_count = 0
    for i, line in enumerate(lines):
        if not line.strip():
            drop.drop(i, "")
            continue
        indent = _indent_of(line)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        depth = len(stack)
        if stack:
            ind, seen = stack[-1]
            stack[-1] = (ind, seen + 1)
            index = seen + 1
        else:
            top_count += 1
            index = top_count
        limit = C.TREE_MAX_ITEMS if line.lstrip().startswith("- ") else C.TREE_MAX_KEYS
        ancestors_ok = all(seen <= C.TREE_MAX_KEYS for _, seen in stack[:-1])
        stack.append((indent, 0))
        if promote is not None and promote.search(line):
            drop.keep(line, Tier.IMPORTANT, i)
        elif depth < max_depth and index <= limit and ancestors_ok:
            tier = Tier.STRUCTURE if depth == 0 else (Tier.CONTEXT if depth <= 2 else Tier.BULK)
            drop.keep(line, tier, i, rank=depth * 1000 + index)
        else:
            drop.drop(i, "")
    drop.flush()
    return ex


def trim_yaml(text: str, lines: list[str]) -> Excerpt | None:
    ex = outline(lines, "yaml")
    ex.pieces.insert(0, _info(ex, f"YAML {len(lines):,} lines; outline to depth {C.TREE_MAX_DEPTH}"))
    return ex


def trim_table(text: str, lines: list[str]) -> Excerpt | None:
    rows = [ln for ln in lines if ln.strip()]
    delim = table_delimiter(rows[:40])
    if delim is None or len(rows) < 2:
        return None
    kind = "tsv" if delim == "\t" else "csv"
    ex = Excerpt(kind)
    columns = rows[0].count(delim) + 1
    ex.note(f"{kind.upper()} {len(rows) - 1:,} rows × {columns} columns (header, first and last rows)", Tier.IMPORTANT)
    n = len(lines)
    data_index = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if data_index == 0:
            ex.keep(line, Tier.IMPORTANT, line=i)
        else:
            from_end = n - i
            if data_index <= C.TABLE_HEAD_ROWS:
                ex.keep(line, Tier.CONTEXT, rank=data_index, line=i)
            elif from_end <= C.TABLE_TAIL_ROWS:
                ex.keep(line, Tier.CONTEXT, rank=from_end, line=i)
            else:
                ex.keep(line, Tier.BULK, line=i)
        data_index += 1
    return ex


def _info(ex: Excerpt, what: str) -> Piece:
    ex.note(what, Tier.IMPORTANT)
    return ex.pieces.pop()
