"""Stored messages as the transcript shows them, and where an edit, a retry or an export goes (pure)."""
