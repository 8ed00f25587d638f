"""The recall tools (ctx_search, ctx_inspect, ctx_expand, session_note) over a real Store, both
called directly and end to end through Agent.turn with a scripted model."""

from __future__ import annotations

import dataclasses
import re

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ToolFinished, UserMessageStored
from myrm_tui.agent.permissions.approvals import POLICIES, Verdict, decide
from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_arguments
from myrm_tui.agent.tools.files.read import FileRead
from myrm_tui.agent.tools.notes import SESSION_NOTE_ECHO_CHARS, SESSION_NOTE_MAX_CHARS, SessionNote
from myrm_tui.agent.tools.recall_tools import (
    EXPAND_FRAME_CHARS,
    SEARCH_TOOL_MAX_LIMIT,
    CtxExpand,
    CtxInspect,
    CtxSearch,
    recall_tools,
)
from myrm_tui.agent.tools.registry import default_tools
from myrm_tui.context.recall.answers import EXPAND_MAX_CHARS, RECALL_CLOSE, RECALL_NOTE, RECALL_OPEN
from myrm_tui.store import Store
from tests.agent.agent_helpers import BUILTIN_TOOL_NAMES, RECALL_TOOL_NAMES, drive, make_agent, settings_for

RECALL_NAMES = list(RECALL_TOOL_NAMES)
BUILTIN_NAMES = list(BUILTIN_TOOL_NAMES)


@pytest.fixture
def session(store) -> str:
    return store.create_session(model="m").id


@pytest.fixture
def elsewhere(tmp_path):
    """Another workspace's store (its own `.myrm/`): recall never reaches into it."""
    root = tmp_path / "elsewhere"
    root.mkdir()
    opened = Store.open(root)
    yield opened
    opened.close()


def foreign_message(elsewhere: Store, text: str, past_id: int = 50):
    """A message of another workspace whose id this workspace's store has not used (ids are per
    store, so the same number may name a message here)."""
    away = elsewhere.create_session(model="m").id
    record = None
    while record is None or record.id < past_id:
        record = user(elsewhere, away, text)
    return record


@pytest.fixture
def rctx(ctx: ToolContext, store, session: str) -> ToolContext:
    """The context a recall tool gets from the Agent: store and session filled in."""
    return dataclasses.replace(ctx, store=store, session_id=session)


def user(store, session_id: str, text: str):
    return store.append_message(session_id, {"role": "user", "content": text}, 1)


async def call(tool: Tool, args: dict, ctx: ToolContext) -> ToolResult:
    """As the agent does it: validate the arguments, then run."""
    validate_arguments(tool, args)
    return await tool.run(args, ctx)


def body_of(result: str) -> str:
    """The content lines of a ctx_expand result: after the wrapper note and header, before the
    closing tag."""
    assert result.startswith(f"{RECALL_OPEN}\n{RECALL_NOTE}\n"), result[:200]
    inner = result[len(RECALL_OPEN) + len(RECALL_NOTE) + 2 : result.rindex(RECALL_CLOSE) - 1]
    return inner.split("\n", 1)[1]


# --- the tool list ---------------------------------------------------------------------------


def test_recall_tools_are_read_only_and_never_ask():
    tools = recall_tools()
    assert [t.name for t in tools] == RECALL_NAMES
    for tool in tools:
        assert tool.kind == "read"
        for policy in POLICIES:
            assert decide(policy, tool.kind).verdict is Verdict.ALLOW, (tool.name, policy)
        schema = tool.schema()["function"]
        # the description is what tells the model when to reach for the tool
        assert len(schema["description"]) > 120, tool.name
        assert schema["parameters"]["required"], tool.name


def test_max_chars_is_not_offered_to_the_model():
    assert "max_chars" not in CtxExpand().parameters["properties"]
    with pytest.raises(ToolError, match="has no argument"):
        validate_arguments(CtxExpand(), {"handle": "msg:1", "max_chars": 100_000})


def test_default_tools_put_recall_tools_after_builtins_then_extras():
    class Extra(Tool):
        name = "extra_tool"
        description = "x"
        parameters: dict = {"type": "object", "properties": {}}

    assert default_tools().names == (*BUILTIN_NAMES, *RECALL_NAMES)
    extra = Extra()
    assert default_tools([extra]).names == (*BUILTIN_NAMES, *RECALL_NAMES, "extra_tool")
    # the engine passing its own ctx_search replaces the default in place: no duplicate, same order
    own = CtxSearch()
    registry = default_tools([own, extra])
    assert registry.names == (*BUILTIN_NAMES, *RECALL_NAMES, "extra_tool")
    assert registry.get("ctx_search") is own
    with pytest.raises(ValueError, match="duplicate"):
        default_tools([CtxSearch(), CtxSearch()])


