"""The LLM layer: litellm behind `stream()`, typed events and errors, model registry, defaults.

Nothing here imports litellm or llama_cpp at import time; they load on the first call.
"""

from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.llm.stream import stream

__all__ = ["CallSettings", "ModelInfo", "stream"]
