"""`python -m bench <command> ...`: one entry point for the bench tools.

Commands: workload (bench.workload), real-sessions (bench.real_sessions), score (bench.score),
all / quick (bench.grid: every contender, tables and bench/results/<mode>.json), adversarial
(bench.adversarial: B4's 12 hostile cases, bench/results/adversarial.json; also part of `all`),
perf (bench.perf_tests: the test suite's wall-clock budgets, `pytest -m perf`), latency (bench.latency:
seconds to an answer from the command line, `myrm run` against its floors).
"""

from __future__ import annotations

import sys

COMMANDS = {
    "workload": "bench.workload",
    "real-sessions": "bench.real_sessions",
    "score": "bench.score",
    "all": "bench.grid",
    "quick": "bench.grid",
    "adversarial": "bench.adversarial",
    "perf": "bench.perf_tests",
    "latency": "bench.latency",
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in COMMANDS:
        print(
            f"usage: python -m bench {{{','.join(COMMANDS)}}} [options]   (--help after a command for its options)",
            file=sys.stderr,
        )
        return 2
    import importlib

    module = importlib.import_module(COMMANDS[args[0]])
    if args[0] in ("all", "quick"):
        return module.main(args[1:], mode=args[0])
    return module.main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
