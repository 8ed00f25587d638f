"""The shipped declarative filters (context/filters/shipped/*.toml) through the live agent: the
real command runs in the bash tool, its real output goes through the engine, and the provider's
next request (the scripted model's `record` file) shows the filtered view. Each test checks the
saving and that the line a developer needs (tar's, unzip's, du's, dpkg's own message) is kept,
though it sits in the middle of thousands of progress lines the generic excerpt would drop."""

from __future__ import annotations

import json
import os
import re
import socket
import zipfile
from pathlib import Path

import pytest

from myrm_tui.context.filters import declarative
from myrm_tui.settings.config_files.filter_files import load_filter_files, user_filters_dir
from myrm_tui.settings.sections.output_filters import FilterSpec
from tests.agent.agent_helpers import drive, filtered_agent

# Entries in each generated tree: far over the arrival allowance at a 32k window, well under the
# bash tool's spill cap, and a fraction of a second to create.
ENTRIES = 1200


def _sent_tool_result(record: Path) -> str:
    requests = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    [sent] = [m["content"] for m in requests[-1] if m.get("role") == "tool"]
    return sent


async def _run(
    store, workspace: Path, script, tmp_path: Path, command: str, filters: tuple[FilterSpec, ...] = ()
) -> tuple[str, str]:
    """(what the provider received for the bash call, the whole output as stored: the tool row,
    or the vault when bash spilled it)."""
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": command}}]},
        {"text": "seen"},
        context_window=32_000,
        record=str(record),
    )
    agent = filtered_agent(store, workspace, model, filters)
    await drive(agent, "run it")
    [row] = [m for m in store.messages(agent.session_id) if m.role == "tool"]
    sent = _sent_tool_result(record)
    spilled = re.search(r"vault://[0-9a-f]+", sent.split("\n", 1)[0])  # over the spill cap: the whole is there
    return sent, store.vault.read_text(spilled[0]) if spilled else row.message["content"]


def _tree(root: Path, middle: str | None = None) -> None:
    for i in range(ENTRIES):
        folder = root / f"d{i // 40:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:05d}.txt").write_text(f"file {i}\n")


def _shown(sent: str) -> list[str]:
    return [line for line in sent.split("\n")[1:] if not line.startswith("… ")]


async def test_tar_verbose_keeps_tars_own_message_from_the_middle(store, workspace, script, tmp_path):
    _tree(workspace / "tree")
    here = Path.cwd()
    os.chdir(workspace / "tree" / "d015")  # AF_UNIX paths are short: bind a relative name
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("live.sock")
    finally:
        os.chdir(here)
    try:
        sent, full = await _run(store, workspace, script, tmp_path, "tar -cvf out.tar tree 2>&1")
    finally:
        sock.close()
    assert "tar: tree/d015/live.sock: socket ignored" in full.splitlines()  # the real output has it
    header = sent.split("\n", 1)[0]
    assert "filter tar excerpt" in header and "full: msg:" in header
    shown = _shown(sent)
    assert "tar: tree/d015/live.sock: socket ignored" in shown
    assert shown[-1] == "[exit code 0]"
    assert len(shown) <= 8 and len(sent) * 20 < len(full)  # the member list stays behind the handle


async def test_unzip_keeps_a_bad_crc_from_the_middle(store, workspace, script, tmp_path):
    archive = workspace / "a.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        for i in range(ENTRIES):
            z.writestr(f"src/f{i:05d}.txt", f"content of file {i}\n")
    data = bytearray(archive.read_bytes())
    data[data.index(b"content of file 600\n")] ^= 0x20  # one entry's data damaged: its CRC fails
    archive.write_bytes(bytes(data))
    (workspace / "out").mkdir()
    sent, full = await _run(store, workspace, script, tmp_path, "cd out && unzip -o ../a.zip 2>&1")
    [bad] = [line for line in full.splitlines() if "bad CRC" in line]
    assert "src/f00600.txt" in bad
    assert "filter unzip excerpt" in sent.split("\n", 1)[0]
    shown = _shown(sent)
    assert bad in shown and shown[0].startswith("Archive:") and shown[-1] == "[exit code 2]"
    assert len(shown) <= 8 and len(sent) * 20 < len(full)


