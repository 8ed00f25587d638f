"""The objective note: the anchor restated after the newest message once history is compacted.

On a real store and engine: where the note goes, that it is the same bytes turn after turn (so
the next request extends the previous one up to where the note stood), its cap, its redaction,
and that the provider's view (pairs, markers, the cache-break detector) is as without it.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.compaction.objective_note import MAX_ITEM_CHARS, MAX_OBJECTIVE_CHARS, NoteSource, note_text
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.rows.ingest import ingest_message
from myrm_tui.context.rows.integrity import repair_pairs
from myrm_tui.context.window.config import EngineConfig
from myrm_tui.context.window.tokens import count_message_tokens
from tests.context.engine_helpers import info
from tests.hypothesis_profiles import examples

MODEL = "gpt-4o"
SYSTEM = "system prompt"
ANCHOR = "Constraint: never touch the vendored folder. Build the invoice exporter with CSV and JSON output."
AWS_KEY = "AKIA" + "Q7ZJ3K9LMN2PX4RT"  # a well-formed (fake) access key id


class Session:
    def __init__(self, store, *, restate: bool = True, anchor: str = ANCHOR):
        self.store = store
        self.id = store.create_session(MODEL).id
        self.engine = ContextEngine(store, self.id, config=EngineConfig(restate_objective=restate))
        self.calls = 0
        self.add({"role": "user", "content": anchor}, {"role": "assistant", "content": "on it"})

    def add(self, *messages):
        for message in messages:
            row = ingest_message(message, self.store.vault, cap_chars=100_000)
            self.store.append_message(self.id, row, count_message_tokens(row, MODEL))

    def turn(self, n: int, *, finish: bool = True) -> None:
        self.calls += 1
        cid = f"call{self.calls}"
        self.add(
            {"role": "user", "content": f"step {n}: run the next thing"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": f"run {n}"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": cid, "name": "bash", "content": f"output {n} " + "z " * 600},
        )
        if finish:
            self.add({"role": "assistant", "content": f"step {n} done"})

    def inp(self, **kw) -> TurnInput:
        return TurnInput(SYSTEM, [], info(), 1024, **kw)

    def assemble(self, **kw):
        return self.engine.assemble(self.inp(**kw))

    def compact(self) -> None:
        assert self.engine.summarize_now(self.inp()) is not None


def is_note(message: dict) -> bool:
    return message["role"] == "user" and "session's objective" in str(message["content"])


def compacted(store, **kw) -> Session:
    s = Session(store, **kw)
    for n in range(1, 7):
        s.turn(n)
    s.compact()
    return s


def test_absent_before_any_compaction(store):
    s = Session(store)
    for n in range(1, 4):
        s.turn(n)
    prompt = s.assemble()
    assert not any(is_note(m) for m in prompt.messages)


def test_after_a_compaction_the_anchor_is_restated_after_the_newest_message(store):
    s = compacted(store)
    s.turn(7, finish=False)  # mid-turn: the prompt ends on a tool result
    prompt = s.assemble()
    last = prompt.messages[-1]
    assert is_note(last) and ANCHOR in last["content"]
    assert last["content"].startswith('<context-note trust="untrusted">')
    assert not any(m["role"] == "system" and "objective" in str(m["content"]) for m in prompt.messages)
    # Pairs are intact: the note comes after the results, so the repair has nothing to do.
    body = prompt.messages[1:]
    repaired, report = repair_pairs(body)
    assert repaired == body and not report.dangling_repaired and not report.orphans_dropped
    # Counted in the prompt's tokens, and never the place of a cache marker.
    assert prompt.tokens >= count_message_tokens(last, MODEL)
    assert len(prompt.messages) - 1 not in prompt.cache_breakpoints
    assert prompt.report.messages == len(prompt.messages)


def test_the_note_is_byte_stable_and_the_next_request_extends_the_previous(store):
    s = compacted(store)
    s.turn(7, finish=False)
    first = s.assemble().messages
    s.add({"role": "assistant", "content": "step 7 done"})
    s.turn(8)
    second = s.engine.assemble(s.inp())
    assert first[-1] == second.messages[-1]  # same bytes, turn after turn
    # Up to where the note stood, the new request repeats the previous one exactly.
    assert second.messages[: len(first) - 1] == first[:-1]
    assert s.engine.cache.last_break is None  # the detector sees the prompt as without the note


def test_the_newest_summary_blockers_and_next_steps_are_restated(store):
    s = compacted(store)
    handle = next(v.handle for v in s.engine.history.synthetic if v.handle)
    node = store.get_summary(s.id, handle)
    content = dict(node["content"], blocked_items=["waiting for the CSV spec"], next_steps=["write the JSON writer"])
    source = NoteSource(1, ANCHOR, handle, tuple(content["blocked_items"]), tuple(content["next_steps"]))
    text = note_text(source)
    assert f"Blocked (summary {handle}): waiting for the CSV spec" in text
    assert f"Next steps (summary {handle}): write the JSON writer" in text
    assert text.index("Objective:") < text.index("Blocked") < text.index("Next steps")


def test_off_leaves_the_prompt_as_it_was(store):
    on, off = compacted(store), compacted(store, restate=False)
    with_note, without = on.assemble().messages, off.assemble().messages
    assert not any(is_note(m) for m in without)
    assert len(with_note) == len(without) + 1
    # The per-request override wins over the engine's default.
    assert is_note(off.assemble(restate_objective=True).messages[-1])
    assert not is_note(on.assemble(restate_objective=False).messages[-1])


def test_a_long_anchor_is_shortened_and_a_secret_in_it_is_redacted(store):
    anchor = f"Deploy with key {AWS_KEY} please. " + "Then check every invoice row again. " * 60
    s = compacted(store, anchor=anchor)
    note = s.assemble().messages[-1]["content"]
    assert AWS_KEY not in note and "AKIA" not in note
    objective = next(line for line in note.splitlines() if line.startswith("Objective: "))
    assert len(objective) <= len("Objective: ") + MAX_OBJECTIVE_CHARS + 1 and objective.endswith("…")
    assert "shortened" in note


def test_no_note_when_the_anchor_is_the_latest_user_message(store):
    s = Session(store)
    s.add(
        *[
            m
            for n in range(1, 7)
            for m in (
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{n}",
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": "y " * 600},
            )
        ]
    )
    s.engine.compact(s.inp(), tier="emergency")
    assert not any(is_note(m) for m in s.assemble().messages)


def test_no_room_no_note(store):
    s = compacted(store)
    assert s.engine.objective.note(MODEL, room=5) is None
    assert s.engine.objective.note(MODEL, room=10_000) is not None


@settings(max_examples=examples(60), deadline=None)
@given(
    anchor=st.text(min_size=1, max_size=3000),
    items=st.lists(st.text(min_size=1, max_size=400), max_size=5),
)
def test_note_text_is_deterministic_and_capped(anchor, items):
    source = NoteSource(3, anchor, "S1", tuple(items[:3]), tuple(items[:3]))
    text = note_text(source)
    assert text == note_text(source)
    lines = text.splitlines()
    assert lines[0] == '<context-note trust="untrusted">' and lines[-1] == "</context-note>"
    objective = next(line for line in lines if line.startswith("Objective: "))
    assert len(objective) <= len("Objective: ") + MAX_OBJECTIVE_CHARS + 1
    for line in lines:
        if line.startswith(("Blocked", "Next steps")):
            pieces = line.split(": ", 1)[1].split(" | ")
            assert all(len(p) <= MAX_ITEM_CHARS for p in pieces) or "|" in "".join(items)
