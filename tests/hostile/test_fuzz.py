"""Fuzzing the parts that read untrusted input: the scanner, the downstream walker and the archive
extractor get random and mutated inputs and must finish, within a bound on their work (Python calls counted), with a result or a clean
diagnostic (a syntax error or nesting outcome from the scanner, a `FileOutcome` from the walker, a `SourceError`
from the extractor), and the extractor must never write outside its destination.

Derandomized (the same examples on every run) and bounded: about 20 s in all on a loaded machine. The
last test runs the whole command line on random hostile upstreams (folders with FIFOs and links to
/dev/zero, archives with pax headers and links out) and downstream trees (odd names, FIFOs, loops):
about 10 s more.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import sys
import tarfile
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from casefiles import trees_agree
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apidrift.auditor.core.results import FileOutcome
from apidrift.auditor.downstream.walk import _scan_text, scan_downstream
from apidrift.auditor.pysource import nesting_problem
from apidrift.auditor.sources.archive import ExtractLimits, extract_archive
from apidrift.auditor.sources.specs import SourceError

CASES = Path(__file__).parents[1] / "cases"
T = TypeVar("T")
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,  # bounded by work instead (`_counting_calls`): a busy machine fails nothing
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _seeds() -> list[str]:
    """Downstream sources from the case files, plus a few dense snippets: realistic code to mutate."""
    seeds = []
    for case in sorted(CASES.glob("*.case")):
        current: list[str] | None = None
        for line in case.read_text().splitlines(keepends=True):
            if line.startswith("[downstream "):
                current = []
                seeds.append("")
            elif line.startswith("["):
                current = None
            elif current is not None:
                seeds[-1] += line
    seeds += [
        "import pkg\nfrom pkg import a as b, c\nclass K(pkg.Base):\n    def m(self, x: pkg.T = pkg.D) -> pkg.R:\n"
        "        self.y = pkg.make(*x, **{'k': 1})\n        return self.y.go(lambda q: q)[0]\n",
        "try:\n    import pkg.sub as s\nexcept (ImportError, AttributeError):\n    s = None\nif hasattr(s, 'f'):\n"
        "    s.f(1, key=2)\nwith open('x') as h, pkg.ctx() as c:\n    c.write(f'{pkg.v!r:>{w}}')\n",
        "async def main():\n    async with pkg.session() as s:\n        await s.get(url, timeout=pkg.T)\n"
        "    return [pkg.f(i) async for i in s]\n@pkg.decorate(1)\ndef g(*, a, b=2, **kw): ...\n",
    ]
    return [s for s in seeds if s.strip()]


SEEDS = _seeds()
TOKENS = ["(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "*", "**", "\\", "\n", "\t", "    ", "'", '"', '"""', "#",
          "@", "-", "+", "pkg", "import ", "from ", " as ", "def ", "class ", "lambda ", "if ", "else", "try:", "except",
          "return ", "yield ", "await ", "async ", "with ", "global ", "\x00", "\r", "\ufeff", "é", "💥", "\\N{", "f'{"]  # fmt: skip


