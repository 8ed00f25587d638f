"""`python -m bench.sandbox_report`: the bash sandbox's figures, as tables.

1. Attacks (bench/sandbox_attacks.py) per group, attempts and blocked, with the bwrap sandbox
   (workspace-write) and without it (off), each judged by host-side evidence.
2. The destructive-command seatbelt on bench/sandbox_corpus.py: destructive variants caught and
   harmless look-alikes flagged, for the old substring regex list and the tokenised check.

Runs in about a minute (every attack builds its own arena: a git repo and a store).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from bench.sandbox_corpus import DESTRUCTIVE, HARMLESS

# The regex list myrm used before the tokenised check (myrm_tui/agent/permissions/approvals.py at e2115f6),
# kept here only as the baseline the new figures are compared with.
OLD_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\brm\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b",
        r"\bgit\s+push\b[^;&|]*\s(?:--force\b|--force-with-lease\b|-f\b|\+\S)",
        r"\bgit\s+reset\b[^;&|]*--hard\b",
        r"\bgit\s+clean\b[^;&|]*\s-[a-zA-Z]*f",
        r"\bmkfs(?:\.\w+)?\b",
        r"\bdd\b[^;&|]*\bof=",
        r"\b(?:chmod|chown)\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*R|--recursive)\b",
        r"(?:^|[;&|(]\s*|\s)(?:sudo|doas)\b",
        r"\b(?:curl|wget)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b",
        r">\s*/dev/(?:sd|hd|vd|nvme|xvd|disk|mmcblk)",
        r"\b(?:shutdown|reboot|poweroff|halt)\b",
        r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:",
    )
)


def old_flags(command: str) -> bool:
    return any(p.search(command) for p in OLD_PATTERNS)


def deny_list_table() -> str:
    from myrm_tui.agent.permissions.seatbelt import destructive_reason

    rows = ["| group | variants | old: asked | new: asked |", "|---|---|---|---|"]
    total = old_total = new_total = 0
    missed_new: list[str] = []
    for group, commands in DESTRUCTIVE.items():
        old = sum(old_flags(c) for c in commands)
        new = sum(destructive_reason(c) is not None for c in commands)
        missed_new += [c for c in commands if destructive_reason(c) is None]
        rows.append(f"| {group} | {len(commands)} | {old} | {new} |")
        total, old_total, new_total = total + len(commands), old_total + old, new_total + new
    rows.append(
        f"| **all destructive** | {total} | {old_total} ({total - old_total} pass) | "
        f"{new_total} ({total - new_total} pass) |"
    )
    old_fp = [c for c in HARMLESS if old_flags(c)]
    new_fp = [c for c in HARMLESS if destructive_reason(c) is not None]
    rows.append(f"| **harmless look-alikes** | {len(HARMLESS)} | {len(old_fp)} flagged | {len(new_fp)} flagged |")
    notes = []
    if missed_new:
        notes.append("new check lets through: " + "; ".join(repr(c) for c in missed_new))
    if new_fp:
        notes.append("new check flags: " + "; ".join(repr(c) for c in new_fp))
    notes.append("old list flagged: " + "; ".join(repr(c) for c in old_fp))
    return "\n".join(rows + [""] + notes)


async def attack_table(modes: tuple[str, ...]) -> str:
    from bench.sandbox_attacks import ATTACKS, GROUPS, Listeners, run_attack

    listeners = Listeners()
    listeners.start()
    counts: dict[tuple[str, str], list[int]] = {}
    passed: dict[str, list[str]] = {mode: [] for mode in modes}
    try:
        for mode in modes:
            for attack in ATTACKS:
                outcome = await run_attack(attack, mode, listeners)
                cell = counts.setdefault((mode, attack.group), [0, 0])
                cell[0] += 1
                cell[1] += outcome.blocked
                if not outcome.blocked:
                    passed[mode].append(f"{attack.group}/{attack.name}: {outcome.evidence}")
    finally:
        listeners.stop()
    header = "| group | " + " | ".join(f"{m}: blocked/attempts" for m in modes) + " |"
    rows = [header, "|---|" + "---|" * len(modes)]
    for group in GROUPS:
        cells = [f"{counts[(m, group)][1]}/{counts[(m, group)][0]}" for m in modes]
        rows.append(f"| {group} | " + " | ".join(cells) + " |")
    totals = [f"{sum(counts[(m, g)][1] for g in GROUPS)}/{sum(counts[(m, g)][0] for g in GROUPS)}" for m in modes]
    rows.append("| **all** | " + " | ".join(totals) + " |")
    lines = rows + [""]
    for mode in modes:
        lines.append(f"not blocked with sandbox={mode}: " + ("none" if not passed[mode] else ""))
        lines += [f"  - {p}" for p in passed[mode]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sandbox_report", description=__doc__.split("\n")[0])
    parser.add_argument("--deny-list-only", action="store_true", help="skip the attacks (no bwrap needed)")
    args = parser.parse_args(argv)
    print("## Destructive-command seatbelt: old regex list vs tokenised check\n")
    print(deny_list_table())
    if not args.deny_list_only:
        from myrm_tui.agent.sandbox import probe_bwrap

        probe = probe_bwrap()
        print(
            f"\n## Attacks through the bash tool ({probe.version or 'bwrap unavailable'}: "
            f"{'works' if probe.works else probe.problem})\n"
        )
        modes = ("workspace-write", "off") if probe.works else ("off",)
        print(asyncio.run(attack_table(modes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
