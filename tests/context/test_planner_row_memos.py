"""The compaction planner asks three things of every live tool output at each of its passes
(twice per event, at every event): the output's digest (dedup), its call's identity
(superseded) and whether it reads as failed (the mask order). The engine's facts index remembers
each answer per row (`FactIndex.digests`, `call_keys`, `failed`), so an event no longer pays
them for the whole live history; the plan must be the one a fresh planner makes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys

from myrm_tui.context.observations import intent
from myrm_tui.context.observations.fact_index import FactIndex
from myrm_tui.context.stages import compress
from myrm_tui.context.stages.compress import FULL, plan_compaction
from tests.context.plan_helpers import plan_input, tool_unit

LOG = "\n".join(f"line {i}: step {i} finished in {i * 7} ms" for i in range(80))


def messages() -> list[dict]:
    out: list[dict] = [{"role": "user", "content": "fix the build"}]
    for k in range(12):
        out += tool_unit(
            f"c{k}", "shell", {"command": f"make step{k % 4}"}, LOG if k % 3 else f"error: step {k}\n{LOG}"
        )
    out.append({"role": "user", "content": "and now?"})
    return out


def test_each_outputs_digest_is_computed_once_per_session_and_the_plans_do_not_change(monkeypatch) -> None:
    hashed: list[bytes] = []
    sha256 = hashlib.sha256

    def counted(data: bytes = b"") -> object:
        hashed.append(data)
        return sha256(data)

    inp = plan_input(messages(), tier=FULL, target=1)
    fresh = [plan_compaction(inp), plan_compaction(inp)]  # each its own index: the old behaviour
    monkeypatch.setattr(hashlib, "sha256", counted)  # the module the planner hashes with
    index = FactIndex()
    remembered = [plan_compaction(dataclasses.replace(inp, facts=index)) for _ in range(2)]
    tools = [r for r in inp.rows if r.role == "tool"]
    long_outputs = sum(1 for r in tools if len(r.message["content"]) >= compress.MIN_DEDUP_CHARS)
    assert len(hashed) == long_outputs  # the second event and the second pass hash nothing again
    assert set(index.digests) == {r.id for r in tools}
    assert index.call_keys and index.failed
    assert [p.views for p in remembered] == [p.views for p in fresh]


def test_each_calls_identity_and_failed_test_are_worked_out_once_per_session(monkeypatch) -> None:
    keyed: list[object] = []
    failed: list[str] = []
    dumps, looks_failed = json.dumps, intent.looks_failed

    def counted_dumps(value: object, **kwargs: object) -> str:
        if kwargs.get("sort_keys") and sys._getframe(1).f_globals.get("__name__") == compress.__name__:
            keyed.append(value)  # the planner's own (the facts index keys calls its own way)
        return dumps(value, **kwargs)  # type: ignore[arg-type]  # (kwargs: json.dumps's own)

    def counted_failed(text: str) -> bool:
        failed.append(text)
        return looks_failed(text)

    monkeypatch.setattr(json, "dumps", counted_dumps)  # the module the planner serialises with
    monkeypatch.setattr(compress, "looks_failed", counted_failed, raising=True)
    inp = dataclasses.replace(plan_input(messages(), tier=FULL, target=1), facts=FactIndex())
    for _ in range(3):
        plan_compaction(inp)
    tools = [r for r in inp.rows if r.role == "tool"]
    assert 0 < len(keyed) <= len(tools)
    assert 0 < len(failed) <= len(tools)
