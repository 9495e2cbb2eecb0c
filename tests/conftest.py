"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One apidrift cache for every test that fetches real releases: each archive is downloaded once."""
    return tmp_path_factory.mktemp("index-cache")


_COVERAGE: list[str] = []


@pytest.fixture(scope="session")
def coverage_report() -> list[str]:
    """Real-world audits append their coverage lines here; the terminal summary prints them."""
    return _COVERAGE


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _COVERAGE:
        terminalreporter.section("apidrift coverage on real packages")
        for line in _COVERAGE:
            terminalreporter.write_line(line)