async def test_du_keeps_its_error_and_the_total(store, workspace, script, tmp_path):
    _tree(workspace / "a")
    _tree(workspace / "b")
    sent, full = await _run(store, workspace, script, tmp_path, "du -a a missing-dir b 2>&1")
    error = "du: cannot access 'missing-dir': No such file or directory"
    assert error in full.splitlines()
    assert "filter du excerpt" in sent.split("\n", 1)[0]
    shown = _shown(sent)
    assert error in shown
    assert shown[-2].endswith("\tb") and shown[-1] == "[exit code 1]"  # b's total: the last du line
    assert len(shown) <= 10 and len(sent) * 20 < len(full)


async def test_dpkg_list_keeps_a_package_not_cleanly_installed(store, workspace, script, tmp_path):
    admin = workspace / "dpkg-admin"  # a dpkg database of our own: the real dpkg reads it
    admin.mkdir()
    packages = []
    for i in range(ENTRIES):
        status = "deinstall ok config-files" if i == 600 else "install ok installed"
        packages.append(
            f"Package: pkg{i:05d}\nStatus: {status}\nPriority: optional\nSection: misc\n"
            f"Maintainer: M <m@example.org>\nArchitecture: all\nVersion: 1.{i}\nDescription: package number {i}\n"
        )
    (admin / "status").write_text("\n".join(packages), encoding="utf-8")
    sent, full = await _run(store, workspace, script, tmp_path, f"dpkg --admindir={admin} -l")
    [removed] = [line for line in full.splitlines() if line.startswith("rc  pkg00600")]
    assert "filter dpkg-list excerpt" in sent.split("\n", 1)[0]
    shown = _shown(sent)
    assert removed in shown and shown[0].startswith("Desired=") and shown[4].startswith("+++-")
    assert sum(line.startswith("ii  ") for line in shown) <= 1  # the clean rows stay behind the handle (tail: 1)
    assert len(sent) * 20 < len(full)


async def test_a_pipe_after_tar_gets_no_tar_filter(store, workspace, script, tmp_path):
    """`tar -tvf x | grep y` shows what the user filtered for: the tar filter must not hide it."""
    _tree(workspace / "tree")
    sent, _full = await _run(store, workspace, script, tmp_path, "tar -cvf out.tar tree | grep -v d007")
    assert "filter tar" not in sent.split("\n", 1)[0]


async def test_a_users_filter_replaces_the_shipped_one(store, workspace, script, tmp_path):
    user_dir = tmp_path / "user-config"
    user_filters_dir(user_dir).mkdir(parents=True)
    (user_filters_dir(user_dir) / "mytar.toml").write_text("match.prefix = 'tar'\nkeep = ['f00777']\n")
    found = load_filter_files(workspace, user_dir, workspace_trusted=False)
    _tree(workspace / "tree")
    sent, _full = await _run(store, workspace, script, tmp_path, "tar -cvf out.tar tree", found.applied)
    assert "filter mytar excerpt" in sent.split("\n", 1)[0]
    assert _shown(sent)[0] == "tree/d019/f00777.txt"


def test_every_shipped_filter_parses_and_comes_from_the_package_data():
    from myrm_tui.context.filters.shipped_filters import shipped_filters

    specs = shipped_filters()
    assert sorted(spec.name for spec in specs) == ["dpkg-list", "du", "tar", "unzip"]
    for spec in specs:
        assert spec.scope == "built-in" and spec.path.parent.name == "shipped" and spec.path.is_file()


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("tar -xzf src.tgz", "tar"),
        ("cd build && tar -cvf ../x.tar . 2>&1", "tar"),
        ("tar -xf a.tar; pytest -x", None),  # pytest's output: its own compressor
        ("unzip -o a.zip", "unzip"),
        ("du -a | sort -n", None),
        ("dpkg -l 'python3*'", "dpkg-list"),
        ("dpkg -i x.deb", None),
        ("git archive --format=tar HEAD", None),
    ],
)
def test_shipped_filters_match_only_their_tool_alone(command, name):
    spec = declarative.pick("bash", command)
    assert (spec.name if spec is not None else None) == name
