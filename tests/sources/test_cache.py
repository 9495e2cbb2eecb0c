"""The cache under stress: concurrent runs sharing it, corrupted entries of every kind, a cache that
cannot be written. Each is detected and rebuilt, or worked around, and the audit's answer is the same.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from apidrift import AuditRequest, AuditResult, audit
from apidrift.auditor import cache as cache_module
from apidrift.auditor.cache import ENV_VAR, Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.sources.archive import MANIFEST

UPSTREAM = {
    "zzc/__init__.py": "from zzc.core import run, Engine\n",
    "zzc/core.py": "def run(a, *, fast=False):\n    return a\n\nclass Engine:\n    def start(self, when):\n        return when\n",
}
DOWNSTREAM = (
    "from zzc import run, Engine\nimport zzc.core\n\n"
    "run(1)\nrun(1, 2)\nrun(1, slow=True)\nEngine().start()\nzzc.core.gone\n"
)
EXPECTED = {(5, "AD103"), (6, "AD101"), (7, "AD102"), (8, "AD003")}


def sdist(name: str, version: str, files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in {
            "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            **files,
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """An upstream sdist on disk (read as NAME@archive) and a downstream folder."""
    archive = tmp_path / "zzc-1.0.tar.gz"
    archive.write_bytes(sdist("zzc", "1.0", UPSTREAM))
    down = tmp_path / "down" / "zzapp"
    down.mkdir(parents=True)
    (down / "__init__.py").write_text(DOWNSTREAM)
    return archive, down.parent


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env-cache"))


def run(inputs: tuple[Path, Path], cache_dir: Path | None) -> AuditResult:
    archive, down = inputs
    return audit(AuditRequest(str(down), f"zzc@{archive}", old="none", cache_dir=cache_dir, offline=True))


def found(result: AuditResult) -> set[tuple[int, str]]:
    return {(f.location.line, f.code) for f in result.findings}


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# --- corrupted entries are detected and rebuilt --------------------------------------------------


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong-shape", "empty", "folder"])
@pytest.mark.parametrize("kind", ["api", "scan"])
def test_corrupted_api_and_scan_entries_are_rebuilt(
    inputs: tuple[Path, Path], tmp_path: Path, kind: str, damage: str
) -> None:
    cache = tmp_path / "cache"
    assert found(run(inputs, cache)) == EXPECTED
    # a scan entry is JSON lines (see `walk._cached_scan`); the linking's own cache is JSON
    entries = sorted(p for p in (cache / kind).rglob("*.json*") if p.suffix in (".json", ".jsonl"))
    assert entries
    for entry in entries:
        text = entry.read_text()
        if damage == "truncated":
            entry.write_text(text[: len(text) // 2])
        elif damage == "garbage":
            entry.write_bytes(b"\xff\xfe\x00garbage")
        elif damage == "wrong-shape":
            entry.write_text(
                json.dumps([{"kind": 3, "ref": None}] if kind == "scan" else {"path": 1, "members": [2]})
            )
        elif damage == "empty":
            entry.write_text("")
        else:
            entry.unlink()
            entry.mkdir()  # not even a file
    assert found(run(inputs, cache)) == EXPECTED
    if damage != "folder":  # rebuilt in place
        for entry in entries:
            text = entry.read_text()
            for line in text.splitlines() if entry.suffix == ".jsonl" else [text]:
                json.loads(line)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong-types", "no-tree", "missing"])
def test_corrupted_extraction_manifest_is_rebuilt(
    inputs: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    cache = tmp_path / "cache"
    first = run(inputs, cache)
    (folder,) = (cache / "sources" / "zzc").iterdir()
    manifest = folder / MANIFEST
    text = manifest.read_text()
    if damage == "truncated":
        manifest.write_text(text[:20])
    elif damage == "garbage":
        manifest.write_bytes(os.urandom(64))
    elif damage == "wrong-types":
        manifest.write_text(json.dumps({**json.loads(text), "files": "many", "skipped": [1]}))
    elif damage == "no-tree":
        for path in sorted((folder / "tree").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        (folder / "tree").rmdir()
    else:
        manifest.unlink()
    second = run(inputs, cache)
    assert found(second) == found(first) == EXPECTED
    assert json.loads(manifest.read_text())["format"] == json.loads(text)["format"]
    assert (folder / "tree" / "zzc" / "core.py").is_file()
    assert [p.name for p in (cache / "sources" / "zzc").iterdir()] == [folder.name]  # no leftovers


def test_corrupted_index_listing_is_ignored(tmp_path: Path) -> None:
    from apidrift.auditor.sources.index_client import IndexClient

    cache = Cache(tmp_path / "cache")
    client = IndexClient(cache, "http://127.0.0.1:9/simple/", offline=True)
    path = client.listing_path("zzc")
    for text in [
        "{",
        "[]",
        '{"format": 1, "name": "zzc", "index_url": "x", "files": [{"bogus": 1}]}',
        "\x00" * 10,
    ]:
        atomic_write_text(path, text)
        assert client.cached_listing("zzc") is None
    path.unlink()
    path.mkdir()
    assert client.cached_listing("zzc") is None


# --- a cache that cannot be written --------------------------------------------------------------


def test_cache_path_that_is_a_file_falls_back_to_a_temporary_cache(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("I am a file")
    result = run(inputs, blocker)
    assert found(result) == EXPECTED
    assert blocker.read_text() == "I am a file"
    note = result.upstream.note or ""
    assert f"the cache folder {blocker} cannot be written" in note
    assert "new cache entries go to the temporary folder" in note and "deleted at exit" in note
    temporary = Path(note.split("temporary folder ")[1].split(",")[0])
    assert temporary.is_relative_to(tempfile.gettempdir()) and (temporary / "sources").is_dir()


def test_unwritable_cache_through_the_command_line(
    inputs: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    archive, down = inputs
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    # --cache-dir naming a file is bad usage: one line, status 2.
    status = main(
        [
            "audit",
            str(down),
            "--against",
            f"zzc@{archive}",
            "--cache-dir",
            str(blocker),
            "--no-config",
            "--quiet",
        ]
    )
    _, err = capsys.readouterr()
    assert status == 2 and err.startswith("apidrift: error: ") and err.count("\n") == 1, err
    # The same through the environment: the audit still runs, on a temporary cache, and says so.
    monkeypatch.setenv(ENV_VAR, str(blocker / "sub"))
    status = main(
        ["audit", str(down), "--against", f"zzc@{archive}", "--from", "none", "--no-config", "--quiet"]
    )
    out, err = capsys.readouterr()
    assert status == 1, err
    assert "cannot be written" in out and "AD103" in out


def test_read_only_cache_is_still_read(
    inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared cache mounted read-only: warm entries are used, nothing in it changes, new entries go elsewhere."""
    cache = tmp_path / "cache"
    assert found(run(inputs, cache)) == EXPECTED
    before = files_under(cache)

    real_mkstemp = tempfile.mkstemp

    def read_only(*args: object, dir: str | Path | None = None, **kwargs: object) -> tuple[int, str]:
        if dir is not None and Path(dir).is_relative_to(cache):  # as a read-only mount answers
            raise PermissionError(13, "Permission denied", str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(tempfile, "mkstemp", read_only)  # every cache write goes through it
    result = run(inputs, cache)
    assert found(result) == EXPECTED
    assert "cannot be written (Permission denied)" in (result.upstream.note or "")
    assert files_under(cache) == before
    # A release not in it yet is extracted into the temporary folder instead.
    other = tmp_path / "zzc-2.0.tar.gz"
    other.write_bytes(sdist("zzc", "2.0", {**UPSTREAM, "zzc/core.py": "def run(a, b):\n    return a\n"}))
    _archive, down = inputs
    result = audit(AuditRequest(str(down), f"zzc@{other}", old="none", cache_dir=cache, offline=True))
    assert (6, "AD101") in found(result)
    assert files_under(cache) == before


def test_cache_write_path_and_fallback_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache(tmp_path / "c")
    assert cache.check_writable() and cache.write_path(cache.root / "a" / "b") == cache.root / "a" / "b"
    assert cache.note is None and cache.fallback is None
    monkeypatch.setattr(
        cache_module,
        "probe_writable",
        lambda folder: (_ for _ in ()).throw(OSError(30, "Read-only file system")),
    )
    locked = Cache(tmp_path / "locked")
    assert not locked.check_writable()
    assert (
        locked.fallback is not None
        and locked.write_path(locked.root / "x" / "y.json") == locked.fallback / "x" / "y.json"
    )
    assert locked.write_dir("downloads").is_dir() and locked.write_dir("downloads").is_relative_to(
        locked.fallback
    )
    assert "Read-only file system" in (locked.note or "")


# --- concurrent runs sharing one cache -----------------------------------------------------------


def test_concurrent_runs_share_one_cache(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    archive, down = inputs
    cache = tmp_path / "shared"
    reports = [tmp_path / f"report-{i}.json" for i in range(3)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "apidrift", "audit", str(down), "--against", f"zzc@{archive}", "--from", "none",
               "--cache-dir", str(cache), "--offline", "--no-config", "--quiet"]  # fmt: skip
    processes = [
        subprocess.Popen(
            [*command, "--format", f"json:{report}"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for report in reports
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 1, err.decode()
    results = [json.loads(report.read_text()) for report in reports]
    for result in results:
        assert {(f["location"]["line"], f["code"]) for f in result["findings"]} == EXPECTED
    # No torn or stray files: every JSON entry parses, no temporary or partial file is left, and the
    # archive was extracted exactly once (the others found it, or lost the race and removed theirs).
    leftovers = [p for p in cache.rglob("*") if p.name.startswith(".") or p.name.endswith((".tmp", ".part"))]
    assert leftovers == []
    for entry in cache.rglob("*.json"):
        json.loads(entry.read_text())
    for entry in cache.rglob("*.jsonl"):  # a scan entry: JSON lines
        for line in entry.read_text().splitlines():
            json.loads(line)
    assert len(list((cache / "sources" / "zzc").iterdir())) == 1
    assert (
        not [p for p in (cache / "downloads").rglob("*") if p.is_file()]
        if (cache / "downloads").exists()
        else True
    )
