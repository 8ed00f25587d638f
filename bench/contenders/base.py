"""What every contender shares: the run interface, the shared token counter, the fake summarizer.

Why one base: the figures are only comparable if every contender sees the same messages, counts
tokens the same way and gets the same summaries. A contender differs only in `step`: what it does
with one turn's new messages and what prompt it would send.

OUT lines follow `myrm replay`'s format (docs/replay-format.md): per turn `{"turn", "prompt", "tokens",
"engine_ms", "compaction", "summarizer_tokens"}`; per probe `{"turn", "query", "result"}`. Peers
have no recall tool, so their probe result is "" and their R_1 equals their R_verbatim.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from myrm_tui import messages

# The shared counter's model: o200k, like current frontier models (bench.score uses the same).
COUNTER_MODEL = "gpt-4o"
# Output tokens reserved per request, for every contender (myrm replay's default).
OUTPUT_RESERVE = 4096
# The system prompt every contender sends first: myrm replay's own, so the prompts compare.
# Imported lazily (bench.contenders must import without myrm installed only for listing).


def system_prompt() -> str:
    from myrm_tui.replay import REPLAY_SYSTEM_PROMPT

    return REPLAY_SYSTEM_PROMPT


def tool_schemas() -> list[dict[str, Any]]:
    """myrm's tool schemas: sent with every request by every contender, so they count against the budget."""
    from myrm_tui.replay import _tool_schemas

    return _tool_schemas()