def test_agent_fills_the_tool_context(store, workspace, session):
    agent = Agent(store=store, session_id=session, settings=settings_for("scripted/x.json"), workspace=workspace)
    assert agent._ctx.store is store and agent._ctx.session_id == session
    # The engine tells ctx_inspect what replaced a message in the prompt.
    assert agent._ctx.replacements is not None and agent._ctx.replacements() == {}


# --- ctx_search ------------------------------------------------------------------------------


async def test_search_finds_a_planted_message(store, rctx, session):
    user(store, session, "hello there")
    needle = user(store, session, "the staging password file is /etc/zephyr-quartz.conf")
    user(store, session, "unrelated follow-up")
    result = await call(CtxSearch(), {"query": "zephyr-quartz"}, rctx)
    assert result.status == "ok"
    assert result.content.startswith(RECALL_OPEN)
    assert f"msg:{needle.id} · user" in result.content
    assert "[1]" in result.content and "[2]" not in result.content


async def test_search_limit_is_clamped(store, rctx, session):
    for i in range(SEARCH_TOOL_MAX_LIMIT + 10):
        user(store, session, f"common-word entry {i}")

    def hits(result: ToolResult) -> int:
        return len(re.findall(r"^\[\d+\] ", result.content, flags=re.MULTILINE))

    assert hits(await call(CtxSearch(), {"query": "common-word", "limit": 1000}, rctx)) == SEARCH_TOOL_MAX_LIMIT
    assert hits(await call(CtxSearch(), {"query": "common-word", "limit": 0}, rctx)) == 1
    assert hits(await call(CtxSearch(), {"query": "common-word", "limit": "3"}, rctx)) == 3
    assert hits(await call(CtxSearch(), {"query": "common-word"}, rctx)) == 10


async def test_search_errors_are_error_results(store, rctx, session):
    user(store, session, "hello")
    empty = await call(CtxSearch(), {"query": "   "}, rctx)
    assert (empty.status, empty.content[:18]) == ("error", "error: empty query")
    miss = await call(CtxSearch(), {"query": "zebra-unicorn"}, rctx)
    assert miss.status == "ok" and miss.content.startswith("no matches")
    with pytest.raises(ToolError, match="needs the argument"):
        await call(CtxSearch(), {}, rctx)


async def test_search_scope_is_a_static_enum_and_checked(store, rctx, session):
    schema = CtxSearch().schema()["function"]
    scope = schema["parameters"]["properties"]["scope"]
    assert scope["enum"] == sorted(scope["enum"]) == ["session", "workspace"]
    assert "scope" not in schema["parameters"]["required"]
    assert 'scope="workspace"' in schema["description"]
    # the tool list is a cached prompt prefix: nothing of the session may appear in it
    assert session not in str(CtxSearch().schema())
    assert CtxSearch().schema()["function"] == schema
    user(store, session, "hello scope")
    bad = await call(CtxSearch(), {"query": "hello", "scope": "galaxy"}, rctx)
    assert bad.status == "error" and bad.content.startswith("error: scope='galaxy' is not one of session, workspace")
    assert (
        CtxSearch().preview({"query": "x", "scope": "workspace"}, rctx).summary
        == "search history across the workspace for 'x'"
    )
    assert CtxSearch().preview({"query": "x"}, rctx).summary == "search history for 'x'"


@pytest.mark.parametrize(
    "tool, args",
    [
        (CtxSearch(), {"query": "x"}),
        (CtxInspect(), {"handle": "msg:1"}),
        (CtxExpand(), {"handle": "msg:1"}),
    ],
)
async def test_without_a_store_the_tools_say_so(ctx, tool, args):
    with pytest.raises(ToolError, match="needs the session's store"):
        await call(tool, args, ctx)


# --- ctx_inspect -----------------------------------------------------------------------------


