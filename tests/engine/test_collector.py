"""The audit runs Python's cycle collector less often (`engine.COLLECT_EVERY`) and puts its thresholds
back when it returns, also when it raises."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor import engine


def test_the_collectors_thresholds_are_put_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "up/pkg").mkdir(parents=True)
    (tmp_path / "up/pkg/__init__.py").write_text("def f(a):\n    return a\n")
    (tmp_path / "down").mkdir()
    (tmp_path / "down/main.py").write_text("import pkg\n\npkg.f(1, 2)\n")
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    real = engine.scan_downstream

    def scanning(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "scan_downstream", scanning)
    request = AuditRequest(
        str(tmp_path / "down"), f"pkg@{tmp_path / 'up'}", None, cache_dir=tmp_path / "c", offline=True
    )
    result = audit(request)
    assert [f.location.line for f in result.findings] == [3]  # f takes one argument
    assert seen == [(max(before[0], engine.COLLECT_EVERY), *before[1:])]
    assert gc.get_threshold() == before

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("stop")

    monkeypatch.setattr(engine, "scan_downstream", failing)
    with pytest.raises(RuntimeError):
        audit(request)
    assert gc.get_threshold() == before
