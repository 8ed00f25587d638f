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

A broken file never stops the app: it is reported (file + reason) and skipped.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

import myrm_tui

THEME_SUFFIX = ".toml"
COLOR_KEYS = ("primary", "secondary", "accent", "warning", "error", "success", "foreground",
              "background", "surface", "panel", "boost")


class ThemeFileError(ValueError):
    """A theme file that cannot be loaded; the message names the file and what to fix."""


@dataclass(frozen=True)
class LoadedThemes:
    themes: dict[str, Theme]  # by name
    files: dict[str, Path]  # theme name → file it came from
    problems: list[str]


def shipped_theme_dir() -> Path:
    """The repository's top-level `themes/` folder (next to the package)."""
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
            raise ThemeFileError(f"{path}: colour `{key}` = {value!r} is not a colour (use \"#RRGGBB\").") from exc
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
    try:
        dirs.append(user_theme_dir())
    except Exception:  # noqa: BLE001, S110 - no platform config dir: shipped themes still load
        pass
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
