"""myrm: a terminal chat agent with a lossless, cache-stable context engine.

Importing the package sets the environment that keeps litellm and tiktoken offline-safe and
stops litellm from loading a `.env` file (_offline_env.py). It must be in place before litellm
is first imported anywhere (litellm reads it at import), so it lives here, at the root every
entry point passes through: `myrm`, `python -m myrm_tui`, `python -m myrm_tui.llm.local.llama_server`,
the embedded model's worker process, the bench and the tests (both import this package first).
"""

from myrm_tui._offline_env import apply_offline_env

apply_offline_env()

__version__ = "0.1.0"
