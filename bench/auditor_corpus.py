"""A1: how far the summary auditor can be trusted, on a labeled corpus of summaries of real chunks.

The chunks are windows of the G1 fact sessions (`bench/fact_sessions.py`: real command output of
this machine, captured at run time), each given what a summary can get wrong: a rule the user
sets, a file the assistant edits, and a request the user leaves open at the end. A chunk is
sent as myrm sends it to a summarizer (`summary/source.py`: tool outputs cut to head, tail and
notable lines) and judged against that transcript, as the summary client judges a model's answer.

Good summaries, written to the 14-field schema the way a capable model writes them:
- `standin`: the capable-model stand-in (`context/summary/standin.py`, the bench's `oracle`);
- `paraphrase`: the same facts reworded as another model would (actions and rules in its own
  words, fewer actions, a narrative), identifiers and values still copied exactly;
- `hand`: written by hand for a few chunks (`bench/auditor_corpus/hand/*.json`), when present.
Bad ones, each good summary with one defect: `no-constraint` (the user's rule dropped),
`invented-id` (an identifier the chunk never had), `wrong-number` (one digit of a value copied
from the chunk changed), `no-open-task` (the open request dropped), `no-file` (the edited file
not named). A defect that cannot be made (the summary has no value to change) is skipped.

    python -m bench.auditor_corpus --sessions /tmp/g1 [--chunks 60] [--json OUT]

Precision and recall here are of *reject*: recall = bad summaries rejected / bad summaries,
precision = bad rejected / all rejected; and the accept rate of good ones.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import myrm_tui  # noqa: F401  (offline environment first)
from bench.sessionio import read_jsonl
from myrm_tui.context.summary.auditor import DEFAULT_MIN_RETENTION, audit
from myrm_tui.context.summary.client import TERSE_RETENTION_FACTOR
from myrm_tui.context.summary.prompts import transcript
from myrm_tui.context.summary.schema import FileChange, StructuredSummary, parse_summary, summary_from_dict
from myrm_tui.context.summary.source import summarizer_messages
from myrm_tui.context.summary.standin import leaf
from myrm_tui.context.window.tokens import count_message_tokens

HAND_DIR = Path(__file__).resolve().parent / "auditor_corpus" / "hand"
DEFECTS = ("no-constraint", "invented-id", "wrong-number", "no-open-task", "no-file")
WINDOW_TURNS = (3, 6)  # turns of a session per chunk
RULES = (
    "Never push to main without a review.",
    "Don't touch anything under vendor/ while we do this.",
    "Only use the staging database for these checks.",
    "Keep the public API of the relay module unchanged.",
    "Do not add new third-party dependencies for this.",
    "Always run the linter before you commit anything.",
)
EDITS = (
    ("deploy/services.yaml", "replicas: 2", "replicas: 3"),
    ("config/limits.csv", "ingest,512,maya,30m", "ingest,768,maya,30m"),
    ("config/settings.json", '"retries": 3', '"retries": 5'),
    ("pyproject.toml", 'timeout = "30s"', 'timeout = "45s"'),
)
OPEN_ASKS = (
    "Next, check whether the relay still starts with the new settings.",
    "After that, rerun the package checks and tell me what changed.",
    "Then write up which of these outputs we need for the release notes.",
    "Can you also find out why the indexer log shows a different count than before?",
)
INVENTED = (
    "src/relay/lease_manager.py",
    "rotate_relay_keys()",
    "tools/rebuild_index.sh",
    "RELAY_LEASE_TIMEOUT",
    "tests/test_lease_rotation.py",
    "ledger-sync-worker",
)


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def chunks(sessions: Path, count: int, seed: int = 0) -> list[list[dict[str, Any]]]:
    """`count` chunks: windows of the fact sessions' turns, each with a rule, an edit and an open ask."""
    turns: list[list[list[dict[str, Any]]]] = []
    for path in sorted(sessions.glob("facts-*.jsonl")):
        turns.append([line["messages"] for _, line in read_jsonl(path) if "messages" in line])
    if not turns:
        raise ValueError(
            f"no fact sessions in {sessions}; write them with python -m bench.fact_sessions --out {sessions}"
        )
    rng = random.Random(f"auditor-corpus:{seed}")
    out = []
    for i in range(count):
        session = turns[i % len(turns)]
        size = rng.randrange(*WINDOW_TURNS)
        start = rng.randrange(1, len(session) - size)
        messages = [dict(m) for turn in session[start : start + size] for m in turn]
        first = next(m for m in messages if m["role"] == "user")
        first["content"] = f"{first['content']} {rng.choice(RULES)}"
        path, old, new = rng.choice(EDITS)
        call_id = f"edit_{i}"
        at = rng.randrange(1, len(messages))
        while at < len(messages) and messages[at]["role"] == "tool":  # never between a call and its results
            at += 1
        messages[at:at] = [
            {
                "role": "assistant",
                "content": f"Updating {path}.",
                "tool_calls": [_call(call_id, "file_edit", path=path, old=old, new=new)],
            },
            {"role": "tool", "tool_call_id": call_id, "name": "file_edit", "content": f"edited {path}: 1 replacement"},
        ]
        messages.append({"role": "user", "content": rng.choice(OPEN_ASKS)})
        out.append(messages)
    return out


