"""Which model writes a summary: the lite model when it can, else the main model, else none.

Tiny models write bad summaries and eat the window they are asked to free, so a tiny main model
without a usable lite model gets extractive summaries only. A lite model whose window cannot take
even the smallest chunk gives way to the main model (the agent says so once,
`SummaryWork.notice`). A recorded session's "model" (replay) is never asked at all.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.summary.chunking import DEFAULT_OVERHEAD_TOKENS, DEFAULT_TARGET_TOKENS

# A model with a window this small (or named like a sub-1B model) is "tiny": its summaries fail
# the auditor nearly always and each attempt costs a large share of its own window.
TINY_WINDOW = 8_192
TINY_MODEL_MARKERS = ("smollm", "tinyllama", "-135m", "-360m", "0.5b", "-1b", "qwen2.5-0.5b")
# The smallest chunk worth a summarizer call; a lite model that cannot take overhead + target +
# this much is not used (the main model summarizes instead).
MIN_USEFUL_CHUNK_TOKENS = 2_048


def is_tiny(model: str, info: Any | None) -> bool:
    """Tiny by name, or by a KNOWN small window (an unknown model's window is only a guess)."""
    name = model.lower()
    if any(marker in name for marker in TINY_MODEL_MARKERS):
        return True
    return bool(info is not None and getattr(info, "known", True) and info.context_window <= TINY_WINDOW)


def min_summarizer_window(
    overhead: int = DEFAULT_OVERHEAD_TOKENS,
    target: int = DEFAULT_TARGET_TOKENS,
    min_chunk: int = MIN_USEFUL_CHUNK_TOKENS,
) -> int:
    return overhead + target + min_chunk


def pick_summarizer_model(
    main_model: str,
    lite_model: str | None,
    main_info: Any | None,
    lite_info: Any | None,
    *,
    min_window: int | None = None,
) -> tuple[str | None, str]:
    """(model, reason): the lite model when configured, not tiny and its window fits `min_window`
    (default: overhead + target + the smallest useful chunk); else the main model; None (use the
    extractive summary) when the main model is tiny and there is no usable lite model."""
    need = min_window if min_window is not None else min_summarizer_window()
    lite_problem = ""
    if lite_model:
        if is_tiny(lite_model, lite_info):
            lite_problem = f"lite model {lite_model} is too small to write reliable summaries"
        elif lite_info is not None and lite_info.context_window < need:
            lite_problem = (
                f"lite model {lite_model} has a {lite_info.context_window}-token window, "
                f"below the {need} a summary call needs"
            )
        else:
            return lite_model, f"lite model {lite_model}"
    if is_tiny(main_model, main_info):
        why = f"; {lite_problem}" if lite_problem else ""
        return None, f"main model {main_model} is too small to summarize{why}: extractive summaries only"
    if lite_problem:
        return main_model, f"main model {main_model} ({lite_problem})"
    return main_model, f"main model {main_model} (no lite model configured)"


# Providers whose "model" cannot be asked for a summary: a recorded session (`myrm replay`)
# answers every request with the next recorded assistant turn, so a summary request would take
# the answer the agent's next step is waiting for.
NO_SUMMARY_PROVIDERS = frozenset({"replay"})


def summarizer_chain(
    main_model: str,
    lite_model: str | None,
    main_info: Any | None,
    lite_info: Any | None,
    *,
    min_window: int | None = None,
) -> list[tuple[str, str]]:
    """[(model, reason)] in the order a chunk is offered to them: the lite model when usable
    (`pick_summarizer_model`), then the main model, so a failing or rejected lite model does not
    drop straight to the extractive body. Empty: extractive summaries only."""
    first, why = pick_summarizer_model(main_model, lite_model, main_info, lite_info, min_window=min_window)
    chain: list[tuple[str, str]] = []
    if first is not None and not (first == main_model and _cannot_summarize(main_info)):
        chain.append((first, why))
    if first != main_model and not is_tiny(main_model, main_info) and not _cannot_summarize(main_info):
        chain.append((main_model, f"main model {main_model} (when {first} fails)"))
    return chain


def _cannot_summarize(info: Any | None) -> bool:
    return info is not None and getattr(info, "provider", "") in NO_SUMMARY_PROVIDERS
