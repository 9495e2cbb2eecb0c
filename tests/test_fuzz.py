"""Fuzzing the parts that read untrusted input: the scanner, the downstream walker and the archive
extractor get random and mutated inputs and must finish, in bounded time, with a result or a clean
diagnostic (a `ParserSyntaxError` from the scanner, a `FileOutcome` from the walker, a `SourceError`
from the extractor), and the extractor must never write outside its destination.

Derandomized (the same examples on every run) and bounded: about 20 s in all on a loaded machine.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import libcst
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apidrift.auditor.sources.archive import ExtractLimits, extract_archive
from apidrift.auditor.downstream.walk import _scan_text, scan_downstream
from apidrift.auditor.pysource import nesting_problem
from apidrift.auditor.results import FileOutcome
from apidrift.auditor.downstream.scan import scan_source
from apidrift.auditor.sources.specs import SourceError

CASES = Path(__file__).parent / "cases"
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=5000,  # ms per example: a hang or a blow-up fails, a busy machine does not
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


def _scan(text: str) -> None:
    """What the downstream does with one file (`ast`, else LibCST for what CPython refuses); and
    wherever both scanners read the file, they agree."""
    started = time.perf_counter()
    scan = _scan_text("fuzz.py", text, frozenset({"pkg"}))
    assert time.perf_counter() - started < 5
    if isinstance(scan, str):
        assert scan.startswith(("syntax error", "nesting too deep", "not parsed")), scan
        return
    for site in scan.sites:
        assert 1 <= site.span.line <= max(1, len(scan.lines) + 1)
    if nesting_problem(text) is None:
        try:
            old = scan_source("fuzz.py", text, frozenset({"pkg"}))
        except (libcst.ParserSyntaxError, libcst.CSTValidationError):  # LibCST refuses some code CPython reads
            return
        assert old.sites == scan.sites


@settings(FUZZ, max_examples=int(os.environ.get("APIDRIFT_FUZZ_SCALE", "1")) * 600)
@given(mutated_source())
@example("from \U00031350pkg import x\n")  # found by fuzzing: LibCST validates names after parsing
@example("import pkg\n" + "x = " + "(" * 3000 + ")" * 3000 + "\n")  # would crash LibCST's parser unguarded
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
        mutated_source().map(str.encode) | st.binary(max_size=300) | st.just(b"\xef\xbb\xbf# coding: latin-1\n"),
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
        assert all(isinstance(o, FileOutcome) and o.status in ("scanned", "skipped", "failed") for o in outcomes)
        assert all(o.reason for o in outcomes if o.status != "scanned")
        assert len(scans) == sum(o.status == "scanned" for o in outcomes)
        again, outcomes_again = scan_downstream(root, frozenset({"pkg"}), Path(folder) / "cache")  # from the cache
        assert outcomes_again == outcomes and [s.sites for s in again] == [s.sites for s in scans]


NAMES = st.sampled_from([
    "pkg/__init__.py", "pkg/a.py", "pkg/a.py", "../up.py", "/abs.py", "pkg/../../x.py", "pkg//b.py", "./c.py",
    "C:/win.py", "pkg\\d.py", "pkg/" + "n" * 300 + ".py", "/".join(["d"] * 80) + "/deep.py", "PKG-INFO",
    "pkg.egg-info/top_level.txt", "pkg/mod.cpython-311-x86_64-linux-gnu.so", "pkg/é.py", "pkg/a.py/inner.py", "",
])  # fmt: skip
ENTRIES = st.lists(st.tuples(NAMES, st.binary(max_size=200), st.sampled_from(["file", "file", "dir", "sym", "hard"])), max_size=8)


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
