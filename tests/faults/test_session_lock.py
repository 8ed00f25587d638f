"""One writer per session, across real processes.

The failing case comes first: two `myrm run --continue` started together on one session. Before
the lock both exited 0 and left the session interleaved (user, user, assistant, assistant,
tool…) with generated call ids answered twice; now the second one continues in a fork, every
history stays well formed, and generated call ids never collide between processes.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from myrm_tui.store import StoreError
from tests.faults.store_faults import (
    CLI_TIMEOUT_S,
    HOLDER,
    Myrm,
    clean_env,
    log_problems,
    make_workspace,
    quit_tui,
    read_store,
    start_tui,
    tmux,
    tool_then_answer_script,
    wait_for_screen,
)

# Every round is a real race (the barrier below holds both writers inside a tool call at once), so
# each round exercises the lock the same way: 6 rounds of 2 cold processes instead of 20 cut the
# test from about 7 minutes to 2 on two cores and still catch an interleaving in any of them.
ROUNDS = 6
KILLS = 5
# The barrier: each run's one tool call waits (up to this many 0.1 s steps) until both runs
# of the round are inside their tool call, so every round really has two writers at once.
BARRIER_STEPS = 600
READY_TIMEOUT_S = 120.0


def barrier_command(folder: Path) -> str:
    return (
        f'mktemp "{folder}/writer.XXXXXXXX" >/dev/null; n=0; while test "$(ls "{folder}" | wc -l)" -lt 2 && '
        f"test $n -lt {BARRIER_STEPS}; do sleep 0.1; n=$((n+1)); done; echo ok"
    )


# Rounds of two cold `myrm run` processes (each imports litellm): minutes on a loaded
# 2-core machine, so this test gets its own bound instead of the suite's 300 s.
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_two_processes_continuing_one_session_never_interleave(tmp_path: Path):
    myrm = make_workspace(tmp_path)
    barrier = myrm.workspace / "barrier"
    barrier.mkdir()
    model = tool_then_answer_script(tmp_path / "script.json", 4 * ROUNDS + 4, barrier_command(barrier))
    (barrier / "first").touch()  # the first run is alone: let its tool call through
    first = myrm("run", "--approve", "yolo", "--model", model, "start")
    assert first.returncode == 0, first.stderr
    forked_rounds = 0
    for round_no in range(ROUNDS):
        shutil.rmtree(barrier)
        barrier.mkdir()
        runs = {
            name: myrm.popen("run", "--continue", "--approve", "yolo", "--model", model, f"{name}{round_no}")
            for name in "AB"
        }
        outputs = {name: proc.communicate(timeout=CLI_TIMEOUT_S) for name, proc in runs.items()}
        for name, proc in runs.items():
            assert proc.returncode == 0, f"round {round_no} run {name}: {outputs[name][1]}"
        if any("continuing in a fork" in err for _out, err in outputs.values()):
            forked_rounds += 1
    sessions = read_store(myrm.workspace)
    problems = {sid: log_problems(s["history"]) for sid, s in sessions.items()}
    interleavings = sum(len(found) for found in problems.values())
    print(
        f"\nconcurrent rounds: {ROUNDS}, forked: {forked_rounds}, sessions: {len(sessions)}, "
        f"interleavings: {interleavings}"
    )
    assert interleavings == 0, json.dumps(problems, indent=1)[:4000]
    # Nothing lost: every prompt is stored once, as a user message of exactly one session.
    prompts = Counter(m["content"] for s in sessions.values() for m in s["own"] if m["role"] == "user")
    assert prompts == Counter(["start", *(f"{n}{r}" for r in range(ROUNDS) for n in "AB")])
    # Ids myrm generated (the script sends none) are unique across every process that wrote.
    ids = [
        call["id"]
        for s in sessions.values()
        for m in s["own"]
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or ()
    ]
    assert len(ids) == 1 + 2 * ROUNDS and len(set(ids)) == len(ids)
    # Every round had two writers at once (the barrier), so every round needed a fork.
    assert forked_rounds == ROUNDS
    assert sum(1 for s in sessions.values() if s["parent"]) == ROUNDS


def start_holder(myrm: Myrm, session_id: str, *extra: str) -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), str(myrm.workspace), session_id, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(myrm.config_dir),
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline().split()
    assert line[:1] == ["ready"], proc.stderr.read()
    return proc, [int(n) for n in line[1:]]


def one_finished_session(myrm: Myrm, tmp_path: Path) -> tuple[str, str]:
    """A session with one finished turn; returns (session id, model)."""
    model = tool_then_answer_script(tmp_path / "script.json", 40, "echo done")
    result = myrm("run", "--json", "--approve", "yolo", "--model", model, "first")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["session_id"], model


@pytest.mark.slow
def test_busy_session_is_refused_forked_and_free_again_after_kill_9(tmp_path: Path):
    myrm = make_workspace(tmp_path)
    session_id, model = one_finished_session(myrm, tmp_path)
    holder, (holder_pid,) = start_holder(myrm, session_id)
    try:
        before = read_store(myrm.workspace)[session_id]["own"]
        refused = myrm("run", "--session", session_id[:6], "--approve", "yolo", "--model", model, "late")
        assert refused.returncode == 2
        assert f"session {session_id} is in use by pid {holder_pid}" in refused.stderr
        assert "--fork" in refused.stderr and "Traceback" not in refused.stderr
        assert read_store(myrm.workspace)[session_id]["own"] == before  # nothing was written

        # A fork is usable while its parent is locked.
        forked = myrm(
            "run", "--json", "--session", session_id, "--fork", "--approve", "yolo", "--model", model, "in a fork"
        )
        assert forked.returncode == 0, forked.stderr
        fork_id = json.loads(forked.stdout)["session_id"]
        # --continue forks by itself when the latest session is busy (the fork is now the
        # latest: hold it too, so --continue meets a busy session).
        fork_holder, _ = start_holder(myrm, fork_id)
        try:
            auto = myrm("run", "--json", "--continue", "--approve", "yolo", "--model", model, "auto")
        finally:
            fork_holder.communicate("")
        assert auto.returncode == 0, auto.stderr
        assert f"session {fork_id} is in use by pid" in auto.stderr and "continuing in a fork" in auto.stderr
        auto_id = json.loads(auto.stdout)["session_id"]
        sessions = read_store(myrm.workspace)
        assert sessions[fork_id]["parent"] == session_id and sessions[auto_id]["parent"] == fork_id
        assert sessions[session_id]["own"] == before
        for sid in (fork_id, auto_id):
            assert log_problems(sessions[sid]["history"]) == []
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
    # The kernel dropped the dead holder's lock: the session takes writes again.
    again = myrm("run", "--session", session_id, "--approve", "yolo", "--model", model, "after the kill")
    assert again.returncode == 0, again.stderr
    history = read_store(myrm.workspace)[session_id]["history"]
    assert [m["content"] for m in history if m["role"] == "user"][-1] == "after the kill"
    assert history[-1]["role"] == "assistant" and log_problems(history) == []


@pytest.mark.slow
def test_kill_9_mid_turn_never_leaves_a_session_stuck(tmp_path: Path):
    """`myrm run` killed inside a tool call, KILLS times: each time the next run on that
    session starts at once (no stale lock) and answers the dead run's open call."""
    myrm = make_workspace(tmp_path)
    session_id, _ = one_finished_session(myrm, tmp_path)
    # The tool runs until its marker goes: whether or not bash is sandboxed (a sandboxed call
    # dies with myrm), removing the marker ends any orphan without knowing its pid.
    marker = myrm.workspace / "tool-running"
    hang = tool_then_answer_script(
        tmp_path / "hang.json", 40, f'touch "{marker}"; while test -e "{marker}"; do sleep 0.2; done'
    )
    calm = tool_then_answer_script(tmp_path / "calm.json", 40, "echo calm")
    lock_file = myrm.workspace / ".myrm" / "locks" / f"{session_id}.lock"
    survived = 0
    for kill_no in range(KILLS):
        run = myrm.popen("run", "--session", session_id, "--approve", "yolo", "--model", hang, f"hang {kill_no}")
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not marker.exists():
                assert run.poll() is None, run.communicate()[1]
                assert time.monotonic() < deadline, "the run never reached its tool call"
                time.sleep(0.1)
            assert lock_file.read_text().strip() == str(run.pid)  # it holds the session
        finally:
            run.send_signal(signal.SIGKILL)
            run.communicate(timeout=30)
            marker.unlink(missing_ok=True)
        after = myrm("run", "--session", session_id, "--approve", "yolo", "--model", calm, f"after {kill_no}")
        assert after.returncode == 0, after.stderr
        history = read_store(myrm.workspace)[session_id]["history"]
        assert log_problems(history) == [], log_problems(history)
        survived += 1
    print(f"\nkill -9 mid-turn survived: {survived}/{KILLS}")
    assert survived == KILLS