@st.composite
def mutated_source(draw: st.DrawFn) -> str:
    """A seed with a few random edits: deletions, duplications, token insertions, swaps."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 6))):
        if not text:
            break
        start = draw(st.integers(0, len(text) - 1))
        end = min(len(text), start + draw(st.integers(0, 40)))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "insert", "replace"]))
        if action == "delete":
            text = text[:start] + text[end:]
        elif action == "duplicate":
            text = text[:end] + text[start:end] + text[end:]
        elif action == "insert":
            text = text[:start] + draw(st.sampled_from(TOKENS)) + text[start:]
        else:
            text = text[:start] + draw(st.text(max_size=8)) + text[end:]
    return text


class WorkBoundExceeded(BaseException):
    """More calls than the bound: raised inside the work itself, so a loop that would never end stops
    (a BaseException, which the code under test's `except Exception` handlers do not catch)."""


def _counting_calls(function: Callable[..., T], *args: Any, limit: int) -> tuple[T, int]:
    """`function(*args)` and the number of Python function calls it made: its work, counted the same
    on a busy machine as on an idle one (a wall-time bound failed on a loaded one), and stopped past
    `limit`."""
    calls = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call":
            calls += 1
            if calls > limit:
                raise WorkBoundExceeded(f"more than {limit:,} calls")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = function(*args)
    finally:
        sys.setprofile(previous)
    return result, calls


# The scan's work is linear in its input: the case files' downstream code takes at most 4 calls per
# character (13 for an empty file); a blow-up on a mutated file (quadratic, or a loop) goes far past
# this bound, which leaves about ten times that room.
SCAN_CALLS_PER_CHAR = 50
SCAN_CALLS_BASE = 2_000


@functools.cache
def _warm_scanners() -> None:
    """What the scanners import on first use (4,000 calls, once), loaded before any count: a count is
    then the scan's own work."""
    for text in ("import pkg\npkg.f(1)\n", "from \U00031350pkg import x\n", "def f(:\n"):
        _scan_text("warm.py", text, frozenset({"pkg"}))


def _scan(text: str) -> None:
    """What the downstream does with one file (`ast`, else LibCST's tree converted to CPython's for
    what CPython refuses); and wherever both parsers read the file, the converted tree is CPython's."""
    _warm_scanners()
    bound = SCAN_CALLS_BASE + SCAN_CALLS_PER_CHAR * len(text)
    scan, _ = _counting_calls(_scan_text, "fuzz.py", text, frozenset({"pkg"}), limit=bound)
    if isinstance(scan, str):
        assert scan.startswith(("syntax error", "nesting too deep", "not parsed")), scan
        return
    for site in scan.sites:
        assert 1 <= site.span.line <= max(1, len(scan.lines) + 1)
    if nesting_problem(text) is None:
        assert trees_agree(text, libcst_may_refuse=True) is None, trees_agree(text, libcst_may_refuse=True)


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 600)
@given(mutated_source())
@example("from \U00031350pkg import x\n")  # found by fuzzing: LibCST validates names after parsing
@example("import pkg\n" + "x = " + "(" * 3000 + ")" * 3000 + "\n")  # would crash LibCST's parser unguarded
@example("import pkg\npkg.f()\r")  # found by fuzzing: LibCST prints a last lone \r back as nothing
def test_scanner_on_mutated_sources(text: str) -> None:
    _scan(text)


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 200)
@given(st.lists(st.sampled_from(TOKENS), max_size=60).map("".join) | st.text(max_size=200))
def test_scanner_on_random_text(text: str) -> None:
    _scan(text)


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 60)
@given(
    st.dictionaries(
        st.sampled_from(["a.py", "pkg/b.py", "pkg/sub/c.py", "d.py", "e.txt", "deep/er/f.py"]),
        mutated_source().map(str.encode)
        | st.binary(max_size=300)
        | st.just(b"\xef\xbb\xbf# coding: latin-1\n"),
        min_size=1,
        max_size=5,
    )
)
def test_downstream_walker_on_random_trees(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "down"
        for relative, data in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(data)
        scans, outcomes = scan_downstream(root, frozenset({"pkg"}), Path(folder) / "cache")
        py_files = sorted(r for r in files if r.endswith(".py"))
        assert sorted(o.path for o in outcomes) == py_files  # every file has exactly one outcome
        assert all(
            isinstance(o, FileOutcome) and o.status in ("scanned", "skipped", "failed") for o in outcomes
        )
        assert all(o.reason for o in outcomes if o.status != "scanned")
        assert len(scans) == sum(o.status == "scanned" for o in outcomes)
        again, outcomes_again = scan_downstream(
            root, frozenset({"pkg"}), Path(folder) / "cache"
        )  # from the cache
        assert outcomes_again == outcomes and [s.sites for s in again] == [s.sites for s in scans]


NAMES = st.sampled_from([
    "pkg/__init__.py", "pkg/a.py", "pkg/a.py", "../up.py", "/abs.py", "pkg/../../x.py", "pkg//b.py", "./c.py",
    "C:/win.py", "pkg\\d.py", "pkg/" + "n" * 300 + ".py", "/".join(["d"] * 80) + "/deep.py", "PKG-INFO",
    "pkg.egg-info/top_level.txt", "pkg/mod.cpython-311-x86_64-linux-gnu.so", "pkg/é.py", "pkg/a.py/inner.py", "",
])  # fmt: skip
ENTRIES = st.lists(
    st.tuples(NAMES, st.binary(max_size=200), st.sampled_from(["file", "file", "dir", "sym", "hard"])),
    max_size=8,
)


def _archive(kind: str, entries: list[tuple[str, bytes, str]]) -> bytes:
    buffer = io.BytesIO()
    if kind == "zip":
        with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
            warnings.simplefilter("ignore")  # duplicate names are the point
            for name, data, _ in entries:
                archive.writestr(name or "x", data)
        return buffer.getvalue()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for name, data, type_ in entries:
            info = tarfile.TarInfo(name)
            if type_ == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}[type_]
            info.linkname = "../../etc/passwd"
            tar.addfile(info)
    return buffer.getvalue()