def identity_key(value: Any, leaves: list[Any]) -> Any:
    """A hashable key naming a message by the identity of the strings it holds.

    Why identity: strings are immutable and shared by `copy.deepcopy`, so a message that a peer
    copies (litellm deep-copies every call) or rebuilds around the same text keeps its key, while a
    message whose content was replaced gets a new one. The strings are appended to `leaves`; the
    caller keeps them alive so an id cannot be reused by another string.
    """
    if isinstance(value, str):
        leaves.append(value)
        return id(value)
    if isinstance(value, dict):
        return ("d", tuple((k, identity_key(v, leaves)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("l", tuple(identity_key(v, leaves) for v in value))
    return ("v", repr(value))


RECENT_LIMIT = 100_000  # dicts remembered by id; cleared past this (memory bound, not correctness)


class SharedCounter:
    """`count_message_tokens(message, "gpt-4o")`, memoized by `identity_key`.

    Why memoize: a history of 2,000 messages is re-counted every turn by stateless trimmers;
    tokenizing megabytes each turn would time our counter, not their policy.
    """

    def __init__(self) -> None:
        import myrm_tui  # noqa: F401  (offline tokenizer environment first)
        from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens, count_tools_tokens

        self._count_message = count_message_tokens
        self._count_text = count_text_tokens
        self._count_tools = count_tools_tokens
        self._memo: dict[Any, tuple[int, list[Any]]] = {}
        # Fast path for the same dict counted again (litellm recounts its kept list per message).
        self._recent: dict[int, tuple[dict[str, Any], Any, Any, int]] = {}

    def message(self, message: dict[str, Any]) -> int:
        recent = self._recent.get(id(message))
        if (
            recent is not None
            and recent[0] is message
            and recent[1] is message.get("content")
            and recent[2] is message.get("tool_calls")
        ):
            return recent[3]
        value = self._slow(message)
        if len(self._recent) > RECENT_LIMIT:
            self._recent.clear()
        self._recent[id(message)] = (message, message.get("content"), message.get("tool_calls"), value)
        return value

    def _slow(self, message: dict[str, Any]) -> int:
        leaves: list[Any] = []
        key = identity_key(message, leaves)
        hit = self._memo.get(key)
        if hit is not None:
            return hit[0]
        value = self._count_message(message, COUNTER_MODEL)
        self._memo[key] = (value, leaves)
        return value

    def messages(self, messages: Iterable[dict[str, Any]]) -> int:
        return sum(self.message(m) for m in messages)

    def text(self, text: str) -> int:
        return self._count_text(text, COUNTER_MODEL)

    def tools(self, tools: list[dict[str, Any]]) -> int:
        return self._count_tools(tools, COUNTER_MODEL)


class SharedSummarizer:
    """The fake summarizer (null/head/oracle from myrm_tui.llm.fake_providers.replay_summarizers), metered.

    Peers hand their summarizer a prompt; adapters pass only the transcript part of it, so the
    peer's instruction wording never leaks into the summary. An empty fake output (oracle with no
    needle) becomes the null line: a real model never answers a summary request with nothing, and
    some peers treat empty as a failure.
    """

    def __init__(self, mode: str, counter: SharedCounter, *, fill_empty: bool = True) -> None:
        from myrm_tui.llm.fake_providers.replay_summarizers import NULL_TEXT, SUMMARIZERS
        from myrm_tui.replay import use_capable_oracle

        use_capable_oracle()  # `oracle`: the capable-model stand-in, as myrm gets it

        if mode not in SUMMARIZERS:
            raise ValueError(f"unknown summarizer {mode!r}; use one of {', '.join(SUMMARIZERS)}.")
        self.mode = mode
        self._fake = SUMMARIZERS[mode]
        self._null = NULL_TEXT if fill_empty else ""
        self._counter = counter
        self.calls = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.seconds = 0.0

    def summarize_messages(self, messages: list[dict[str, Any]]) -> str:
        started = time.perf_counter()
        out = self._fake(messages) or self._null
        self.calls += 1
        self.tokens_in += self._counter.messages(messages)
        self.tokens_out += self._counter.text(out)
        self.seconds += time.perf_counter() - started
        return out

    def summarize_text(self, transcript: str) -> str:
        return self.summarize_messages([{"role": "user", "content": transcript}])


@dataclass(frozen=True)
class RunConfig:
    window: int
    summarizer: str = "null"
    reserve: int = OUTPUT_RESERVE


class Contender:
    """One context-management strategy. Subclasses set the class attributes and implement `run`."""

    name: str = "?"
    family: str = "?"  # myrm | peer | policy | baseline
    uses_summarizer: bool = False  # False: the summarizer setting cannot change its prompts
    note: str = ""

    def missing(self) -> str | None:
        """None when runnable here; otherwise why not (shown as "not installed" in the tables)."""
        return None

    def run(self, lines: Iterable[dict[str, Any]], config: RunConfig) -> Iterator[dict[str, Any]]:
        raise NotImplementedError


def content_text(content: Any) -> str:
    """A message content as plain text for the peer policies: myrm's one reading, with empty
    parts kept so a part list joins the way the recorded peer figures were measured."""
    return messages.content_text(content, keep_empty=True)
    return str(content)


class StepContender(Contender):
    """A contender driven turn by turn: `step(new_messages)` returns the prompt it would send.

    The driver deep-copies each turn's messages (contenders cannot share mutations), times `step`
    minus the time spent inside the fake summarizer, and answers probes with "" (no recall).
    """

    def setup(self, config: RunConfig, counter: SharedCounter, summarizer: SharedSummarizer) -> None:
        self.config = config
        self.counter = counter
        self.summarizer = summarizer
        self.tools = tool_schemas()
        self.tool_tokens = counter.tools(self.tools)
        # The prompt budget: what the scorer checks (prompt + tools + reserve <= window).
        self.budget = config.window - config.reserve - self.tool_tokens
        self.system = {"role": "system", "content": system_prompt()}
        self.compacted = False
        self.errors: list[str] = []

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def run(self, lines: Iterable[dict[str, Any]], config: RunConfig) -> Iterator[dict[str, Any]]:
        counter = SharedCounter()
        summarizer = SharedSummarizer(config.summarizer, counter)
        self.setup(config, counter, summarizer)
        raw: list[dict[str, Any]] = [self.system]
        for line in lines:
            if "probe" in line:
                probe = line["probe"]
                yield {"turn": probe.get("turn"), "query": probe.get("query", ""), "result": ""}
                continue
            raw += line.get("messages", [])
            new = copy.deepcopy(line.get("messages", []))
            self.compacted = False
            spent_before, tokens_before = summarizer.seconds, summarizer.tokens_in + summarizer.tokens_out
            started = time.perf_counter()
            error = None
            try:
                prompt = self.step(new)
            except Exception as exc:  # noqa: BLE001 - a crash is a figure (B4), not the end of the run
                error = f"{type(exc).__name__}: {exc}"[:300]
                prompt = list(raw)  # what is left to send when the manager fails: everything
            elapsed = time.perf_counter() - started - (summarizer.seconds - spent_before)
            prompt = [strip_private(m) for m in prompt]
            extra = {"exception": error} if error else {}
            yield {
                **extra,
                "turn": line.get("turn"),
                "prompt": prompt,
                "tools": self.tools,
                "tokens": counter.messages(prompt) + self.tool_tokens,
                "engine_ms": round(elapsed * 1000, 3),
                "compaction": self.compacted,
                "summarizer_tokens": summarizer.tokens_in + summarizer.tokens_out - tokens_before,
            }


def strip_private(message: dict[str, Any]) -> dict[str, Any]:
    """Drop bookkeeping keys (`_…`) a peer adds to messages; the provider never sees them."""
    if any(isinstance(k, str) and k.startswith("_") for k in message):
        return {k: v for k, v in message.items() if not (isinstance(k, str) and k.startswith("_"))}
    return message
