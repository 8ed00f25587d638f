"""A command the model started keeps swapping a workspace folder with a symlink to the user's
config while the model reads, edits and writes a file in that folder: nothing outside the
workspace may change or be read, whatever the timing, and no temporary file is left behind.

Why a real race: a path checked and then walked again is exactly what such a command defeats
(the attack pass landed 13-17 of 60 writes in the user's config). The swapper is a separate
process doing atomic exchanges (renameat2 RENAME_EXCHANGE) as fast as it can, so every walk of
`d` sees the folder or the link about half the time each.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.file_attacks import SWAPPER, call, stray_temps, tree_state, turn

# How many tool calls race the swapper: enough for the old walk-twice write to land outside many
# times over (it did in about 1 of 4 calls), few enough for a few seconds of turn.
CALLS = 60
# The swapper gives up after this even if nobody stops it (a hung test must not leave it running).
SWAPPER_MAX_S = 60.0
SECRET = "token = SECRET-FROM-THE-USER-CONFIG"


def _calls() -> list[dict]:
    """Writes, edits and reads of d/config.toml, interleaved."""
    out = []
    for index in range(CALLS):
        kind = index % 3
        if kind == 0:
            content = f"mode = safe\n# written by call {index}\n"
            out.append(call("file_write", f"c{index}", path="d/config.toml", content=content))
        elif kind == 1:
            out.append(call("file_edit", f"c{index}", path="d/config.toml", old="mode = safe", new="mode = edited"))
        else:
            out.append(call("file_read", f"c{index}", path="d/config.toml"))
    return out


async def test_a_folder_swapped_with_a_link_never_takes_a_file_tool_outside(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "config.toml").write_text("mode = safe\n")
    user_config = tmp_path / "home" / ".config" / "myrm"
    user_config.mkdir(parents=True)
    (user_config / "config.toml").write_text(f"mode = safe\n{SECRET}\n")
    before = tree_state(user_config)
    stop = tmp_path / "stop-swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(workspace), "d", str(user_config), str(stop), str(SWAPPER_MAX_S)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline().strip() == "ready"
        started = time.monotonic()
        log = await turn(workspace, tmp_path / "scripts", _calls())
        elapsed = time.monotonic() - started
    finally:
        stop.touch()
        out, _ = swapper.communicate(timeout=30)
    swaps = int(out.split()[-1])
    assert swaps > CALLS, f"the swapper barely ran ({swaps} swaps): the race was not exercised"
    results = [f.content for f in log.finished]
    assert len(results) == CALLS
    leaked = [r for r in results if "SECRET-FROM-THE-USER-CONFIG" in r]
    landed = {k: v for k, v in tree_state(user_config).items() if before.get(k) != v}
    written = sum(r.startswith(("created", "overwrote", "edited")) for r in results)
    # Refused at the look (the link was there) or on the walk (it was swapped in after the look).
    refused = sum(
        f"d is a symbolic link (to {user_config})" in r
        or f"a symbolic link, or passes through one, to {user_config}" in r
        for r in results
    )
    assert landed == {}, f"{len(landed)} change(s) outside the workspace in {elapsed:.1f} s: {landed}"
    assert leaked == [], f"{len(leaked)} of {CALLS} calls showed the user's config to the model"
    assert stray_temps(workspace, user_config) == []
    # The race was real: some calls found the folder, some the link (and said where it leads).
    assert written and refused, (written, refused, results[:6])
    assert (workspace / "d").is_dir() and not (workspace / "d").is_symlink()


@pytest.mark.slow
async def test_a_link_flipped_between_a_folder_and_dot_git_never_lets_a_write_into_git(tmp_path: Path):
    """`x` flips between a link to `safe/` and a link to `.git/` while the model writes
    `x/config`: a write may land in `safe/`, never in `.git/` (the protection check and the walk
    must use the same look; the attack pass landed 19 of 40 writes in .git/config and then
    `git status` ran the planted fsmonitor command)."""
    workspace = tmp_path / "ws"
    (workspace / "safe").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    before = tree_state(workspace / ".git")
    stop = tmp_path / "stop-swapping"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(workspace), "x", ".git", str(stop), str(SWAPPER_MAX_S), "safe"],
        stdout=subprocess.PIPE,
        text=True,
    )
    calls = [
        call("file_write", f"c{i}", path="x/config", content='[core]\n\tfsmonitor = "sh -c id; false #"\n')
        for i in range(CALLS)
    ]
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline().strip() == "ready"
        log = await turn(workspace, tmp_path / "scripts", calls)
    finally:
        stop.touch()
        out, _ = swapper.communicate(timeout=30)
    assert int(out.split()[-1]) > CALLS, "the swapper barely ran: the race was not exercised"
    results = [f.content for f in log.finished]
    landed = {k: v for k, v in tree_state(workspace / ".git").items() if before.get(k) != v}
    assert landed == {}, f"{len(landed)} change(s) inside .git: {sorted(landed)}"
    assert any(r.startswith(("created", "overwrote")) for r in results), results[:4]
    assert any("protected" in r for r in results), results[:4]
    assert stray_temps(workspace) == []
