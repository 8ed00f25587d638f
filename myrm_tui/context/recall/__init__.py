"""Recall: what `ctx_search`, `ctx_inspect` and `ctx_expand` return, how far they reach and which
part of a long text they show."""
