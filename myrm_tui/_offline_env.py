"""Environment defaults that make litellm and tiktoken work with no network.

Why: litellm fetches its model price map from the internet at import unless
LITELLM_LOCAL_MODEL_COST_MAP is set (10+ s stall offline), and tiktoken downloads its
encodings on first use unless TIKTOKEN_CACHE_DIR points at a folder that has them. litellm
ships cl100k and o200k in its own package, so we point tiktoken there. We locate litellm with
importlib's finder, which does not import it (importing costs seconds).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def litellm_tokenizer_dir() -> Path | None:
    """The folder of tiktoken files bundled in litellm, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "litellm_core_utils" / "tokenizers"
        if candidate.is_dir():
            return candidate
    return None


def apply_offline_env() -> None:
    """Set offline-safe defaults; a value the user already exported wins."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
