"""Settle the declarative output filters for this process, once the workspace's trust is known.

Why here and not in the settings loader: the filters are not settings values, and installing
them touches the context layer (context/filters/declarative.py), which the settings layer must
not import. `bootstrap` calls this for every command; only the commands that run turns use it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from myrm_tui.settings.config_files.filter_files import load_filter_files, workspace_filters_trusted
from myrm_tui.settings.config_files.loader import LoadedSettings
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.paths import user_config_dir

# The module holding the process's installed filter set.
DECLARATIVE = "myrm_tui.context.filters.declarative"


def install_filters(
    workspace: Path, loaded: LoadedSettings, accept_workspace: str | None, user_dir: Path | None = None
) -> list[ConfigProblem]:
    """Install the filters that apply here; the problems of the files that were skipped."""
    trusted = workspace_filters_trusted(loaded.workspace_trust, accept_workspace)
    found = load_filter_files(workspace, user_dir or user_config_dir(), workspace_trusted=trusted)
    # Not yet imported means nothing was installed: with no filters to install, the import (~40 ms
    # of filter machinery, before `myrm` paints) would only set the empty set it starts with.
    if found.applied or DECLARATIVE in sys.modules:
        from myrm_tui.context.filters import declarative

        declarative.install(found.applied)
    return list(found.problems)
