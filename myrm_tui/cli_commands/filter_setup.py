"""Settle the declarative output filters of a workspace, once its trust is known.

Why a step beside the loader rather than inside it: the loader's problems are the config files'
(shown again by the TUI), while doctor lists the filter files on its own, held ones too; here
their problems are reported once, by the command that settles them. The result rides on the
settings value (`Settings.output_filters`), so every session filters with the files of its own
workspace, and a session that trusts its workspace later gets them with its new settings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from myrm_tui.settings.config_files.filter_files import load_filter_files, workspace_filters_trusted
from myrm_tui.settings.config_files.loader import LoadedSettings
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.paths import user_config_dir


def with_filters(
    workspace: Path, loaded: LoadedSettings, accept_workspace: str | None, user_dir: Path | None = None
) -> tuple[LoadedSettings, list[ConfigProblem]]:
    """`loaded` with the filters that apply here on its settings; the problems of the files that
    were skipped."""
    trusted = workspace_filters_trusted(loaded.workspace_trust, accept_workspace)
    found = load_filter_files(workspace, user_dir or user_config_dir(), workspace_trusted=trusted)
    settings = dataclasses.replace(loaded.settings, output_filters=tuple(found.applied))
    return dataclasses.replace(loaded, settings=settings), list(found.problems)
