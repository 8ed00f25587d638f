"""The file integrity guard: an edit over a change the model never saw is refused, through the
live agent with a scripted model, a real store and vault (agent/read_registry.py)."""

from __future__ import annotations

import re

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.read_registry import ReadRegistry, SeenRecordingReader
from myrm_tui.context.workspace_reader import workspace_reader
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent, settings_for

REFUSAL = "app.py changed since you last read it (by you or a command): read it again before editing."


def call(name: str, call_id: str, **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def results(log) -> list[ToolFinished]:
    return log.of(ToolFinished)


def handle_in(text: str) -> str:
    found = re.search(r"vault://[0-9a-f]+", text)
    assert found, text
    return found.group(0)


async def test_a_change_by_the_user_after_the_read_refuses_the_edit_and_hands_over_the_new_text(
    store, workspace, script
):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(
        {"tool_calls": [call("file_read", "c1", path="app.py")]},
        {"text": "read it"},
        {"tool_calls": [call("file_edit", "c2", path="app.py", old="hello", new="bye")]},
        {"text": "tried"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "read app.py")
    (workspace / "app.py").write_text("print('hello, user')\n")  # the user edits it meanwhile

    log = await drive(agent, "now edit it")

    [refused] = results(log)
    assert refused.status == "error" and REFUSAL in refused.content
    assert store.vault.read_bytes(handle_in(refused.content)) == b"print('hello, user')\n"
    assert (workspace / "app.py").read_text() == "print('hello, user')\n"  # untouched


async def test_reading_the_offered_handle_lifts_the_refusal(store, workspace, script):
    (workspace / "app.py").write_text("a = 1\n")
    # The vault is content-addressed: the handle the refusal will offer is known in advance.
    handle = store.vault.put(b"a = 2\n")
    model = script(
        {"tool_calls": [call("file_read", "c1", path="app.py")]},
        {"text": "read"},
        {"tool_calls": [call("file_edit", "c2", path="app.py", old="a = 2", new="a = 3")]},
        {"tool_calls": [call("file_read", "c3", path=handle)]},
        {"tool_calls": [call("file_edit", "c4", path="app.py", old="a = 2", new="a = 3")]},
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "read")
    (workspace / "app.py").write_text("a = 2\n")

    log = await drive(agent, "edit")

    first, read_handle, second = results(log)
    assert first.status == "error" and handle in first.content
    assert read_handle.status == "ok" and "a = 2" in read_handle.content
    assert second.status == "ok", second.content
    assert (workspace / "app.py").read_text() == "a = 3\n"


async def test_own_edits_count_as_seen_so_a_second_edit_runs(store, workspace, script):
    (workspace / "app.py").write_text("x = 1\ny = 2\n")
    model = script(
        {
            "tool_calls": [
                call("file_read", "c1", path="app.py"),
                call("file_edit", "c2", path="app.py", old="x = 1", new="x = 10"),
                call("file_edit", "c3", path="app.py", old="y = 2", new="y = 20"),
                call("file_write", "c4", path="app.py", content="z = 3\n"),
            ]
        },
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "edit twice")
    assert [r.status for r in results(log)] == ["ok", "ok", "ok", "ok"]
    assert (workspace / "app.py").read_text() == "z = 3\n"


async def test_a_command_changing_the_file_refuses_the_edit(store, workspace, script):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(
        {
            "tool_calls": [
                call("file_read", "c1", path="app.py"),
                call("bash", "c2", command="echo '# appended' >> app.py"),
                call("file_edit", "c3", path="app.py", old="hello", new="bye"),
            ]
        },
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "read, append, edit")
    read, bash, edit = results(log)
    assert bash.status == "ok", bash.content
    assert edit.status == "error" and REFUSAL in edit.content
    assert store.vault.read_bytes(handle_in(edit.content)) == b"print('hello')\n# appended\n"


async def test_file_write_creates_and_overwrites_unread_files_but_not_changed_ones(store, workspace, script):
    (workspace / "unread.txt").write_text("never read\n")
    (workspace / "app.py").write_text("v1\n")
    model = script(
        {
            "tool_calls": [
                call("file_write", "c1", path="new.txt", content="fresh\n"),
                call("file_write", "c2", path="unread.txt", content="replaced\n"),
                call("file_read", "c3", path="app.py", start_line=1, end_line=1),
                call("bash", "c4", command="echo v2 > app.py"),
                call("file_write", "c5", path="app.py", content="mine\n"),
            ]
        },
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    log = await drive(agent, "write things")
    statuses = [r.status for r in results(log)]
    assert statuses == ["ok", "ok", "ok", "ok", "error"]
    assert REFUSAL in results(log)[-1].content  # a ranged read is recorded too
    assert (workspace / "app.py").read_text() == "v2\n"
    assert (workspace / "new.txt").read_text() == "fresh\n"


async def test_a_resumed_session_keeps_what_the_model_read(store, workspace, script):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(
        {"tool_calls": [call("file_read", "c1", path="app.py")]},
        {"text": "read"},
        {"tool_calls": [call("file_edit", "c2", path="app.py", old="hello", new="bye")]},
        {"text": "tried"},
    )
    first = make_agent(store, workspace, model, approval="yolo")
    await drive(first, "read")
    (workspace / "app.py").write_text("print('hello again')\n")

    resumed = Agent(
        store=store,
        session_id=first.session_id,
        settings=settings_for(model, approval="yolo"),
        workspace=workspace,
    )
    log = await drive(resumed, "edit")
    [refused] = results(log)
    assert REFUSAL in refused.content
    kinds = [e.data["how"] for e in store.events(first.session_id, event_kinds.FILE_SEEN)]
    assert kinds == ["read", "offered"]


def test_repeated_reads_of_the_same_content_store_one_record(store, workspace):
    session = store.create_session(model="m")
    registry = ReadRegistry(store, session.id, workspace)
    path = workspace / "a.txt"
    path.write_text("same\n")
    for _ in range(3):
        registry.record(path, path.read_bytes(), "read")
    assert len(store.events(session.id, event_kinds.FILE_SEEN)) == 1
    seen = registry.last_seen(path)
    assert seen is not None and seen.size == 5


def test_a_fork_inherits_records_up_to_its_fork_point_only(store, workspace):
    times = iter(float(t) for t in range(1, 100))
    store.clock = lambda: next(times)
    parent = store.create_session(model="m")
    path = workspace / "a.txt"
    registry = ReadRegistry(store, parent.id, workspace)
    registry.record(path, b"before the fork\n", "read")
    at = store.append_message(parent.id, {"role": "user", "content": "hi"}, 1)
    registry.record(path, b"after the fork point\n", "edit")

    child = store.fork(parent.id, at_message=at.id)
    seen = ReadRegistry(store, child.id, workspace).last_seen(path)
    assert seen is not None and seen.how == "read"
    assert not ReadRegistry(store, child.id, workspace).changed_since_seen(path, b"before the fork\n")


def test_the_post_compaction_reread_registers_whole_files_only(store, workspace):
    session = store.create_session(model="m")
    (workspace / "small.py").write_text("x = 1\n")
    (workspace / "big.py").write_text("y" * 50)
    read = SeenRecordingReader(workspace_reader(workspace, max_chars=20), store, session.id, workspace)
    assert read("small.py") == "x = 1\n"
    assert read("big.py") == "y" * 20
    assert read("missing.py") is None
    recorded = [e.data["path"] for e in store.events(session.id, event_kinds.FILE_SEEN)]
    assert recorded == ["small.py"]


def test_a_held_reread_is_recorded_at_release_only_for_files_that_still_hold_it(store, workspace):
    """Held (an owed compaction ran while the model answered): the model sees the reread only in
    the next request, by which time a file may have changed again; only what it will see counts."""
    session = store.create_session(model="m")
    (workspace / "same.py").write_text("a = 1\n")
    (workspace / "moved.py").write_text("b = 1\n")
    read = SeenRecordingReader(workspace_reader(workspace), store, session.id, workspace)
    read.hold()
    assert read("same.py") == "a = 1\n" and read("moved.py") == "b = 1\n"
    assert store.events(session.id, event_kinds.FILE_SEEN) == [], "recorded while held"
    (workspace / "moved.py").write_text("b = 2\n")  # the answer's own edit, a formatter
    read.release()
    recorded = [(e.data["path"], e.data["how"]) for e in store.events(session.id, event_kinds.FILE_SEEN)]
    assert recorded == [("same.py", "reread")]
    read("moved.py")  # not held: recorded at once
    assert [e.data["path"] for e in store.events(session.id, event_kinds.FILE_SEEN)] == ["same.py", "moved.py"]


async def test_without_a_store_the_tools_neither_record_nor_refuse(ctx, workspace):
    from myrm_tui.agent.tools.files.edit import FileEdit
    from myrm_tui.agent.tools.files.read import FileRead

    (workspace / "a.txt").write_text("one\n")
    await FileRead().run({"path": "a.txt"}, ctx)
    (workspace / "a.txt").write_text("two\n")
    result = await FileEdit().run({"path": "a.txt", "old": "two", "new": "three"}, ctx)
    assert result.status == "ok"