def test_a_tool_process_outliving_myrm_does_not_keep_the_lock(tmp_path: Path):
    from myrm_tui.store import Store

    myrm = make_workspace(tmp_path)
    with Store.open(myrm.workspace) as store:
        session_id = store.create_session("m", "t").id
    holder, (_pid, sleeper) = start_holder(myrm, session_id, "--spawn-sleeper")
    try:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
        assert Path(f"/proc/{sleeper}").exists()  # the grandchild still runs
        second, _ = start_holder(myrm, session_id)  # …and the session is free anyway
        second.communicate("")
        assert second.returncode == 0
    finally:
        os.killpg(sleeper, signal.SIGKILL)


def test_one_process_never_locks_itself_out_and_close_releases(tmp_path: Path):
    from myrm_tui.store import SessionBusyError, Store

    myrm = make_workspace(tmp_path)
    first = Store.open(myrm.workspace)
    session_id = first.create_session("m", "t").id
    second = Store.open(myrm.workspace)  # same process: shares the claim
    second.append_message(session_id, {"role": "user", "content": "from the second store"}, 1)
    first.close()
    lock_file = myrm.workspace / ".myrm" / "locks" / f"{session_id}.lock"
    with open(lock_file, "rb") as probe, pytest.raises(BlockingIOError):  # the second store holds it
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert second.session_writer(session_id) is None  # "nobody else"
    second.close()
    holder, (holder_pid,) = start_holder(myrm, session_id)
    try:
        with Store.open(myrm.workspace) as third:
            assert third.session_writer(session_id) == holder_pid
            with pytest.raises(SessionBusyError, match=f"in use by pid {holder_pid}"):
                third.append_message(session_id, {"role": "user", "content": "refused"}, 1)
            child = third.fork(session_id)  # forking a busy session is allowed
            third.append_message(child.id, {"role": "user", "content": "in the fork"}, 1)
            assert [m.message["content"] for m in third.messages(child.id)] == ["from the second store", "in the fork"]
    finally:
        holder.communicate("")


