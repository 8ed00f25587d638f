"""Child process for the kill -9 test: appends deterministic messages forever.

Usage: python kill_writer.py <workspace> <session_id>
Prints "ready" once the store is open, then the seq of every message after `append_message`
returned (so the parent knows which rows were reported as committed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BIG_CHARS = 200_000


def make_message(index: int) -> dict[str, Any]:
    """The message the writer stores at seq `index`: a pure function of the index."""
    if index % 16 == 0:
        unit = f"[{index}] tool output ünïcødé → 漢字 🚀\n"
        return {
            "role": "tool",
            "tool_call_id": f"call_{index}",
            "name": "bash",
            "content": (unit * (BIG_CHARS // len(unit) + 1))[:BIG_CHARS],
        }
    if index % 4 == 2:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{index}_{k}",
                    "type": "function",
                    "function": {"name": f"tool_{k}", "arguments": f'{{"path": "f{index}.py", "n": {k}}}'},
                }
                for k in range(2)
            ],
        }
    return {
        "role": "user",
        "content": [{"type": "text", "text": f"message {index} — ✓ {'x' * (index % 97)}"}],
        "meta": {"index": index, "nested": {"list": [index, index * 1.5, None, True]}},
    }


def main() -> None:
    from myrm_tui.store import Store

    workspace, session_id = Path(sys.argv[1]), sys.argv[2]
    store = Store.open(workspace)
    index = len(store.messages(session_id))
    print("ready", flush=True)
    while True:
        record = store.append_message(session_id, make_message(index), tokens=index)
        print(record.seq, flush=True)
        index += 1


if __name__ == "__main__":
    main()