async def test_inspect_reports_what_the_engine_replaced(store, rctx, session):
    record = user(store, session, "x" * 400)
    handle = f"msg:{record.id}"
    plain = await call(CtxInspect(), {"handle": handle}, rctx)
    assert plain.status == "ok"
    assert plain.content.splitlines()[0] == handle and "what: user message" in plain.content
    assert "in the prompt" not in plain.content

    asked = []

    def replacements():
        asked.append(True)
        return {handle: "masked: old message, replaced by a one-line stub"}

    with_engine = dataclasses.replace(rctx, replacements=replacements)
    result = await call(CtxInspect(), {"handle": f" `{handle}` "}, with_engine)
    assert "in the prompt: masked: old message, replaced by a one-line stub" in result.content
    assert asked == [True]  # asked at call time, so the answer reflects the current prompt
    other = user(store, session, "short")
    result = await call(CtxInspect(), {"handle": f"msg:{other.id}"}, with_engine)
    assert "in the prompt: sent as stored (not replaced)" in result.content


async def test_inspect_unknown_and_foreign_handles(store, rctx, session, elsewhere):
    bad = await call(CtxInspect(), {"handle": "banana"}, rctx)
    assert bad.status == "error" and bad.content.startswith("error: unknown handle 'banana'")
    foreign = foreign_message(elsewhere, "secret of another workspace ORCHID-55")
    result = await call(CtxInspect(), {"handle": f"msg:{foreign.id}"}, rctx)
    assert result.status == "error" and result.content.startswith("error: ")
    assert "ORCHID-55" not in result.content
    other_session = store.create_session(model="m", title="neighbour").id
    neighbour = user(store, other_session, "another session of this workspace")
    result = await call(CtxInspect(), {"handle": f"msg:{neighbour.id}"}, rctx)
    assert result.status == "ok"
    assert f'in session {other_session[:8]} "neighbour" (another session of this workspace)' in result.content


# --- ctx_expand ------------------------------------------------------------------------------


async def test_expand_returns_the_original_and_refuses_other_workspaces(store, rctx, session, elsewhere):
    text = "first line\nthe original words, verbatim: KESTREL-204\nlast line"
    mine = user(store, session, text)
    result = await call(CtxExpand(), {"handle": f"msg:{mine.id}"}, rctx)
    assert result.status == "ok" and body_of(result.content) == text

    foreign = foreign_message(elsewhere, "not yours: ORCHID-55")
    refused = await call(CtxExpand(), {"handle": f"msg:{foreign.id}"}, rctx)
    assert refused.status == "error" and refused.content.startswith("error: ")
    assert "ORCHID-55" not in refused.content
    foreign_artifact = elsewhere.vault.put("artifact of another workspace ORCHID-56\n")
    elsewhere.index_artifact(elsewhere.list_sessions()[0].id, foreign_artifact)
    refused = await call(CtxExpand(), {"handle": foreign_artifact}, rctx)
    assert refused.status == "error" and "ORCHID-56" not in refused.content

    # Another session of the same workspace: its artifact opens, marked as coming from elsewhere.
    other_session = store.create_session(model="m").id
    neighbour_artifact = store.vault.put("artifact of another session OSPREY-57\n")
    store.index_artifact(other_session, neighbour_artifact)
    opened = await call(CtxExpand(), {"handle": neighbour_artifact}, rctx)
    assert opened.status == "ok" and body_of(opened.content) == "artifact of another session OSPREY-57"
    assert " · vault artifact · from another session of this workspace · " in opened.content


async def test_expand_by_lines_and_query(store, rctx, session):
    text = "".join(f"row {i:03d} {'MARKER' if i == 42 else 'plain'}\n" for i in range(1, 101))
    handle = store.vault.put(text)
    store.index_artifact(session, handle)
    ranged = await call(CtxExpand(), {"handle": handle, "lines": "10:12"}, rctx)
    assert body_of(ranged.content) == "row 010 plain\nrow 011 plain\nrow 012 plain"
    found = await call(CtxExpand(), {"handle": handle, "query": "MARKER"}, rctx)
    assert found.status == "ok" and "row 042 MARKER" in found.content
    assert "row 010" not in found.content
    bad = await call(CtxExpand(), {"handle": handle, "lines": "a:b"}, rctx)
    assert bad.status == "error" and bad.content.startswith("error: lines=")


async def test_expand_uses_the_default_size_and_continues(store, rctx, session):
    big = "".join(f"line {i:05d} {'y' * 60}\n" for i in range(1, 2001))  # ~140k chars
    record = user(store, session, big)
    result = await call(CtxExpand(), {"handle": f"msg:{record.id}"}, rctx)
    body = body_of(result.content)
    assert EXPAND_MAX_CHARS - 200 < len(body) <= EXPAND_MAX_CHARS
    assert big.startswith(body)
    hint = re.search(r'ctx_expand\("(msg:\d+)", lines="(\d+:\d+)"\)$', result.content)
    assert hint and hint.group(1) == f"msg:{record.id}"
    following = await call(CtxExpand(), {"handle": hint.group(1), "lines": hint.group(2)}, rctx)
    assert big.startswith(body + "\n" + body_of(following.content))