def test_a_busy_session_is_forked_at_its_last_finished_turn(tmp_path: Path):
    """The other process is inside a turn (its call has no result yet): the fork must not
    start inside that turn, and a session with no finished turn gives a new session."""
    from myrm_tui.store import Store
    from myrm_tui.store.busy_fork import open_for_writing

    myrm = make_workspace(tmp_path)
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    with Store.open(myrm.workspace) as store:
        finished = store.create_session("m", "finished")
        for body in (
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "two"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ):
            store.append_message(finished.id, body, 1)
        fresh = store.create_session("m", "fresh")
        store.append_message(fresh.id, {"role": "user", "content": "first ever"}, 1)
    holders = [start_holder(myrm, sid)[0] for sid in (finished.id, fresh.id)]
    try:
        with Store.open(myrm.workspace) as store:
            forked = open_for_writing(store, store.get_session(finished.id), fork=False, fork_if_busy=True)
            assert forked.forked_from == finished.id and forked.busy_pid == holders[0].pid
            assert forked.session_id is not None
            assert [m.message["content"] for m in store.messages(forked.session_id)] == ["one", "done"]
            assert "continuing in a fork" in (forked.notice() or "")
            new = open_for_writing(store, store.get_session(fresh.id), fork=False, fork_if_busy=True)
            assert new.session_id is None and "starting a new session" in (new.notice() or "")
            with pytest.raises(StoreError, match=f"in use by pid {holders[1].pid}"):
                open_for_writing(store, store.get_session(fresh.id), fork=False, fork_if_busy=False)
    finally:
        for holder in holders:
            holder.communicate("")


