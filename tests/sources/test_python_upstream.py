"""Python itself as the upstream: `--against python==3.13`, the standard library read from typeshed's stubs.

Every break a test claims is run under the real interpreters when they are on this machine (pyenv's
CPython builds under ~/.pyenv/versions; skipped, not failed, where one is missing): the line works under
the version written for and fails under the one audited against.
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor.core.results import AuditResult
from apidrift.auditor.sources import stdlib
from apidrift.auditor.sources.specs import NameSpec, PythonSpec, SpecError, parse_spec
from apidrift.auditor.sources.written_for import _lower_bound, choose_old_python
from tests.localindex import LocalIndex, core_metadata

PYENV = Path.home() / ".pyenv" / "versions"


def interpreter(version: str) -> Path | None:
    """pyenv's CPython `version` (3.X), the newest patch release there; None when absent."""
    found = sorted(PYENV.glob(f"{version}.*/bin/python{version}")) if PYENV.is_dir() else []
    return found[-1] if found else None


def runs(version: str, code: str) -> bool:
    """Whether `code` runs without an exception under CPython `version` (skips the test if it is absent).
    Only our own one-line snippets run, in a fresh interpreter with no site-packages (`-I -S`)."""
    python = interpreter(version)
    if python is None:
        pytest.skip(f"CPython {version} is not installed under {PYENV}")
    done = subprocess.run(
        [str(python), "-I", "-S", "-W", "ignore", "-c", code], capture_output=True, timeout=60, check=False
    )
    return done.returncode == 0


def confirm(old: str, new: str, code: str) -> None:
    """The break is real: `code` runs under `old` and fails under `new`."""
    assert runs(old, code), f"{code!r} fails under Python {old} already"
    assert not runs(new, code), f"{code!r} still runs under Python {new}"


# --- specs ---------------------------------------------------------------------------------------


def test_python_is_a_spec_of_the_upstream() -> None:
    assert parse_spec("python==3.13", "upstream") == PythonSpec("3.13", "python==3.13")
    assert parse_spec("Python == 3.12.1", "upstream") == PythonSpec("3.12.1", "Python == 3.12.1")
    assert parse_spec("python", "upstream") == PythonSpec(None, "python")
    assert isinstance(
        parse_spec("python", "downstream"), NameSpec
    )  # a downstream named python: a folder or a name
    for bad in ("python==2.7", "python==3", "python==3.x", "python==3.13.*"):
        with pytest.raises(SpecError):
            parse_spec(bad, "upstream")


@pytest.mark.parametrize(
    ("requires", "lowest"),
    [(">=3.8", "3.8"), (">=3.8, <4", "3.8"), (">3.8", "3.9"), ("~=3.10", "3.10"), (">=3.7.1", "3.7"),
     (">=3.9,!=3.10.*", "3.9"), ("<3.13", None), ("!=3.9.*", None), ("not a specifier", None)],
)  # fmt: skip
def test_version_written_for_is_the_requires_python_lower_bound(requires: str, lowest: str | None) -> None:
    assert _lower_bound(requires) == lowest


def test_version_written_for_without_requires_python_is_the_running_interpreter() -> None:
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    choice = choose_old_python(None, "pkg", None, "3.99")
    assert choice.spec == f"python=={running}" and "apidrift runs under" in choice.note
    assert choose_old_python(None, "pkg", ">=3.13", "3.13").spec is None  # not older than the target
    assert choose_old_python("python==3.10", "pkg", ">=3.8", "3.13").spec == "python==3.10"


# --- deciding version tests, against Python's own comparison -------------------------------------

