"""litellm's bundled model map (window, output cap, features, prices), read without importing litellm.

Why not `litellm.model_cost`: importing litellm costs 5-15 s, and `myrm models`, `myrm doctor`,
the settings screen and the model-name check only need this table. With
LITELLM_LOCAL_MODEL_COST_MAP set (myrm_tui/_offline_env.py) litellm's own table is this same file
with its alias rows expanded, which `load_model_map` does too (tests/llm/test_model_map.py holds
the two equal). Found with importlib's finder, like the offline tokenizer files.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"
# The file's rules for models newer than its rows ("any claude-<family>-<n> has a 200k window").
GENERALIZATIONS_KEY = "fallback_generalizations"
# Top-level keys of the file that are not models (litellm's RESERVED_TOP_LEVEL_KEYS).
RESERVED_KEYS = frozenset({"sample_spec", GENERALIZATIONS_KEY})


def map_path() -> Path | None:
    """The bundled map inside the installed litellm, or None when litellm is not installed."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / MAP_FILE
        if candidate.is_file():
            return candidate
    return None


def expand_aliases(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Model name -> entry, with litellm's alias rules: a row `{"alias_of": X}` is served as X's
    entry, and a row's `aliases` list adds names for it, unless a name is already taken."""
    entries = {k: dict(v) for k, v in raw.items() if k not in RESERVED_KEYS and isinstance(v, Mapping)}
    pointers = {name: e["alias_of"] for name, e in entries.items() if isinstance(e.get("alias_of"), str)}
    table = {name: e for name, e in entries.items() if name not in pointers}
    owners: dict[str, str] = {}
    for name, entry in table.items():
        for alias in entry.get("aliases") or ():
            if isinstance(alias, str) and alias not in owners and (alias not in entries or alias in pointers):
                owners[alias] = name
    for alias, target in pointers.items():
        if target in table and alias not in owners:
            owners[alias] = target
    for entry in table.values():
        entry.pop("aliases", None)
    for alias, owner in owners.items():
        table[alias] = table[owner]
    return table


@functools.lru_cache(maxsize=1)
def _raw_map() -> dict[str, Any]:
    path = map_path()
    if path is None:
        return {}
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


@functools.lru_cache(maxsize=1)
def load_model_map() -> dict[str, dict[str, Any]]:
    """The bundled map, parsed once per process (about 0.2 s); empty when litellm is missing or
    the file cannot be read (every model is then "unknown", nothing crashes)."""
    return expand_aliases(_raw_map())


@functools.lru_cache(maxsize=1)
def _window_rules() -> tuple[re.Pattern[str], ...]:
    """The patterns of the generalization rules that give a model a window (the only rules that
    make litellm call an unmapped name known), compiled as litellm does (case-insensitive)."""
    block = _raw_map().get(GENERALIZATIONS_KEY)
    rules = block.get("rules") if isinstance(block, dict) else None
    patterns = []
    for rule in rules if isinstance(rules, list) else ():
        info = rule.get("model_info") if isinstance(rule, dict) else None
        if isinstance(info, dict) and (info.get("max_input_tokens") or info.get("max_tokens")):
            try:
                patterns.append(re.compile(str(rule.get("pattern")), re.IGNORECASE))
            except re.error:
                continue
    return tuple(patterns)


def litellm_may_know(model: str) -> bool:
    """Whether litellm's own lookup could call `model` known although the map has no row for it
    (a Claude family newer than the map, Vertex's `@version`, Bedrock's regional ids): only then
    is it worth importing litellm to ask. A typo such as `gpt4o` matches no rule and is answered
    from the file alone."""
    return any(pattern.search(model) for pattern in _window_rules())
