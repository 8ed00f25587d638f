"""Environment settings that make litellm and tiktoken work with no network, and keep litellm
from reading a `.env` file.

Why offline: litellm fetches its model price map from the internet at import unless
LITELLM_LOCAL_MODEL_COST_MAP is set (10+ s stall offline), and tiktoken downloads its
encodings on first use unless TIKTOKEN_CACHE_DIR points at a folder that has them. litellm
ships cl100k and o200k in its own package, so we point tiktoken there. We locate litellm with
importlib's finder, which does not import it (importing costs seconds).

Why no `.env`: unless LITELLM_MODE is PRODUCTION, importing litellm calls python-dotenv's
`load_dotenv()`, which looks for a `.env` in litellm's own folder and in every folder above it
(or above the current folder, when run from `python -c`, a REPL or a debugger). With myrm
installed in a project's `.venv`, that is the project's `.env`: a cloned repository could set
OPENAI_BASE_URL there and receive the user's API key with every request, with no trust asked.
myrm reads its configuration from its own files only, so it always sets PRODUCTION (the only
thing litellm's mode changes outside its proxy server is this load), overriding any exported
value.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

# litellm reads it once, at import (litellm/_process_defaults.py): any value but "DEV" (its
# default) skips the `.env` load.
LITELLM_MODE_VAR = "LITELLM_MODE"
NO_DOTENV_MODE = "PRODUCTION"


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
    """Set offline-safe defaults (a value the user already exported wins) and turn litellm's
    `.env` loading off (always: see the module doc)."""
    os.environ[LITELLM_MODE_VAR] = NO_DOTENV_MODE
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
