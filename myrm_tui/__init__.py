"""myrm: a terminal chat agent with a lossless, cache-stable context engine.

Importing the package sets the two environment variables that keep litellm and tiktoken
offline-safe. They must be in place before litellm is first imported anywhere (litellm reads
them at import), so they live here, at the root every entry point passes through.
"""

from myrm_tui._offline_env import apply_offline_env

apply_offline_env()

__version__ = "0.1.0"