async def test_expand_fits_under_a_small_output_cap(store, rctx, session):
    record = user(store, session, "".join(f"line {i:05d} {'z' * 60}\n" for i in range(1, 500)))
    cap = 4_000
    small = dataclasses.replace(rctx, settings=settings_for(tool_output_cap=cap))
    result = await call(CtxExpand(), {"handle": f"msg:{record.id}"}, small)
    # never spilled to the vault by the agent: the whole answer stays under the inline cap
    assert len(result.content) <= cap
    assert len(body_of(result.content)) > cap - EXPAND_FRAME_CHARS - 200


async def test_expand_and_file_read_number_lines_alike(store, rctx, session):
    # "\r", form feed, U+2028 and CRLF inside lines: str.splitlines would count extra lines
    text = (
        "alpha\rstill line one\n"
        "line two\x0cwith form feed\n"
        "line three\u2028same line\n"
        "line four crlf\r\n"
        "line five\n"
        "line six\n"
        "line seven\n"
    )
    handle = store.vault.put(text)
    store.index_artifact(session, handle)
    for first, last in ((1, 3), (2, 5), (5, 7), (4, 4)):
        expanded = await call(CtxExpand(), {"handle": handle, "lines": f"{first}:{last}"}, rctx)
        read = await call(FileRead(), {"path": handle, "start_line": first, "end_line": last}, rctx)
        header, read_body = read.content.split("\n", 1)
        assert header == f"[{handle} · lines {first}-{last} of 7]"
        assert f"lines {first}-{last} of 7" in expanded.content
        assert read_body == body_of(expanded.content)
        assert read_body == store.vault.read_text(handle, (first, last)).rstrip("\n")


# --- session_note ----------------------------------------------------------------------------


async def test_session_note_validates_and_confirms(rctx):
    note = SessionNote()
    assert (
        await call(note, {"text": "tests run with: make check"}, rctx)
    ).content == "noted: tests run with: make check"
    long_note = "decision: " + "keep the v2 API; " * 58
    long_note = long_note[:SESSION_NOTE_MAX_CHARS]
    result = await call(note, {"text": long_note}, rctx)
    assert result.status == "ok"
    assert result.content == "noted: " + long_note[:SESSION_NOTE_ECHO_CHARS] + "…"
    multi = await call(note, {"text": "  line one\nline two  "}, rctx)
    assert multi.content == "noted: line one line two"
    for empty in ("", "   \n "):
        with pytest.raises(ToolError, match="non-empty"):
            await call(note, {"text": empty}, rctx)
    with pytest.raises(ToolError, match="limit is 1,000"):
        await call(note, {"text": "x" * (SESSION_NOTE_MAX_CHARS + 1)}, rctx)
    with pytest.raises(ToolError, match="needs the argument"):
        await call(note, {}, rctx)
    assert note.preview({"text": "keep me"}, rctx).summary == "note: keep me"


# (spilled outputs are searchable: tests/agent/test_spill_index.py)


# --- end to end through Agent.turn -----------------------------------------------------------


async def test_agent_recalls_an_earlier_message_by_search_then_expand(store, workspace, script):
    planted = "Remember this: the release branch is named rel/PELICAN-4471 for the March build."
    first = make_agent(store, workspace, script({"text": "Noted."}))
    log = await drive(first, planted, approve=False)
    [stored_user] = log.of(UserMessageStored)
    handle = f"msg:{stored_user.message_id}"

    # The script answers by the count of assistant messages in the request: one exists already.
    model = script(
        {"text": "unused"},
        {"tool_calls": [{"id": "s1", "name": "ctx_search", "arguments": {"query": "PELICAN-4471"}}]},
        {"tool_calls": [{"id": "e1", "name": "ctx_expand", "arguments": {"handle": handle}}]},
        {
            "tool_calls": [
                {"id": "n1", "name": "session_note", "arguments": {"text": "release branch: rel/PELICAN-4471"}}
            ]
        },
        {"text": "The branch is rel/PELICAN-4471."},
    )
    session_id = first.session_id
    agent = Agent(store=store, session_id=session_id, settings=settings_for(model), workspace=workspace)
    log = await drive(agent, "what was the release branch again?", approve=False)

    assert log.approvals == []  # recall never asks, even under the default "ask" policy
    finished = {e.call_id: e for e in log.of(ToolFinished)}
    assert all(e.ok for e in finished.values()), [e.content for e in finished.values()]
    results = {m.message["tool_call_id"]: m.message["content"] for m in store.messages(session_id) if m.role == "tool"}
    assert f"{handle} · user" in results["s1"]
    assert results["s1"] == finished["s1"].content
    assert body_of(results["e1"]) == planted
    assert results["n1"] == "noted: release branch: rel/PELICAN-4471"
    # the note itself lives in the stored assistant call, where the engine will find it
    calls = [c for m in store.messages(session_id) if m.role == "assistant" for c in m.message.get("tool_calls") or ()]
    assert any(
        c["function"]["name"] == "session_note" and "rel/PELICAN-4471" in c["function"]["arguments"] for c in calls
    )


