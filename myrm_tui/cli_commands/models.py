"""`myrm models`: what the registry knows about models (window, features, prices)."""

from __future__ import annotations

import dataclasses
import json

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
    from myrm_tui.llm import registry
    from myrm_tui.llm.model_names import prefixed_name

    overrides = context.settings.models
    # Shown as typed on --model ("openai/gpt-4o"), except models declared in config, which keep
    # the name they were declared under; a bare map key whose prefixed twin is also in the map
    # ("deepseek-chat" and "deepseek/deepseek-chat") is listed once. "openai/gpt-4o" must find
    # the map's bare "gpt-4o": the registry is searched for the last part, and the shown names
    # are matched against the whole text.
    own = set(registry.own_models(overrides))
    needle = search.strip().lower()
    everything, seen = [], set()
    for found_model in registry.search(needle.rsplit("/", 1)[-1], limit=ALL_MATCHES, overrides=overrides):
        shown = found_model.name if found_model.name in own else prefixed_name(found_model.name, found_model.provider)
        named = dataclasses.replace(found_model, name=shown)
        if needle in named.name.lower() and named.name not in seen:
            seen.add(named.name)
            everything.append(named)
    found = everything[:limit]
    if json_out:
        print(
            json.dumps(
                [{**dataclasses.asdict(m), "ready": registry.is_ready(m, overrides)} for m in found],
                ensure_ascii=False,
                indent=2,
            )
        )
        return EXIT_OK
    if not found:
        err(f"no model matches {search!r}; try a shorter search such as a provider name.")
        return EXIT_OK
    rows = [
        [
            m.name,
            _flag(registry.is_ready(m, overrides)),
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
    print(format_table(headers, rows, right={2, 3, 8, 9}))
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
