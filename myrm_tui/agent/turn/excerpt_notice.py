"""What the user is told when their message was too large to send whole."""

from __future__ import annotations


def _short_tokens(count: int) -> str:
    return (
        f"{count / 1000:.1f}k" if 1000 <= count < 10_000 else (f"{count // 1000:,}k" if count >= 10_000 else str(count))
    )


def excerpt_notice(message_tokens: int, shown_tokens: int, handle: str) -> str:
    """A message larger than the model can take is never cut silently: the user learns how much
    the model saw and where the rest is."""
    return (
        f"your message is {_short_tokens(message_tokens)} tokens, too large to send whole; "
        f"the model saw a {_short_tokens(shown_tokens)}-token excerpt and can read the rest from the store "
        f"({handle}, with ctx_expand)."
    )
