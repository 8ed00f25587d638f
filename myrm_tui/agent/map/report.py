"""What the parent sees of a map: counts, failures, the artifact's handle and the first rows.

Why so little: the point of the map is that the parent's prompt does not grow with the items.
Everything else is one JSONL artifact in the vault, which the parent reads (or searches) only
if it needs to.
"""

from __future__ import annotations

import json

from myrm_tui.agent.map.runner import MapRun

# Rows shown inline: enough to see the shape of the outputs and check a few, not the data.
SHOWN_ROWS = 5
# Failures listed inline, with their reasons; the rest are in the artifact.
SHOWN_FAILURES = 5
# Characters of one row's output shown inline.
ROW_CHARS = 300


def summary(run: MapRun, handle: str | None, note: str = "") -> str:
    spec, tally = run.spec, run.tally
    ok, failed, skipped = run.count("ok"), run.count("failed"), run.count("skipped")
    cost = f" · ${tally.cost:.4f}" if tally.cost else ""
    resumed = f" ({tally.resumed} from an earlier run, not re-run)" if tally.resumed else ""
    lines = [
        f"[{spec.kind} over {len(run.rows):,} items with {spec.model}: {ok} ok{resumed}, {failed} failed, "
        f"{skipped} not run · {tally.tokens:,} tokens{cost} · {run.seconds:.1f}s]"
    ]
    if note:
        lines.append(f"note: {note}")
    if run.stopped:
        lines.append(
            f"stopped early: {run.stopped}; items in flight finished. Call again with the same arguments "
            "(and a higher cap) to run the rest: finished items are not re-run."
        )
    if handle:
        lines.append(
            f"all rows: {handle} (JSONL, one row per item: index, status, output, error); "
            f'read with file_read("{handle}") or search with ctx_search'
        )
    problems = [row for row in run.rows if row.status == "failed"]
    if problems:
        lines.append(f"failures ({len(problems)}):")
        lines += [f"- #{row.index}: {row.error}" for row in problems[:SHOWN_FAILURES]]
        if len(problems) > SHOWN_FAILURES:
            lines.append(f"- … {len(problems) - SHOWN_FAILURES} more in the artifact")
    done = [row for row in run.rows if row.status == "ok"]
    if done:
        lines.append(f"first rows (index: output), {min(SHOWN_ROWS, len(done))} of {len(done)}:")
        for row in done[:SHOWN_ROWS]:
            text = json.dumps(row.output, ensure_ascii=False)
            lines.append(f"{row.index}: {text if len(text) <= ROW_CHARS else text[: ROW_CHARS - 1] + '…'}")
    return "\n".join(lines)