def paraphrase(summary: StructuredSummary, rng: random.Random) -> StructuredSummary:
    """The same facts in another model's words: the goal, actions, rules and file changes
    reworded, a narrative added; identifiers and values untouched."""
    actions = [
        re.sub(r"^(\w+) (.*?) → ", lambda m: f"Ran {m.group(1)} on `{m.group(2)}`; it showed: ", a)
        for a in summary.completed_actions
    ]
    rules = [
        f"The user asked: {r[0].lower()}{r[1:]}"
        if not r.startswith("user stated")
        else r.replace("user stated:", "Given by the user:")
        for r in summary.constraints_and_preferences
    ]
    return replace(
        summary,
        user_goal=f"The user wants this: {summary.user_goal}",
        completed_actions=actions,
        constraints_and_preferences=rules,
        narrative="Worked through the requested checks one command at a time; findings and the open request are below.",
        files_modified=[FileChange(f.path, f"changed: {f.change}") for f in summary.files_modified],
    )


def _digit_tokens(text: str) -> list[str]:
    return [t.strip(".,:;()[]'\"") for t in re.findall(r"\S*\d\S*", text) if len(t.strip(".,:;()[]'\"")) >= 3]


def defect(
    summary: StructuredSummary, kind: str, messages: list[dict[str, Any]], rng: random.Random
) -> StructuredSummary | None:
    """`summary` with one defect of `kind`, or None when it cannot be made."""
    if kind == "no-constraint":
        rule = next((r for r in RULES if any(r in str(m.get("content")) for m in messages if m["role"] == "user")), "")
        words = [w.strip(".,/").lower() for w in rule.split() if len(w.strip(".,/")) >= 5]

        def states_rule(text: str) -> bool:
            return sum(w in text.lower() for w in words) >= 2

        return replace(
            summary,
            constraints_and_preferences=[c for c in summary.constraints_and_preferences if not states_rule(c)],
            active_task=summary.active_task if not states_rule(summary.active_task) else "none",
        )
    if kind == "invented-id":
        made_up = rng.choice(INVENTED)
        return replace(
            summary, completed_actions=[*summary.completed_actions, f"updated {made_up} to match the new settings"]
        )
    if kind == "wrong-number":
        fields = ["key_findings", "completed_actions", "decisions", "constraints_and_preferences"]
        for name in rng.sample(fields, len(fields)):
            items = list(getattr(summary, name))
            for j, item in enumerate(items):
                tokens = [t for t in _digit_tokens(item) if not t.startswith("msg:")]
                if not tokens:
                    continue
                token = rng.choice(tokens)
                digits = [k for k, ch in enumerate(token) if ch.isdigit()]
                k = rng.choice(digits)
                changed = token[:k] + str((int(token[k]) + rng.randrange(1, 9)) % 10) + token[k + 1 :]
                items[j] = item.replace(token, changed, 1)
                return replace(summary, **{name: items})
        return None
    if kind == "no-open-task":
        return replace(summary, active_task="none", pending_user_asks=[], next_steps=[])
    if kind == "no-file":
        edited = [f.path for f in summary.files_modified]
        if not edited:
            return None

        def scrub(text: str) -> str:
            for path in edited:
                text = text.replace(path, "the config").replace(path.rsplit("/", 1)[-1], "the config")
            return text

        return summary_from_dict({**json.loads(replace(summary, files_modified=[]).map_text(scrub).to_json())})
    raise ValueError(kind)


