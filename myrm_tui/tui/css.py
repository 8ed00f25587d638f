"""Widget styles live in a `.tcss` file next to each widget module.

Why files and not inline strings: themes and later the settings screen edit styles, and TCSS
files get editor support; reading them into DEFAULT_CSS keeps each widget self-contained (the
app does not need to know every widget's stylesheet).
"""

from __future__ import annotations

from pathlib import Path


def sibling_css(module_file: str) -> str:
    """The text of the `.tcss` file that sits next to `module_file` with the same stem."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
