"""Theme files: TOML in `themes/` (shipped) and `<user config dir>/themes/` (the user's).

Format (one theme per file; the file stem is only a fallback name)::

    name = "myrm-dark"          # what `theme = "..."` in the config selects
    dark = true
    [colors]                    # Textual's base colours; each optional but `primary`
    primary = "#4EA8DE"
    secondary = "#9D7CD8"
    accent = "#F6A04D"
    warning = "#E5C07B"
    error = "#E06C75"
    success = "#98C379"
    foreground = "#D7DAE0"
    background = "#15171C"
    surface = "#1C1F26"
    panel = "#262A33"
    boost = "#FFFFFF10"
    [variables]                 # any Textual CSS variable, e.g. "footer-key-foreground"
    "block-cursor-text-style" = "none"

A broken file never stops the app: it is reported (file + reason) and skipped. A [variables]
value is only known to be wrong once the stylesheet uses it (`text-style: $block-cursor-text-style`
with "wobbly"), so a user theme is parsed against every loaded widget's CSS before it is applied
(`css_problem`); a theme that fails is not applied, the default stays, and the app says why.
"""

from __future__ import annotations

import contextlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

import myrm_tui

THEME_SUFFIX = ".toml"
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


class ThemeFileError(ValueError):
    """A theme file that cannot be loaded; the message names the file and what to fix."""


@dataclass(frozen=True)
class LoadedThemes:
    themes: dict[str, Theme]  # by name
    files: dict[str, Path]  # theme name → file it came from
    problems: list[str]


def shipped_theme_dir() -> Path:
    """The themes that ship with myrm: inside the package in an installed wheel (the build maps
    the repository's top-level `themes/` there), else that top-level folder (editable install)."""
    packaged = resources.files("myrm_tui") / "themes"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(myrm_tui.__file__).resolve().parent.parent / "themes"


def user_theme_dir() -> Path:
    from myrm_tui.settings.paths import user_config_dir

    return user_config_dir() / "themes"


def load_theme_file(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeFileError(f"{path}: cannot read it ({exc}).") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path}: not valid TOML ({exc}); fix the syntax.") from exc
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{path}: `name` must be a non-empty string.")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeFileError(f"{path}: [colors] must be a table of colour strings.")
    unknown = sorted(set(colors) - set(COLOR_KEYS))
    if unknown:
        raise ThemeFileError(f"{path}: unknown colour keys {unknown}; use {', '.join(COLOR_KEYS)}.")
    if "primary" not in colors:
        raise ThemeFileError(f"{path}: [colors] needs at least `primary`.")
    for key, value in colors.items():
        try:
            Color.parse(value)
        except (ColorParseError, TypeError) as exc:
            raise ThemeFileError(f'{path}: colour `{key}` = {value!r} is not a colour (use "#RRGGBB").') from exc
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{path}: [variables] must map CSS variable names to strings.")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{path}: `dark` must be true or false.")
    return Theme(name=name.strip(), dark=dark, variables=dict(variables), **colors)


def theme_dirs() -> list[Path]:
    """Shipped first, then the user's: a user theme with the same name wins."""
    dirs = [shipped_theme_dir()]
    with contextlib.suppress(Exception):  # no platform config dir: shipped themes still load
        dirs.append(user_theme_dir())
    return dirs


def load_themes(dirs: list[Path]) -> LoadedThemes:
    themes: dict[str, Theme] = {}
    files: dict[str, Path] = {}
    problems: list[str] = []
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob(f"*{THEME_SUFFIX}")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as exc:
                problems.append(str(exc))
                continue
            themes[theme.name] = theme
            files[theme.name] = path
    return LoadedThemes(themes, files, problems)


def css_problem(theme: Theme, path: Path | None = None) -> str | None:
    """Why applying `theme` would break the app's stylesheet, or None.

    Textual substitutes theme variables into every widget's CSS when the widget is mounted, and a
    value that does not parse there raises, which ends the app. Checked here against the CSS of
    every widget class loaded (the app imports all its screens and widgets up front), about
    0.1 s, so only for themes that are not shipped (those are tested)."""
    from textual.css.stylesheet import Stylesheet, StylesheetParseError
    from textual.widget import Widget

    sheet = Stylesheet(variables={**theme.to_color_system().generate(), **theme.variables})
    for cls in _loaded_widget_classes(Widget):
        css = cls.__dict__.get("DEFAULT_CSS")
        if css:
            sheet.add_source(
                css,
                read_from=(cls.__module__, cls.__qualname__),
                is_default_css=True,
                scope=cls.__name__ if cls.__dict__.get("SCOPED_CSS", True) else "",
            )
    try:
        sheet.parse()
    except StylesheetParseError as exc:
        where = f"{path}: " if path is not None else f"theme {theme.name!r}: "
        return where + _first_css_error(exc, theme) + " The theme is not applied."
    return None


def _loaded_widget_classes(base: type) -> list[type]:
    out: list[type] = []
    stack: list[type] = [base]
    seen: set[type] = set()
    while stack:
        subclasses: list[type] = stack.pop().__subclasses__()
        for cls in subclasses:
            if cls not in seen:
                seen.add(cls)
                out.append(cls)
                stack.append(cls)
    return out


def _first_css_error(exc: Exception, theme: Theme) -> str:
    """The variable and value at fault, in one sentence (Textual's own report is a panel)."""
    import re

    for rule in getattr(getattr(exc, "errors", None), "rules", ()):
        for token, help_text in getattr(rule, "errors", ()):
            variable = getattr(getattr(token, "referenced_by", None), "name", "")
            summary = re.sub(r"\[/?i?\]", "", str(getattr(help_text, "summary", help_text)))
            if variable in theme.variables:
                return (
                    f"[variables] `{variable}` = {theme.variables[variable]!r} is not valid CSS where it "
                    f"is used ({summary})."
                )
            return f"{summary}."
    return "its variables do not parse as CSS."
