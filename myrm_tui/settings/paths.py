"""Where configuration files live.

Why an override variable: tests and throwaway runs must never read or write the real user's
config, and platformdirs has no per-process switch, so `MYRM_CONFIG_DIR` wins when set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_DIR_ENV = "MYRM_CONFIG_DIR"
CONFIG_FILE_NAME = "config.toml"
WORKSPACE_DIR_NAME = ".myrm"  # the same folder the store uses for sessions.db and artifacts


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The per-user config folder (`MYRM_CONFIG_DIR`, else the platform's config dir)."""
    source = os.environ if env is None else env
    override = source.get(CONFIG_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    # Imported here: platformdirs is cheap, but only the commands that read config need it.
    import platformdirs

    return Path(platformdirs.user_config_dir("myrm"))


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(env) / CONFIG_FILE_NAME


def workspace_config_file(workspace_root: Path) -> Path:
    return workspace_root / WORKSPACE_DIR_NAME / CONFIG_FILE_NAME
