"""What the loader reports instead of raising: one problem per bad value, with file and line.

Why problems instead of exceptions: a typo in a config file must never stop the app from
starting; the bad value is skipped and the earlier layers' value stays in force.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with the configuration. `file` is a path, `env` or `flags`."""

    file: str
    line: int | None
    message: str
    level: str = "warning"  # warning: value skipped, app goes on; error: the command should stop

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.message}"


class ConfigWriteError(Exception):
    """The config file cannot be updated without losing what is in it."""
