"""Token savings of the shipped declarative filters (myrm_tui/context/filters/shipped/*.toml) on
real output of this machine: each command runs for real (tar, unzip, du, dpkg over
/usr/share/doc and the package database), and its output is excerpted the way the arrival filter
does (`smart.filter_output`) with and without the shipped set.

Why a separate figure from the tests: the tests check that the needed lines survive on generated
trees; this says what the filters save on a real system's output. The budget is the arrival
allowance at a 128k window (4 % of it, 3 characters a token); tokens are tiktoken's.

Run from the repository root: `python -m bench.shipped_filter_savings [--root /usr/share/doc]`.
Prints a table (the figures in docs/using-the-engine.md, "Built-in declarative filters").
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import zipfile
from pathlib import Path

import myrm_tui  # noqa: F401  (offline env)
from myrm_tui.context.filters import declarative, smart
from myrm_tui.context.window.tokens import count_text_tokens

# The arrival filter's excerpt budget at a 128k window: 4 % of B, ~3 characters a token.
BUDGET_CHARS = int(0.04 * 128_000 * 3)


def _run(command: str, cwd: Path) -> str:
    done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, check=False)
    return f"{done.stdout}{done.stderr}[exit code {done.returncode}]"


def _excerpt_tokens(text: str, command: str, *, shipped: bool) -> tuple[int, str]:
    real = declarative.shipped_filters
    if not shipped:
        declarative.shipped_filters = lambda: ()  # type: ignore[assignment]  # the generic path
    try:
        result = smart.filter_output(text, tool="bash", arguments={"command": command}, budget_chars=BUDGET_CHARS)
    finally:
        declarative.shipped_filters = real  # type: ignore[assignment]
    if result is None:
        return count_text_tokens(text), "whole"
    return count_text_tokens(result.text), result.kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default="/usr/share/doc", help="the tree to archive and measure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        archive = work / "d.zip"
        with zipfile.ZipFile(archive, "w") as z:
            for path in sorted(Path(args.root).rglob("*")):
                if path.is_file() and not path.is_symlink():
                    z.write(path, path.relative_to("/"))
        (work / "out").mkdir()
        commands = [
            f"tar -cvf {work}/x.tar {args.root} /nonexistent-dir 2>&1",
            f"cd out && unzip -o {archive} '{args.root.strip('/')}/*' no-such-file.txt",
            f"du -a {args.root} /nonexistent 2>&1",
            "dpkg -l",
        ]
        print("| command | lines | whole output | excerpt before (generic) | excerpt now |")
        print("|---|---|---|---|---|")
        for command in commands:
            text = _run(command, work)
            before, before_kind = _excerpt_tokens(text, command, shipped=False)
            after, after_kind = _excerpt_tokens(text, command, shipped=True)
            lines = text.count("\n") + 1
            print(
                f"| `{command}` | {lines:,} | {count_text_tokens(text):,} | {before:,} ({before_kind}) "
                f"| {after:,} ({after_kind}) |"
            )


if __name__ == "__main__":
    main()
