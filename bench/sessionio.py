"""Reading and writing replay sessions (JSON lines) and their answers sidecar.

One writer for every session source (generator, real captures) so the byte format is the same
everywhere and "same seed, same bytes" holds: compact separators, UTF-8, keys in insertion order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ANSWERS_SUFFIX = ".answers.json"


class SessionFormatError(ValueError):
    """A session, answers or OUT file that does not follow the replay format."""


def answers_path_for(session_path: str | Path) -> Path:
    """The sidecar next to a session: `<session>.answers.json`."""
    return Path(str(session_path) + ANSWERS_SUFFIX)


def dumps_line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def session_bytes(lines: Iterable[dict[str, Any]]) -> bytes:
    return "".join(dumps_line(line) + "\n" for line in lines).encode("utf-8")


def write_session(path: str | Path, lines: list[dict[str, Any]], answers: dict[str, Any]) -> Path:
    """Write the session and its sidecar (which records the session's sha256); returns the sidecar path."""
    data = session_bytes(lines)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    sidecar = answers_path_for(path)
    sidecar.write_text(
        json.dumps({**answers, "session_sha256": hashlib.sha256(data).hexdigest()}, indent=1) + "\n", encoding="utf-8"
    )
    return sidecar


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) pairs; a malformed line is an error naming the file and line."""
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise SessionFormatError(
                    f"{path}:{number}: not valid JSON ({exc.msg}); fix or regenerate the file."
                ) from exc
            if not isinstance(obj, dict):
                raise SessionFormatError(
                    f"{path}:{number}: expected a JSON object per line; fix or regenerate the file."
                )
            yield number, obj


@dataclass
class Session:
    """A replay input: the messages added per turn, and the recall probes."""

    turns: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    probes: list[tuple[int, str]] = field(default_factory=list)
    # Seconds of user pause before a turn (`gap_s`, docs/replay-format.md); absent = none.
    gaps: dict[int, float] = field(default_factory=dict)

    @property
    def last_turn(self) -> int:
        return max(self.turns, default=0)


def read_session(path: str | Path) -> Session:
    session = Session()
    for number, obj in read_jsonl(path):
        if "probe" in obj:
            probe = obj["probe"]
            session.probes.append((int(probe["turn"]), str(probe["query"])))
        elif "turn" in obj and isinstance(obj.get("messages"), list):
            session.turns.setdefault(int(obj["turn"]), []).extend(obj["messages"])
            if obj.get("gap_s"):
                session.gaps[int(obj["turn"])] = float(obj["gap_s"])
        else:
            raise SessionFormatError(
                f"{path}:{number}: neither a turn (turn + messages) nor a probe line; "
                "regenerate the session with bench.workload."
            )
    return session


TOOL_NAMES = frozenset({"bash", "file_read", "file_write", "file_edit", "grep", "glob"})


def session_problems(lines: list[dict[str, Any]]) -> list[str]:
    """Why a session is not a valid replay input (empty list = valid).

    The whole history, concatenated, must be a provider-valid conversation: every result right
    after its call, call ids unique, arguments JSON objects, tools from myrm's set; probes must
    fall inside the session, after their turn's line.
    """
    from bench.structure import ERROR_KEYS, check_structure

    problems: list[str] = []
    history: list[dict[str, Any]] = []
    turns_seen: list[int] = []
    for index, line in enumerate(lines):
        if "probe" in line:
            turn = line["probe"].get("turn")
            if not turns_seen or turn != turns_seen[-1]:
                problems.append(f"line {index}: probe for turn {turn} does not follow that turn's line")
            continue
        turn = line.get("turn")
        if turns_seen and turn != turns_seen[-1] + 1:
            problems.append(f"line {index}: turn {turn} does not follow turn {turns_seen[-1]}")
        turns_seen.append(turn)
        gap = line.get("gap_s", 0)
        if isinstance(gap, bool) or not isinstance(gap, (int, float)) or gap < 0:
            problems.append(f"turn {turn}: gap_s must be a non-negative number of seconds")
        messages = line.get("messages") or []
        if not messages or messages[0].get("role") != "user":
            problems.append(f"turn {turn}: does not start with a user message")
        for message in messages:
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                if function.get("name") not in TOOL_NAMES:
                    problems.append(f"turn {turn}: unknown tool {function.get('name')!r}")
                try:
                    arguments = json.loads(function.get("arguments", ""))
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    problems.append(f"turn {turn}: call {call.get('id')} arguments are not a JSON object")
            if message.get("role") == "tool" and message.get("name") not in TOOL_NAMES:
                problems.append(f"turn {turn}: tool result without a known tool name")
        history += messages
    issues = check_structure(history)
    problems += [f"history: {issues[k]} {k}" for k in ERROR_KEYS if issues.get(k)]
    return problems


def read_answers(path: str | Path) -> dict[str, Any]:
    try:
        answers = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SessionFormatError(
            f"{path}: answers sidecar not found; pass --answers or regenerate the session."
        ) from exc
    if not isinstance(answers, dict) or not isinstance(answers.get("needles"), list):
        raise SessionFormatError(f"{path}: not an answers sidecar (no 'needles' list); regenerate the session.")
    return answers
