"""The one fenced replace (myrm_tui/fenced_files.py): a file is either its old content or its new
content, never half, and it is written through its folder's handle, never through a link."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from myrm_tui import fenced_files as module
from myrm_tui.fenced_files import NEW_FILE_MODE, TEMP_SUFFIX, FenceError, open_root
from myrm_tui.fenced_paths import replace_file as atomic_write


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]


def test_text_and_bytes_are_written_whole(tmp_path):
    target = tmp_path / "sub" / "f.txt"
    atomic_write(target, "héllo\r\nwörld")  # UTF-8, newlines untranslated, parents created
    assert target.read_bytes() == "héllo\r\nwörld".encode()
    atomic_write(target, b"\x00\xff")
    assert target.read_bytes() == b"\x00\xff"
    assert _leftovers(target.parent) == []


def test_a_new_file_is_owner_only_and_an_existing_one_keeps_its_mode(tmp_path):
    new = tmp_path / "new"
    atomic_write(new, "x")
    assert stat.S_IMODE(new.stat().st_mode) == NEW_FILE_MODE
    script = tmp_path / "run.sh"
    script.write_text("old")
    os.chmod(script, 0o751)
    atomic_write(script, "new")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751


def test_an_explicit_mode_wins_over_the_old_one(tmp_path):
    target = tmp_path / "f"
    target.write_text("old")
    os.chmod(target, 0o644)
    atomic_write(target, "new", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    target.write_text("old content")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("myrm_tui.fenced_files.os.fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, "new content " * 1000)
    assert target.read_text() == "old content"
    assert _leftovers(tmp_path) == []


def test_a_failed_rename_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def broken_replace(src, dst, **_dir_fds):
        raise KeyboardInterrupt  # even an interrupt cleans up

    monkeypatch.setattr("myrm_tui.fenced_files.os.replace", broken_replace)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_text_that_cannot_be_utf8_changes_nothing(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "bad \udc80")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_a_link_as_the_file_is_refused_and_its_target_left_alone(tmp_path):
    """The file written is never a link's target, and the link is not silently replaced."""
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.toml").symlink_to(outside)
    with pytest.raises(FenceError, match="symbolic link"):
        atomic_write(folder / "config.toml", "ours")
    assert outside.read_text() == "theirs"
    assert (folder / "config.toml").is_symlink()
    assert _leftovers(folder) == []


def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with module.open_root(tmp_path) as folder, pytest.raises(FenceError, match="named pipe"):
        folder.read_bytes("pipe")


def test_user_file_mode_follows_the_umask(tmp_path):
    """A file the agent creates in the workspace is the user's work: their umask decides, as
    their editor's would (0o644 under the usual 022, 0o600 under 077)."""
    old = os.umask(0o027)
    try:
        assert module.user_file_mode() == 0o640
        target = tmp_path / "made_by_the_agent.py"
        atomic_write(target, "x", new_file_mode=module.user_file_mode())
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_setuid_setgid_and_sticky_bits_are_not_copied_onto_the_replacement(tmp_path):
    """The replacement is a new file owned by this process: a stray setuid bit on the old one
    must not become a setuid file of ours."""
    target = tmp_path / "tool.sh"
    target.write_text("old")
    os.chmod(target, 0o4755)
    atomic_write(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_root_reached_through_a_link_is_followed_once_and_nothing_below_it(tmp_path):
    """The user may start in a symlinked folder (`cd ~/link-to-project`): the root is their own
    path, so it is followed; a link below it never is."""
    real = tmp_path / "real-project"
    (real / "src").mkdir(parents=True)
    (tmp_path / "link-to-project").symlink_to(real)
    (real / "out").symlink_to(tmp_path)
    with module.open_target(tmp_path / "link-to-project", ("src", "app.py")) as target:
        target.replace("x = 1\n")
    assert (real / "src" / "app.py").read_text() == "x = 1\n"
    with pytest.raises(FenceError, match=r"out is a symbolic link \(to "):
        module.open_target(tmp_path / "link-to-project", ("out", "app.py"))


@pytest.mark.skipif(os.geteuid() != 0, reason="gives a file to another user")
def test_a_file_another_user_planted_in_a_sticky_shared_folder_is_not_opened_to_create(tmp_path):
    """The kernel's fs.protected_regular, kept although the file is reopened without O_CREAT."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "myrm.log"
    planted.write_text("")
    os.chown(planted, 65534, 65534)
    with open_root(shared) as folder:
        with pytest.raises(PermissionError, match="owned by another user"):
            folder.open_regular("myrm.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.close(folder.open_regular("myrm.log"))  # reading it is not creating it
        os.chown(planted, os.geteuid(), os.getegid())
        os.close(folder.open_regular("myrm.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND))


def test_without_proc_a_file_is_opened_by_name_and_kept_only_if_still_the_one_pinned(tmp_path, monkeypatch):
    """A container without /proc: the reopen goes by name and checks the inode it got."""
    (tmp_path / "f").write_text("pinned")
    (tmp_path / "other").write_text("swapped in")
    real_open, real_isdir = os.open, os.path.isdir
    swap = [False]

    def no_proc(path, *args, **kwargs):
        if isinstance(path, str) and path.startswith("/proc/self/fd/"):
            if swap[0]:  # what a concurrent process does between the pin and the open
                os.replace(tmp_path / "other", tmp_path / "f")
            raise FileNotFoundError(errno.ENOENT, "no /proc here", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", no_proc)
    monkeypatch.setattr(os.path, "isdir", lambda p: False if p == "/proc/self/fd" else real_isdir(p))
    with open_root(tmp_path) as folder:
        assert folder.read_bytes("f") == b"pinned"
        swap[0] = True
        with pytest.raises(FenceError, match="was replaced while myrm opened it"):
            folder.read_bytes("f")
