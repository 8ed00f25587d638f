"""The engine's facts index (`observations/fact_index.py`) grows with the session and never
answers from a stale state: once an old output was looked at by a compaction event, a later
message that names one of its lines, or a later run of the same call, still changes what the
output keeps when a later event summarizes it (through the real engine and store)."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.observations.fact_context import FactContext
from myrm_tui.context.observations.fact_index import FactIndex
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import Store
from myrm_tui.store.records import MessageRecord
from tests.context.engine_helpers import MODEL, info

SYSTEM = "system prompt"
CONFIG = "\n".join(f"setting_{i}: value-{i}" for i in range(40))
LISTING = "\n".join(f"-rw-r--r-- 1 root root {100 + i} Dec  2 05:10 tool-{i}-shim" for i in range(80)).replace(
    "tool-31-shim", "quota-gate-shim"
)


class Session:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.id = store.create_session(MODEL).id
        self.engine = ContextEngine(store, self.id, clock=lambda: 0.0)
        self.calls = 0

    def add(self, message: dict[str, Any]) -> None:
        self.store.append_message(self.id, message, count_message_tokens(message, MODEL))

    def step(self, ask: str, name: str, arguments: dict[str, Any], output: str) -> None:
        self.calls += 1
        cid = f"c{self.calls}"
        call = {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        self.add({"role": "user", "content": ask})
        self.add({"role": "assistant", "content": None, "tool_calls": [call]})
        self.add({"role": "tool", "tool_call_id": cid, "name": name, "content": output})
        self.add({"role": "assistant", "content": "ok"})

    def filler(self, n: int) -> None:
        body = "\n".join(f"def helper_{n}_{i}(value):\n    return value * {i}\n" for i in range(90))
        self.step(f"Read src/mod_{n}.py.", "file_read", {"path": f"src/mod_{n}.py"}, body)

    def inp(self) -> TurnInput:
        # No age windows: the first event may mask any output outside the fresh tail.
        return TurnInput(SYSTEM, [], info(16_000), 1024, now=0.0, eviction_min_age=0, observation_keep_window=0)

    def prompt_text(self) -> str:
        return json.dumps(self.engine.assemble(self.inp()).messages, ensure_ascii=False)


def test_a_name_or_a_rerun_after_an_event_changes_what_the_next_event_keeps(store: Store) -> None:
    s = Session(store)
    s.add({"role": "user", "content": "We are moving the relay_config service; start with the sources."})
    s.add({"role": "assistant", "content": "Starting with relay_config."})
    for n in range(1, 5):
        s.filler(n)
    s.prompt_text()
    # A first event summarizes the oldest turns: the index has scanned the session and has
    # answered for the whole session and for the live rows.
    assert s.engine.summarize_now(s.inp()) is not None
    s.step("Show deploy/app.yaml.", "bash", {"command": "cat deploy/app.yaml"}, CONFIG + "\nlease_window: 40s")
    s.step("List the tools folder.", "bash", {"command": "ls -la tools"}, LISTING)
    for n in range(5, 10):
        s.filler(n)
    s.prompt_text()
    # The second masks both new outputs, while nothing names the listing's line and the file was
    # shown once: their stubs keep neither line.
    assert s.engine.compact(s.inp(), tier="full") is not None
    first = s.prompt_text()
    assert "[old output masked: bash command=ls -la tools" in first
    assert "[old output masked: bash command=cat deploy/app.yaml" in first
    assert "root 131 Dec 2 05:10 quota-gate-shim" not in first
    assert "lease_window: 40s" not in first
    # Then the conversation names a line of the listing, and the file is shown again, changed.
    s.add({"role": "user", "content": "Remember the quota-gate-shim entry; we need it for the deploy."})
    s.add({"role": "assistant", "content": "Noted."})
    s.step("I edited deploy/app.yaml; show it again.", "bash", {"command": "cat deploy/app.yaml"}, CONFIG)
    for n in range(10, 14):
        s.filler(n)
    s.prompt_text()
    # The user's compact command summarizes those turns: their leaves keep the named line and
    # what the newer run no longer shows, as a scan of the rows as they are now finds them.
    assert s.engine.summarize_now(s.inp()) is not None
    last = s.prompt_text()
    assert "[old output masked: bash command=ls -la tools" not in last, "the turn itself is summarized"
    assert "root 131 Dec 2 05:10 quota-gate-shim" in last, "the line a later message named"
    assert "lease_window: 40s" in last, "what the newer run of the command no longer shows"


def _rows(*messages: tuple[int, dict[str, Any]]) -> list[MessageRecord]:
    return [
        MessageRecord(id=mid, session_id="s", seq=k, role=m["role"], message=m, tokens=10, created_at=0.0)
        for k, (mid, m) in enumerate(messages)
    ]


def test_an_index_handed_another_row_list_starts_over() -> None:
    """One index read by the rows of a session, then by a fork's (the shared rows, then another
    last row): it answers for the fork's rows, not for the rows it saw first."""
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls -la tools"}'}}
    shared: list[tuple[int, dict[str, Any]]] = [
        (1, {"role": "user", "content": "List the tools folder."}),
        (2, {"role": "assistant", "content": None, "tool_calls": [call]}),
        (3, {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": LISTING}),
    ]
    session = _rows(*shared, (4, {"role": "user", "content": "Remember the quota-gate-shim entry."}))
    fork = _rows(*shared, (5, {"role": "user", "content": "Thanks, nothing else."}))
    index = FactIndex()
    assert FactContext(session, index=index).named(2, LISTING) == [
        "-rw-r--r-- 1 root root 131 Dec 2 05:10 quota-gate-shim"
    ]
    assert FactContext(fork, index=index).named(2, LISTING) == []
    assert FactContext(session[:3], index=index).named(2, LISTING) == []
