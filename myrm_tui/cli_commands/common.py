"""What every command does first: find the workspace, load settings, report config problems.

Why here and not in the typer callback: each command has its own flags (which are the last
settings layer), so loading happens once per command, after its flags are known.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from myrm_tui.cli_commands import output
from myrm_tui.settings.config_files.loader import LoadedSettings, load_settings
from myrm_tui.settings.model_choice import AUTOMATIC, SESSION, choose_model
from myrm_tui.settings.settings import Settings

if TYPE_CHECKING:  # the store is opened only by the commands that need it
    from myrm_tui.store.store import Store

# Exit codes shared by the commands (documented in the README).
EXIT_OK = 0
EXIT_TURN_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl+C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: a writer whose reader left (`| head -1`), as `set -o pipefail` expects
EXIT_CRASH = 70  # the full-screen app died of an unhandled exception (sysexits' EX_SOFTWARE)


def onboarding_message() -> str:
    """What to do when no model can be chosen (the wording lives with the model defaults)."""
    from myrm_tui.llm.models.defaults import ONBOARDING_MESSAGE

    return ONBOARDING_MESSAGE


@dataclass(frozen=True)
class CommandContext:
    workspace: Path
    loaded: LoadedSettings

    @property
    def settings(self) -> Settings:
        return self.loaded.settings


def err(text: str) -> None:
    """One line for the user on stderr (stdout is reserved for the command's output).

    Every stderr line goes through here, and many quote untrusted text (tool names, arguments,
    outputs, provider errors, an MCP server's stderr): cli_commands/output.py redacts credentials
    and shows control characters as escapes, never obeyed.
    """
    output.err(text)


def bootstrap(
    flags: Mapping[str, Any] | None = None, *, quiet: bool = False, accept_workspace: str | None = None
) -> CommandContext | None:
    """Load settings for the current workspace and print their problems to stderr.

    Returns None when a flag itself is invalid (the caller exits with EXIT_USAGE); problems in
    files or the environment are warnings and the command goes on with the other layers.
    `accept_workspace` is `--trust` (see settings.loader.load_settings).
    """
    from myrm_tui.store.workspace import find_workspace_root

    root = find_workspace_root()
    loaded = load_settings(root, flags, accept_workspace=accept_workspace)
    fatal = False
    for problem in loaded.problems:
        if problem.level == "error":
            fatal = True
            err(f"error: {problem}")
        elif not quiet:
            err(f"warning: {problem}")
    from myrm_tui.cli_commands.filter_setup import with_filters  # declarative output filters

    loaded, filter_problems = with_filters(root, loaded, accept_workspace)
    for problem in filter_problems:
        if not quiet:
            err(f"warning: {problem}")
    return None if fatal else CommandContext(root, loaded)


def config_notices(context: CommandContext) -> list[str]:
    """The warnings `bootstrap` printed, for the TUI to show again once its screen hides stderr;
    the untrusted-workspace warning is left out when the trust dialog will ask instead."""
    trust = context.loaded.workspace_trust
    asked = trust.notice() if trust is not None and trust.needs_decision else None
    return [str(p) for p in context.loaded.problems if p.level == "warning" and p.message != asked]


def resolve_model(settings: Settings, session_model: str | None = None) -> tuple[Settings, str] | None:
    """Settings with a concrete model, and where it came from (for messages and `myrm doctor`),
    or None when no model can be chosen. The rule is settings.model_choice.choose_model, the one
    the TUI uses too; before a session is picked there is no `session_model`, so it is
    flag/env > config > first usable provider.
    """
    chosen = choose_model(settings, session_model, fallback=_default_model, built_in=built_in_model)
    if chosen is None:
        return None
    if chosen.source in (SESSION, AUTOMATIC):  # not the settings' own model: record it and where it came from
        return with_value(settings, "model", chosen.model, chosen.source), chosen.source
    return settings, chosen.source


def built_in_model(model: str) -> bool:
    """llm.session_model.built_in_model, imported when a resumed session's stored model must be judged
    (settings.model_choice: a committed session's model must not pick an endpoint)."""
    from myrm_tui.llm.models.session_model import built_in_model as judge

    return judge(model)


def _default_model() -> str | None:
    """llm.defaults.default_model, imported only when no model is named (it reads litellm's registry)."""
    from myrm_tui.llm.models.defaults import default_model

    return default_model()


def refuse_unknown_model(settings: Settings) -> bool:
    """Print why the chosen model cannot be used and return True (the caller exits 2 before any
    session is created); False when the name is usable."""
    problem = model_problem(settings)
    if problem is None:
        return False
    err(f"error: {problem}")
    return True


def model_problem(settings: Settings) -> str | None:
    """Why the chosen model cannot be used, or None. A name the registry must confirm imports
    litellm (seconds), so the `myrm` launch asks this after its first frame (tui/app.py)."""
    from myrm_tui.llm.models.check import unknown_model_problem

    return unknown_model_problem(settings.model, settings.models, settings.api_base or None)


def with_value(settings: Settings, key: str, value: Any, source: str) -> Settings:
    """Like Settings.with_values, but records a meaningful source for one key."""
    values = dict(settings.values)
    values[key] = value
    sources = dict(settings.sources)
    sources[key] = source
    return dataclasses.replace(settings, values=MappingProxyType(values), sources=MappingProxyType(sources))


def open_store(workspace: Path) -> Store | None:
    """The workspace's Store, or None after printing why it cannot be opened."""
    from myrm_tui.store.store import Store, StoreError

    try:
        return Store.open(workspace)
    except (StoreError, OSError) as exc:
        from myrm_tui.store.disk_full import disk_full

        full = disk_full(exc, workspace / ".myrm")
        if full is not None:  # SQLite says "disk I/O error" when it cannot even open on a full disk
            err(f"error: {full}")
            return None
        err(
            f"error: cannot open the session store in {workspace / '.myrm'}: {exc}. "
            "Check that the folder is writable (`myrm doctor`)."
        )
        return None


def format_table(headers: list[str], rows: list[list[str]], right: Set[int] = frozenset()) -> str:
    """Plain aligned columns: readable in a terminal, and no colour codes when piped."""
    widths = [len(h) for h in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: list[str]) -> str:
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace and cut to `limit` characters (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
