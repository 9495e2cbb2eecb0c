"""Upstream modules another distribution registers under its own names: requests' `sys.modules` loop
makes `requests.packages.urllib3.util.retry` urllib3's own module, so a downstream import through it is
a use of urllib3 and is checked against the urllib3 audited. Here `vendorer` (served by a local index)
registers `pkg`'s modules under `vendorer.packages.` the way requests 2.x does; `pkg` 2.0 renamed
`Retry(method_whitelist=...)` to `allowed_methods` as urllib3 2.0 did. Under CPython (PYTHONPATH with
both packages) the call through the alias raises TypeError, as the direct one does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from casefiles import trees_agree
from localindex import LocalIndex, core_metadata, wheel_bytes

from apidrift import AuditRequest, audit
from apidrift.auditor.downstream import astscan
from apidrift.auditor.downstream.cst_to_ast import parse

PACKAGES = """import sys

import pkg

for package in ("pkg",):
    locals()[package] = __import__(package)
    for mod in list(sys.modules):
        if mod == package or mod.startswith(f"{package}."):
            sys.modules[f"vendorer.packages.{mod}"] = sys.modules[mod]
"""
VENDORER = {
    "vendorer/__init__.py": "from vendorer import packages\n",
    "vendorer/packages.py": PACKAGES,
    "vendorer/other.py": "thing = 1\n",
}
OLD = {
    "pkg/__init__.py": "from pkg import util\n",
    "pkg/util.py": "class Retry:\n    def __init__(self, total=10, method_whitelist=None):\n        self.total = total\n",
}
NEW = {
    "pkg/__init__.py": "from pkg import util\n",
    "pkg/util.py": "class Retry:\n    def __init__(self, total=10, allowed_methods=None):\n        self.total = total\n",
}
APP = """from vendorer.packages.pkg.util import Retry
import vendorer.packages.pkg.util as u
from vendorer.other import thing

Retry(total=3)
u.Retry(total=3)
Retry(method_whitelist=["GET"])
"""
ALIASED = """import vendorer.packages.pkg.util as u

u.Retry(method_whitelist=["GET"])
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def _trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    old = _write(tmp_path / "old", OLD)
    new = _write(tmp_path / "new", NEW)
    down = _write(
        tmp_path / "down",
        {
            "pyproject.toml": '[project]\nname = "app"\nversion = "0.1"\ndependencies = ["vendorer", "pkg"]\n',
            "app/__init__.py": "",
            "app/main.py": APP,
            "app/aliased.py": ALIASED,
        },
    )
    return old, new, down


def test_imports_through_another_distributions_alias_are_uses_of_the_upstream(tmp_path: Path) -> None:
    old, new, down = _trees(tmp_path)
    with LocalIndex(tmp_path / "index") as index:
        index.add(
            "vendorer",
            "vendorer-1.0-py3-none-any.whl",
            wheel_bytes("vendorer", "1.0", VENDORER, ["pkg"]),
            core_metadata("vendorer", "1.0", ["pkg"]),
        )
        result = audit(
            AuditRequest(
                str(down), f"pkg@{new}", f"pkg@{old}", cache_dir=tmp_path / "cache", index_url=index.url
            )
        )
    found = {(f.location.path, f.location.line, f.code) for f in result.findings}
    assert found == {("app/main.py", 7, "AD101"), ("app/aliased.py", 3, "AD101")}
    assert any("vendorer.packages.pkg = pkg" in note for note in result.notes)
    # the calls that bind are checked too (not merely skipped): both resolve to pkg.util.Retry
    assert result.coverage[0].checked >= 5 and not result.coverage[0].not_checkable


def test_without_the_aliasing_distribution_the_imports_stay_unchecked(tmp_path: Path) -> None:
    old, new, down = _trees(tmp_path)
    result = audit(
        AuditRequest(str(down), f"pkg@{new}", f"pkg@{old}", cache_dir=tmp_path / "cache", offline=True)
    )
    assert not result.findings


def test_the_libcst_path_reads_the_alias_alike() -> None:
    aliases = (("vendorer.packages.pkg", "pkg"),)
    for source in (APP, ALIASED):
        left = astscan.scan_source("a.py", source, frozenset({"pkg"}), aliases)
        right = astscan.scan_source("a.py", source, frozenset({"pkg"}), aliases, tree=parse(source))
        assert trees_agree(source) is None and right == left  # LibCST's tree, converted: the same sites
        assert left.sites  # the imports through the alias are sites of `pkg`


def test_cpython_runs_the_alias_as_the_upstream_module(tmp_path: Path) -> None:
    """The oracle: with both packages importable, the alias is pkg's own module and the old keyword
    fails there as on pkg.util.Retry itself."""
    vendorer = _write(tmp_path / "vendorer", VENDORER)
    new = _write(tmp_path / "new", NEW)
    probe = (
        "import vendorer.packages.pkg.util as u, pkg.util\n"
        "assert u is pkg.util\n"
        "try:\n    u.Retry(method_whitelist=['GET'])\nexcept TypeError as e:\n    print('TypeError', e)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        env={"PYTHONPATH": f"{vendorer}:{new}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "unexpected keyword argument 'method_whitelist'" in run.stdout
