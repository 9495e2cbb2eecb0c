"""Certain means certain: engine-level guarantees behind every error (issue: zero false errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor import engine
from apidrift.rules.registry import all_rules
from casefiles import write_tree


def _project(tmp_path: Path) -> tuple[Path, Path]:
    upstream = write_tree(tmp_path / "up", {"pkg/__init__.py": "def f(a):\n    return a\n"})
    downstream = write_tree(tmp_path / "down", {"app.py": "from pkg import f\nf(1, 2)\n"})
    return upstream, downstream


def test_one_site_never_gives_the_same_finding_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream, downstream = _project(tmp_path)
    rules = all_rules()
    # Two rules that say the same thing of one site (here: one rule registered twice) give one finding.
    monkeypatch.setattr(engine, "all_rules", lambda: rules + rules)
    result = audit(AuditRequest(downstream=str(downstream), against=f"pkg@{upstream}", cache_dir=tmp_path / "cache"))
    keys = [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]
    assert keys == [("AD103", "app.py", 2, 1, keys[0][4])]
