"""Suite-wide isolation: no test reads or writes the developer's real user config."""

from __future__ import annotations

import pytest

import myrm_tui  # noqa: F401  (sets the offline litellm/tiktoken environment first)


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))