def test_generated_call_ids_differ_between_processes_and_repeat_within_one(tmp_path: Path):
    """The salt the stream passes (model and conversation length) is the same in two processes
    answering the same session state; the ids must still differ."""
    code = (
        "from myrm_tui.llm.assembler import StreamAssembler\n"
        "def once():\n"
        "    a = StreamAssembler(id_salt='scripted/x:3')\n"
        "    a.feed({'choices': [{'delta': {'tool_calls': [{'index': 0, 'function': "
        "{'name': 'bash', 'arguments': '{\"command\": \"ls\"}'}}]}, 'finish_reason': 'tool_calls'}]})\n"
        "    return [e.id for e in a.finish() if hasattr(e, 'parse_error')][0]\n"
        "print(once(), once())\n"
    )
    env = clean_env(tmp_path)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT_S, check=False
        )
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    (a1, a2), (b1, b2) = (r.stdout.split() for r in runs)
    assert a1 == a2 and b1 == b2  # reproducible inside one process
    assert a1 != b1 and a1.startswith("call_")  # never shared between processes


@pytest.mark.slow
def test_two_tuis_and_a_run_on_one_session(tmp_path: Path):
    """A TUI holds its session from the moment it shows it: `myrm run --session` is refused,
    a second TUI continues in a fork (and can talk there), and after the first quits the
    session takes writes again."""
    myrm = make_workspace(tmp_path)
    session_id, model = one_finished_session(myrm, tmp_path)
    first, second = (f"myrm-lock-{uuid.uuid4().hex[:8]}" for _ in range(2))
    first_exit = start_tui(myrm, first, "--session", session_id, "--model", model)
    second_exit = None
    try:
        # The session's own messages show once it is open (and locked); the start screen that
        # paints before it shows the same prompt but holds no session yet.
        wait_for_screen(first, "answer 0")
        refused = myrm("run", "--session", session_id, "--model", model, "from the side")
        assert refused.returncode == 2 and f"session {session_id} is in use by pid" in refused.stderr
        second_exit = start_tui(myrm, second, "--continue", "--approve", "yolo", "--model", model)
        screen = wait_for_screen(second, "continuing in a fork of it")
        assert f"Session {session_id} is in use by pid" in screen
        tmux("send-keys", "-t", second, "-l", "hello from the fork")
        tmux("send-keys", "-t", second, "Enter")
        wait_for_screen(second, "answer 1")
        assert quit_tui(second, second_exit) == "0"
        assert quit_tui(first, first_exit) == "0"
    finally:
        for name in (first, second):
            subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
    sessions = read_store(myrm.workspace)
    (fork_id,) = [sid for sid, s in sessions.items() if s["parent"] == session_id]
    assert [m["content"] for m in sessions[fork_id]["own"] if m["role"] == "user"] == ["hello from the fork"]
    assert log_problems(sessions[fork_id]["history"]) == []
    after = myrm("run", "--session", session_id, "--approve", "yolo", "--model", model, "after both quit")
    assert after.returncode == 0, after.stderr
