"""Whether another process sees a POSIX lock this one holds (F_GETLK only reports the locks of
other processes): the store's SQLite locks, checked from outside (tests/store/test_store_locks.py,
tests/agent/test_store_files_unopened.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# SQLite's unix VFS lock bytes: the database's SHARED range (PENDING_BYTE 0x40000000, then
# RESERVED, then 510 shared bytes) and the -shm's "dead man switch" (UNIX_SHM_BASE 120 + 8).
DB_SHARED = (0x40000000 + 2, 510)
SHM_DMS = (128, 1)

# Runs in another process: F_GETLK only reports locks that other processes hold.
PROBE = """
import fcntl, os, struct, sys
path, start, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, start, length, 0))
print("held" if struct.unpack("hhqqi", answer)[0] != fcntl.F_UNLCK else "free")
"""


def lock_seen_from_another_process(path: Path, byte_range: tuple[int, int]) -> str:
    start, length = byte_range
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), str(start), str(length)], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()
