"""Print the node ids of the tests that failed in the last pytest run of a cache folder, one a
line, ready to be passed back to pytest (CI runs a tier's failures again alone).

Why not `pytest --last-failed`: under `--dist loadgroup`, xdist records a grouped test's id with
its group appended (`test_x[SIGKILL]@llama`); a run without xdist collects `test_x[SIGKILL]`, finds
none of the recorded ids, and `--last-failed` then runs the whole tier again (30 minutes alone in
CI, where one load-sensitive test had failed).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# xdist's suffix for a test in an `xdist_group`: "@" and the group's name, at the end of the id.
_GROUP_SUFFIX = re.compile(r"@[A-Za-z0-9_.-]+$")


def failed_ids(cache_dir: Path) -> list[str]:
    path = cache_dir / "v" / "cache" / "lastfailed"
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return sorted({_GROUP_SUFFIX.sub("", node) for node in recorded})


if __name__ == "__main__":
    for node in failed_ids(Path(sys.argv[1])):
        print(node)
