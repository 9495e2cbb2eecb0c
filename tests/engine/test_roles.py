"""Where a finding lives: a file's role in its distribution (auditor/roles.py), carried by every
finding, filtered by `--role`, and the impact buckets "breaks its users" / "breaks only its own code"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_impact import NEW_PKG, OLD_PKG, pyproject, write

from apidrift.auditor.cli.main import main
from apidrift.auditor.engine import AuditRequest, audit
from apidrift.auditor.impact.inputs import read_dependents
from apidrift.auditor.impact.run import ImpactRequest, run_impact
from apidrift.auditor.roles import file_role, parse_roles
from apidrift.reports import impact_markdown, impact_text, sarif

BREAK = "import pkg\n\npkg.get_config(1, 2, kv_cache_specs=3)\n"
CLEAN = "import pkg\n\npkg.get_config(1, 2)\n"


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("typer/core.py", "shipped"),
        ("click/testing.py", "shipped"),  # a shipped API for the users' tests
        ("django/test/client.py", "shipped"),
        ("towncrier/test/test_check.py", "tests"),  # pytest collects it
        ("ufmt/tests/cli.py", "tests"),
        ("tests/helpers.py", "tests"),
        ("test/unit/util.py", "tests"),
        ("conftest.py", "tests"),
        ("test_cli.py", "tests"),
        ("docs_src/first_steps/tutorial001.py", "examples"),
        ("examples/app.py", "examples"),
        ("docs/conf.py", "examples"),
        ("setup.py", "build"),
        ("noxfile.py", "build"),
        (".github/scripts/release.py", "build"),
        ("scripts/gen.py", "other"),
    ],
)
def test_file_role(path: str, role: str) -> None:
    names = ("typer", "click", "django", "towncrier", "ufmt")
    assert file_role(path, names) == role


def test_parse_roles() -> None:
    assert parse_roles(["shipped,tests", "examples"]) == {"shipped", "tests", "examples"}
    with pytest.raises(ValueError, match="unknown role 'test'"):
        parse_roles(["test"])


@pytest.fixture
def world(tmp_path: Path) -> Path:
    write(tmp_path / "old", {"pkg/__init__.py": OLD_PKG, "pyproject.toml": pyproject("pkg", "1.0", [])})
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG, "pyproject.toml": pyproject("pkg", "2.0", [])})
    meta = {"pyproject.toml": pyproject("users", "0.1", ["pkg>=1"])}
    write(tmp_path / "deps" / "users", {**meta, "users/__init__.py": BREAK, "tests/test_users.py": BREAK})
    meta = {"pyproject.toml": pyproject("owncode", "0.1", ["pkg>=1"])}
    write(
        tmp_path / "deps" / "owncode",
        {**meta, "owncode/__init__.py": CLEAN, "tests/test_it.py": BREAK, "examples/demo.py": BREAK},
    )
    return tmp_path


def test_the_breaks_are_real_under_cpython(world: Path) -> None:
    """The oracle: the users' import fails under the new pkg, the own-code project's does not."""

    def runs(name: str) -> subprocess.CompletedProcess[str]:
        path = os.pathsep.join([str(world / "new"), str(world / "deps" / name)])
        return subprocess.run([sys.executable, "-c", f"import {name}"], env={**os.environ, "PYTHONPATH": path},
                              capture_output=True, text=True, check=False)  # fmt: skip

    assert "unexpected keyword argument 'kv_cache_specs'" in runs("users").stderr
    assert runs("owncode").returncode == 0


def test_every_finding_carries_its_role_and_role_filters(world: Path) -> None:
    request = AuditRequest(
        str(world / "deps" / "owncode"), f"pkg@{world / 'new'}", old=f"pkg@{world / 'old'}",
        cache_dir=world / "cache", offline=True,
    )  # fmt: skip
    result = audit(request)
    assert sorted((f.location.path, f.role) for f in result.findings) == [
        ("examples/demo.py", "examples"), ("tests/test_it.py", "tests")]  # fmt: skip
    assert all(f.as_dict()["role"] for f in result.findings)
    log = json.loads(sarif.render(result))
    assert {r["properties"]["role"] for r in log["runs"][0]["results"]} == {"examples", "tests"}
    from dataclasses import replace

    only = audit(replace(request, roles=frozenset({"shipped"})))
    assert only.findings == []
    assert any("2 findings in other files not reported (1 in examples, 1 in tests)" in n for n in only.notes)


def test_role_option_of_audit(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["audit", str(world / "deps" / "users"), "--against", f"pkg@{world / 'new'}", "--from",
            f"pkg@{world / 'old'}", "--cache-dir", str(world / "cache"), "--offline", "--format", "json"]  # fmt: skip
    assert main([*args, "--role", "shipped"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["location"]["path"], f["role"]) for f in data["findings"]] == [
        ("users/__init__.py", "shipped")
    ]
    assert main([*args, "--role", "tests,examples"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["location"]["path"], f["role"]) for f in data["findings"]] == [
        ("tests/test_users.py", "tests")
    ]
    assert main([*args, "--role", "nope"]) == 2
    assert "unknown role 'nope'" in capsys.readouterr().err


def test_impact_buckets_users_and_own_code(world: Path) -> None:
    request = ImpactRequest(
        f"pkg@{world / 'new'}", tuple(read_dependents(world / "deps")), old=f"pkg@{world / 'old'}",
        results_dir=world / "results", cache_dir=world / "cache", offline=True, workers=1,
    )  # fmt: skip
    result = run_impact(request)
    rows = {row["dependent"]: row for row in result.rows}
    assert rows["users"]["status"] == rows["owncode"]["status"] == "broken"
    assert rows["users"]["reach"] == "users" and rows["users"]["roles"] == {"shipped": 1, "tests": 1}
    assert rows["owncode"]["reach"] == "own-code" and rows["owncode"]["roles"] == {"examples": 1, "tests": 1}
    assert result.as_dict()["buckets"]["breaks-users"] == ["users"]
    assert result.as_dict()["buckets"]["breaks-own-code"] == ["owncode"]
    text = impact_text.render(result)
    lines = text.splitlines()
    assert lines[1].startswith("  Breaks its users (an error in code the dependent ships): 1: users")
    assert lines[2].startswith("  Breaks only its own tests, examples or scripts: 1: owncode")
    assert "      users/__init__.py:3 AD101 (shipped)" in lines
    assert "      examples/demo.py:3 AD101 (examples)" in lines
    assert "Breaks its users" in impact_markdown.render(result).split("|")[0]
    from apidrift.reports import impact_html

    page = impact_html.render(result)
    assert page.index("Breaks its users") < page.index("broken 2")
    assert '<span class="muted">[examples]</span>' in page


def test_drop_in_aliases_are_said_in_the_row(tmp_path: Path) -> None:
    """`import otherpkg as pkg` binds another distribution to the upstream's name: its uses are not pkg's
    (the audit cannot see them), and the row says how many; a `try`/`except ImportError` fallback to
    pkg is said apart."""
    from apidrift.auditor.bump import drop_in_aliases

    write(tmp_path / "old", {"pkg/__init__.py": OLD_PKG, "pyproject.toml": pyproject("pkg", "1.0", [])})
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG, "pyproject.toml": pyproject("pkg", "2.0", [])})
    alias = "import otherpkg as pkg\n\npkg.get_config(1, 2, kv_cache_specs=3)\npkg.connect()\n"
    fallback = "try:\n    import otherpkg as pkg\nexcept ImportError:\n    import pkg\n\npkg.connect()\n"
    write(
        tmp_path / "deps" / "dropin",
        {"pyproject.toml": pyproject("dropin", "0.1", ["pkg>=1"]), "dropin/__init__.py": alias,
         "dropin/cli.py": fallback, "dropin/other.py": "import os.path as pkg\nimport dropin.cli as pkg\n"},
    )  # fmt: skip
    found = drop_in_aliases(tmp_path / "deps" / "dropin", frozenset({"pkg"}), frozenset({"dropin"}))
    assert [item.sentence() for item in found] == [
        "uses otherpkg as pkg: 2 uses of `pkg.` in 1 file not audited; 1 use in 1 file that falls back to "
        "pkg: otherpkg's when it is installed"
    ]
    request = ImpactRequest(
        f"pkg@{tmp_path / 'new'}", tuple(read_dependents(tmp_path / "deps")), old=f"pkg@{tmp_path / 'old'}",
        results_dir=tmp_path / "results", cache_dir=tmp_path / "cache", offline=True, workers=1,
    )  # fmt: skip
    row = run_impact(request).rows[0]
    assert row["aliases"] == [item.sentence() for item in found]
    assert "uses otherpkg as pkg: 2 uses" in impact_text.detail(row)


def test_a_release_that_requires_the_upstream_under_another_name_is_said(tmp_path: Path) -> None:
    """`import otherpkg as pkg` in a release that requires pkg: not "none of its releases requires pkg"."""
    from localindex import LocalIndex, wheel_bytes

    index = LocalIndex(tmp_path / "index")
    source = "import otherpkg as pkg\n\npkg.connect()\n"
    index.add("dropin", "dropin-1.0-py3-none-any.whl",
              wheel_bytes("dropin", "1.0", {"dropin/__init__.py": source}, ["pkg>=1"]))  # fmt: skip
    index.add("pkg", "pkg-2.0-py3-none-any.whl", wheel_bytes("pkg", "2.0", {"pkg/__init__.py": NEW_PKG}, []))
    with index:
        result = audit(
            AuditRequest("dropin==1.0", "pkg==2.0", cache_dir=tmp_path / "cache", index_url=index.url)
        )
    assert result.unchecked is not None and "does not use pkg" in result.unchecked
    assert result.dependents[0] == "dropin==1.0 requires pkg>=1"
    assert any("dropin==1.0 requires pkg>=1 but no file imports it by name" in n for n in result.notes)
    assert not any(n.startswith("none of") for n in result.notes)
