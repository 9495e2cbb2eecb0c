"""Certain means certain: engine-level guarantees behind every error (issue: zero false errors)."""

from __future__ import annotations

from pathlib import Path

import pytest
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor import engine
from apidrift.rules.registry import all_rules


def _project(tmp_path: Path) -> tuple[Path, Path]:
    upstream = write_tree(tmp_path / "up", {"pkg/__init__.py": "def f(a):\n    return a\n"})
    downstream = write_tree(tmp_path / "down", {"app.py": "from pkg import f\nf(1, 2)\n"})
    return upstream, downstream


def test_one_site_never_gives_the_same_finding_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream, downstream = _project(tmp_path)
    rules = all_rules()
    # Two rules that say the same thing of one site (here: one rule registered twice) give one finding.
    monkeypatch.setattr(engine, "all_rules", lambda: rules + rules)
    result = audit(
        AuditRequest(downstream=str(downstream), against=f"pkg@{upstream}", cache_dir=tmp_path / "cache")
    )
    keys = [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]
    assert keys == [("AD103", "app.py", 2, 1, keys[0][4])]


def test_each_new_not_checkable_reason_is_counted_in_coverage(tmp_path: Path) -> None:
    upstream = write_tree(
        tmp_path / "up",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": (
                "import six\n\n\n"
                "class Made:\n"
                "    def __new__(cls, *args, **kwargs):\n"
                "        return cls._registry[args[0]]\n\n"
                "    def __init__(self, a):\n"
                "        self.a = a\n\n\n"
                "class Open:\n"
                "    for _n in ('x',):\n"
                "        locals()[_n] = 1\n\n\n"
                "@six.add_metaclass(type)\n"
                "class Decorated:\n"
                "    pass\n\n\n"
                "class Base:\n"
                "    def shift(self, periods=1):\n"
                "        return self\n"
            ),
            "pkg/native.pyi": "def arange(stop: int, /) -> list[int]: ...\n",
        },
    )
    downstream = write_tree(
        tmp_path / "down",
        {
            "app.py": (
                "from pkg.core import Base, Decorated, Made, Open\n"
                "from pkg.native import arange\n\n"
                "Made(1, 2)\n"
                "Open.y\n"
                "Decorated.z\n"
                "arange(10, step=2)\n\n\n"
                "class Mine(Base):\n"
                "    def shift(self, periods):\n"
                "        return self\n"
            )
        },
    )
    result = audit(
        AuditRequest(downstream=str(downstream), against=f"pkg@{upstream}", cache_dir=tmp_path / "cache")
    )
    assert [f.severity.value for f in result.findings] == ["warning"]  # arange's stub, no old version
    counted = result.coverage[0].not_checkable
    assert counted.get("factory-new") == 1
    assert counted.get("dynamic-binding") == 1
    assert counted.get("class-decorator:six.add_metaclass") == 1
    assert counted.get("stub-signature") == 1
    assert counted.get("override-requires-optional") == 1
