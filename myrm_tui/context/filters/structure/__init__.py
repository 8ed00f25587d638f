"""Structural trimmers: show the shape of a document (keys, headings, symbols, levels)
instead of its first N characters. Each returns an `Excerpt`; `fit` enforces the budget."""

from __future__ import annotations

from collections.abc import Callable

from myrm_tui.context.filters.excerpt import Excerpt
from myrm_tui.context.filters.structure import code, data, log, markdown, markup

Trimmer = Callable[[str, list[str]], Excerpt | None]

TRIMMERS: dict[str, Trimmer] = {
    "json": data.trim_json,
    "yaml": data.trim_yaml,
    "csv": data.trim_table,
    "tsv": data.trim_table,
    "xml": markup.trim,
    "html": markup.trim,
    "log": log.trim,
    "markdown": markdown.trim,
    "code": code.trim,
}
