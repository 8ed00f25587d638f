"""Markdown tables from a grid results document (bench/results/<mode>.json).

One table per (workload, window, summarizer) with B1-B5 per contender, a B1 scaling table, and a
"myrm vs the best peer" line per cell. "Best peer" is taken over the peers and the `-policy`
re-implementations, never over the baselines; for cost only contenders that held the budget
with valid structure count (a cheap prompt that the provider would reject is not a cost win).
"""

from __future__ import annotations

from typing import Any

from bench.summary_tally import summary_line

HEADER = (
    "| contender | B1 p50 / p95 ms | B2 R_verb | B2 R_1 | constraint | latest user | B3 prefix (tw) | "
    "breaks / compactions | sys changes | B4 over budget | B4 struct. err turns | exc. / no-ops | "
    "B5 prompt Mtok | B5 cost kU | cost / myrm |"
)
ALIGN = "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _cost(report: dict[str, Any]) -> float | None:
    cost = report.get("cost") or {}
    return cost.get("total_anthropic")


def _row(result: dict[str, Any], myrm_cost: float | None) -> str:
    name = f"{result['contender']}"
    if result["status"] in ("not installed", "error") and not result["report"]:
        return f"| {name} | {result['status']}: {result['detail'][:80]} |" + " |" * 14
    r = result["report"]
    t, ret, p, b, s, c = (r.get(k, {}) for k in ("timing", "retention", "prefix", "budget", "structure", "cost"))
    if result["status"] == "dnf":
        name += f" ({result['detail'].split(' (')[0]})"
    elif result["status"] == "error":
        name += " (error)"
    timing = f"{_f(t.get('p50_ms'), 2)} / {_f(t.get('p95_ms'), 2)}" if t.get("available") else "n/a"
    cost = _cost(r) if result["status"] == "ok" else None  # a DNF's partial sums compare with nothing
    ratio = f"{cost / myrm_cost:.2f}" if cost is not None and myrm_cost else "n/a"
    return (
        f"| {name} | {timing} | {_f(ret.get('r_verbatim'))} | {_f(ret.get('r_1'))} | "
        f"{_f(ret.get('constraint_share'), 2)} | "
        f"{_f(ret.get('latest_user_share'), 2)} | {_f(p.get('openai', {}).get('token_weighted'))} | "
        f"{p.get('breaks', 'n/a')} / {_f(p.get('compactions'))} | {s.get('system_prompt_changes', 'n/a')} | "
        f"{b.get('over_budget_turns', 'n/a')} | {s.get('turns_with_errors', 'n/a')} | "
        f"{r.get('exceptions', 0)} / {r.get('silent_noops', 0)} | {c.get('prompt_tokens', 0) / 1e6:.2f} | "
        f"{'partial' if cost is None else f'{cost / 1e3:,.0f}'} | {ratio} |"
    )


def cell_results(document: dict[str, Any], cell: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        r
        for r in document["results"]
        if r["workload"] == cell["workload"] and r["window"] == cell["window"] and r["summarizer"] == cell["summarizer"]
    ]


def _valid(result: dict[str, Any]) -> bool:
    r = result.get("report") or {}
    return (
        result["status"] == "ok"
        and r.get("budget", {}).get("over_budget_turns") == 0
        and r.get("structure", {}).get("turns_with_errors") == 0
        and not r.get("exceptions")
    )