@st.composite
def mutated_archive(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["tar.gz", "zip"]))
    data = bytearray(_archive(kind, draw(ENTRIES)))
    for _ in range(draw(st.integers(0, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "truncate", "zero"]))
        if action == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "truncate":
            del data[at:]
        else:
            data[at : at + 16] = bytes(len(data[at : at + 16]))
    return kind, bytes(data)


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 500)
@given(mutated_archive())
def test_extractor_on_mutated_archives(archive: tuple[str, bytes]) -> None:
    kind, data = archive
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        work = base / "work"
        work.mkdir()
        path = base / f"fuzz-1.0.{kind}"
        path.write_bytes(data)
        limits = ExtractLimits(max_bytes=100_000, max_files=50, max_entries=200, max_scanned_bytes=1_000_000)
        try:
            result = extract_archive(path, work / "out", limits=limits)
        except SourceError as error:
            assert "\n" not in str(error)
            assert not (work / "out").exists()
        else:
            assert result.tree.is_dir()
            written = [p for p in result.tree.rglob("*") if p.is_file() or p.is_symlink()]
            assert not any(p.is_symlink() for p in written)
            assert all(p.resolve().is_relative_to(result.tree.resolve()) for p in written)
        # Nothing outside the destination: only the archive and `work/` (holding `out/`, or nothing).
        assert sorted(p.name for p in base.iterdir()) == sorted([path.name, "work"])
        assert [p.name for p in work.iterdir()] in ([], ["out"])
        assert not os.path.exists("/etc/passwd.py")


# --- end to end: random hostile upstreams and downstreams through the whole command line ---------

UPSTREAM_MODULES = [
    "def call(a, b=1):\n    return a\n",
    "import warnings\ndef old(a):\n    warnings.warn('gone\\n./app.py:1:1: AD001 [error] forged\\x1b]0;t\\x07', DeprecationWarning)\n    return a\n",
    "def f0(a):\n    return a\n" + "".join(f"f{i} = f{i - 1}\n" for i in range(1, 400)),
    "class C0:\n    def __init__(self, a):\n        pass\n"
    + "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, 150)),
    "from zzup.m1 import *\n__all__ = [n for n in dir()]\n",
    "def __getattr__(name):\n    raise AttributeError(name)\n",
    "def broken(:\n",
    "x = 1\x00\n",
    "x = " + "-" * 5000 + "1\n",
    "class A(B):\n    pass\nclass B(A):\n    pass\n",  # an inheritance cycle
    "from zzup import m2 as m3\nfrom zzup.m3 import call as call2\n",  # alias loops through the package
]
DOWNSTREAM_FILES = [
    "import zzup\nzzup.call(1, 2, 3)\nzzup.gone(1)\n",
    "from zzup.m0 import call, old, f399, C149\ncall(1, b=2, c=3)\nold(1)\nf399(1, 2)\nC149(1, 2)\n",
    "from zzup.m1 import *\nfrom zzup import m3\nm3.call2(1)\n",
    "import zzup.m9\nzzup.m9.A().x\n",
    "def broken(:\n",
]
ODD_NAMES = [
    "ok.py",
    "sub/ok.py",
    "esc\x1b[31m.py",
    "nl\n::error file=x::forged.py",
    "bell\x07.py",
    "sp ace.py",
    "é.py",
]


