"""One summarization pass: the LLM call, escalation, fallback, redaction.

Escalation (never raises for model failures; the session never loses history):
1. up to `attempts` calls; each answer is parsed and audited, a rejected answer goes back to
   the model with the auditor's feedback (the conversation continues); a model that answers
   the feedback with the rejected answer again is asked no more: that answer is judged by the
   terse bar and, rejected, goes straight to 3;
2. one terse attempt (huge messages cut, "be terse"), accepted with half the retention bar;
3. the extractive summary (no LLM), marked fallback.
Auth / model-not-found errors skip straight to 3: retrying cannot fix them.

Routing (which model writes the summary, if any: tiny models do not) is routing.py; its names
are re-exported here, where callers have always found them.

litellm is only reached through `myrm_tui.llm.stream.stream`, imported inside the call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from myrm_tui.context.summary.auditor import DEFAULT_MIN_RETENTION, AuditResult, audit
from myrm_tui.context.summary.breaker import PERMANENT, TRANSIENT, SummarizerBreaker, error_class
from myrm_tui.context.summary.chunking import DEFAULT_TARGET_TOKENS
from myrm_tui.context.summary.extractive import extractive_summary
from myrm_tui.context.summary.prompts import build_prompt, retry_turns, transcript
from myrm_tui.context.summary.routing import (
    MIN_USEFUL_CHUNK_TOKENS,
    NO_SUMMARY_PROVIDERS,
    TINY_MODEL_MARKERS,
    TINY_WINDOW,
    is_tiny,
    min_summarizer_window,
    pick_summarizer_model,
    summarizer_chain,
)
from myrm_tui.context.summary.schema import (
    StructuredSummary,
    SummaryParseError,
    body_text,
    enforce_caps,
    extract_json_object,
    parse_summary,
    summary_from_dict,
)
from myrm_tui.redact import DEFAULT_POLICY, RedactionPolicy, redact_obj, redact_summary

__all__ = [
    "LEVEL_EXTRACTIVE",
    "LEVEL_LLM",
    "LEVEL_TERSE",
    "MIN_USEFUL_CHUNK_TOKENS",
    "NO_SUMMARY_PROVIDERS",
    "TINY_MODEL_MARKERS",
    "TINY_WINDOW",
    "CallResult",
    "SummarizerCall",
    "SummaryModel",
    "SummaryOutcome",
    "is_tiny",
    "min_summarizer_window",
    "pick_summarizer_model",
    "stream_call",
    "summarize",
    "summarize_with",
    "summarizer_chain",
]

_log = logging.getLogger(__name__)

# Token margin kept free in the summarizer's window (tokenizer mismatch between our count and
# the provider's; chat-template tokens).
WINDOW_SAFETY_TOKENS = 256
# Below this many output tokens a 14-field JSON answer cannot be written; the prompt is too big.
MIN_OUTPUT_TOKENS = 256
# Terse attempts may keep fewer identifiers: they are the last LLM try before the extractive floor.
TERSE_RETENTION_FACTOR = 0.5
# One summarizer call may take this long (streaming, so a healthy slow model keeps going).
SUMMARY_TIMEOUT_S = 180.0

LEVEL_LLM, LEVEL_TERSE, LEVEL_EXTRACTIVE = "llm", "terse", "extractive"


@dataclass(frozen=True)
class CallResult:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


# (messages, max_output_tokens) -> the answer. Injected by tests or by an engine that routes
# calls itself; the default goes through `llm.stream`.
SummarizerCall = Callable[[list[dict[str, Any]], int], Awaitable["CallResult | str"]]


@dataclass(frozen=True)
class SummaryOutcome:
    summary: StructuredSummary  # redacted, caps enforced
    attempts: int  # LLM calls made
    fallback: bool
    level: str  # "llm" | "terse" | "extractive"
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    errors: list[str] = field(default_factory=list)  # call errors and rejected-answer reasons
    summary_tokens: int = 0  # body tokens of the final summary
    source_tokens: int = 0
    audit: AuditResult | None = None  # of the accepted answer (or the last rejected one)
    redactions: dict[str, int] = field(default_factory=dict)
    failure: str | None = None  # None, "transient" or "permanent": what the breaker recorded
    warning: str = ""
    model: str = ""  # the model whose answer was accepted ("" for the extractive body)


# ---------------------------------------------------------------- the call


def stream_call(model: str, settings: Any | None = None) -> SummarizerCall:
    """A SummarizerCall through `llm.stream` (litellm): text deltas collected, usage summed."""

    async def call(messages: list[dict[str, Any]], max_output_tokens: int) -> CallResult:
        from myrm_tui.llm.call_settings import CallSettings
        from myrm_tui.llm.events import TextDelta, UsageEvent
        from myrm_tui.llm.stream import stream

        base = settings or CallSettings(temperature=0.0, timeout_s=SUMMARY_TIMEOUT_S, max_attempts=2)
        call_settings = replace(base, max_output_tokens=max_output_tokens)
        parts: list[str] = []
        tokens_in = tokens_out = 0
        cost = 0.0
        async for event in stream(model, messages, None, call_settings):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, UsageEvent):
                tokens_in += event.prompt_tokens
                tokens_out += event.completion_tokens
                cost += event.cost or 0.0
        return CallResult("".join(parts), tokens_in, tokens_out, cost)

    return call


def _messages_tokens(messages: Sequence[dict[str, Any]], count: Callable[[str], int]) -> int:
    # 4 per message: role markers and separators of chat templates.
    return sum(count(str(m.get("content") or "")) + 4 for m in messages)


@dataclass
class _Run:
    call: SummarizerCall
    window: int
    target: int
    count: Callable[[str], int]
    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    errors: list[str] = field(default_factory=list)
    failure_kinds: list[str] = field(default_factory=list)

    def budget(self, messages: Sequence[dict[str, Any]]) -> int:
        """Output tokens available for `messages` (≤ target), or 0 if the prompt does not fit."""
        free = self.window - _messages_tokens(messages, self.count) - WINDOW_SAFETY_TOKENS
        out = min(self.target, free)
        return out if out >= MIN_OUTPUT_TOKENS else 0

    async def ask(self, messages: list[dict[str, Any]]) -> str | None:
        max_out = self.budget(messages)
        self.attempts += 1
        try:
            result = await self.call(messages, max_out)
        except Exception as exc:  # noqa: BLE001 - any model failure ends in the fallback, never a crash
            kind = error_class(exc)
            self.failure_kinds.append(kind)
            text = getattr(exc, "user_text", None)
            self.errors.append(f"call failed ({kind}): {text() if callable(text) else exc}")
            _log.info("summarizer call failed: %s", exc)
            return None
        if isinstance(result, str):
            result = CallResult(result)
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.cost += result.cost
        return result.text


def _redacted_answer(
    answer: str, accepted: StructuredSummary, policy: RedactionPolicy
) -> tuple[StructuredSummary, dict[str, int]]:
    """The accepted summary read again from the answer with its values redacted whole (and the
    counts): parsing clips each item, and a clipped key (or a key body split over a clipped
    list item) would no longer be recognised by the redaction that follows."""
    try:
        data = extract_json_object(answer)
    except SummaryParseError:
        return accepted, {}
    redacted = redact_obj(data, policy)
    return summary_from_dict(redacted.value), redacted.counts


def _judge(
    answer: str,
    *,
    source_text: str,
    source_tokens: int,
    depth: int,
    min_retention: float,
    count: Callable[[str], int],
    messages: Sequence[dict[str, Any]] | None = None,
) -> tuple[StructuredSummary | None, AuditResult | None, str]:
    """(summary if accepted, audit, feedback if rejected)."""
    try:
        summary = parse_summary(answer)
    except SummaryParseError as exc:
        return None, None, str(exc)
    result = audit(
        summary,
        source_text=source_text,
        source_tokens=source_tokens,
        depth=depth,
        min_retention=min_retention,
        count=count,
        messages=messages,
    )
    return (summary if result.ok else None), result, ("" if result.ok else result.feedback())


async def summarize(
    messages: Sequence[dict[str, Any]],
    *,
    model: str | None,
    window: int,
    depth: int = 0,
    ids: Sequence[int] | None = None,
    previous: StructuredSummary | None = None,
    focus: str | None = None,
    call: SummarizerCall | None = None,
    settings: Any | None = None,
    attempts: int = 3,
    target_tokens: int = DEFAULT_TARGET_TOKENS,
    source_tokens: int | None = None,
    min_retention: float = DEFAULT_MIN_RETENTION,
    policy: RedactionPolicy = DEFAULT_POLICY,
    breaker: SummarizerBreaker | None = None,
    session_id: str = "",
    count: Callable[[str], int] | None = None,
) -> SummaryOutcome:
    """Summarize `messages` (a chunk, or `prompts.condense_messages(children)` for depth ≥ 1).

    `model=None` (see `pick_summarizer_model`) or an open breaker gives the extractive summary
    without a call. `window` is the summarizer's context window; `ids` the store ids of the
    messages (for handles); `previous` an existing summary to merge into (incremental mode).
    """
    if count is None:
        from myrm_tui.context.window.tokens import count_text_tokens

        count = count_text_tokens
    messages = list(messages)
    source_text = transcript(messages, ids)
    if source_tokens is None:
        from myrm_tui.context.window.tokens import count_message_tokens

        source_tokens = sum(count_message_tokens(m) for m in messages)
    previous_goal = previous.user_goal if previous is not None else ""

    def finish(
        summary: StructuredSummary,
        level: str,
        run: _Run | None,
        result: AuditResult | None,
        failure: str | None,
        warning: str = "",
        extra_errors: Sequence[str] = (),
        redacted_before: dict[str, int] | None = None,
    ) -> SummaryOutcome:
        final, redactions = redact_summary(enforce_caps(summary), policy)
        for kind, n in (redacted_before or {}).items():
            redactions[kind] = redactions.get(kind, 0) + n
        errors = list(extra_errors) + (run.errors if run else [])
        if breaker is not None and model and run is not None and run.attempts:
            if failure is None:
                breaker.record_success(session_id, model)
            else:
                breaker.record_failure(session_id, model, failure, errors[-1] if errors else "")
        return SummaryOutcome(
            summary=final,
            attempts=run.attempts if run else 0,
            fallback=level == LEVEL_EXTRACTIVE,
            level=level,
            tokens_in=run.tokens_in if run else 0,
            tokens_out=run.tokens_out if run else 0,
            cost=run.cost if run else 0.0,
            errors=errors,
            summary_tokens=count(body_text(final)),
            source_tokens=source_tokens,
            audit=result,
            redactions=redactions,
            failure=failure,
            warning=warning,
        )

    def fallback(
        run: _Run | None, result: AuditResult | None, failure: str | None, warning: str = "", extra: Sequence[str] = ()
    ) -> SummaryOutcome:
        summary = extractive_summary(
            messages, ids=ids, source_tokens=source_tokens, previous_goal=previous_goal, count=count
        )
        return finish(summary, LEVEL_EXTRACTIVE, run, result, failure, warning, extra)

    if model is None and call is None:
        return fallback(None, None, None, extra=["no summarizer model: extractive summary"])
    label = model or "injected"
    if breaker is not None and model and not breaker.allow(session_id, model):
        return fallback(
            None,
            None,
            None,
            extra=[f"summarizer breaker open for {model}; next try in {breaker.retry_in(session_id, model):.0f}s"],
        )

    run = _Run(call=call or stream_call(label, settings), window=window, target=target_tokens, count=count)
    base = build_prompt(messages, depth=depth, ids=ids, previous=previous, focus=focus)
    terse_base = build_prompt(messages, depth=depth, ids=ids, previous=previous, focus=focus, terse=True)
    if not run.budget(base) and not run.budget(terse_base):
        return fallback(
            None,
            None,
            None,
            warning=(
                f"The span to summarize does not fit the summarizer's {window}-token window; "
                "choose a smaller chunk (chunking.choose_chunk) or a larger summarizer model."
            ),
        )

    def judge_terse(answer: str, run: _Run) -> tuple[SummaryOutcome | None, AuditResult | None, str]:
        """An answer judged by the terse bar: the outcome when it passes, the audit, the feedback."""
        summary, result, feedback = _judge(
            answer,
            source_text=source_text,
            source_tokens=source_tokens,
            depth=depth,
            min_retention=min_retention * TERSE_RETENTION_FACTOR,
            count=count,
            messages=messages if previous is None else None,
        )
        if summary is None:
            return None, result, feedback
        clean, counts = _redacted_answer(answer, summary, policy)
        return finish(clean, LEVEL_TERSE, run, result, None, redacted_before=counts), result, feedback

    last_audit: AuditResult | None = None
    conversation = list(base) if run.budget(base) else list(terse_base)
    answer: str | None = None
    feedback = ""
    permanent = False
    rejected: str | None = None  # the last answer the audit rejected
    repeated = False  # the model gave a rejected answer again
    for _ in range(max(0, attempts)):
        answer = await run.ask(conversation)
        if answer is None:
            if run.failure_kinds and run.failure_kinds[-1] == PERMANENT:
                permanent = True
                break
            continue
        if answer == rejected:
            # The model wrote the rejected answer again, feedback notwithstanding: it does not act
            # on feedback, so neither more rounds of it nor the terse request (feedback plus "be
            # terse") would bring another answer, and each resends the whole chunk (measured:
            # 17 such chunks were ~390k of the 400-turn tool-storm's summarizer tokens at 64k).
            # The answer in hand is judged by the terse bar the terse attempt would have had.
            repeated = True
            run.errors.append("answer repeated after feedback: judged by the terse bar, no further call")
            accepted, result, feedback = judge_terse(answer, run)
            last_audit = result or last_audit
            if accepted is not None:
                return accepted
            break
        summary, result, feedback = _judge(
            answer,
            source_text=source_text,
            source_tokens=source_tokens,
            depth=depth,
            min_retention=min_retention,
            count=count,
            messages=messages if previous is None else None,
        )
        last_audit = result or last_audit
        if summary is not None:
            clean, counts = _redacted_answer(answer, summary, policy)
            return finish(clean, LEVEL_LLM, run, result, None, redacted_before=counts)
        run.errors.append("answer rejected: " + feedback.replace("\n", " "))
        rejected = answer
        longer = conversation + retry_turns(answer, feedback)
        conversation = longer if run.budget(longer) else list(base) + retry_turns(answer, feedback)
        if not run.budget(conversation):
            conversation = list(base) if run.budget(base) else list(terse_base)

    if not permanent and not repeated:
        # Level 2: one terse attempt, continuing the conversation when it fits.
        terse = list(terse_base)
        if answer is not None:
            candidate = (
                conversation[:-2] + retry_turns(answer, feedback, terse=True)
                if len(conversation) > 2
                else terse_base + retry_turns(answer, feedback, terse=True)
            )
            if run.budget(candidate):
                terse = candidate
        answer = await run.ask(terse)
        if answer is None and run.failure_kinds and run.failure_kinds[-1] == PERMANENT:
            permanent = True
        elif answer is not None:
            accepted, result, feedback = judge_terse(answer, run)
            last_audit = result or last_audit
            if accepted is not None:
                return accepted
            run.errors.append("terse answer rejected: " + feedback.replace("\n", " "))

    failure = PERMANENT if permanent or PERMANENT in run.failure_kinds else TRANSIENT
    return fallback(run, last_audit, failure)


@dataclass(frozen=True)
class SummaryModel:
    """One link of the summarizer chain: a model name (None: extractive only), its window, the
    call settings its requests need (endpoint included), or an injected call (tests, engines)."""

    model: str | None
    window: int
    settings: Any | None = None
    call: SummarizerCall | None = None


async def summarize_with(
    models: Sequence[SummaryModel], messages: Sequence[dict[str, Any]], **options: Any
) -> SummaryOutcome:
    """`summarize` down the chain: each model in turn (its own escalation), the first accepted
    answer wins; the extractive body only when none is accepted (or the chain is empty). The
    outcome counts the calls, tokens and cost of every model asked."""
    tried: list[SummaryOutcome] = []
    for link in models:
        if link.model is None and link.call is None:
            continue
        outcome = await summarize(
            messages, model=link.model, window=link.window, settings=link.settings, call=link.call, **options
        )
        tried.append(outcome)
        if not outcome.fallback:
            return _combined(tried, replace(outcome, model=link.model or "injected"))
    if not tried:
        return await summarize(messages, model=None, window=0, **options)
    return _combined(tried, tried[-1])


def _combined(tried: Sequence[SummaryOutcome], final: SummaryOutcome) -> SummaryOutcome:
    if len(tried) < 2:
        return final
    errors = [e for o in tried for e in o.errors]
    return replace(
        final,
        attempts=sum(o.attempts for o in tried),
        tokens_in=sum(o.tokens_in for o in tried),
        tokens_out=sum(o.tokens_out for o in tried),
        cost=sum(o.cost for o in tried),
        errors=errors,
        warning="; ".join(o.warning for o in tried if o.warning),
    )