TESTS = [
    "sys.version_info >= (3, 12)",
    "sys.version_info < (3, 12)",
    "sys.version_info[:2] == (3, 11)",
    "sys.version_info > (3, 11)",
    "sys.version_info <= (3, 11)",
    "sys.version_info != (3, 10)",
    "sys.version_info >= (3,)",
    "sys.version_info == (3, 11)",
    "sys.version_info[:2] <= (3, 11)",
    "sys.version_info >= (3, 11, 2)",
    "sys.version_info[:2] >= (3, 11, 2)",
    "not sys.version_info >= (3, 13)",
    "sys.version_info >= (3, 10) and sys.version_info < (3, 13)",
    "sys.version_info < (3, 10) or sys.version_info >= (3, 13)",
    'sys.platform == "win32" and sys.version_info >= (3, 12)',
    'sys.platform != "win32" or sys.version_info >= (3, 12)',
    'sys.platform == "linux"',
]


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("minor", range(9, 15))
def test_a_decided_test_is_what_python_computes(test: str, minor: int) -> None:
    """Where `decide` gives a value, it is the one Python computes for every patch release of that
    version on every platform; it gives none where the value depends on the platform."""
    decided = stdlib.decide(ast.parse(test, mode="eval").body, (3, minor))
    values = set()
    for micro in (0, 1, 2, 5):
        for platform in ("linux", "win32", "darwin"):
            fake = SimpleNamespace(version_info=(3, minor, micro, "final", 0), platform=platform)
            values.add(eval(test, {"sys": fake}))  # our own literal expressions only
    if decided is None:
        assert len(values) == 2 and ("platform" in test or "(3, 11, 2)" in test)
    else:
        assert values == {decided}


def test_a_stub_keeps_the_branch_its_version_takes_and_every_platform() -> None:
    text = (
        "import sys\n"
        "class TestCase:\n"
        "    def assertEqual(self, first, second): ...\n"
        "    if sys.version_info < (3, 12):\n"
        "        assertEquals = assertEqual\n"
        'if sys.platform == "win32":\n'
        "    def getch() -> bytes: ...\n"
        "    if sys.version_info >= (3, 12):\n"
        "        def new_on_windows() -> None: ...\n"
    )
    old = stdlib.materialize_stub(text, (3, 11))
    new = stdlib.materialize_stub(text, (3, 12))
    assert "assertEquals = assertEqual" in old and "assertEquals" not in new
    assert "sys.platform == 'win32'" in new and "def getch" in new and "def getch" in old
    assert "new_on_windows" in new and "new_on_windows" not in old


def test_versions_file_ranges_and_submodules() -> None:
    table = stdlib.parse_versions(
        "# comment\nasyncore: 3.0-3.11\ndistutils: 3.0-3.11\ndistutils.command.bdist_msi: 3.0-3.10\n"
        "tomllib: 3.11-\nasyncio: 3.4-\n"
    )
    assert stdlib.module_range("distutils.command.bdist_msi", table) == ((3, 0), (3, 10))
    assert stdlib.module_range("distutils.version", table) == ((3, 0), (3, 11))  # as its parent
    assert stdlib.module_range("nosuch", table) is None
    assert stdlib.in_range((3, 11), table["asyncore"]) and not stdlib.in_range((3, 12), table["asyncore"])
    assert stdlib.in_range((3, 13), table["tomllib"]) and not stdlib.in_range((3, 10), table["tomllib"])


# --- the whole audit, with the stubs served by a package index on this machine --------------------

# A typeshed in miniature, as the pinned carrier ships it: each entry modelled on typeshed's own stub.
MINI_STUBS = {
    "VERSIONS": "asyncore: 3.0-3.11\nconfigparser: 3.0-\nimp: 3.0-3.11\nmsvcrt: 3.0-\nos: 3.0-\n"
    "sys: 3.0-\ntomllib: 3.11-\nunittest: 3.0-\n",
    "asyncore.pyi": "def loop(timeout: float = 30.0) -> None: ...\n",
    "imp.pyi": "def reload(module: object) -> object: ...\n",
    "configparser.pyi": "import sys\nfrom typing_extensions import deprecated\n"
    "class RawConfigParser:\n    def read_string(self, string: str) -> None: ...\n"
    "class ConfigParser(RawConfigParser): ...\nif sys.version_info < (3, 12):\n"
    '    @deprecated("Deprecated since Python 3.2; removed in Python 3.12. Use `ConfigParser` instead.")\n'
    "    class SafeConfigParser(ConfigParser): ...\n",
    "msvcrt.pyi": 'import sys\nif sys.platform == "win32":\n    def getch() -> bytes: ...\n',
    "os/__init__.pyi": "def getcwd() -> str: ...\n",
    "sys/__init__.pyi": "platform: str\n",
    "tomllib.pyi": "def loads(s: str) -> dict: ...\n",
    "unittest/__init__.pyi": "from unittest.case import TestCase as TestCase\n",
    "unittest/case.pyi": "import sys\nclass TestCase:\n    def assertEqual(self, first: object, second: object) -> None: ...\n"
    "    if sys.version_info < (3, 12):\n        assertEquals = assertEqual\n"
    "    def nosuch_in_any_version_is_not_declared(self) -> None: ...\n",
}

