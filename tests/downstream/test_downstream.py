"""The downstream walker: the same use sites whether files are parsed here or by a pool of processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift.auditor.core.sites import site_to_data
from apidrift.auditor.downstream import walk as downstream


def make_tree(root: Path, count: int) -> Path:
    root.mkdir(parents=True)
    for index in range(count):
        body = (
            f"import pkg\nfrom pkg import thing{index}\n\npkg.call({index}, key={index})\nthing{index}.attr\n"
        )
        if index == 3:
            body = "import pkg\ndef broken(:\n"  # one file the parser refuses: its outcome says so
        (root / f"mod{index:02d}.py").write_text(body)
    (root / "other.py").write_text("print('no upstream here')\n")
    return root


def summary(scans: list, outcomes: list) -> tuple:
    return (
        [(s.path, [site_to_data(site) for site in s.sites]) for s in scans],
        [(o.path, o.status, o.use_sites, (o.reason or "")[:12]) for o in outcomes],
    )


def test_pool_and_serial_parsing_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree(tmp_path / "down", 24)
    names = frozenset({"pkg"})
    monkeypatch.setattr(downstream, "POOL_MIN_FILES", 10_000)  # serial
    serial = summary(*downstream.scan_downstream(root, names, tmp_path / "serial-cache"))
    monkeypatch.setattr(downstream, "POOL_MIN_FILES", 2)  # a pool, whatever the machine's core count
    monkeypatch.setattr(downstream, "POOL_MIN_CHARS", 0)
    monkeypatch.setattr(downstream.os, "cpu_count", lambda: 2)
    pooled = summary(*downstream.scan_downstream(root, names, tmp_path / "pool-cache"))
    assert pooled == serial
    files, outcomes = serial
    assert len(files) == 23 and ("mod03.py", "failed", 0, "syntax error") in outcomes
    assert ("other.py", "skipped", 0, "does not men") in outcomes
    # A second run reads every scan from the cache: only the file that failed is parsed again.
    parsed: list[str] = []
    fresh = downstream._fresh_scan
    monkeypatch.setattr(
        downstream, "_fresh_scan", lambda relative, *rest: parsed.append(relative) or fresh(relative, *rest)
    )
    assert summary(*downstream.scan_downstream(root, names, tmp_path / "pool-cache"))[0] == files
    assert parsed == ["mod03.py"]


def test_star_import_binds_only_what_all_exports(tmp_path: Path) -> None:
    """`from m import *` with `__all__` binds only those names: a public name outside it is a NameError
    (checked here against CPython), while a name the downstream binds itself is never the star's."""
    import subprocess
    import sys

    from apidrift import AuditRequest, audit

    upstream = tmp_path / "up" / "pkg"
    upstream.mkdir(parents=True)
    (upstream / "__init__.py").write_text("")
    (upstream / "mod.py").write_text(
        '__all__ = ["load"]\n\ndef load(p):\n    return p\n\ndef not_exported(p):\n    return p\n'
    )
    down = tmp_path / "down" / "app"
    down.mkdir(parents=True)
    source = "from pkg.mod import *\n\nload(1)\nnot_exported(1)\n\ndef own(value):\n    return value.real\n"
    (down / "__init__.py").write_text(source)
    run = subprocess.run(
        [sys.executable, "-c", "import app"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{tmp_path / 'up'}:{tmp_path / 'down'}"},
        check=False,
    )
    assert "NameError: name 'not_exported' is not defined" in run.stderr
    result = audit(
        AuditRequest(str(down), f"pkg@{tmp_path / 'up'}", None, cache_dir=tmp_path / "cache", offline=True)
    )
    found = [(f.location.line, f.code) for f in result.findings]
    assert found == [(4, "AD002")]
    assert "`from pkg.mod import *` does not provide it" in result.findings[0].message
