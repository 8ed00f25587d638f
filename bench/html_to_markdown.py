"""Which library turns a fetched HTML page into the Markdown `web_fetch` gives the model.

Run: `python -m bench.html_to_markdown [--runs N]` (needs the candidates installed:
`pip install trafilatura markdownify html2text`).

Three saved pages in `bench/web_pages/` stand for what a coding agent fetches: a Sphinx docs
page (sidebar, table of contents, code, a table, an admonition), a GitHub-like repository page
(site chrome, file list, the README with code and a table, an "About" rail, footer) and a news
article (cookie banner, ads, byline, comments, related links). For each page the bench lists:

- `keep`: facts the model needs, each a regular expression over the output (a heading as a
  Markdown heading, a code line intact, a table row with its cells, a list item, a link target);
- `drop`: page chrome that only costs tokens (navigation, banners, ads, footers, comments,
  scripts' JSON).

Quality = kept/len(keep) and dropped/len(drop); size = output characters (tokens the model pays);
speed = median milliseconds per page over `--runs` conversions after a warm-up, plus the import
time measured in a fresh interpreter (the tool imports the library on its first call).
Nothing here is asserted by the test suite; the figures go in the README's web_fetch section.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PAGES = Path(__file__).parent / "web_pages"


@dataclass(frozen=True)
class Page:
    file: str
    keep: tuple[str, ...]
    drop: tuple[str, ...]


PAGE_CHECKS = (
    Page(
        "docs.html",
        keep=(
            r"(?m)^#+ Connection pools",
            r"(?m)^#+ Pool timeouts",
            r"limits = tidepool\.Limits\(max_connections=50, max_keepalive=10, keepalive_expiry=30\.0\)",
            r"except tidepool\.PoolTimeout:",
            r"max_keepalive`?\s*\|\s*20\s*\|",
            r"Setting `?max_connections`? below the number of concurrent tasks",
            r"(?m)^\s*(1\.|\*|-)\s+Install the extra",
            r"always safe to retry",
        ),
        drop=(
            r"Edit this page",
            r"Toggle Light",
            r"Copyright",
            r"Retries and backoff",
            r"TLS configuration",
            r"On this page",
            r"G-TRACKING42",
            r"4\.0 beta",
            r"Back to top",
            r"Made with",
        ),
    ),
    Page(
        "readme.html",
        keep=(
            r"(?m)^#+ quiver",
            r"(?m)^#+ Usage",
            r"pip install quiver-config",
            r"settings = quiver\.load\(Settings, env_prefix=\"APP_\", files=\[\"app\.toml\"\]\)",
            r"(?m)^\s+workers: int = 4",
            r"environment\s*\|\s*`?APP_WORKERS=8`?\s*\|\s*highest",
            r"\*\*typed dataclasses\*\*",
            r"CONTRIBUTING\.md\]\([^)]*CONTRIBUTING\.md\)",
        ),
        drop=(
            r"Sign in",
            r"Sign up",
            r"Automate any workflow",
            r"Pull requests",
            r"Go to file",
            r"fix: env prefix",
            r"Manage cookies",
            r"You can't perform that action",
            r"featureFlags",
            r"Languages",
        ),
    ),
    Page(
        "article.html",
        keep=(
            r"(?m)^#+ What changes for riders",
            r"voted 9-2 on Thursday",
            r"The latest count, published in February, was 2,340",
            r"(?m)^\s*[-*+]\s+N4: Harbour terminal to the hospital campus",
            r"(?m)^>\s*\"?We are funding buses",
            r"3\.8 million dollars",
            r"A review is scheduled for 2027",
            r"Nurses, cleaners, bakers",
        ),
        drop=(
            r"We use cookies",
            r"Advertisement",
            r"Refinance your mortgage",
            r"Subscribe for \$1",
            r"Ferry fares",
            r"Now fix the 42",
            r"Privacy policy",
            r"morning briefing",
            r"__INITIAL_STATE__",
            r"You have read 3 of 5",
        ),
    ),
)


def _trafilatura(html: str) -> str:
    import trafilatura

    return (
        trafilatura.extract(
            html,
            output_format="markdown",
            include_links=True,
            include_tables=True,
            include_formatting=True,
            include_comments=False,
        )
        or ""
    )


def _markdownify(html: str) -> str:
    from markdownify import markdownify

    return markdownify(html, heading_style="ATX", strip=["script", "style"])


def _html2text(html: str) -> str:
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0  # no hard wrapping: lines stay greppable
    return converter.handle(html)


def _shipped(html: str) -> str:
    from myrm_tui.agent.tools.html_markdown import html_to_markdown

    return html_to_markdown(html)[1]


CANDIDATES: dict[str, tuple[str, Callable[[str], str]]] = {
    "markdownify + main content (shipped)": ("bs4, markdownify", _shipped),
    "trafilatura": ("trafilatura", _trafilatura),
    "markdownify": ("markdownify", _markdownify),
    "html2text": ("html2text", _html2text),
}


@dataclass
class Row:
    name: str
    page: str
    kept: int
    keep_total: int
    dropped: int
    drop_total: int
    chars: int
    median_ms: float


def score(page: Page, text: str) -> tuple[int, int]:
    kept = sum(1 for pattern in page.keep if re.search(pattern, text))
    dropped = sum(1 for pattern in page.drop if not re.search(pattern, text))
    return kept, dropped


def measure(runs: int) -> list[Row]:
    rows = []
    for name, (_module, convert) in CANDIDATES.items():
        for page in PAGE_CHECKS:
            html = (PAGES / page.file).read_text(encoding="utf-8")
            text = convert(html)  # warm-up (lazy imports, caches)
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                convert(html)
                times.append((time.perf_counter() - start) * 1000)
            kept, dropped = score(page, text)
            rows.append(
                Row(name, page.file, kept, len(page.keep), dropped, len(page.drop), len(text), statistics.median(times))
            )
    return rows


def import_ms(module: str, runs: int = 5) -> float:
    """Median wall time of `import module` in a fresh interpreter, minus a bare interpreter's start."""

    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return (time.perf_counter() - start) * 1000

    bare = statistics.median(once("pass") for _ in range(runs))
    return statistics.median(once(f"import {module}") for _ in range(runs)) - bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--show", help="print one candidate's output for every page")
    args = parser.parse_args()
    if args.show:
        for page in PAGE_CHECKS:
            html = (PAGES / page.file).read_text(encoding="utf-8")
            print(f"===== {page.file}\n{CANDIDATES[args.show][1](html)}")
        return
    rows = measure(args.runs)
    print("| library | page | content kept | chrome dropped | output chars | median ms |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.name} | {row.page} | {row.kept}/{row.keep_total} | {row.dropped}/{row.drop_total} | "
            f"{row.chars:,} | {row.median_ms:.1f} |"
        )
    print()
    print("| library | content kept | chrome dropped | output chars | ms per page (median of pages) | import ms |")
    print("|---|---|---|---|---|---|")
    for name, (module, _convert) in CANDIDATES.items():
        mine = [r for r in rows if r.name == name]
        print(
            f"| {name} | {sum(r.kept for r in mine)}/{sum(r.keep_total for r in mine)} | "
            f"{sum(r.dropped for r in mine)}/{sum(r.drop_total for r in mine)} | "
            f"{sum(r.chars for r in mine):,} | {statistics.median(r.median_ms for r in mine):.1f} | "
            f"{import_ms(module):.0f} |"
        )


if __name__ == "__main__":
    main()
