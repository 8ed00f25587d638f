"""The LLM layer: litellm behind `stream.stream()`, typed events and errors, model registry, defaults.

Nothing here imports litellm or llama_cpp at import time; they load on the first call. This file
re-exports nothing on purpose: every `python -m myrm_tui.llm.local.worker` imports this package
first, and the streaming layer it would pull in (asyncio, httpx glue, the call settings) cost the
embedded model's worker ~0.1 s before it could start loading the weights.
"""
