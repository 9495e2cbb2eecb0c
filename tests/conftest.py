"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One apidrift cache for every test that fetches real releases: each archive is downloaded once."""
    return tmp_path_factory.mktemp("index-cache")
