"""`myrm models`: what the registry knows about models (window, features, prices)."""

from __future__ import annotations

import dataclasses

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import EXIT_OK, EXIT_USAGE, bootstrap, err, format_table

PER_MILLION = 1_000_000  # prices are stored per token and shown per 1M tokens, as providers quote them
# Every match is ranked before the first `limit` are shown, so the count of the rest is exact.
ALL_MATCHES = 1_000_000


def models_command(search: str, limit: int, json_out: bool) -> int:
    if limit < 1:
        err("error: --limit must be at least 1.")
        return EXIT_USAGE
    context = bootstrap()
    if context is None:
        return EXIT_USAGE
    from myrm_tui.llm.models import registry
    from myrm_tui.llm.models.check import is_ready

    overrides = context.settings.models
    # Names as typed on --model ("openai/gpt-4o"; a model declared in config keeps its declared
    # name), matched loosely ("gpt4o" finds openai/gpt-4o): registry.search.
    everything = registry.search(search, limit=ALL_MATCHES, overrides=overrides)
    found = everything[:limit]
    if json_out:
        output.json_out([{**dataclasses.asdict(m), "ready": is_ready(m, overrides)} for m in found])
        return EXIT_OK
    if not found:
        err(f"no model matches {search!r}; try a shorter search such as a provider name.")
        return EXIT_OK
    rows = [
        [
            m.name,
            _flag(is_ready(m, overrides)),
            f"{m.context_window:,}",
            f"{m.max_output_tokens:,}",
            _flag(m.supports_tools),
            _flag(m.supports_vision),
            _flag(m.supports_prompt_caching),
            _flag(m.supports_reasoning),
            _price(m.input_cost_per_token),
            _price(m.output_cost_per_token),
        ]
        for m in found
    ]
    headers = ["MODEL", "READY", "WINDOW", "MAX OUT", "TOOLS", "VISION", "CACHE", "REASON", "IN $/1M", "OUT $/1M"]
    output.say(format_table(headers, rows, right={2, 3, 8, 9}))
    more = len(everything) - len(found)
    if more > 0:
        err(
            f"{more:,} more — use --limit N or --search TEXT. READY: runs now (embedded, declared in config, "
            "or its provider's key is set)."
        )
    return EXIT_OK


def _flag(value: bool) -> str:
    return "yes" if value else "-"


def _price(per_token: float) -> str:
    return f"{per_token * PER_MILLION:.2f}"