DOWNSTREAM = """\
import asyncore
import imp
import msvcrt
import os
import unittest
from configparser import ConfigParser, SafeConfigParser


class T(unittest.TestCase):
    def test_it(self):
        self.assertEquals(1, 1)
        self.assertEqual(1, 1)
        self.assertNotIn(1, [])


def use():
    imp.reload(os)
    msvcrt.getch()
    os.getcwd()
    return SafeConfigParser(), ConfigParser()
"""

# Each error the audit claims, by line, and the snippet that shows it under the real interpreters.
MINI_BREAKS = {
    (1, "AD001"): "import asyncore",
    (2, "AD001"): "import imp",
    (6, "AD002"): "from configparser import SafeConfigParser",
    (11, "AD004"): "import unittest; unittest.TestCase.assertEquals",
}


def mini_carrier() -> bytes:
    name, version = stdlib.TYPESHED_CARRIER
    buffer = io.BytesIO()
    stem = f"{name}-{version}"
    with zipfile.ZipFile(buffer, "w") as zipped:
        for path, text in MINI_STUBS.items():
            zipped.writestr("/".join((*stdlib.STUBS_FOLDER, path)), text)
        zipped.writestr(f"{stem}.dist-info/METADATA", core_metadata(name, version, []))
        zipped.writestr(f"{stem}.dist-info/RECORD", "")
    return buffer.getvalue()


def errors_of(result: AuditResult) -> set[tuple[int, str]]:
    return {(f.location.line, f.code) for f in result.findings if f.severity.value == "error"}


@pytest.fixture(scope="module")
def mini_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    name, version = stdlib.TYPESHED_CARRIER
    with LocalIndex(tmp_path_factory.mktemp("index")) as index:
        index.add(name, f"{name}-{version}-py3-none-any.whl", mini_carrier())
        yield index


def project(root: Path, source: str, requires_python: str | None = ">=3.8") -> str:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(source, encoding="utf-8")
    requires = f'requires-python = "{requires_python}"\n' if requires_python else ""
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "pkg"\nversion = "1"\n{requires}', encoding="utf-8"
    )
    return str(root)


def test_removals_are_errors_and_each_one_breaks_under_the_new_interpreter(
    tmp_path: Path, mini_index: LocalIndex
) -> None:
    downstream = project(tmp_path / "down", DOWNSTREAM)
    request = AuditRequest(downstream, "python==3.12", cache_dir=tmp_path / "cache", index_url=mini_index.url)
    result = audit(request)
    assert errors_of(result) == set(MINI_BREAKS)
    assert any("requires-python `>=3.8`" in note for note in result.notes)  # the version written for, said so
    # msvcrt (another platform's), the name no version declares, tomllib (newer): no finding at all
    assert not [f for f in result.findings if f.location.line in (13, 18)]
    for (_line, _code), code in MINI_BREAKS.items():
        confirm("3.11", "3.12", code)
    # The lines that are not reported run under both.
    for code in (
        "import msvcrt" if sys.platform == "win32" else "import os",
        "import unittest; unittest.TestCase.assertNotIn",
    ):
        assert runs("3.11", code) and runs("3.12", code)


def test_nothing_is_gone_between_a_version_and_itself(tmp_path: Path, mini_index: LocalIndex) -> None:
    downstream = project(tmp_path / "down", DOWNSTREAM, requires_python=">=3.12")
    result = audit(
        AuditRequest(downstream, "python==3.12", cache_dir=tmp_path / "c", index_url=mini_index.url)
    )
    assert errors_of(result) == set()
    assert result.old_upstream is None  # requires-python >=3.12 against 3.12: no older version
    older = audit(
        AuditRequest(
            downstream, "python==3.11", old="python==3.10", cache_dir=tmp_path / "c", index_url=mini_index.url
        )
    )
    assert errors_of(older) == set()  # all of it is still there in 3.11


