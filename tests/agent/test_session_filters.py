"""Declarative output filters belong to a session, not to the process (issue 24): two sessions of
two trusted workspaces in one process (an ACP server's shape) each filter with their own
workspace's `.myrm/filters/*.toml`, whatever order their settings were settled and their turns
run in; a workspace trusted in the middle of a session filters from the next turn on."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from myrm_tui.agent.session_runtime import SessionRuntime
from myrm_tui.cli_commands.common import bootstrap
from myrm_tui.cli_commands.trust import settle_choice
from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.filter_files import workspace_filters_dir
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store

COMMAND = "seq 1 4000"
# Each workspace keeps different lines of the same output, so the excerpt names whose filter ran.
FILTERS = {"alpha": ("sevens", "777$"), "beta": ("fives", "555$")}


@dataclass
class Workspace:
    root: Path
    store: Store
    filter_name: str
    kept_suffix: str


def _workspace(tmp_path: Path, name: str) -> Workspace:
    root = (tmp_path / name).resolve()
    (root / ".git").mkdir(parents=True)  # workspace discovery stops here
    filter_name, suffix = FILTERS[name]
    workspace_filters_dir(root).mkdir(parents=True)
    (workspace_filters_dir(root) / f"{filter_name}.toml").write_text(
        f"match.prefix = 'seq'\nkeep = ['{suffix}']\nhead = 1\n", encoding="utf-8"
    )
    return Workspace(root, Store.open(root), filter_name, suffix.rstrip("$"))


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Workspace, Workspace]]:
    pair = (_workspace(tmp_path, "alpha"), _workspace(tmp_path, "beta"))
    yield pair
    for ws in pair:
        ws.store.close()


def _user_dir() -> Path:
    return Path(os.environ["MYRM_CONFIG_DIR"])


def _trust(ws: Workspace) -> None:
    """What `myrm trust` records: this version of the workspace's files is trusted."""
    state = load_settings(ws.root, {}, user_config_dir=_user_dir()).workspace_trust
    assert state is not None and state.digest is not None and state.needs_decision
    T.record_trust(_user_dir(), ws.root, state.digest)


def _settled(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings a command started in `ws` settles (`bootstrap`, as `myrm acp` and `myrm run` do)."""
    monkeypatch.chdir(ws.root)
    context = bootstrap(quiet=True)
    assert context is not None
    return context.settings


def _script(tmp_path: Path, name: str, runs: int = 1) -> tuple[str, Path]:
    """A scripted model that runs COMMAND and answers, `runs` user turns in a row; and the file its
    requests go to."""
    record = tmp_path / f"{name}-requests.jsonl"
    path = tmp_path / f"{name}-script.json"
    turns: list[dict[str, object]] = []
    for run in range(runs):
        call = {"id": f"c{run}", "name": "bash", "arguments": {"command": COMMAND}}
        turns += [{"tool_calls": [call]}, {"text": "seen"}]
    path.write_text(json.dumps({"turns": turns, "context_window": 32_000, "record": str(record)}), encoding="utf-8")
    return f"scripted/{path}", record


def _sent_tool_result(record: Path) -> str:
    """The newest tool result of the last request the provider received."""
    requests = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return str([m["content"] for m in requests[-1] if m.get("role") == "tool"][-1])


async def _turn(runtime: SessionRuntime, settings: Settings, text: str) -> None:
    async for _event in runtime.send(text, settings):
        pass


def _runtime(ws: Workspace, model: str) -> SessionRuntime:
    session = ws.store.create_session(model=model)
    return SessionRuntime(store=ws.store, session_id=session.id, workspace=ws.root, headless=True)


async def test_two_workspaces_in_one_process_each_filter_with_their_own(two, tmp_path, monkeypatch):
    alpha, beta = two
    for ws in two:
        _trust(ws)
    # Both settled before either runs a turn: a process-wide filter set would hold beta's only.
    settled = {ws.root: _settled(ws, monkeypatch) for ws in two}
    for ws in (alpha, beta):
        model, record = _script(tmp_path, ws.root.name)
        runtime = _runtime(ws, model)
        try:
            await _turn(runtime, settled[ws.root].with_values(model=model, approval="yolo"), "count")
        finally:
            await runtime.aclose()
        header, body = _sent_tool_result(record).split("\n", 1)
        other = beta if ws is alpha else alpha
        assert f"(filter {ws.filter_name} excerpt)" in header, header
        assert other.filter_name not in header
        shown = [line for line in body.split("\n") if not line.startswith("… ")]
        assert shown[0] == "1" and any(line.endswith(ws.kept_suffix) for line in shown[1:])
        assert not any(line.endswith(other.kept_suffix) for line in shown[1:-1])


async def test_a_workspace_trusted_mid_session_filters_from_the_next_turn(two, tmp_path, monkeypatch):
    """The TUI's trust dialog (`settle_choice`) hands the session new settings; the next message
    rebuilds the agent with the workspace's filters (they are part of its fingerprint)."""
    alpha, _beta = two
    untrusted = _settled(alpha, monkeypatch)
    assert untrusted.output_filters == ()  # held until trust
    model, record = _script(tmp_path, "alpha", runs=2)
    runtime = _runtime(alpha, model)
    try:
        await _turn(runtime, untrusted.with_values(model=model, approval="yolo"), "count")
        assert "filter sevens" not in _sent_tool_result(record).split("\n", 1)[0]
        state = load_settings(alpha.root, {}, user_config_dir=_user_dir()).workspace_trust
        assert state is not None
        trusted, _note = settle_choice(T.ONCE, alpha.root, {}, state, _user_dir())
        assert trusted is not None
        await _turn(runtime, trusted.with_values(model=model, approval="yolo"), "count again")
        assert runtime.rebuilds == 2  # same model: the filters alone changed the agent's fingerprint
    finally:
        await runtime.aclose()
    assert "(filter sevens excerpt)" in _sent_tool_result(record).split("\n", 1)[0]


def test_a_replay_in_a_process_that_settled_filters_applies_none(tmp_path, monkeypatch):
    """`myrm replay` must not depend on who replays it: a user's filter settled by another command
    of the same process (an ACP server, a test run) does not reach the replayed prompt."""
    from myrm_tui.replay import ReplayOptions, replay
    from myrm_tui.settings.config_files.filter_files import user_filters_dir

    user_filters_dir(_user_dir()).mkdir(parents=True, exist_ok=True)
    (user_filters_dir(_user_dir()) / "mine.toml").write_text("match.prefix = 'dump'\nhead = 2\n", encoding="utf-8")
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    context = bootstrap(quiet=True)
    assert context is not None
    body = "\n".join(f"row {i} ok" for i in range(4_000))
    call = {"id": "d1", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "dump"})}}
    lines = [
        {
            "turn": 1,
            "messages": [
                {"role": "user", "content": "dump the table"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "d1", "name": "bash", "content": body},
                {"role": "assistant", "content": "dumped"},
            ],
        },
        {"turn": 2, "messages": [{"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]},
    ]
    _turn1, turn2 = replay(lines, ReplayOptions(window=32_000))
    result = next(m for m in turn2["prompt"] if m.get("role") == "tool")
    assert "vault://" in result["content"]  # spilled, with an excerpt chosen without the user's filter
    assert "filter mine" not in result["content"]
    # The control: the command's own sessions do apply it.
    assert [f.name for f in context.settings.output_filters] == ["mine"]