def judge(
    summary: StructuredSummary, messages: list[dict[str, Any]], terse: bool = False, *, cut_already: bool = False
) -> tuple[bool, list[str]]:
    """The auditor's verdict, as the summary client gives it (the chunk as the model read it)."""
    cut = messages if cut_already else summarizer_messages(messages)
    ids = list(range(1, len(cut) + 1))
    result = audit(
        summary,
        source_text=transcript(cut, ids),
        source_tokens=sum(count_message_tokens(m) for m in cut),
        min_retention=DEFAULT_MIN_RETENTION * (TERSE_RETENTION_FACTOR if terse else 1),
        messages=cut,
    )
    return result.ok, result.problems


def hand_written() -> list[tuple[list[dict[str, Any]], StructuredSummary]]:
    out = []
    for path in sorted(HAND_DIR.glob("*.json")) if HAND_DIR.exists() else ():
        data = json.loads(path.read_text(encoding="utf-8"))
        out.append((data["cut_messages"], parse_summary(json.dumps(data["summary"]))))
    return out


def run(sessions: Path, count: int) -> dict[str, Any]:
    rng = random.Random("auditor-corpus:defects")
    goods: list[tuple[str, list[dict[str, Any]], StructuredSummary]] = []
    for messages in chunks(sessions, count):
        written = leaf(summarizer_messages(messages))
        goods.append(("standin", messages, written))
        goods.append(("paraphrase", messages, paraphrase(written, rng)))
    goods += [("hand", messages, summary) for messages, summary in hand_written()]
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for style, messages, summary in goods:
        cut = style == "hand"  # fixtures store the chunk as the summarizer read it
        for terse in (False, True):
            bar = "terse" if terse else "full"
            ok, problems = judge(summary, messages, terse, cut_already=cut)
            verdicts[f"good/{style}/{bar}"]["accepted" if ok else "rejected"] += 1
            if not ok and not terse:
                reasons.update(p.split(":")[0][:60] for p in problems)
                if len(examples) < 5:
                    examples.append({"style": style, "problems": problems})
            for kind in DEFECTS:
                bad = defect(summary, kind, messages, rng)
                if bad is None:
                    continue
                ok, _ = judge(bad, messages, terse, cut_already=cut)
                verdicts[f"bad/{kind}/{bar}"]["accepted" if ok else "rejected"] += 1
    return {
        "verdicts": {k: dict(v) for k, v in sorted(verdicts.items())},
        "good_rejections": dict(reasons),
        "examples": examples,
    }


def figures(result: dict[str, Any], bar: str) -> dict[str, float]:
    v = result["verdicts"]
    good = [c for k, c in v.items() if k.startswith("good/") and k.endswith("/" + bar)]
    bad = [c for k, c in v.items() if k.startswith("bad/") and k.endswith("/" + bar)]
    good_ok = sum(c.get("accepted", 0) for c in good)
    good_n = sum(sum(c.values()) for c in good)
    bad_rej = sum(c.get("rejected", 0) for c in bad)
    bad_n = sum(sum(c.values()) for c in bad)
    rejected = bad_rej + (good_n - good_ok)
    return {
        "good_accepted": good_ok / good_n if good_n else 0.0,
        "bad_rejected": bad_rej / bad_n if bad_n else 0.0,
        "reject_precision": bad_rej / rejected if rejected else 1.0,
        "good": good_n,
        "bad": bad_n,
    }


def markdown(result: dict[str, Any]) -> str:
    out = ["| summaries | bar | n | accepted | rejected |", "|---|---|---|---|---|"]
    for key, counts in result["verdicts"].items():
        kind, style, bar = key.split("/")
        n = sum(counts.values())
        out.append(f"| {kind}: {style} | {bar} | {n} | {counts.get('accepted', 0)} | {counts.get('rejected', 0)} |")
    out += [
        "",
        "| bar | good accepted | bad rejected (recall) | precision of reject | good / bad |",
        "|---|---|---|---|---|",
    ]
    for bar in ("full", "terse"):
        f = figures(result, bar)
        rates = f"{f['good_accepted']:.3f} | {f['bad_rejected']:.3f} | {f['reject_precision']:.3f}"
        out.append(f"| {bar} | {rates} | {f['good']} / {f['bad']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.auditor_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions", required=True, help="folder of G1 sessions (python -m bench.fact_sessions --out DIR)"
    )
    parser.add_argument("--chunks", type=int, default=60)
    parser.add_argument("--json", help="write the verdicts here")
    args = parser.parse_args(argv)
    try:
        result = run(Path(args.sessions), args.chunks)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(markdown(result))
    if result["good_rejections"]:
        print("\nwhy good summaries were rejected (full bar):", json.dumps(result["good_rejections"], indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
