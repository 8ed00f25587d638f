"""Throughput of the terminal sanitiser (`myrm_tui.terminal_text.for_terminal`).

Why it matters: it runs on every streamed token of `myrm run` and on every rendered chunk in
the TUI, so it must cost far less than the terminal's own drawing. Measured on 1 MB of five
kinds of text (plain prose, CJK, coloured tool output, streamed 4-character tokens, and an
attack made only of control characters) plus JSON. Prints MB/s per kind (best of REPEATS);
nothing asserts on it. Run from the repository root: `python -m bench.terminal_text_bench`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from myrm_tui.terminal_text import for_terminal, json_for_terminal

SIZE = 1_000_000  # characters per sample: "1 MB of text" (ASCII samples are exactly 1 MB)
REPEATS = 7  # best of 7 hides a scheduler hiccup on a shared 2-core box
TOKEN_CHARS = 4  # a streamed token is ~4 characters of English


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def samples() -> dict[str, str]:
    prose = _fill("The context engine keeps every message; nothing is lost.\n\tIndented line.\n")
    return {
        "prose (no controls)": prose,
        "CJK (no controls)": _fill("上下文引擎保留每一条消息，什么都不会丢失。\n"),
        "coloured tool output": _fill("\x1b[32mPASSED\x1b[0m tests/test_x.py::test_case\r\n"),
        "attack: only controls": _fill("\x1b]52;c;cHduZWQ=\x07\x9b2J\u202e\x1bP1$q\x1b\\"),
    }


def best_seconds(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    rows: list[tuple[str, float]] = []
    for name, text in samples().items():
        rows.append((name, best_seconds(lambda text=text: for_terminal(text))))
    prose = samples()["prose (no controls)"]
    tokens = [prose[i : i + TOKEN_CHARS] for i in range(0, SIZE, TOKEN_CHARS)]
    rows.append((f"streamed {TOKEN_CHARS}-char tokens", best_seconds(lambda: [for_terminal(t) for t in tokens])))
    document = json.dumps({"text": samples()["attack: only controls"]}, ensure_ascii=False)
    rows.append(("json_for_terminal on the attack", best_seconds(lambda: json_for_terminal(document))))
    print(f"for_terminal on {SIZE:,} characters, best of {REPEATS}")
    for name, seconds in rows:
        print(f"  {name:36} {seconds * 1000:8.2f} ms  {SIZE / seconds / 1e6:8.1f} MB/s")


if __name__ == "__main__":
    main()
