"""What each request keeps per message (issue 27): a kept result may only save time, never go stale.

Covered: the clean repair prefix kept across an invalidation, the previous turn left rendered
when nothing in it depends on which turn is the latest, the outgoing form (vault images
resolved, encode-safe) and digests kept per message, the tool-schema key reused per equal list.
The oracle everywhere: what a request sends equals what computing everything afresh gives.
"""

from __future__ import annotations

import base64
import shutil
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.rows.ingest import ingest_message
from myrm_tui.context.rows.integrity import SYNTHETIC_FIRST_USER, repair_pairs
from myrm_tui.context.rows.views import REMOVED, SHRUNK, View
from myrm_tui.context.stages.cache_optimize import first_difference, message_digest
from myrm_tui.context.stages.encode_safe import encode_safe
from myrm_tui.context.window import prefix_tokens
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.store import Store
from tests.context.engine_helpers import info
from tests.hypothesis_profiles import examples

SYSTEM = "sys"
REASONING_MODEL = "deepseek/deepseek-chat"  # the reasoning-tools family: old text turns lose their reasoning


def _add(store: Store, session: str, message: dict[str, Any]) -> None:
    row = ingest_message(message, store.vault, cap_chars=100_000)
    store.append_message(session, row, count_message_tokens(row, "gpt-4o"))


def _call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}


def _fresh_wire(engine: ContextEngine, inp: TurnInput) -> list[dict[str, Any]]:
    """What the last request should have sent, computed from the rendered entries alone."""
    history, _report = repair_pairs([e.message for e in engine.history.entries])
    resolve = engine.resolver.resolve if engine.history.media_rows else (lambda m: m)
    return [encode_safe(resolve(m)) for m in [{"role": "system", "content": SYSTEM}, *history]]


# ---------------------------------------------------------------- the clean repair prefix
_message = st.one_of(
    st.just({"role": "user", "content": "ask"}),
    st.lists(st.sampled_from("abc"), min_size=1, max_size=2).map(
        lambda ids: {"role": "assistant", "content": "", "tool_calls": [_call(i) for i in ids]}
    ),
    st.sampled_from("abcd").map(lambda i: {"role": "tool", "tool_call_id": i, "name": "bash", "content": f"out {i}"}),
    st.just({"role": "assistant", "content": "done"}),
    st.just({"role": "system", "content": "note"}),
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.lists(_message, min_size=1, max_size=4), st.integers(0, 30)), min_size=1, max_size=6))
def test_an_invalidation_keeps_only_a_prefix_that_repairs_to_itself(tmp_path_factory, requests):
    """A re-render from any row (a new view, a scrub, a turn boundary) may cut the clean prefix
    between a call and its results: the repair must still see the whole group."""
    with Store.open(tmp_path_factory.mktemp("s")) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000), 512, now=0.0)
        for batch, cut in requests:
            for message in batch:
                _add(store, session, message)
            engine.assemble(inp)
            engine.history.invalidate_from(cut)
            sent = engine.assemble(inp).messages
            assert sent == _fresh_wire(engine, inp)


def test_a_cut_between_a_call_and_its_result_repairs_the_whole_group(tmp_path):
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000), 512, now=0.0)
        for message in (
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b")]},
            {"role": "tool", "tool_call_id": "a", "name": "bash", "content": "out a"},
            {"role": "tool", "tool_call_id": "b", "name": "bash", "content": "out b"},
        ):
            _add(store, session, message)
        engine.assemble(inp)
        engine.history.invalidate_from(3)  # the second result re-renders, its call does not
        sent = engine.assemble(inp).messages
        assert [m.get("tool_call_id") for m in sent[3:]] == ["a", "b"]
        assert sent == _fresh_wire(engine, inp)


