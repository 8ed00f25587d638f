"""`litellm.utils.trim_messages` (PyPI litellm, MIT): a stateless newest-first trimmer.

Two rows:
- `litellm` - its defaults: litellm's own tokenizer for gpt-4o and `trim_ratio` 0.75, applied
  to the bench window (max_tokens = 0.75 x window; with no max_tokens it would use gpt-4o's 128k
  window and ignore ours). Its counter re-tokenizes the kept list for every message it adds
  (O(n^2)), so long sessions hit the wall-clock cap and are reported as DNF;
- `litellm@budget` - the shared budget, with litellm's `token_counter` replaced by the shared
  (memoized) counter, to measure the policy rather than the tokenizer.
On an exception litellm returns the untrimmed history (the silent no-op the scorer counts).
"""

from __future__ import annotations

import os
from typing import Any

from bench.contenders.base import COUNTER_MODEL, StepContender

DEFAULT_TRIM_RATIO = 0.75


class LitellmTrim(StepContender):
    name = "litellm"
    family = "peer"
    note = "trim_messages defaults (own tokenizer, 0.75 x window)"
    budget_matched = False

    def missing(self) -> str | None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm.utils  # noqa: F401

            import myrm_tui  # noqa: F401  (offline litellm environment first)
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__}: {exc}); run bash bench/setup.sh"
        return None

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        import logging

        import litellm.utils as lu

        # litellm logs a traceback on every swallowed exception; the no-op is counted, not printed.
        logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
        self.lu = lu
        self.native_counter = lu.token_counter
        self.history: list[dict[str, Any]] = [self.system]

    def _shared(self, model: str = "", messages: list[dict[str, Any]] | None = None, **_: Any) -> int:
        return self.counter.messages(messages or [])

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += new_messages
        if not self.budget_matched:
            return self.lu.trim_messages(
                self.history, model=COUNTER_MODEL, max_tokens=int(DEFAULT_TRIM_RATIO * self.config.window)
            )
        self.lu.token_counter = self._shared
        try:
            return self.lu.trim_messages(self.history, model=COUNTER_MODEL, max_tokens=self.budget)
        finally:
            self.lu.token_counter = self.native_counter


class LitellmTrimAtBudget(LitellmTrim):
    name = "litellm@budget"
    note = "trim_messages, shared counter, shared budget"
    budget_matched = True