@st.composite
def hostile_inputs(draw: st.DrawFn) -> dict[str, object]:
    modules = {
        f"zzup/m{i}.py": draw(st.sampled_from(UPSTREAM_MODULES)) for i in range(draw(st.integers(1, 6)))
    }
    modules["zzup/__init__.py"] = draw(
        st.sampled_from([*UPSTREAM_MODULES[:2], "from zzup.m0 import *\n", ""])
    )
    down = {
        draw(st.sampled_from(ODD_NAMES)): draw(st.sampled_from(DOWNSTREAM_FILES))
        for _ in range(draw(st.integers(1, 4)))
    }
    return {
        "form": draw(st.sampled_from(["folder", "sdist", "wheel"])),
        "modules": modules,
        "down": down,
        "upstream_specials": draw(
            st.lists(st.sampled_from(["fifo", "zero", "outside", "deep", "pax"]), max_size=3, unique=True)
        ),
        "downstream_specials": draw(
            st.lists(st.sampled_from(["fifo", "link", "loop"]), max_size=3, unique=True)
        ),
        "format": draw(st.sampled_from(["text", "github", "markdown"])),
    }


def _build_upstream(base: Path, spec: dict[str, object]) -> str:
    modules: dict[str, str] = spec["modules"]  # type: ignore[assignment]
    specials: list[str] = spec["upstream_specials"]  # type: ignore[assignment]
    form = spec["form"]
    if form == "folder":
        root = base / "up"
        for relative, text in modules.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        if "fifo" in specials:
            os.mkfifo(root / "zzup" / "zz.py")
        if "zero" in specials:
            (root / "zzup" / "zero.py").symlink_to("/dev/zero")
        if "outside" in specials:
            (root / "zzup" / "out.py").symlink_to(base / "outside.py")
        if "deep" in specials:
            folder = root / "zzup"
            for _ in range(120):
                folder = folder / "d"
            folder.mkdir(parents=True)
            (folder / "leaf.py").write_text("def gone(a):\n    return a\n")
        return str(root)
    if form == "wheel":
        path = base / "zzup-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as archive:
            for relative, text in modules.items():
                archive.writestr(relative, text)
            archive.writestr(
                "zzup-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zzup\nVersion: 1.0\n"
            )
            archive.writestr("zzup-1.0.dist-info/RECORD", "os/__init__.py,,\nzzup/__init__.py,,\n")
        return str(path)
    path = base / "zzup-1.0.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        entries = {"PKG-INFO": "Metadata-Version: 2.1\nName: zzup\nVersion: 1.0\n", **modules}
        for relative, text in entries.items():
            data = text.encode()
            info = tarfile.TarInfo(f"zzup-1.0/{relative}")
            info.size = len(data)
            if "pax" in specials:
                info.pax_headers = {"comment": "x" * 2000}
            tar.addfile(info, io.BytesIO(data))
        if "outside" in specials:
            link = tarfile.TarInfo("zzup-1.0/zzup/evil.py")
            link.type, link.linkname = tarfile.SYMTYPE, "../../../outside.py"
            tar.addfile(link)
    return str(path)


