"""Nothing read is ever imported or executed: no setup.py, no build backend, no conftest.py, no .pth
file, no package `__init__`. Every such file here leaves a marker file when it runs; the audits read
them as folders, as NAME@archive (sdist and wheel), from a local index, and through the installed
command in a fresh process, and must find the drift in them while leaving no marker behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor.cache import ENV_VAR
from apidrift.auditor.cli.main import main


def tripwire(markers: Path, name: str) -> str:
    """Python that leaves `markers/name` when it is run or imported, by any interpreter."""
    return f"import pathlib\npathlib.Path({str(markers / name)!r}).write_text('executed')\n"


def upstream_files(markers: Path) -> dict[str, str]:
    return {
        "setup.py": tripwire(markers, "up-setup.py") + "from setuptools import setup\nsetup(name='zzexec')\n",
        "pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "evil_backend"\nbackend-path = ["."]\n'
            '[project]\nname = "zzexec"\nversion = "1.0"\ndynamic = []\n'
        ),
        "evil_backend.py": tripwire(markers, "up-backend"),
        "conftest.py": tripwire(markers, "up-conftest"),
        "sitecustomize.py": tripwire(markers, "up-sitecustomize"),
        "zzexec.pth": "import pathlib; pathlib.Path(%r).write_text('executed')\n" % str(markers / "up-pth"),
        "zzexec/__init__.py": tripwire(markers, "up-init") + "from zzexec.api import go\n",
        "zzexec/__main__.py": tripwire(markers, "up-main"),
        "zzexec/api.py": tripwire(markers, "up-api") + "def go(a, *, now=False):\n    return a\n",
        "zzexec/conftest.py": tripwire(markers, "up-inner-conftest"),
    }


def downstream_files(markers: Path) -> dict[str, str]:
    return {
        "setup.py": tripwire(markers, "down-setup.py"),
        "pyproject.toml": '[build-system]\nbuild-backend = "evil_backend"\nbackend-path = ["."]\n[project]\nname = "zzuser"\nversion = "1.0"\n',
        "evil_backend.py": tripwire(markers, "down-backend"),
        "conftest.py": tripwire(markers, "down-conftest"),
        "zzuser.pth": "import pathlib; pathlib.Path(%r).write_text('executed')\n" % str(markers / "down-pth"),
        "zzuser/__init__.py": tripwire(markers, "down-init") + "import zzexec\nzzexec.go(1, later=True)\n",
        "zzuser/tests/conftest.py": tripwire(markers, "down-tests-conftest"),
        "zzuser/tests/test_it.py": tripwire(markers, "down-test") + "from zzexec.api import go\ngo()\n",
    }


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def make_sdist(path: Path, name: str, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        entries = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", **files}
        for relative, text in entries.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-1.0/{relative}")
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
    return path


def make_wheel(path: Path, markers: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for relative, text in upstream_files(markers).items():
            if relative.startswith("zzexec/") or relative.endswith(".pth"):
                archive.writestr(relative, text)
        archive.writestr("zzexec-1.0.data/scripts/zzexec-run", "#!python\n" + tripwire(markers, "up-script"))
        archive.writestr("zzexec-1.0.data/purelib/zzexec_extra.py", tripwire(markers, "up-purelib"))
        archive.writestr(
            "zzexec-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zzexec\nVersion: 1.0\n"
        )
        archive.writestr(
            "zzexec-1.0.dist-info/entry_points.txt", "[console_scripts]\nzzexec = zzexec.__main__:main\n"
        )
        archive.writestr("zzexec-1.0.dist-info/RECORD", "")
    return path


@pytest.fixture
def markers(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "markers"
    folder.mkdir()
    before = set(sys.modules)
    yield folder
    assert sorted(p.name for p in folder.iterdir()) == [], "something read was executed"
    imported = {
        name
        for name in set(sys.modules) - before
        if name.split(".")[0] in ("zzexec", "zzuser", "evil_backend")
    }
    assert imported == set(), "something read was imported"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env-cache"))


EXPECTED = {
    ("zzuser/__init__.py", 4, "AD101"),
    ("zzuser/tests/test_it.py", 4, "AD102"),
}  # after the two-line tripwires


def findings(result_findings: list[object]) -> set[tuple[str, int, str]]:
    return {(f.location.path, f.location.line, f.code) for f in result_findings}  # type: ignore[attr-defined]


def test_folders_are_read_not_run(markers: Path, tmp_path: Path) -> None:
    up = write_tree(tmp_path / "up", upstream_files(markers))
    down = write_tree(tmp_path / "down", downstream_files(markers))
    result = audit(
        AuditRequest(str(down), f"zzexec@{up}", old="none", cache_dir=tmp_path / "c", offline=True)
    )
    assert findings(result.findings) == EXPECTED
    # The downstream named by a bare folder name and as its package folder, too.
    result = audit(
        AuditRequest(
            str(down / "zzuser"),
            f"zzexec@{up / 'zzexec'}",
            old="none",
            cache_dir=tmp_path / "c",
            offline=True,
        )
    )
    assert ("zzuser/__init__.py", 4, "AD101") in findings(result.findings)


def test_archives_are_read_not_run(markers: Path, tmp_path: Path) -> None:
    sdist = make_sdist(tmp_path / "zzexec-1.0.tar.gz", "zzexec", upstream_files(markers))
    wheel = make_wheel(tmp_path / "zzexec-1.0-py3-none-any.whl", markers)
    down_sdist = make_sdist(tmp_path / "zzuser-1.0.tar.gz", "zzuser", downstream_files(markers))
    down = write_tree(tmp_path / "down", downstream_files(markers))
    for upstream in (sdist, wheel):
        result = audit(
            AuditRequest(str(down), f"zzexec@{upstream}", old="none", cache_dir=tmp_path / "c", offline=True)
        )
        assert findings(result.findings) == EXPECTED, upstream.name
    # Only .py/.pyi sources and metadata are extracted (as inert files): no .pth file, no script.
    extracted = {p.name for p in (tmp_path / "c" / "sources").rglob("*") if p.is_file()}
    assert "zzexec.pth" not in extracted and "zzexec-run" not in extracted
    assert all(not p.stat().st_mode & 0o111 for p in (tmp_path / "c" / "sources").rglob("*") if p.is_file())
    status = main(["audit", f"zzuser@{down_sdist}", "--against", f"zzexec@{sdist}", "--from", "none", "--offline",
                   "--cache-dir", str(tmp_path / "c"), "--no-config", "--quiet"])  # fmt: skip
    assert status == 1


@pytest.fixture
def index(tmp_path: Path, markers: Path) -> Iterator[str]:
    """A local PEP 691 index serving the upstream and the downstream sdists."""
    files = {
        "zzexec-1.0.tar.gz": make_sdist(
            tmp_path / "zzexec-1.0.tar.gz", "zzexec", upstream_files(markers)
        ).read_bytes(),
        "zzuser-1.0.tar.gz": make_sdist(
            tmp_path / "zzuser-1.0.tar.gz", "zzuser", downstream_files(markers)
        ).read_bytes(),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            name = self.path.strip("/").split("/")[-1]
            if self.path.startswith("/simple/"):
                listed = [f for f in files if f.startswith(name + "-")]
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": [
                    {"filename": f, "url": f"/files/{f}", "hashes": {"sha256": hashlib.sha256(files[f]).hexdigest()}}
                    for f in listed]}).encode()  # fmt: skip
                ctype = "application/vnd.pypi.simple.v1+json"
            else:
                body, ctype = files.get(name, b""), "application/octet-stream"
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_index_releases_are_read_not_run(markers: Path, tmp_path: Path, index: str) -> None:
    result = audit(
        AuditRequest("zzuser==1.0", "zzexec==1.0", old="none", cache_dir=tmp_path / "c", index_url=index)
    )
    assert findings(result.findings) == EXPECTED


def test_a_fresh_process_runs_nothing_either(markers: Path, tmp_path: Path, index: str) -> None:
    """The command as users run it, in its own interpreter (where a stray `import` would also find the code)."""
    down = write_tree(tmp_path / "down", downstream_files(markers))
    process = subprocess.run(
        [sys.executable, "-m", "apidrift", "audit", str(down), "--against", "zzexec==1.0", "--from", "none",
         "--index-url", index, "--cache-dir", str(tmp_path / "c"), "--no-config", "--quiet", "--format", "json"],
        cwd=down, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert process.returncode == 1, process.stderr
    assert findings_from_json(process.stdout) == EXPECTED


def findings_from_json(text: str) -> set[tuple[str, int, str]]:
    return {(f["location"]["path"], f["location"]["line"], f["code"]) for f in json.loads(text)["findings"]}
