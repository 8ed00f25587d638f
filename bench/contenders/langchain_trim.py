"""`langchain_core.messages.trim_messages` (PyPI langchain-core, MIT): a stateless sliding window.

Every turn it re-trims the whole history (it keeps no state). Two rows:
- `langchain` - its defaults: strategy "last", `token_counter="approximate"` (its own
  chars/4 estimate), no system pinning, no `start_on` (so tool results can lose their call);
- `langchain@budget` - the shared counter and the documented safe settings:
  `include_system=True, start_on="human"`.
Messages are converted to LangChain objects once (as an app keeping LangChain messages would)
and mapped back to the original dicts, so the prompt is exactly what was kept.
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender


class LangchainTrim(StepContender):
    name = "langchain"
    family = "peer"
    note = "trim_messages defaults (approximate counter, no start_on)"
    budget_matched = False

    def missing(self) -> str | None:
        try:
            from langchain_core.messages import trim_messages  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__}: {exc}); run bash bench/setup.sh"
        return None

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        from langchain_core.messages import convert_to_messages, trim_messages

        self._convert = convert_to_messages
        self._trim = trim_messages
        self.objects: list[Any] = self._convert([self.system])
        self.originals: dict[int, dict[str, Any]] = {id(self.objects[0]): self.system}
        self.counts: dict[int, int] = {id(self.objects[0]): self.counter.message(self.system)}

    def _shared_counter(self, messages: list[Any]) -> int:
        return sum(self.counts.get(id(m), 0) for m in messages)

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for message in new_messages:
            obj = self._convert([message])[0]
            self.objects.append(obj)
            self.originals[id(obj)] = message
            self.counts[id(obj)] = self.counter.message(message)
        if self.budget_matched:
            kept = self._trim(
                self.objects,
                max_tokens=self.budget,
                token_counter=self._shared_counter,
                strategy="last",
                include_system=True,
                start_on="human",
            )
        else:
            kept = self._trim(self.objects, max_tokens=self.budget, token_counter="approximate", strategy="last")
        out = []
        for obj in kept:
            original = self.originals.get(id(obj))
            if original is None:  # a partial message (not used with these settings): its own rendering
                from langchain_core.messages import convert_to_openai_messages

                original = convert_to_openai_messages(obj)
            out.append(original)
        return out


class LangchainTrimAtBudget(LangchainTrim):
    name = "langchain@budget"
    note = "trim_messages, shared counter, include_system + start_on=human"
    budget_matched = True