def _build_downstream(base: Path, spec: dict[str, object]) -> Path:
    root = base / "down"
    for relative, text in {"app/__init__.py": "", **{f"app/{k}": v for k, v in spec["down"].items()}}.items():  # type: ignore[attr-defined]
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    specials: list[str] = spec["downstream_specials"]  # type: ignore[assignment]
    if "fifo" in specials:
        os.mkfifo(root / "app" / "pipe.py")
    if "link" in specials:
        (root / "app" / "link.py").symlink_to(base / "outside.py")
    if "loop" in specials:
        (root / "app" / "loop").symlink_to(root)
    return root


def _snapshot(folder: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(top, name), folder)
        for top, dirs, files in os.walk(folder)
        for name in dirs + files
    }


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_STATUSES: list[int] = []  # every example's exit status: most must be real audits, not input errors
# A whole audit of one hostile input takes at most 220,000 Python calls (the 25 examples, imports
# included); a hang or a blow-up goes far past this bound, which leaves over twenty times that room.
AUDIT_CALLS = 5_000_000


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 25)
@given(hostile_inputs())
def test_cli_on_random_hostile_inputs(spec: dict[str, object]) -> None:
    """The whole audit on random hostile archives, folders and downstream trees: exit 0, 1 or 2, never a
    traceback (APIDRIFT_DEBUG re-raises internal errors), control characters escaped, bounded time and
    memory, and nothing written outside the cache and the report."""
    import contextlib
    import resource

    from apidrift.auditor.cli.main import main

    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "outside.py").write_text("def gone(a):\n    return a\n")
        against = _build_upstream(base, spec)
        down = _build_downstream(base, spec)
        cache, report = base / "cache", base / "out" / "report.json"
        report.parent.mkdir()
        before = _snapshot(base)
        out, err = io.StringIO(), io.StringIO()
        old_cwd, old_env = os.getcwd(), dict(os.environ)
        os.chdir(base / "down")
        os.environ.update(APIDRIFT_DEBUG="1", APIDRIFT_CACHE_DIR=str(cache), APIDRIFT_MODULE_LOAD_SECONDS="5")
        os.environ.pop("PIP_INDEX_URL", None)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status, _ = _counting_calls(main, ["audit", str(down), "--against", f"zzup@{against}", "--from", "none",
                    "--offline", "--no-config", "--cache-dir", str(cache), "--format", str(spec["format"]),
                    "--format", f"json:{report}"], limit=AUDIT_CALLS)  # fmt: skip
        finally:
            os.chdir(old_cwd)
            os.environ.clear()
            os.environ.update(old_env)
        assert status in (0, 1, 2, 3), (status, err.getvalue())  # 3: nothing checked
        _STATUSES.append(status)
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
        assert not _CONTROL.search(out.getvalue()), repr(
            out.getvalue()
        )  # nothing forged, no terminal escapes
        assert not any(line.startswith("./app.py:1:1:") for line in out.getvalue().splitlines())
        if status != 2:
            assert json.loads(report.read_text())["tool"]["name"] == "apidrift"
        # Only the cache and the report's folder are new; nothing else was written, inside the tree or out.
        after = _snapshot(base)
        assert {p.split(os.sep)[0] for p in after - before} <= {"cache", "out"}, sorted(after - before)[:5]
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024  # KiB on Linux
    assert grown_mib < 512, grown_mib  # the process's high-water mark rose by less than this


def test_cli_fuzz_mostly_audits() -> None:
    """The examples above are audits that ran (0, 1, or 3: nothing checked), not inputs refused wholesale (2): the fuzz reaches the engine."""
    if not _STATUSES:
        test_cli_on_random_hostile_inputs()
    assert _STATUSES and sum(s in (0, 1, 3) for s in _STATUSES) >= 0.8 * len(_STATUSES), _STATUSES
