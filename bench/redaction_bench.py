"""Cost of the redactor (`myrm_tui.redact.redact`) on ordinary and hostile text.

Why it matters: every sink of `myrm_tui/sinks.py` runs it (compaction redacts each removed
message's facts, an export redacts the whole session), and its patterns are regular expressions
fed text that the model, a tool or a file wrote. A pattern that backtracks on some input turns
one compaction into minutes: unanchored `[\\w-]*password` was quadratic on a long word (148 s on
50 KB before it was anchored), and two blank-run quantifiers after a PEM BEGIN line were
quadratic on 20 KB of spaces (3.4 s). Each hostile case below is one such shape, at sizes where
a quadratic pattern shows. Prints ms per case (best of REPEATS); nothing asserts on it.
Run from the repository root: `python -m bench.redaction_bench`.
"""

from __future__ import annotations

import random
import string
import time

from myrm_tui.redact import redact

REPEATS = 3  # best of 3 hides a scheduler hiccup on a shared 2-core box
SEED = 7


def cases() -> dict[str, str]:
    rng = random.Random(SEED)
    return {
        "log lines (105 KB)": "2024-01-01 12:00:00 INFO request id=abc123 user=ada path=/api/v1/items?page=2\n" * 1300,
        "YAML (84 KB)": "key: value1\ntoken_count: 12\n" * 3000,
        "escaped JSON (96 KB)": '{\\"token\\": \\"abc\\", \\"x\\": 1}\\n' * 3000,
        "base64 blob (100 KB)": "".join(rng.choice(string.ascii_letters + "+/") for _ in range(100_000)),
        "hostile: one 50 KB word after token:": "token: " + "a" * 50_000,
        "hostile: unterminated quoted value": 'db_password = "' + "x" * 50_000,
        "hostile: BEGIN line + 20 KB of spaces": "-----BEGIN RSA PRIVATE KEY-----" + " " * 20_000 + "x",
        "hostile: BEGIN line + 20 KB of newlines": "-----BEGIN RSA PRIVATE KEY-----" + "\n" * 20_000 + "x",
        "hostile: DER start + spaced chunks": "MIIEowIBAAKCAQEA" + "A" * 20 + ("   " + "B" * 15) * 3000,
        "hostile: scheme + 20 K 'a:'": "http://" + "a:" * 20_000,
        "hostile: password + 20 K colons": "password" + ":" * 20_000,
    }


def main() -> None:
    print(f"{'case':42s} {'chars':>8s} {'ms':>9s}")
    for name, text in cases().items():
        best = float("inf")
        for _ in range(REPEATS):
            started = time.perf_counter()
            redact(text)
            best = min(best, time.perf_counter() - started)
        print(f"{name:42s} {len(text):8d} {best * 1000:9.1f}")


if __name__ == "__main__":
    main()
