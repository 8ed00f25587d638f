"""A small summary JSON next to each bench results file: the numbers the tables show, per run.

Why: the raw results of `python -m bench all` (every report of every cell, the adversarial
section embedded again) are ~2 MB, too big to review or to keep in git on every re-run. The
summary keeps what a reader compares between runs (run metadata and, per contender and cell,
the headline figure of each of B1-B5) in a file of tens of KB; the raw file stays on disk for
whoever needs a detail, and is not tracked.

`python -m bench.result_summary RESULTS.json ...` writes the summary of existing raw files.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Run metadata copied as is: small, and what tells two runs apart.
_META_KEYS = ("mode", "command", "generated_utc", "elapsed_s", "machine", "versions", "seed", "sessions", "cli_check")
# What identifies a row (a contender on one cell or adversarial case).
_ROW_KEYS = ("contender", "workload", "case", "window", "summarizer", "status", "wall_s")
# (summary name, path into the row's report): the headline figure of each table column.
_FIGURES = (
    ("b1_p50_ms", ("timing", "p50_ms")),
    ("b1_p95_ms", ("timing", "p95_ms")),
    ("b2_r_verbatim", ("retention", "r_verbatim")),
    ("b2_r_1", ("retention", "r_1")),
    ("b3_prefix_openai", ("prefix", "openai", "token_weighted")),
    ("b4_over_budget_turns", ("budget", "over_budget_turns")),
    ("b4_orphan_results", ("structure", "orphan_results")),
    ("b4_dangling_calls", ("structure", "dangling_calls")),
    ("b4_role_order_errors", ("structure", "role_order_errors")),
    ("b4_exceptions", ("exceptions",)),
    ("b4_silent_noops", ("silent_noops",)),
    ("b5_prompt_tokens", ("cost", "prompt_tokens")),
    # The engine's own summaries (None for contenders that report none): accepted model answers,
    # extractive fallbacks, summarizer calls.
    ("b5_model_summaries", ("model_summaries", "model")),
    ("b5_summary_fallbacks", ("model_summaries", "fallback")),
    ("b5_summary_attempts", ("model_summaries", "attempts")),
    ("turns", ("turns",)),
)
SUFFIX = ".summary.json"


def summary_path(raw: Path) -> Path:
    """`all.json` -> `all.summary.json`, in the same folder (next to the tables)."""
    return raw.with_name(raw.stem + SUFFIX)


def summarize(document: Mapping[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {key: document[key] for key in _META_KEYS if key in document}
    summary["raw_results"] = "not tracked in git: rerun the command above to get them"
    if document.get("results"):
        summary["results"] = _table(document["results"])
    adversarial = document.get("adversarial")
    if adversarial:
        summary["adversarial"] = {
            "window": adversarial.get("window"),
            "elapsed_s": adversarial.get("elapsed_s"),
            "results": _table(adversarial.get("results", [])),
        }
    return summary


COLUMNS = (*_ROW_KEYS, *(name for name, _ in _FIGURES))


def _table(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Columns once, then one list per row: a quarter of the size of repeating every key."""
    return {"columns": list(COLUMNS), "rows": [_row(row) for row in rows]}


def _row(row: Mapping[str, Any]) -> list[Any]:
    out = [row.get(key) for key in _ROW_KEYS]
    report = row.get("report") or {}
    for _name, path in _FIGURES:
        value: Any = report
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        out.append(round(value, 4) if isinstance(value, float) else value)
    return out


def dumps(summary: Mapping[str, Any]) -> str:
    """One result row per line: a re-run diffs line by line."""
    lines = ["{"]
    items = list(summary.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        lines.append(f"{json.dumps(key)}: {_dump_value(key, value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dump_value(key: str, value: Any) -> str:
    if key == "results" and isinstance(value, Mapping):
        return _dump_table(value)
    if key == "adversarial" and isinstance(value, Mapping):
        head = json.dumps({k: v for k, v in value.items() if k != "results"}, default=str)[:-1]
        return head + ', "results": ' + _dump_table(value.get("results", {})) + "}"
    return json.dumps(value, default=str)


def _dump_table(table: Mapping[str, Any]) -> str:
    rows = table.get("rows", [])
    body = ",\n".join(" " + json.dumps(row, default=str) for row in rows)
    return '{"columns": ' + json.dumps(table.get("columns", [])) + ', "rows": [\n' + body + "\n]}"


def write_summary(document: Mapping[str, Any], raw: Path) -> Path:
    path = summary_path(raw)
    path.write_text(dumps(summarize(document)), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m bench.result_summary RESULTS.json ...", file=sys.stderr)
        return 2
    for name in argv:
        raw = Path(name)
        path = write_summary(json.loads(raw.read_text(encoding="utf-8")), raw)
        print(f"wrote {path} ({path.stat().st_size:,} bytes, from {raw.stat().st_size:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
