"""Files myrm reads from the workspace on its own (grep's walk, AGENTS.md, custom commands, the
workspace config) follow the file tools' rule: a link is followed only while it stays inside the
workspace, nothing is read through a folder a command swapped for a link meanwhile, only regular
files are read, and never without a size cap.

Why: the repository is hostile and whatever the model starts runs while myrm reads. A committed
`AGENTS.md -> ~/.ssh/id_rsa` or `-> /proc/self/environ` put a key, or the environment with the
API keys, into the system prompt; a committed `.myrm/commands/hi.md` link sent a key as the
prompt; a 6 GB `AGENTS.md` made by a sandboxed `truncate` made every later run die with
MemoryError; a background job swapping a folder for a link let grep read the user's config.
Each test drives the path the user runs (`Agent.turn`, `myrm run`, `myrm doctor`) and looks for
the outside secret in what the provider received or what the tool returned.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.clone_cli import CLI_TIMEOUT_S, clean_env
from tests.security.file_attacks import SWAPPER, call, myrm, turn

SECRET = "SECRET-FROM-OUTSIDE-THE-WORKSPACE"
ENV_KEY = "sk-test-ENVIRON-KEY-0123456789abcdef"
# grep calls racing the swapper: the old walk-then-read-by-path leaked in about 1 of 20 calls
# with one file; with FILES files per folder the window is wider, and this many calls make a leak
# on the old code near certain while the turn stays around two seconds.
GREPS = 60
FILES = 30
# The swapper stops by itself after this, even if the test died before telling it to.
SWAPPER_MAX_S = 60.0
# The memory a `myrm run` may map in the huge-file test: far above what it needs (litellm and
# all), far below the 6 GB file, so reading the file whole fails at once instead of filling RAM.
RUN_ADDRESS_SPACE = 4 * 1024**3
HUGE_FILE_BYTES = 6 * 1024**3


def _outside_secret(tmp_path: Path) -> Path:
    """A private file outside the workspace (a stand-in for ~/.ssh/id_rsa)."""
    home = tmp_path / "home" / ".ssh"
    home.mkdir(parents=True)
    key = home / "id_rsa"
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    return key


def _recording_model(tmp_path: Path, *turns: dict) -> tuple[str, Path]:
    """The user's scripted model (outside the workspace) and the file it logs every request to."""
    scripts = tmp_path / "scripts"
    scripts.mkdir(exist_ok=True)
    record = scripts / "requests.jsonl"
    script = scripts / "model.json"
    script.write_text(json.dumps({"record": str(record), "turns": list(turns) or [{"text": "ok"}]}))
    return f"scripted/{script}", record


def _system_prompts(record: Path) -> list[str]:
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    return [m["content"] for messages in requests for m in messages if m.get("role") == "system"]


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)  # stops workspace discovery here
    return workspace


async def test_grep_never_reads_through_a_folder_a_command_swaps_for_a_link(tmp_path: Path):
    """(A) A background job keeps exchanging the workspace folder `d` with a link to the user's
    config while the model greps: no grep may return a line of the config."""
    workspace = _workspace(tmp_path)
    (workspace / "d").mkdir()
    outside = tmp_path / "home" / ".config" / "myrm"
    outside.mkdir(parents=True)
    for index in range(FILES):
        (workspace / "d" / f"f{index:02}.toml").write_text("token = placeholder\n")
        (outside / f"f{index:02}.toml").write_text(f"token = {SECRET}\n")
    # The first turn of a process loads the provider layer (seconds): done before the race, so
    # the swapper runs only while the greps do.
    await turn(workspace, tmp_path / "scripts", [call("grep", "warm", pattern="token", path=".")])
    stop = tmp_path / "stop-swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(workspace), "d", str(outside), str(stop), str(SWAPPER_MAX_S)],
        stdout=subprocess.PIPE,
        text=True,
    )
    calls = [call("grep", f"g{index}", pattern="token", path=".") for index in range(GREPS)]
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline().strip() == "ready"
        started = time.monotonic()
        log = await turn(workspace, tmp_path / "scripts", calls)
        elapsed = time.monotonic() - started
    finally:
        stop.touch()
        out, _ = swapper.communicate(timeout=30)
    swaps = int(out.split()[-1])
    assert swaps > GREPS, f"the swapper barely ran ({swaps} swaps): the race was not exercised"
    results = [f.content for f in log.finished]
    assert len(results) == GREPS
    leaked = [r for r in results if SECRET in r]
    assert leaked == [], f"{len(leaked)} of {GREPS} greps in {elapsed:.1f} s read the user's config"
    # The race was real: some greps found the folder's files, some met the link and said so.
    found = sum("d/f00.toml:1: token = placeholder" in r for r in results)
    refused = sum("symlink(s) pointing outside the workspace not followed" in r for r in results)
    assert found and refused, (found, refused, results[:4])