def test_a_prefix_left_without_a_user_message_is_not_kept(tmp_path):
    """The repair puts a user message first when the prompt has none: a kept prefix of system
    messages alone would skip that for the rest."""
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000), 512, now=0.0)
        for message in (
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "gone"},
        ):
            _add(store, session, message)
        engine.assemble(inp)
        engine.history.views[engine.rows[1].id] = View(REMOVED, None, 0)  # as if the row left the prompt
        engine.history.invalidate_from(1)
        sent = engine.assemble(inp).messages
        assert sent[2] == {"role": "user", "content": SYNTHETIC_FIRST_USER}
        assert sent == _fresh_wire(engine, inp)


# ---------------------------------------------------------------- the previous turn's rendering
def _engine_turns(store: Store, model: str, turns: list[list[dict[str, Any]]]) -> tuple[ContextEngine, TurnInput]:
    session = store.create_session(model).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    inp = TurnInput(SYSTEM, [], info(64_000, model=model), 512, now=0.0)
    for turn in turns:
        for message in turn:
            _add(store, session, message)
        engine.assemble(inp)
        fresh = ContextEngine(store, session, clock=lambda: 0.0)
        fresh.assemble(inp)
        assert [e.message for e in engine.history.entries] == [e.message for e in fresh.history.entries]
    return engine, inp


def test_a_new_turn_still_drops_the_old_text_answers_reasoning(tmp_path):
    """The reasoning-tools family keeps `reasoning_content` on the latest turn's text answer only:
    the answer is rendered again when the next user message arrives, rows before it are not."""
    answer = {"role": "assistant", "content": "it is 4", "reasoning_content": "2+2"}
    with Store.open(tmp_path) as store:
        engine, inp = _engine_turns(
            store,
            REASONING_MODEL,
            [
                [
                    {"role": "user", "content": "sum?"},
                    {"role": "assistant", "content": "", "tool_calls": [_call("a")], "reasoning_content": "look"},
                    {"role": "tool", "tool_call_id": "a", "name": "bash", "content": "2 2"},
                    answer,
                ],
                [{"role": "user", "content": "thanks"}],
            ],
        )
        sent = engine.assemble(inp).messages
        assert sent[4] == {"role": "assistant", "content": "it is 4"}, "the old text answer lost its reasoning"
        assert sent[2]["reasoning_content"] == "look", "a tool turn keeps it"


def test_a_turn_without_reasoning_is_not_rendered_again(tmp_path):
    with Store.open(tmp_path) as store:
        first: list[dict[str, Any]] = [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a")]},
            {"role": "tool", "tool_call_id": "a", "name": "bash", "content": "a.py"},
            {"role": "assistant", "content": "one file"},
        ]
        engine, inp = _engine_turns(store, "gpt-4o", [first])
        before = [e.message for e in engine.history.entries]
        _add(store, engine.session_id, {"role": "user", "content": "next"})
        engine.assemble(inp)
        after = [e.message for e in engine.history.entries]
        assert all(a is b for a, b in zip(before, after, strict=False)) and len(after) == 5


