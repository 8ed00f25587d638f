"""Plain helpers shared by tests/llm modules (a uniquely named module, because `conftest` is
ambiguous when several test folders are collected in one run)."""

from __future__ import annotations

import socket

DUMMY_API_KEY = "sk-local-test-key-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
