"""The "Workspace store" section of `myrm doctor`: can myrm write here, is the database sound,
does the vault still hold what it stored, and what to do when not.

Everything is read-only (store/recovery/health.py): doctor must work on the stores that are broken or
read-only, and never change them. The one write is a probe file, to prove the folder takes
new files (permission bits alone lie for root and for read-only mounts).
"""

from __future__ import annotations

import os
from pathlib import Path

OK, BAD, INFO = "✓", "✗", "·"
RECOVER_HINT = (
    "run `myrm sessions recover`: it copies what is readable into a new sessions.db and keeps "
    "this file as sessions.db.damaged-<time>"
)


def _probe_writable(folder: Path) -> bool:
    """The probe goes through the `.myrm` handle of a no-follow walk (store/database/layout.py): a `.myrm`
    that is a link counts as not writable, and nothing is created where it points."""
    from myrm_tui.store.database.layout import open_store_dir
    from myrm_tui.store.errors import StoreError

    probe = f".doctor-{os.getpid()}.tmp"
    try:
        store_dir = open_store_dir(folder.parent)
    except (OSError, StoreError):
        return False
    with store_dir:
        try:
            fd = store_dir.open_regular(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return False
        try:
            ok = os.write(fd, b"ok") == 2
        except OSError:
            ok = False
        finally:
            os.close(fd)
            try:
                store_dir.unlink(probe)
            except OSError:
                ok = False
    return ok


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def _vault_lines(folder: Path) -> tuple[bool, list[str]]:
    from myrm_tui.store.vault import Vault

    vault = Vault(folder / "artifacts")
    try:
        checked, tampered = vault.tampered()
    except OSError as exc:
        return False, [f"  {BAD} the vault {vault.directory} cannot be read: {exc}"]
    if not tampered:
        return True, [f"  {OK} vault: {checked} artifacts, every one matches its hash"]
    shown = ", ".join(tampered[:5]) + (", …" if len(tampered) > 5 else "")
    line = (
        f"  {BAD} vault: {len(tampered)} of {checked} artifacts changed on disk since they were "
        f"stored ({shown}); reads refuse them as tampered — restore them from a backup"
    )
    return False, [line]


def store_lines(workspace: Path) -> tuple[bool, list[str]]:
    """(myrm can store sessions here, the report lines)."""
    from myrm_tui.store.recovery.health import inspect

    health = inspect(workspace)
    folder = health.folder
    if folder.is_symlink():  # never used: the problem names the link and what to remove
        return False, [f"  {BAD} {health.problem or f'{folder} is a symbolic link; remove it'}"]
    if folder.exists() and not folder.is_dir():
        return False, [f"  {BAD} cannot open {folder}: it is a file, not a folder — move it aside"]
    if not health.folder_exists:
        if os.access(workspace, os.W_OK):
            line = f"  {INFO} {folder} does not exist yet; myrm creates it on first use ({workspace} is writable)"
            return True, [line]
        line = f"  {BAD} {folder} does not exist and {workspace} is not writable — myrm cannot store sessions here"
        return False, [line]
    writable = _probe_writable(folder)
    lines: list[str] = []
    ok = writable
    if writable:
        lines.append(f"  {OK} {folder} writable")
    else:
        lines.append(
            f"  {BAD} {folder} is read-only: `myrm sessions list/show/export` and doctor still "
            "read it, but myrm cannot store messages — make it writable (e.g. chmod u+w)"
        )
    if not health.exists:
        lines.append(f"  {INFO} {health.db_path.name} does not exist yet; created on first use")
        return ok, lines
    if health.problem is not None:
        lines.append(f"  {BAD} {health.problem}")
        return False, lines
    if health.damage:
        lines.append(f"  {BAD} {health.db_path} is damaged; PRAGMA quick_check says:")
        lines += [f"      {line}" for line in health.damage]
        lines.append(f"    → {RECOVER_HINT}")
        ok = False
    else:
        count = f"{health.sessions} sessions" if health.sessions is not None else "sessions unknown"
        lines.append(
            f"  {OK} sessions.db opens ({count}); PRAGMA quick_check ok "
            f"(schema v{health.version}, {_size(health.size_bytes)})"
        )
    lines += [f"  {INFO} {note}" for note in health.notes]
    vault_ok, vault = _vault_lines(folder)
    return ok and vault_ok, lines + vault
