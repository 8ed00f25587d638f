"""The artifact vault: content-addressed, atomic, private, and closed to path tricks."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from myrm_tui.store import Store, VaultError
from myrm_tui.store.vault import Vault

TEXT = "line one\nline two ✓\nline three\nline four\n"


@pytest.fixture
def vault(store: Store) -> Vault:
    return store.vault


def test_put_and_read_whole_and_ranges(vault: Vault):
    handle = vault.put(TEXT)
    digest = hashlib.sha256(TEXT.encode()).hexdigest()
    assert handle == f"vault://{digest[:12]}"
    assert vault.path_of(handle).name == digest
    assert vault.read_text(handle) == TEXT
    assert vault.read_bytes(handle) == TEXT.encode()
    assert vault.read_text(handle, lines=(2, 3)) == "line two ✓\nline three\n"
    assert vault.read_text(handle, lines=(4, 4)) == "line four\n"
    assert vault.read_text(handle, lines=(3, 99)) == "line three\nline four\n"
    assert vault.read_text(handle, lines=(5, 9)) == ""
    with pytest.raises(VaultError, match="line range"):
        vault.read_text(handle, lines=(0, 2))
    with pytest.raises(VaultError, match="line range"):
        vault.read_text(handle, lines=(3, 2))
    no_trailing = vault.put("a\nb")
    assert vault.read_text(no_trailing, lines=(2, 2)) == "b"


def test_same_content_same_handle_one_file(vault: Vault):
    first = vault.put(TEXT)
    again = vault.put(TEXT.encode("utf-8"))
    with_suffix = vault.put(TEXT, suffix=".log")
    assert first == again == with_suffix
    assert len(os.listdir(vault.directory)) == 1
    other = vault.put(TEXT + "!", suffix=".txt")
    assert other != first
    assert vault.path_of(other).suffix == ".txt"
    assert vault.read_text(other).endswith("!")


def test_handles_are_case_insensitive_and_accept_longer_prefixes(vault: Vault):
    handle = vault.put("case test")
    digest = vault.path_of(handle).name
    assert vault.read_text(handle.upper().replace("VAULT://", "vault://")) == "case test"
    assert vault.read_text("VAULT://" + digest.upper()) == "case test"
    assert vault.read_text(f"  vault://{digest[:20]}  ") == "case test"


@pytest.mark.parametrize(
    "bad",
    [
        "vault://../../etc/passwd",
        "vault://../sessions.db",
        "vault:///etc/passwd",
        "/etc/passwd",
        "vault://abc/../../x",
        "vault://",
        "vault://xyz123",
        "vault://" + "a" * 65,
        "file://abc",
    ],
)
def test_out_of_vault_or_malformed_handles_are_refused(vault: Vault, bad: str):
    vault.put("something")
    with pytest.raises(VaultError, match="vault handle"):
        vault.read_text(bad)
    with pytest.raises(VaultError):
        vault.exists(bad)


def test_symlink_planted_in_the_vault_is_not_followed(vault: Vault, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not leak")
    vault.put("make the folder")
    fake = "ab" * 32
    os.symlink(secret, vault.directory / fake)
    with pytest.raises(VaultError, match="no artifact"):
        vault.read_text(f"vault://{fake[:12]}")


def test_unknown_and_ambiguous_handles(vault: Vault):
    with pytest.raises(VaultError, match=r"no artifact vault://abc in this workspace"):
        vault.read_text("vault://abc")
    assert vault.exists("vault://abc") is False
    handle = vault.put("present")
    assert vault.exists(handle) is True
    # Two artifacts whose digests share a prefix (planted directly: real collisions are rare).
    for name in ("abc1" + "0" * 60, "abc2" + "0" * 60):
        (vault.directory / name).write_text(name)
    with pytest.raises(VaultError, match="matches 2 artifacts.*longer handle"):
        vault.read_text("vault://abc")
    # A longer prefix resolves; the planted bytes do not hash to their name, so reading them is
    # refused as tampering (tests/faults/test_vault_tamper.py covers that in depth).
    assert vault.path_of("vault://abc1").name == "abc1" + "0" * 60
    with pytest.raises(VaultError, match="changed on disk"):
        vault.read_text("vault://abc1")


def test_files_are_private_and_no_temp_files_remain(vault: Vault):
    handles = [vault.put(f"artifact {i}\n" * 1000) for i in range(5)]
    for handle in handles:
        assert stat.S_IMODE(vault.path_of(handle).stat().st_mode) == 0o600
    names = os.listdir(vault.directory)
    assert len(names) == 5
    assert all(len(n) == 64 and all(c in "0123456789abcdef" for c in n) for n in names)


def test_failed_write_leaves_no_temp_file(vault: Vault, monkeypatch):
    vault.put("make the folder")

    def failing_replace(src, dst, **_dir_fds):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        vault.put("will not land")
    monkeypatch.undo()
    assert len(os.listdir(vault.directory)) == 1


def test_bad_suffix_is_refused(vault: Vault):
    with pytest.raises(VaultError, match="suffix"):
        vault.put("x", suffix="/../../evil")
    with pytest.raises(VaultError, match="suffix"):
        vault.put("x", suffix="txt")


def test_binary_and_undecodable_content(vault: Vault):
    raw = bytes(range(256))
    handle = vault.put(raw, suffix=".bin")
    assert vault.read_bytes(handle) == raw
    assert "\ufffd" in vault.read_text(handle)
    surrogate = vault.put("bad byte: \udcff")
    assert vault.read_bytes(surrogate) == b"bad byte: \xff"


def test_a_put_that_fails_midway_leaves_nothing_behind(vault: Vault, monkeypatch):
    # The vault writes with the one fenced replace: a failure leaves no artifact and no temp
    # file, so a later put of the same content starts clean.

    def disk_full(src, dst, **_dir_fds):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("myrm_tui.fenced_files.os.replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        vault.put("lost output")
    assert list(vault.directory.iterdir()) == []
    monkeypatch.undo()
    handle = vault.put("lost output")
    assert vault.read_text(handle) == "lost output"
    assert stat.S_IMODE(vault.path_of(handle).stat().st_mode) == 0o600


def test_read_head_keeps_only_the_head_but_checks_every_byte(vault: Vault):
    """Indexing a large output reads only what the index can use into memory, while its hash is
    checked over the whole file through the same descriptor."""
    big = ("x" * 1000 + "\n") * 300  # over one read chunk
    path = vault.path_of(vault.put(big))
    for verified in (False, True):
        head, size = vault.read_head(path, 10, verified=verified)
        assert head == b"x" * 10 and size == len(big)
    os.chmod(path, 0o600)
    with path.open("r+b") as file:  # the last byte changed: only a check of the whole file sees it
        file.seek(len(big) - 1)
        file.write(b"!")
    assert vault.read_head(path, 10)[0] == b"x" * 10
    with pytest.raises(VaultError, match="changed on disk"):
        vault.read_head(path, 10, verified=True)