@pytest.mark.slow
def test_a_committed_instruction_file_linking_out_never_reaches_the_system_prompt(tmp_path: Path):
    """(B) `AGENTS.md -> ~/.ssh/id_rsa` and `CLAUDE.md -> /proc/self/environ` in a clone: `myrm
    run` sends neither the key nor the environment; a link inside the workspace still works."""
    workspace = _workspace(tmp_path)
    (workspace / "AGENTS.md").symlink_to(_outside_secret(tmp_path))
    (workspace / "CLAUDE.md").symlink_to("/proc/self/environ")
    (workspace / "pkg" / "docs").mkdir(parents=True)
    (workspace / "pkg" / "docs" / "rules.md").write_text("Use tabs in pkg.\n")
    (workspace / "pkg" / "AGENTS.md").symlink_to("docs/rules.md")
    model, record = _recording_model(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "myrm_tui", "run", "--model", model, "hello"],
        cwd=workspace / "pkg",
        env=clean_env(tmp_path / "user-config", {"OPENAI_API_KEY": ENV_KEY}, test_providers=True),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    prompts = _system_prompts(record)
    assert prompts, "the model got no request"
    assert not [p for p in prompts if SECRET in p], "the outside key reached the system prompt"
    assert not [p for p in prompts if ENV_KEY in p], "myrm's environment reached the system prompt"
    assert all("Use tabs in pkg." in p for p in prompts), prompts[0][-500:]


def _limited_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (RUN_ADDRESS_SPACE, RUN_ADDRESS_SPACE))


@pytest.mark.slow
def test_a_huge_agents_md_is_cut_instead_of_crashing_every_run(tmp_path: Path):
    """(B) A 6 GB `AGENTS.md` (sparse, as a sandboxed `truncate` makes it): `myrm run` still
    answers, with the file's head in the prompt and a note that it was cut."""
    workspace = _workspace(tmp_path)
    with (workspace / "AGENTS.md").open("wb") as handle:
        handle.write(b"# House rules\nAlways answer in French.\n")
        handle.truncate(HUGE_FILE_BYTES)
    model, record = _recording_model(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "myrm_tui", "run", "--model", model, "hello"],
        cwd=workspace,
        env=clean_env(tmp_path / "user-config", test_providers=True),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
        preexec_fn=_limited_address_space,
    )
    assert "MemoryError" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 0, result.stderr[-2000:]
    prompts = _system_prompts(record)
    assert prompts and all("Always answer in French." in p for p in prompts)
    assert "[AGENTS.md cut at" in prompts[0], prompts[0][-300:]


@pytest.mark.slow
def test_a_committed_custom_command_linking_out_is_never_sent(tmp_path: Path):
    """(C) `.myrm/commands/hi.md -> ~/.ssh/id_rsa`: `myrm run /hi` does not send the key."""
    workspace = _workspace(tmp_path)
    commands = workspace / ".myrm" / "commands"
    commands.mkdir(parents=True)
    (commands / "hi.md").symlink_to(_outside_secret(tmp_path))
    model, record = _recording_model(tmp_path)
    result = myrm(workspace, tmp_path / "user-config", "run", "--model", model, "/hi")
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout + result.stderr
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    users = [m["content"] for messages in requests for m in messages if m.get("role") == "user"]
    assert users, "the model got no request"
    assert not [u for u in users if SECRET in json.dumps(u)], "the outside key was sent as the prompt"


def test_a_committed_workspace_config_linking_out_is_not_read(tmp_path: Path):
    """(D) `.myrm/config.toml` linked to a file outside the workspace: its settings do not apply
    and `myrm doctor` says why, instead of taking the outside file as the repository's."""
    workspace = _workspace(tmp_path)
    outside = tmp_path / "elsewhere" / "settings.toml"
    outside.parent.mkdir()
    outside.write_text("max_steps = 7\n")
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "config.toml").symlink_to(outside)
    result = myrm(workspace, tmp_path / "user-config", "doctor")
    steps = [line for line in result.stdout.splitlines() if line.strip().startswith("max_steps ")]
    assert steps and "= 7" not in steps[0], steps
    assert f"leads to {outside}, outside" in result.stdout, result.stdout[:1500]
