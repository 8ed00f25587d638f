"""BM25 relevance of history pieces to the current query, for eviction without a prompt cache.

Why BM25 and not embeddings: it needs nothing beyond the text already in the store, costs
microseconds per unit, and its ranking is deterministic (the replay digests depend on it).
Pure functions only: the planner decides what a "document" is (one removal group) and what
the query is (the current task).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

# The usual BM25 constants (Robertson & Zaragoza): k1 saturates a term's repeats, b weighs how
# much a long document is discounted. Tool outputs vary from one line to thousands, so the
# standard length normalisation is what keeps a huge log from matching everything.
K1 = 1.2
B = 0.75
# Identifiers and words; a path or a dotted module name splits into its parts (src/app.py →
# src, app, py) so `app.py` in the query finds `src/app.py` in an output.
_TOKEN = re.compile(r"[a-z0-9_]+")
# One-letter tokens (a, i, x) match everywhere and rank nothing.
MIN_TOKEN_CHARS = 2


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if len(t) >= MIN_TOKEN_CHARS]


def bm25_scores(query: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """Each document's BM25 score for `query` (tokens), with the IDF of the documents given.
    Every score is >= 0; an empty query or corpus scores everything 0."""
    if not documents:
        return []
    n = len(documents)
    average = sum(len(d) for d in documents) / n or 1.0
    frequencies = [Counter(d) for d in documents]
    terms = set(query)
    containing = {t: sum(1 for f in frequencies if t in f) for t in terms}
    # The "+1" IDF variant: never negative, so a term in most documents still counts a little.
    idf = {t: math.log(1 + (n - k + 0.5) / (k + 0.5)) for t, k in containing.items()}
    scores = []
    for doc, freq in zip(documents, frequencies, strict=True):
        norm = K1 * (1 - B + B * len(doc) / average)
        scores.append(sum(idf[t] * freq[t] * (K1 + 1) / (freq[t] + norm) for t in terms if freq[t]))
    return scores


def least_relevant_first(query: str, texts: Sequence[str]) -> list[int]:
    """Indices of `texts`, the least relevant to `query` first; ties keep their order (oldest
    first, as recency eviction would), so an empty query changes nothing."""
    scores = bm25_scores(tokenize(query), [tokenize(t) for t in texts])
    return sorted(range(len(texts)), key=lambda i: (scores[i], i))