def test_a_new_view_renders_its_row_anew_even_at_the_same_size(tmp_path):
    """A re-render reuses an entry only for the very message it was rendered from: a view
    replacing a row's message re-renders it, whatever its token count."""
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000), 512, now=0.0)
        _add(store, session, {"role": "user", "content": "read it"})
        _add(store, session, {"role": "assistant", "content": "the old words"})
        engine.assemble(inp)
        row = engine.rows[1]
        engine.history.views[row.id] = View(SHRUNK, {"role": "assistant", "content": "the new words"}, row.tokens)
        engine.history.invalidate_from(1)
        assert engine.assemble(inp).messages[2]["content"] == "the new words"


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["plain", "reasoning", "tools", "tools+reasoning", "blocks"]), min_size=0, max_size=3),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from([REASONING_MODEL, "claude-sonnet-4", "gpt-4o"]),
    st.sampled_from([None, 0, 1]),
)
# The signature scrub (first request: no warm cache; an earlier step carries signed blocks) left
# a reasoning-tools model's kept turn without its reasoning, where a fresh engine keeps it.
@example(turns=[["reasoning", "blocks", "plain"], []], model=REASONING_MODEL, keep=1)
def test_every_request_equals_a_fresh_engines(tmp_path_factory, turns, model, keep):
    """Turn by turn, with reasoning on some answers and a keep window: the incremental engine
    sends what a new engine on the same rows sends."""
    counter = iter(range(1000))

    def answer(kind: str) -> list[dict[str, Any]]:
        cid = f"c{next(counter)}"
        message: dict[str, Any] = {"role": "assistant", "content": f"answer {cid}"}
        if "tools" in kind:
            message = {"role": "assistant", "content": "", "tool_calls": [_call(cid)]}
        if "reasoning" in kind:
            message["reasoning_content"] = f"why {cid}"
        if kind == "blocks":
            message["thinking_blocks"] = [{"type": "thinking", "thinking": "t", "signature": "sig"}]
        result = {"role": "tool", "tool_call_id": cid, "name": "bash", "content": f"out {cid}"}
        return [message, result] if "tools" in kind else [message]

    with Store.open(tmp_path_factory.mktemp("s")) as store:
        session = store.create_session(model).id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000, model=model), 512, now=0.0, thinking_keep_turns=keep)
        for n, kinds in enumerate(turns):
            _add(store, session, {"role": "user", "content": f"turn {n}"})
            for kind in kinds:
                for message in answer(kind):
                    _add(store, session, message)
            fresh = ContextEngine(store, session, clock=lambda: 0.0)
            engine.assemble(inp), fresh.assemble(inp)  # the wires differ in cache markers only
            assert [e.message for e in engine.history.entries] == [e.message for e in fresh.history.entries]


def test_a_scrub_made_for_claude_leaves_a_reasoning_models_kept_turn_whole(tmp_path):
    """The signature scrub is sticky and kept across a model switch; it is about Anthropic's
    signed blocks, so after a switch to a reasoning-tools model the turn its keep window keeps
    is sent with its reasoning, as a fresh engine sends it."""
    signed = [{"type": "thinking", "thinking": "t", "signature": "sig"}]
    with Store.open(tmp_path) as store:
        session = store.create_session("claude-sonnet-4").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        _add(store, session, {"role": "user", "content": "turn 0"})
        answer = {"role": "assistant", "content": "a", "reasoning_content": "why a", "thinking_blocks": signed}
        _add(store, session, answer)
        _add(store, session, {"role": "assistant", "content": "b"})
        engine.assemble(TurnInput(SYSTEM, [], info(64_000, model="claude-sonnet-4"), 512, now=0.0))
        assert engine.history.scrub_before == 2, "the cold first request scrubbed the turn's earlier step"
        _add(store, session, {"role": "user", "content": "turn 1"})
        inp = TurnInput(SYSTEM, [], info(64_000, model=REASONING_MODEL), 512, now=0.0, thinking_keep_turns=1)
        fresh = ContextEngine(store, session, clock=lambda: 0.0)
        engine.assemble(inp), fresh.assemble(inp)
        assert engine.history.entries[1].message.get("reasoning_content") == "why a"
        assert [e.message for e in engine.history.entries] == [e.message for e in fresh.history.entries]


