"""Fixtures shared by the engine tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh store in the test's own folder, closed afterwards."""
    with Store.open(tmp_path) as opened:
        yield opened