# --- the real stubs (the pinned carrier from the index) and real packages -------------------------

REACH = """\
import importlib, sys
parts = sys.argv[1].split(".")
for end in range(len(parts), 0, -1):
    try:
        found = importlib.import_module(".".join(parts[:end]))
        break
    except ImportError:
        if end == 1:
            raise
for name in parts[end:]:
    found = getattr(found, name)
"""


def reaches(version: str, symbol: str) -> bool:
    """Whether `symbol` (a module, or a name reached from one by attributes) exists under CPython `version`."""
    python = interpreter(version)
    if python is None:
        pytest.skip(f"CPython {version} is not installed under {PYENV}")
    done = subprocess.run(
        [str(python), "-I", "-S", "-W", "ignore", "-c", REACH, symbol],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode == 0


CONFIRMABLE = {"AD001", "AD002", "AD003", "AD004"}  # a module or a name gone: reached or not


def confirm_errors(result: AuditResult, old: str, new: str) -> set[str]:
    """Every error of the audit is a module or name that `old` has and `new` lacks; their symbols."""
    symbols = set()
    for finding in result.findings:
        if finding.severity.value != "error" or finding.code == "AD901":
            continue  # AD901: a file of the package that this Python cannot parse, no claim about Python
        assert finding.code in CONFIRMABLE, (
            f"{finding.code} at {finding.location.path}:{finding.location.line}"
        )
        symbols.add(finding.symbol)
    for symbol in symbols:
        assert reaches(old, symbol), f"{symbol} is not there in Python {old}"
        assert not reaches(new, symbol), f"{symbol} is still there in Python {new}"
    return symbols


@pytest.mark.network
@pytest.mark.parametrize("new", ["3.12", "3.13"])
def test_real_stubs_find_each_removal_and_each_one_breaks(
    tmp_path: Path, index_cache: Path, new: str
) -> None:
    source = (
        "import imp\nimport asyncore\nimport cgi\nimport telnetlib\nimport msvcrt\nimport winreg\nimport tomllib\n"
        "import unittest\nimport os\nfrom configparser import SafeConfigParser\nfrom distutils.version import LooseVersion\n"
        "\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertEquals(1, 1)\n"
        "        self.assertRegexpMatches('a', 'a')\n        self.assertEqual(1, 1)\n\n\n"
        "def use():\n    os.path.join('a', 'b')\n    msvcrt.getch()\n    winreg.OpenKey\n    imp.reload(os)\n"
    )
    downstream = project(tmp_path / "down", source, requires_python=">=3.11")
    result = audit(AuditRequest(downstream, f"python=={new}", cache_dir=index_cache))
    symbols = confirm_errors(result, "3.11", new)
    expected = {"imp", "asyncore", "configparser.SafeConfigParser", "distutils",
                "unittest.case.TestCase.assertEquals", "unittest.case.TestCase.assertRegexpMatches"}  # fmt: skip
    if new == "3.13":
        expected |= {"cgi", "telnetlib"}
    assert symbols == expected
    assert len([f for f in result.findings if f.severity.value == "error"]) == len(
        expected
    )  # one finding each
    assert not [f for f in result.findings if f.location.line in (5, 6, 7, 23, 24)]  # other platforms', newer


# Packages of the 3.8-3.11 era, audited as released against the Python that removed what they import;
# the errors expected of each (module or name), every one of them confirmed by the real interpreters.
ERA_PACKAGES = {
    "pyftpdlib==1.5.7": {"3.12": {"asynchat", "asyncore"}, "3.13": {"asynchat", "asyncore"}},
    "wheel==0.37.1": {"3.12": {"distutils"}, "3.13": {"distutils"}},
    "webob==1.8.7": {"3.12": set(), "3.13": {"cgi"}},
    "future==0.18.3": {"3.12": {"imp"}, "3.13": {"imp", "uu", "sndhdr", "imghdr", "lib2to3"}},
}


@pytest.mark.network
@pytest.mark.parametrize("new", ["3.12", "3.13"])
@pytest.mark.parametrize("package", sorted(ERA_PACKAGES))
def test_packages_of_their_era_against_a_newer_python(
    package: str, new: str, index_cache: Path, coverage_report: list[str]
) -> None:
    result = audit(AuditRequest(package, f"python=={new}", old="python==3.11", cache_dir=index_cache))
    coverage = result.coverage[0]
    coverage_report.append(f"{package} against python=={new}: {coverage.summary()}")
    assert confirm_errors(result, "3.11", new) == ERA_PACKAGES[package][new]


@pytest.mark.network
@pytest.mark.parametrize(
    "package",
    ["attrs==24.2.0", "click==8.1.8", "httpx==0.28.1", "rich==13.9.4", "urllib3==2.2.3", "django==5.1.4"],
)
def test_a_modern_package_has_no_error_against_3_13(package: str, index_cache: Path) -> None:
    result = audit(AuditRequest(package, "python==3.13", cache_dir=index_cache))
    assert result.old_upstream is not None  # written for its requires-python lower bound, inferred
    assert [f for f in result.findings if f.severity.value == "error"] == []
    assert result.coverage[0].checked >= 100


def test_diff_of_two_pythons_lists_what_went(tmp_path: Path, mini_index: LocalIndex) -> None:
    from apidrift.auditor.engine import DiffRequest, diff_versions

    result = diff_versions(
        DiffRequest("python==3.11", "python==3.12", cache_dir=tmp_path / "c", index_url=mini_index.url)
    )
    removed = {c.path for c in result.changes if c.breaking}
    assert removed == {"asyncore.loop", "imp.reload", "configparser.SafeConfigParser"}
    for path in removed:  # each one is there under 3.11 and gone under 3.12
        assert reaches("3.11", path) and not reaches("3.12", path)
    used = diff_versions(
        DiffRequest(
            "python==3.11",
            "python==3.12",
            used_by=project(tmp_path / "down", DOWNSTREAM),
            cache_dir=tmp_path / "c",
            index_url=mini_index.url,
        )
    )
    breaking = {c.path: c.uses for c in used.changes if c.breaking}
    assert breaking["configparser.SafeConfigParser"] == ("pkg/__init__.py:6", "pkg/__init__.py:20")
    assert "unittest.case.TestCase.assertEquals" in breaking and "imp" in breaking


def test_plan_up_the_pythons_says_since_when_each_break_exists(
    tmp_path: Path, mini_index: LocalIndex
) -> None:
    from apidrift.auditor.plan import PlanRequest, plan

    downstream = project(tmp_path / "down", DOWNSTREAM, requires_python=">=3.10")
    result = plan(
        PlanRequest(downstream, "python", to="3.13", cache_dir=tmp_path / "c", index_url=mini_index.url)
    )
    assert (result.from_version, result.to_version) == ("3.10", "3.13")
    first = {(h.finding.location.line, h.finding.code): h.first_appeared for h in result.histories}
    assert first == dict.fromkeys(MINI_BREAKS, "3.12")
    errors = {row.version: row.errors for row in result.rows if row.errors is not None}
    assert errors["3.10"] == 0 and errors["3.13"] == len(MINI_BREAKS)


ALIASES = """\
import unittest
from configparser import SafeConfigParser


class T(unittest.TestCase):
    def test_it(self):
        self.assertEquals(1, 1)
        self.assertEqual(2, 2)
        SafeConfigParser().read_string("[a]\\nb = 1\\n")


if __name__ == "__main__":
    unittest.main()
"""


def test_an_alias_gone_is_fixed_to_the_name_it_aliased(tmp_path: Path, mini_index: LocalIndex) -> None:
    from apidrift.auditor.fix.codemods import run_fix, write_changes

    downstream = project(tmp_path / "down", ALIASES, requires_python=">=3.11")
    module = tmp_path / "down" / "pkg" / "__init__.py"
    request = AuditRequest(downstream, "python==3.12", cache_dir=tmp_path / "c", index_url=mini_index.url)
    result = run_fix(request, unsafe=True)
    fixes = [f.fix for f in result.audit.findings if f.fix is not None]
    assert [(f.kind.value, f.applicability.value, f.data.as_data()) for f in fixes] == [
        # only the stub says SafeConfigParser adds nothing to ConfigParser: unsafe
        ("rename-attribute", "unsafe", {"old": "SafeConfigParser", "new": "ConfigParser"}),
        ("rename-attribute", "safe", {"old": "assertEquals", "new": "assertEqual"}),
    ]
    script = module.read_text(encoding="utf-8")
    assert runs("3.11", script) and not runs("3.12", script)  # the import fails under 3.12
    write_changes(result)
    fixed = module.read_text(encoding="utf-8")
    assert fixed == script.replace("self.assertEquals(1, 1)", "self.assertEqual(1, 1)").replace(
        "import SafeConfigParser", "import ConfigParser as SafeConfigParser"
    )
    assert runs("3.12", fixed) and runs("3.11", fixed)  # the test case passes under both
    assert [f for f in audit(request).findings if f.severity.value != "info"] == []


@pytest.mark.network
def test_a_keyword_removed_from_asyncio_is_found_in_aiohttp_tests(index_cache: Path) -> None:
    """aiohttp 3.11 (requires-python >=3.9) still passes `loop=` to asyncio.sleep and gather in two
    tests: accepted (deprecated) by 3.9, a TypeError since 3.10."""
    result = audit(AuditRequest("aiohttp==3.11.10", "python==3.13", cache_dir=index_cache))
    errors = {
        (f.location.path, f.location.line, f.code, f.symbol)
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == {
        ("tests/test_proxy_functional.py", 427, "AD101", "asyncio.tasks.sleep"),
        ("tests/test_proxy_functional.py", 433, "AD101", "asyncio.tasks.gather"),
        ("tests/test_proxy_functional.py", 623, "AD101", "asyncio.tasks.sleep"),
        ("tests/test_proxy_functional.py", 629, "AD101", "asyncio.tasks.gather"),
    }
    for call in ("asyncio.sleep(0.2, loop=loop)", "asyncio.gather(asyncio.sleep(0), loop=loop)"):
        code = f"import asyncio\nasync def main():\n    loop = asyncio.get_running_loop()\n    await {call}\nasyncio.run(main())"
        confirm("3.9", "3.13", code)


def test_a_requires_python_bump_is_audited_as_a_python_upgrade(
    tmp_path: Path, mini_index: LocalIndex
) -> None:
    from apidrift.auditor.bump import BumpRequest, run_bump

    root = tmp_path / "down"
    project(root, DOWNSTREAM, requires_python=">=3.11")
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(">=3.11", ">=3.12"))
    result = run_bump(BumpRequest(root, base="HEAD", cache_dir=tmp_path / "c", index_url=mini_index.url))
    [change] = result.changes
    assert (change.display, change.old, change.new, change.status) == ("python", "3.11", "3.12", "audited")
    assert {(f.location.line, f.code) for f in change.findings if f.severity.value == "error"} == set(
        MINI_BREAKS
    )


def test_impact_of_a_python_release_on_dependents(tmp_path: Path, mini_index: LocalIndex) -> None:
    from apidrift.auditor.impact.inputs import read_dependents
    from apidrift.auditor.impact.run import ImpactRequest, run_impact

    project(tmp_path / "deps" / "old-style", DOWNSTREAM)
    project(tmp_path / "deps" / "modern", "import os\nimport tomllib\n\nos.getcwd()\n")
    request = ImpactRequest(
        "python==3.12",
        tuple(read_dependents(tmp_path / "deps")),
        results_dir=tmp_path / "results",
        cache_dir=tmp_path / "c",
        index_url=mini_index.url,
        workers=1,
    )
    result = run_impact(request)
    assert result.old["spec"] == "python==3.11"  # the minor version before, not an index listing
    rows = {row["dependent"]: row for row in result.rows}
    assert {name: row["status"] for name, row in rows.items()} == {"old-style": "broken", "modern": "clean"}