# ---------------------------------------------------------------- outgoing form and digests
def test_an_image_missing_from_the_vault_is_looked_up_again(tmp_path):
    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes(range(64))).decode()
    with Store.open(tmp_path) as store:
        session = store.create_session("gpt-4o").id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000, vision=True), 512, now=0.0)
        _add(store, session, {"role": "user", "content": [{"type": "image_url", "image_url": {"url": png}}]})
        handle = store.messages(session)[0].message["content"][0]["image_url"]["url"]
        path = store.vault.path_of(handle)
        shutil.move(path, tmp_path / "away")
        _add(store, session, {"role": "assistant", "content": "no image?"})
        assert "missing from the vault" in str(engine.assemble(inp).messages[1])
        _add(store, session, {"role": "user", "content": "try again"})
        assert "missing from the vault" in str(engine.assemble(inp).messages[1]), "still missing"
        shutil.move(tmp_path / "away", path)
        _add(store, session, {"role": "assistant", "content": "ok"})
        sent = engine.assemble(inp).messages
        assert sent[1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
        assert sent == _fresh_wire(engine, inp)


def test_digests_and_the_wire_follow_a_compaction_and_a_scrub(tmp_path):
    """A view (compaction) and a signature scrub give rows new messages: the digests and the
    outgoing forms are those of the new messages, not the remembered ones."""
    model = "claude-sonnet-4"
    blocks = [{"type": "thinking", "thinking": "t", "signature": "sig"}]
    with Store.open(tmp_path) as store:
        session = store.create_session(model).id
        engine = ContextEngine(store, session, clock=lambda: 0.0)
        inp = TurnInput(SYSTEM, [], info(64_000, model=model, caching=False), 512, now=0.0)

        def check() -> None:
            sent = engine.assemble(inp).messages
            history, _report = repair_pairs([e.message for e in engine.history.entries])
            assert engine.cache.previous_digests[1:] == [message_digest(m) for m in history]
            assert [m.get("thinking_blocks") for m in sent[1:]] == [m.get("thinking_blocks") for m in history]

        for n in range(8):
            _add(store, session, {"role": "user", "content": f"step {n}"})
            _add(store, session, {"role": "assistant", "content": "", "tool_calls": [_call(f"c{n}")]})
            _add(store, session, {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": "x\n" * 400})
            _add(
                store,
                session,
                {"role": "assistant", "content": "", "tool_calls": [_call(f"d{n}")], "thinking_blocks": blocks},
            )
            check()  # no prompt cache: every request is a cold replay, so earlier steps are scrubbed
            _add(store, session, {"role": "tool", "tool_call_id": f"d{n}", "name": "bash", "content": "y"})
            _add(
                store,
                session,
                {"role": "assistant", "content": "", "tool_calls": [_call(f"e{n}")], "thinking_blocks": blocks},
            )
            check()
            assert (
                "thinking_blocks"
                not in engine.history.entries[engine.history.entry_of_row[len(engine.rows) - 3]].message
            )
            _add(store, session, {"role": "tool", "tool_call_id": f"e{n}", "name": "bash", "content": "z"})
        engine.compact(inp, tier="full")
        assert engine.views
        check()
        fresh = ContextEngine(store, session, clock=lambda: 0.0)
        fresh.history.scrub_before = engine.history.scrub_before  # sticky per engine, not stored
        fresh.assemble(inp)
        assert [e.message for e in engine.history.entries] == [e.message for e in fresh.history.entries]


# ---------------------------------------------------------------- the tool-schema key
def test_the_tool_key_follows_a_changed_list_even_one_changed_in_place():
    tools: list[dict[str, Any]] = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    first = prefix_tokens.tools_key(tools)
    tools[0]["function"]["name"] = "b"  # the caller changes the very list it handed over
    second = prefix_tokens.tools_key(tools)
    assert second != first and '"b"' in second
    assert prefix_tokens.tools_key([dict(t) for t in tools]) == second


# ---------------------------------------------------------------- the cache-break position
def _first_difference_by_loop(previous: list[str], current: list[str]) -> int | None:
    for index, (a, b) in enumerate(zip(previous, current, strict=False)):
        if a != b:
            return index
    return len(current) if len(current) < len(previous) else None


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=8), st.lists(st.sampled_from("abc"), max_size=8))
def test_the_break_position_is_the_first_differing_digest(previous, current):
    assert first_difference(previous, current) == _first_difference_by_loop(previous, current)
    assert first_difference(previous, previous + current) is None