async def test_agent_cannot_expand_another_workspaces_message(store, workspace, script, elsewhere, tmp_path):
    other = make_agent(elsewhere, tmp_path / "elsewhere", script({"text": "ok"}))
    for _ in range(3):  # past the ids the turn below stores here, so the number names nothing here
        log = await drive(other, "private to the other workspace: GANNET-12", approve=False)
    foreign = log.of(UserMessageStored)[-1]
    model = script(
        {"tool_calls": [{"id": "e1", "name": "ctx_expand", "arguments": {"handle": f"msg:{foreign.message_id}"}}]},
        {"text": "could not"},
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "expand that", approve=False)
    [done] = log.of(ToolFinished)
    assert not done.ok and done.content.startswith("error: ")
    assert "GANNET-12" not in done.content


async def test_agent_recalls_a_fact_from_another_session_of_the_workspace(store, workspace, script, tmp_path):
    (workspace / "notes.txt").write_text("deploy key rotation day: the fact is CORMORANT-9931\n")
    first = make_agent(
        store,
        workspace,
        script(
            {"tool_calls": [{"id": "r1", "name": "file_read", "arguments": {"path": "notes.txt"}}]},
            {"text": "Read."},
        ),
    )
    store.rename_session(first.session_id, "rotation notes")
    await drive(first, "read notes.txt", approve=True)
    [fact] = [m for m in store.messages(first.session_id) if m.role == "tool"]
    assert "CORMORANT-9931" in fact.message["content"]
    handle = f"msg:{fact.id}"

    def searches_then_expands(with_expand: bool) -> str:
        calls = [
            {"tool_calls": [{"id": "w1", "name": "ctx_search", "arguments": {"query": "CORMORANT-9931"}}]},
            {
                "tool_calls": [
                    {
                        "id": "w2",
                        "name": "ctx_search",
                        "arguments": {"query": "CORMORANT-9931", "scope": "workspace"},
                    }
                ]
            },
        ]
        if with_expand:
            calls.append({"tool_calls": [{"id": "w3", "name": "ctx_expand", "arguments": {"handle": handle}}]})
        return script(*calls, {"text": "done"})

    second = make_agent(store, workspace, searches_then_expands(with_expand=True))
    log = await drive(second, "what was the fact from the other conversation?", approve=False)
    assert log.approvals == []  # a workspace search is still a read: it never asks
    finished = {e.call_id: e for e in log.of(ToolFinished)}
    assert all(e.ok for e in finished.values()), [e.content for e in finished.values()]
    # The default scope sees only this session (where the query itself is, in the model's calls).
    assert handle not in finished["w1"].content and first.session_id[:8] not in finished["w1"].content
    wide = finished["w2"].content.split("\n")
    [labelled] = [line for line in wide if line.startswith("[") and f"] {handle} · " in line]
    assert labelled.endswith(f' · session {first.session_id[:8]} "rotation notes"')
    assert " · tool · file_read · " in labelled
    assert "«CORMORANT-9931»" in wide[wide.index(labelled) + 1]
    assert "CORMORANT-9931" in body_of(finished["w3"].content)
    assert f" · from session {first.session_id[:8]} " in finished["w3"].content

    # Another workspace has its own store: the same calls find nothing there.
    away_root = tmp_path / "away"
    away_root.mkdir()
    with Store.open(away_root) as away:
        third = make_agent(away, away_root, searches_then_expands(with_expand=False))
        log = await drive(third, "and here?", approve=False)
        results = {e.call_id: e.content for e in log.of(ToolFinished)}
        # Nothing of the first workspace, nor its own calls (they name the query, and a search
        # never lists the recall tools' own traffic).
        assert results["w2"].startswith('no matches for "CORMORANT-9931"'), results["w2"]
        assert "file_read" not in results["w2"] and first.session_id[:8] not in results["w2"]