def versus(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """myrm against the best peer/policy on each headline figure of one cell."""
    myrm = next((r for r in results if r["contender"] == "myrm" and r["report"]), None)
    # Only complete runs that (nearly) held the budget: an unbounded prompt keeps everything verbatim and
    # a DNF has no full-session figures. "Nearly" = over budget on at most 1% of turns.
    others = [
        r
        for r in results
        if r["family"] in ("peer", "policy")
        and r["report"]
        and r["status"] == "ok"
        and r["report"]["budget"]["over_budget_turns"] <= 0.01 * r["report"]["turns"]
    ]
    if myrm is None or not others:
        return None

    def pick(getter: Any, higher: bool, pool: list[dict[str, Any]]) -> tuple[Any, str] | None:
        scored = [(getter(r["report"]), r["contender"]) for r in pool]
        scored = [x for x in scored if x[0] is not None]
        if not scored:
            return None
        return max(scored) if higher else min(scored)

    figures = {
        "R_verbatim": (lambda r: r["retention"]["r_verbatim"], True, others),
        "R_1": (lambda r: r["retention"]["r_1"], True, others),
        "prefix_tw": (lambda r: r["prefix"]["openai"]["token_weighted"], True, others),
        "over_budget_turns": (lambda r: r["budget"]["over_budget_turns"], False, others),
        "struct_error_turns": (lambda r: r["structure"]["turns_with_errors"], False, others),
        "cost_kU (valid peers)": (lambda r: _cost(r), False, [r for r in others if _valid(r)]),
        "p50_ms": (lambda r: r["timing"].get("p50_ms"), False, others),
    }
    line = {}
    for label, (getter, higher, pool) in figures.items():
        best = pick(getter, higher, pool)
        mine = getter(myrm["report"])
        if best is None or mine is None:
            line[label] = {"myrm": mine, "best": None, "peer": None, "myrm_wins": None}
            continue
        wins = mine >= best[0] if higher else mine <= best[0]
        line[label] = {"myrm": mine, "best": best[0], "peer": best[1], "myrm_wins": wins}
    return line


def render_cell(document: dict[str, Any], cell: dict[str, Any]) -> str:
    results = cell_results(document, cell)
    myrm = next((r for r in results if r["contender"] == "myrm" and r["report"]), None)
    myrm_cost = _cost(myrm["report"]) if myrm else None
    title = f"### {cell['workload']}, window {cell['window'] // 1000}k, summarizer `{cell['summarizer']}`"
    lines = [title, "", HEADER, ALIGN] + [_row(r, myrm_cost) for r in results]
    vs = versus(results)
    if vs:
        parts = []
        for label, v in vs.items():
            if v["best"] is None:
                continue
            mark = "win" if v["myrm_wins"] else "LOSS"
            fmt = (lambda x: f"{x / 1e3:,.0f}") if label.startswith("cost") else (lambda x: _f(x))
            parts.append(f"{label}: myrm {fmt(v['myrm'])} vs {v['peer']} {fmt(v['best'])} ({mark})")
        lines += ["", "myrm vs best peer/policy - " + "; ".join(parts)]
    tallies = [
        f"{r['contender']} {summary_line(r['report']['model_summaries'])}"
        for r in results
        if ((r.get("report") or {}).get("model_summaries") or {}).get("available")
    ]
    if tallies:
        lines += ["", "Summaries the engine prepared (model = accepted by its auditor): " + "; ".join(tallies)]
    return "\n".join(lines)


def render_summary(document: dict[str, Any]) -> str:
    """One line per cell: myrm against the best peer/policy on the headline figures (B2-B5)."""
    lines = [
        "### Summary: myrm vs the best peer/policy per cell",
        "",
        "| cell | R_verbatim: myrm / best | R_1: myrm / best | prefix (tw): myrm / best | cost: myrm / best valid "
        "(ratio) | myrm B4 over budget / struct. errors / exceptions | myrm summaries: model / fallback / attempts |",
        "|---|---|---|---|---|---|---|",
    ]

    def both(v: dict[str, Any], fmt: Any) -> str:
        if v["best"] is None:
            return f"{fmt(v['myrm'])} / n/a"
        mark = "" if v["myrm_wins"] else " **loss**"
        return f"{fmt(v['myrm'])} / {fmt(v['best'])} {v['peer']}{mark}"

    for cell in document["cells"]:
        results = cell_results(document, cell)
        vs = versus(results)
        myrm = next((r for r in results if r["contender"] == "myrm" and r["report"]), None)
        if vs is None or myrm is None:
            continue
        r = myrm["report"]
        cost = vs["cost_kU (valid peers)"]
        ratio = f" ({cost['myrm'] / cost['best']:.2f}x)" if cost["best"] else ""
        name = f"{cell['workload']} {cell['window'] // 1000}k `{cell['summarizer']}`"
        b4 = f"{r['budget']['over_budget_turns']} / {r['structure']['turns_with_errors']} / {r.get('exceptions', 0)}"
        tally = r.get("model_summaries") or {}
        asked = f"{tally['model']} / {tally['fallback']} / {tally['attempts']}" if tally.get("available") else "n/a"
        lines.append(
            f"| {name} | {both(vs['R_verbatim'], _f)} | {both(vs['R_1'], _f)} | {both(vs['prefix_tw'], _f)} | "
            f"{both(cost, lambda x: f'{x / 1e3:,.0f}')}{ratio} | {b4} | {asked} |"
        )
    return "\n".join(lines)


def render_b1(document: dict[str, Any]) -> str:
    cell = document["b1_cell"]
    lines = [
        (
            f"### B1: engine time per turn vs session length ({cell['workload']}, window {cell['window'] // 1000}k, "
            f"`{cell['summarizer']}`; summarizer time excluded)"
        ),
        "",
        "| contender | p50 @100 | p50 @200 | p50 @400 | p50 @800 | p95 @800 | max | alpha |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in cell_results(document, cell):
        t = (r.get("report") or {}).get("timing") or {}
        if not t.get("available"):
            lines.append(f"| {r['contender']} | {r['status']} {r['detail'][:60]} | | | | | | |")
            continue
        buckets = t.get("buckets", {})
        p50 = [_f((buckets.get(str(n)) or {}).get("p50_ms"), 2) for n in (100, 200, 400, 800)]
        name = r["contender"] + (f" ({r['detail'].split(' (')[0]})" if r["status"] == "dnf" else "")
        lines.append(
            f"| {name} | {' | '.join(p50)} | {_f((buckets.get('800') or {}).get('p95_ms'), 2)} | "
            f"{_f(t.get('max_ms'), 1)} | {_f(t.get('alpha'), 2)} |"
        )
    return "\n".join(lines)


def render(document: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in document["versions"].items())
    out = [
        f"## Context benchmarks ({document['mode']}): {document['generated_utc']} UTC, {document['elapsed_s']:.0f} s",
        "",
        (
            f"Command: `{document['command']}`. Versions: {versions}. Python {document['machine']['python']}, "
            f"{document['machine']['cpus']} CPUs."
        ),
        "",
        (
            "Columns: B1 engine ms per turn (p50/p95, summarizer time excluded); B2 share of probed needles verbatim "
            "in the prompt (R_verb) or also in one recall result (R_1), constraint and latest user message present "
            "(share of turns); B3 token-weighted common prefix with the previous request (OpenAI-like), prefix "
            "breaks / compactions the contender reported; B4 turns over budget (prompt + tools + 4,096 reserve > "
            "window), turns with orphan/dangling/role/duplicate-id errors, exceptions / silent no-ops (unmanaged "
            "history sent over budget); B5 prompt tokens and cost in thousand units (Anthropic-like: cache read "
            "0.1, write 1.25, plus summarizer and recall tokens, plus 2,000 tokens re-fetch per lost probe)."
        ),
        "",
    ]
    check = document.get("cli_check")
    if check:
        if "turns" not in check:
            out += [f"CLI check failed: {check.get('detail')}", ""]
        else:
            prompts = "identical" if check["identical"] else f"DIFFERENT at turns {check['prompt_differences']}"
            probes = (
                "identical"
                if check["probe_results_identical"]
                else f"{len(check['probe_differences'])} differ (e.g. {check['probe_differences'][:3]})"
            )
            out += [
                (
                    f"CLI check: `myrm replay` (subprocess) vs in-process engine on {check['session']} at "
                    f"{check['window'] // 1000}k/`{check['summarizer']}`: prompts {prompts} ({check['turns']} turns); "
                    f"recall results (timestamps masked) {probes} ({check['probes']} probes)."
                ),
                "",
            ]
    out += [render_summary(document), ""]
    b1 = document["b1_cell"]
    for cell in document["cells"]:
        if document["mode"] == "all" and cell == b1:
            continue
        out += [render_cell(document, cell), ""]
    if b1 is not None:
        out.append(render_b1(document))
    if document.get("adversarial"):
        out += ["", render_adversarial(document)]
    return "\n".join(out)


# --------------------------------------------------------------------------- B4 adversarial cases


def _adversarial_cell(result: dict[str, Any]) -> str:
    """ "over-budget turns / structure-error turns / exceptions", "0" when all are zero, plus status."""
    if result["status"] == "not installed":
        return "n/i"
    r = result.get("report") or {}
    if not r:
        return "ERR" if result["status"] == "error" else result["status"]
    over = r.get("budget", {}).get("over_budget_turns", 0)
    struct = r.get("structure", {}).get("turns_with_errors", 0)
    exc = r.get("exceptions", 0)
    text = "0" if not (over or struct or exc) else f"{over}/{struct}/{exc}"
    if r.get("silent_noops"):
        text += f" ({r['silent_noops']} no-op)"
    if r.get("missing_turn_count"):
        text += f" ({r['missing_turn_count']} turns missing)"
    if result["status"] == "dnf":
        text += " DNF" + result["detail"].split("DNF")[-1].split(" (")[0]
    elif result["status"] == "error":
        text += " ERR"
    return text


def _adversarial_grid(section: dict[str, Any], cell: Any) -> list[str]:
    cases = list(section["cases"])
    contenders = list(dict.fromkeys(r["contender"] for r in section["results"]))
    by_key = {(r["contender"], r["case"]): r for r in section["results"]}
    lines = ["| contender | " + " | ".join(cases) + " |", "|---|" + "---|" * len(cases)]
    for name in contenders:
        cells = [cell(by_key[(name, case)]) if (name, case) in by_key else "skipped" for case in cases]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _r1(result: dict[str, Any]) -> str:
    retention = (result.get("report") or {}).get("retention") or {}
    if result["status"] == "not installed" or retention.get("r_1") is None:
        return "n/i" if result["status"] == "not installed" else "n/a"
    value = f"{retention['r_1']:.2f}"
    share = retention.get("constraint_share")
    return value + (f" (c {share:.2f})" if share is not None else "")


def _myrm_findings(section: dict[str, Any]) -> list[str]:
    """Every nonzero B4 figure of myrm, with the turns and problem kinds, for whoever fixes the engine."""
    out = []
    for r in section["results"]:
        if r["contender"] != "myrm":
            continue
        rep = r.get("report") or {}
        b, s = rep.get("budget", {}), rep.get("structure", {})
        notes = []
        if r["status"] != "ok":
            notes.append(f"{r['status']}: {r['detail'][:200]}")
        if b.get("over_budget_turns"):
            notes.append(
                f"over budget on {b['over_budget_turns']} turns {b.get('over_budget_list', [])[:10]} "
                f"(max overshoot {b.get('max_overshoot_tokens'):,} tokens)"
            )
        kinds = {
            k: v
            for k, v in s.items()
            if k in ("orphan_results", "dangling_calls", "role_order_errors", "duplicate_call_ids") and v
        }
        if s.get("turns_with_errors"):
            notes.append(f"structure errors on {s['turns_with_errors']} turns {kinds}")
        if rep.get("exceptions"):
            notes.append(f"exceptions {rep['exceptions']}: {rep.get('exception_samples')}")
        if rep.get("silent_noops"):
            notes.append(f"silent no-ops {rep['silent_noops']}")
        if notes:
            out.append(f"- {r['case']}: " + "; ".join(notes))
    return out


def render_adversarial(document: dict[str, Any]) -> str:
    section = document["adversarial"]
    out = [
        (
            f"### B4 adversarial cases (window {section['window'] // 1000}k, {len(section['cases'])} cases, "
            f"{section['elapsed_s']:.0f} s)"
        ),
        "",
    ]
    if document.get("mode") == "adversarial":
        versions = ", ".join(f"{k} {v}" for k, v in document["versions"].items())
        out += [f"Command: `{document['command']}` ({document['generated_utc']} UTC). Versions: {versions}.", ""]
    out += [
        (
            "Cell: over-budget turns / structure-error turns / exceptions, `0` when all three are zero; DNF = "
            "stopped at the wall cap at that turn; ERR = the contender raised out of its run (figures up to that "
            "turn); n/i = not installed; skipped = not run on this case (litellm defaults: four cases only). "
            "Summarizer `null` except summarizer-raises (`raises`) and summarizer-inflates (`inflate`)."
        ),
        "",
    ]
    out += _adversarial_grid(section, _adversarial_cell)
    out += [
        "",
        (
            "R_1 on the needles planted before each hostile event and probed after it (c = share of turns "
            "with the first-message constraint):"
        ),
        "",
    ]
    out += _adversarial_grid(section, _r1)
    out += [
        "",
        "Cases: " + "; ".join(f"**{name}**: {case['doc'].rstrip('.')}" for name, case in section["cases"].items()),
    ]
    findings = _myrm_findings(section)
    if findings:
        out += ["", "myrm's nonzero B4 figures:", *findings]
    return "\n".join(out)
