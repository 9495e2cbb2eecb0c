"""Hostile and broken inputs: a one-line error and exit status 2 when nothing useful can be done,
else a diagnostic in the report and the partial result; never a traceback, a hang or a crash.

The index is a local HTTP server on 127.0.0.1 whose every answer a test chooses (truncated bodies,
lies about sizes and digests, hangs, error statuses, garbage pages). The CLI is run in-process
through `apidrift.auditor.cli.main.main`. The tests at the end pin engine bugs found here, since fixed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor.cache import ENV_VAR, Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.downstream import walk as downstream_module
from apidrift.auditor.pysource import MAX_NESTING, decode_source, nesting_problem
from apidrift.auditor.sources import index_client as index_module
from apidrift.auditor.sources.index_client import IndexClient
from apidrift.auditor.sources.locate import SourceError, locate
from apidrift.auditor.upstream import api_index as api_index_module

# --- a scriptable index on 127.0.0.1 -------------------------------------------------------------

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Index:
    """Routes (path -> handler) served on 127.0.0.1; `hits` records every path asked for."""

    url: str = ""
    base: str = ""
    routes: dict[str, Handler] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # ends every hang at teardown

    def project(self, name: str, files: dict[str, bytes], **extra: dict[str, object]) -> None:
        """Serve a PEP 691 page for `name` listing `files`, and the files themselves."""
        entries = []
        for filename, data in files.items():
            entry: dict[str, object] = {
                "filename": filename,
                "url": f"{self.base}/files/{filename}",
                "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                "size": len(data),
            }
            entry.update(extra.get(filename, {}))
            entries.append(entry)
            self.routes.setdefault(f"/files/{filename}", respond(data))
        page = {"meta": {"api-version": "1.1"}, "name": name, "files": entries}
        self.routes[f"/simple/{name}/"] = respond(
            json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json"
        )


def respond(
    body: bytes, ctype: str = "application/octet-stream", status: int = 200, **headers: str
) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            h.send_header(key.replace("_", "-"), value)
        h.end_headers()
        h.wfile.write(body)

    return handle


def truncated(body: bytes, keep: int, *, announce: bool = True) -> Handler:
    """Announce the whole body (or no length at all) but send only `keep` bytes, then hang up."""

    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        if announce:
            h.send_header("Content-Length", str(len(body)))
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(body[:keep])
        h.wfile.flush()
        h.close_connection = True

    return handle


def hang(index: Index, after_headers: bytes | None = None) -> Handler:
    """Never answer (or send headers and `after_headers`, then stall) until the test ends."""

    def handle(h: BaseHTTPRequestHandler) -> None:
        if after_headers is not None:
            h.send_response(200)
            h.send_header("Content-Length", str(len(after_headers) * 10))
            h.end_headers()
            h.wfile.write(after_headers)
            h.wfile.flush()
        index.release.wait(30)

    return handle


@pytest.fixture
def index() -> Iterator[Index]:
    served = Index()

    class Server(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            served.hits.append(self.path)
            handler = served.routes.get(self.path)
            if handler is None:
                respond(b"not found", "text/plain", 404)(self)
                return
            handler(self)

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: object, client_address: object) -> None:
            pass  # clients that hang up early are expected

    server = Quiet(("127.0.0.1", 0), Server)
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    served.url = served.base + "/simple/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _fast_and_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Short timeouts and backoff (the behaviour is the same, only faster); no user configuration."""
    monkeypatch.setattr(index_module, "DEFAULT_TIMEOUT", (2.0, 2.0))
    monkeypatch.setattr(index_module, "DEFAULT_BACKOFF", 0.01)
    monkeypatch.setattr(index_module, "DEFAULT_RETRIES", 2)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env-cache"))


# --- building distributions and trees ------------------------------------------------------------


def sdist(name: str, version: str, files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        entries = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", **files}
        for path, text in entries.items():
            data = text.encode() if isinstance(text, str) else text
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    return root


UPSTREAM = {"zzup/__init__.py": "def call(a):\n    return a\n"}
CALLS = "import zzup\n\nzzup.call(1)\nzzup.call(1, 2)\n"  # line 4: AD103 against UPSTREAM


@pytest.fixture
def down(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "down", {"app/__init__.py": CALLS})


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["audit", *args, "--no-config", "--quiet", "--from", "none"])
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status: int, err: str, *needles: str) -> None:
    assert status == 2, err
    assert err.startswith("apidrift: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


# --- names and versions, through the command line ------------------------------------------------


def test_unknown_distribution_is_a_one_line_error(
    index: Index, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = cli(
        capsys,
        str(down),
        "--against",
        "zznothere==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "no distribution named 'zznothere'")
    assert out == ""


def test_unknown_version_lists_the_nearest(
    index: Index, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index.project(
        "zzup", {f"zzup-{v}.tar.gz": sdist("zzup", v, UPSTREAM) for v in ("1.0", "1.1", "1.2", "2.0", "3.0")}
    )
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.5",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "no release matching ==1.5", "nearest: 1.0, 1.1, 1.2, 2.0, 3.0")


@pytest.mark.parametrize(
    "spec", ["zzup==", "zzup=>1", "zzup==1.0 junk", "zzup===", "zz up==1", 'zzup==1; os_name == "nt"']
)
def test_unparsable_specifier(
    spec: str, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cli(
        capsys, str(down), "--against", spec, "--offline", "--cache-dir", str(tmp_path / "c")
    )
    assert_one_line_error(status, err)


def test_nul_and_control_characters_in_specs(
    down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cli(
        capsys, str(down), "--against", "zzup@/tmp/a\x00b", "--offline", "--cache-dir", str(tmp_path / "c")
    )
    assert_one_line_error(status, err, "control characters")
    upstream = write_tree(tmp_path / "up", UPSTREAM)
    status, _, err = cli(
        capsys,
        "down\x00stream",
        "--against",
        f"zzup@{upstream}",
        "--offline",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "control characters")
    long_path = "zzup@" + "/x" * 3000
    status, _, err = cli(
        capsys, str(down), "--against", long_path, "--offline", "--cache-dir", str(tmp_path / "c")
    )
    assert_one_line_error(status, err)


def test_yanked_release_used_only_when_pinned_and_said(
    index: Index, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index.project(
        "zzup",
        {"zzup-1.0.tar.gz": sdist("zzup", "1.0", {"zzup/__init__.py": "def call(a, b=None):\n    return a\n"}),
         "zzup-1.1.tar.gz": sdist("zzup", "1.1", UPSTREAM)},
        **{"zzup-1.1.tar.gz": {"yanked": "broke everything"}},
    )  # fmt: skip
    cache = str(tmp_path / "c")
    status, out, err = cli(
        capsys, str(down), "--against", "zzup==1.1", "--index-url", index.url, "--cache-dir", cache
    )
    assert status == 1, err  # the AD103 in CALLS, checked against the yanked 1.1
    assert "zzup 1.1 is yanked on the index (broke everything); used because it was pinned exactly" in out
    status, out, err = cli(
        capsys, str(down), "--against", "zzup>=1.0", "--index-url", index.url, "--cache-dir", cache
    )
    assert status == 0, err  # 1.0 takes two arguments: line 4 is fine there; 1.1 was not picked
    assert "zzup==1.0" in out and "is yanked" not in out
    index.routes["/simple/zzup/"] = respond(
        json.dumps({"meta": {"api-version": "1.1"}, "name": "zzup", "files": [
            {"filename": "zzup-1.1.tar.gz", "url": f"{index.base}/files/zzup-1.1.tar.gz", "hashes": {}, "yanked": True}]}).encode(),
        "application/vnd.pypi.simple.v1+json",
    )  # fmt: skip
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup>=1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c2"),
    )
    assert_one_line_error(
        status, err, "every release of zzup matching >=1.0 is yanked", "pin one exactly (==1.1)"
    )


def test_no_file_that_carries_sources(
    index: Index, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only installers and eggs: nothing to read.
    index.project("zzup", {"zzup-1.0.win32.exe": b"MZ", "zzup-1.0-py2.7.egg": b"PK"})
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "zzup has no wheel or sdist on the index")
    # An sdist with no Python in it at all (C sources and a build script only).
    index.project("zzc", {"zzc-1.0.tar.gz": sdist("zzc", "1.0", {"src/zzc.c": "int x;", "meson.build": ""})})
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzc==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "zzc-1.0.tar.gz holds neither Python source")


def test_wheel_with_only_compiled_modules_is_audited_and_says_so(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("zzfast/_core.cpython-311-x86_64-linux-gnu.so", b"\x7fELF")
        archive.writestr(
            "zzfast-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zzfast\nVersion: 1.0\n"
        )
        archive.writestr("zzfast-1.0.dist-info/top_level.txt", "zzfast\n")
    index.project("zzfast", {"zzfast-1.0-cp311-cp311-manylinux_2_17_x86_64.whl": buffer.getvalue()})
    down = write_tree(tmp_path / "d", {"app/__init__.py": "from zzfast._core import go\ngo(1, 2, 3)\n"})
    status, out, err = cli(
        capsys,
        str(down),
        "--against",
        "zzfast==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert status == 3, out + err  # nothing could be checked: no pass
    assert "holds only compiled modules, no Python sources" in out
    assert out.startswith(
        "apidrift: nothing checked: d uses zzfast at 1 site beyond its imports, but none could be checked"
    )


def test_offline_with_an_empty_cache(down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--offline",
        "--index-url",
        "http://127.0.0.1:9/simple/",
        "--cache-dir",
        str(tmp_path / "empty"),
    )
    assert_one_line_error(status, err, "offline: zzup==1.0", "not in the cache", "run once without --offline")
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup>=1",
        "--offline",
        "--index-url",
        "http://127.0.0.1:9/simple/",
        "--cache-dir",
        str(tmp_path / "empty"),
    )
    assert_one_line_error(status, err, "offline: the index listing of zzup")


def test_extraction_limits_are_configurable(
    index: Index,
    down: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = {f"zzup/m{i}.py": "x = 1\n" * 100 for i in range(30)} | UPSTREAM
    index.project("zzup", {"zzup-1.0.tar.gz": sdist("zzup", "1.0", files)})
    monkeypatch.setenv("APIDRIFT_MAX_EXTRACT_FILES", "10")
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "more than 10 files to extract; refused")
    monkeypatch.setenv("APIDRIFT_MAX_EXTRACT_FILES", "")
    monkeypatch.setenv("APIDRIFT_MAX_EXTRACT_BYTES", "5_000")
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "more than 5000 bytes to extract; refused")
    monkeypatch.setenv("APIDRIFT_MAX_EXTRACT_BYTES", "lots")
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "APIDRIFT_MAX_EXTRACT_BYTES='lots': expected a positive whole number")
    assert not list((tmp_path / "c").glob("sources/*/*"))  # nothing half-extracted was kept


# --- the network ---------------------------------------------------------------------------------


def test_index_unreachable(down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        f"http://127.0.0.1:{port}/simple/",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "cannot reach the index", "--offline uses the cache only")
    assert time.monotonic() - started < 10


def test_index_url_that_is_not_a_url(down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        "not a url",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_one_line_error(status, err, "not a url")


def test_listing_that_never_answers_times_out(index: Index, tmp_path: Path) -> None:
    index.routes["/simple/zzup/"] = hang(index)
    started = time.monotonic()
    with IndexClient(Cache(tmp_path / "c"), index.url, timeout=(1.0, 0.3), retries=1, backoff=0.01) as client:
        with pytest.raises(SourceError, match="cannot reach the index .*(timed out|Read timed out)"):
            client.project("zzup")
    assert time.monotonic() - started < 5
    assert index.hits.count("/simple/zzup/") == 2  # one retry, then a clean error


def test_download_that_stalls_is_retried_then_refused(index: Index, tmp_path: Path) -> None:
    data = sdist("zzup", "1.0", UPSTREAM)
    index.project("zzup", {"zzup-1.0.tar.gz": data})
    index.routes["/files/zzup-1.0.tar.gz"] = hang(index, after_headers=data[:100])
    cache = Cache(tmp_path / "c")
    with IndexClient(cache, index.url, timeout=(1.0, 0.3), retries=1, backoff=0.01) as client:
        listing = client.project("zzup")
        with pytest.raises(SourceError, match=r"cannot download zzup-1\.0\.tar\.gz after 2 attempts"):
            client.download(listing.files[0])
    assert index.hits.count("/files/zzup-1.0.tar.gz") == 2
    assert not [p for p in cache.root.rglob("*") if p.is_file() and "downloads" in p.parts]


def test_slow_trickle_is_bounded_in_total_time(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sdist("zzup", "1.0", UPSTREAM)
    index.project("zzup", {"zzup-1.0.tar.gz": data})

    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        for i in range(len(data)):
            if index.release.is_set():
                return
            h.wfile.write(data[i : i + 1])
            h.wfile.flush()
            time.sleep(0.05)

    index.routes["/files/zzup-1.0.tar.gz"] = trickle
    monkeypatch.setattr(index_module, "_CHUNK", 1)  # byte by byte: the deadline is checked between trickles
    started = time.monotonic()
    with IndexClient(Cache(tmp_path / "c"), index.url, max_download_seconds=0.5) as client:
        listing = client.project("zzup")
        with pytest.raises(SourceError, match="took longer than 0.5 s; refused"):
            client.download(listing.files[0])
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("announce", [True, False], ids=["short-read", "no-length"])
def test_truncated_download(index: Index, tmp_path: Path, announce: bool) -> None:
    data = sdist("zzup", "1.0", {**UPSTREAM, "zzup/pad.py": os.urandom(4000).hex()})
    index.project("zzup", {"zzup-1.0.tar.gz": data})
    index.routes["/files/zzup-1.0.tar.gz"] = truncated(data, len(data) // 2, announce=announce)
    cache = Cache(tmp_path / "c")
    # With a length the short read is detected and retried; without one, the digest refuses it.
    expected = (
        r"cannot download zzup-1\.0\.tar\.gz after 3 attempts"
        if announce
        else r"sha256 mismatch for zzup-1\.0\.tar\.gz.*refused.*deleted"
    )
    with pytest.raises(SourceError, match=expected):
        locate("zzup==1.0", role="upstream", cache=cache, index_url=index.url)
    assert index.hits.count("/files/zzup-1.0.tar.gz") == (3 if announce else 1)
    assert not [p for p in cache.root.rglob("*") if p.is_file() and "downloads" in p.parts]
    assert not (cache.root / "sources").exists()


def test_truncated_download_without_a_published_digest(index: Index, tmp_path: Path) -> None:
    data = sdist("zzup", "1.0", {**UPSTREAM, "zzup/pad.py": os.urandom(4000).hex()})
    index.project("zzup", {"zzup-1.0.tar.gz": data}, **{"zzup-1.0.tar.gz": {"hashes": {}}})
    index.routes["/files/zzup-1.0.tar.gz"] = truncated(data, len(data) // 2, announce=False)
    cache = Cache(tmp_path / "c")
    with pytest.raises(SourceError, match=r"zzup-1\.0\.tar\.gz is not a readable sdist archive") as info:
        locate("zzup==1.0", role="upstream", cache=cache, index_url=index.url)
    assert "\n" not in str(info.value)
    assert not [p for p in cache.root.rglob("*") if p.is_file() and "downloads" in p.parts]


@pytest.mark.parametrize(("status", "where", "message"), [
    (404, "file", "downloading zzup-1.0.tar.gz failed: HTTP 404"),
    (403, "file", "downloading zzup-1.0.tar.gz failed: HTTP 403"),
    (503, "file", "downloading zzup-1.0.tar.gz failed: HTTP 503"),
    (403, "page", "the index http://127.0.0.1:PORT/simple/ answered 403 for zzup"),
    (500, "page", "answered 500 for zzup"),
])  # fmt: skip
def test_http_errors(index: Index, tmp_path: Path, status: int, where: str, message: str) -> None:
    index.project("zzup", {"zzup-1.0.tar.gz": sdist("zzup", "1.0", UPSTREAM)})
    path = "/files/zzup-1.0.tar.gz" if where == "file" else "/simple/zzup/"
    index.routes[path] = respond(b"nope", "text/plain", status)
    with pytest.raises(SourceError) as info:
        locate("zzup==1.0", role="upstream", cache=Cache(tmp_path / "c"), index_url=index.url)
    assert message.replace("http://127.0.0.1:PORT/simple/", index.url) in str(info.value)
    retried = 3 if status >= 500 else 1  # 5xx: bounded retries (2 here), others: at once
    assert index.hits.count(path) == retried


def test_retries_back_off_and_cap_retry_after(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    import urllib3.util.retry

    monkeypatch.setattr(urllib3.util.retry.time, "sleep", lambda seconds: slept.append(seconds))
    index.routes["/simple/zzup/"] = respond(b"busy", "text/plain", 503, Retry_After="3600")
    with IndexClient(Cache(tmp_path / "c"), index.url, retries=2, backoff=0.5) as client:
        with pytest.raises(SourceError, match="answered 503"):
            client.project("zzup")
    assert slept == [index_module.MAX_RETRY_AFTER] * 2  # an hour asked, ten seconds given
    slept.clear()
    index.routes["/simple/zzup/"] = respond(b"busy", "text/plain", 503)
    with IndexClient(Cache(tmp_path / "c"), index.url, retries=3, backoff=0.5) as client:
        with pytest.raises(SourceError, match="answered 503"):
            client.project("zzup")
    assert slept == [1.0, 2.0]  # urllib3: no sleep before the first retry, then exponential


def test_interrupted_downloads_back_off_exponentially(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(index_module.time, "sleep", lambda seconds: slept.append(seconds))
    data = sdist("zzup", "1.0", {**UPSTREAM, "zzup/pad.py": os.urandom(2000).hex()})
    index.project("zzup", {"zzup-1.0.tar.gz": data})
    index.routes["/files/zzup-1.0.tar.gz"] = truncated(data, 100)
    with IndexClient(Cache(tmp_path / "c"), index.url, retries=3, backoff=0.25) as client:
        listing = client.project("zzup")
        with pytest.raises(SourceError, match="after 4 attempts"):
            client.download(listing.files[0])
    assert slept == [0.25, 0.5, 1.0]


@pytest.mark.parametrize(("body", "ctype", "message"), [
    (b"{not json", "application/vnd.pypi.simple.v1+json", "cannot read the index page of zzup"),
    (b'{"meta": {"api-version": "1.1"}, "name": "zzup", "files": [{"filename": 3}]}',
     "application/vnd.pypi.simple.v1+json", "cannot read the index page of zzup"),
    (b'{"meta": {"api-version": "9.0"}, "name": "zzup", "files": []}', "application/vnd.pypi.simple.v1+json",
     "cannot read the index page of zzup"),
    (b"\x00\x01binary", "image/png", "cannot read the index page of zzup"),
    (b"<html><body><a href='x'>zzup-1.0.tar.gz</a><a>no href</a></body></html>", "text/html",
     "downloading zzup-1.0.tar.gz failed: HTTP 404"),
    (b"<html><body><a href='../../files/..%2F..%2Fetc%2Fpasswd.tar.gz'>../../etc/passwd-1.0.tar.gz</a></body></html>",
     "text/html", "zzup has no wheel or sdist on the index"),  # not a file of zzup: skipped, never fetched
])  # fmt: skip
def test_garbage_index_pages(index: Index, tmp_path: Path, body: bytes, ctype: str, message: str) -> None:
    index.routes["/simple/zzup/"] = respond(body, ctype)
    with pytest.raises(SourceError, match=message) as info:
        locate("zzup==1.0", role="upstream", cache=Cache(tmp_path / "c"), index_url=index.url)
    assert "\n" not in str(info.value)


def test_unsafe_file_name_in_a_listing_is_refused(index: Index, tmp_path: Path) -> None:
    index.project("zzup", {"zzup-1.0.tar.gz": sdist("zzup", "1.0", UPSTREAM)})
    listing = {"meta": {"api-version": "1.1"}, "name": "zzup", "files": [
        {"filename": ".zzup-1.0.tar.gz", "url": f"{index.base}/files/zzup-1.0.tar.gz", "hashes": {}}]}  # fmt: skip
    index.routes["/simple/zzup/"] = respond(
        json.dumps(listing).encode(), "application/vnd.pypi.simple.v1+json"
    )
    with pytest.raises(SourceError, match="zzup has no wheel or sdist on the index"):  # `.zzup` is not zzup
        locate("zzup==1.0", role="upstream", cache=Cache(tmp_path / "c"), index_url=index.url)
    assert "/files/zzup-1.0.tar.gz" not in index.hits


def test_hash_mismatch_through_the_command_line(
    index: Index, down: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sdist("zzup", "1.0", UPSTREAM)
    index.project("zzup", {"zzup-1.0.tar.gz": data}, **{"zzup-1.0.tar.gz": {"hashes": {"sha256": "ab" * 32}}})
    cache = tmp_path / "c"
    status, _, err = cli(
        capsys, str(down), "--against", "zzup==1.0", "--index-url", index.url, "--cache-dir", str(cache)
    )
    assert_one_line_error(
        status, err, "sha256 mismatch for zzup-1.0.tar.gz", "refused", "partial file was deleted"
    )
    assert not [p for p in cache.rglob("*") if p.is_file() and "downloads" in p.parts]
    assert not (cache / "sources").exists()


# --- downstream files: skipped with a diagnostic, the rest still audited ------------------------


DEEP: dict[str, Callable[[int], str]] = {
    "parens": lambda n: "x = " + "(" * n + "1" + ")" * n,
    "lists": lambda n: "x = " + "[" * n + "]" * n,
    "unary": lambda n: "x = " + "-" * n + "1",
    "binop": lambda n: "x = " + "+".join(["1"] * n),
    "attr": lambda n: "x = zzup" + ".a" * n,
    "calls": lambda n: "x = zzup.f" + "()" * n,
    "andor": lambda n: "x = " + " and ".join(["a"] * n),
    "strings": lambda n: "x = (" + " ".join(['"a"'] * n) + ")",
    "ifs": lambda n: "".join("    " * i + "if x:\n" for i in range(n)) + "    " * n + "pass",
}


def deep(kind: str, n: int) -> str:
    return DEEP[kind](n)


HOSTILE_FILES: dict[str, str | bytes] = {
    "app/good.py": CALLS,  # the one certain error: line 4
    "app/syntax.py": "import zzup\ndef broken(:\n",
    "app/py2.py": "import zzup\nprint 'hello'\nexec 'zzup.call(1, 2)'\n",
    "app/nul.py": b"import zzup\nzzup.call(1, 2)\x00\n",
    "app/latin1.py": "# -*- coding: latin-1 -*-\nimport zzup\ns = 'caf\xe9'\nzzup.call(1, 2, 3)\n".encode("latin-1"),
    "app/bad_utf8.py": b"import zzup\ns = '\xff\xfe'\n",
    "app/bad_cookie.py": b"# coding: klingon\nimport zzup\n",
    "app/bom_clash.py": b"\xef\xbb\xbf# coding: latin-1\nimport zzup\n",
    "app/empty.py": b"",
    "app/only_bom.py": b"\xef\xbb\xbf",
    "app/unrelated.py": "import os\n",
    **{f"app/deep_{kind}.py": f"import zzup\n{deep(kind, n)}\n"
       for kind, n in [("parens", 5000), ("lists", 3000), ("unary", 100_000), ("binop", 50_000), ("attr", 50_000),
                       ("calls", 30_000), ("andor", 50_000), ("strings", 50_000), ("ifs", 120)]},
}  # fmt: skip


def remove_deep(top: Path) -> None:
    """Delete a tree bottom-up without recursion (shutil.rmtree, and so pytest's cleanup, recurse per level)."""
    folders, stack = [], [top]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


@pytest.fixture
def deep_tree(tmp_path: Path) -> Iterator[Path]:
    """`tmp_path/down/app/d/d/.../d`, 1,100 folders deep: more than Python's recursion limit."""
    top = tmp_path / "down" / "app" / "d"
    folder = top
    os.makedirs(top)
    for _ in range(1099):
        folder = folder / "d"
        os.mkdir(folder)
    try:
        yield folder
    finally:
        remove_deep(top)


def test_hostile_downstream_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, deep_tree: Path
) -> None:
    monkeypatch.setattr(downstream_module, "MAX_FILE_BYTES", 1024 * 1024)
    files = dict(HOSTILE_FILES)
    files["app/generated.py"] = "import zzup\n" + "zzup.call(1, 2)\n" * 70_000  # 1.1 MB > the (patched) limit
    down = write_tree(tmp_path / "down", files)
    os.mkfifo(down / "app" / "pipe.py")  # opening it would block forever
    outside = write_tree(tmp_path / "outside", {"evil.py": "import zzup\nzzup.call(1, 2, 3, 4)\n"})
    (down / "app" / "link.py").symlink_to(outside / "evil.py")
    (down / "app" / "loop").symlink_to(down / "app")
    odd = os.path.join(os.fsencode(down / "app"), b"caf\xe9.py")  # a file name that is not UTF-8
    with open(odd, "wb") as handle:
        handle.write(b"import zzup\nzzup.call(1, 2, 3, 4, 5)\n")
    (deep_tree / "leaf.py").write_text("import zzup\nzzup.call()\n")
    upstream = write_tree(tmp_path / "up", UPSTREAM)
    report = tmp_path / "report.json"

    started = time.monotonic()
    status, out, err = cli(capsys, str(down), "--against", f"zzup@{upstream}", "--offline", "--cache-dir", str(tmp_path / "c"),
                           "--format", "text", "--format", f"json:{report}")  # fmt: skip
    elapsed = time.monotonic() - started
    assert status == 1, err  # findings, not an input error
    assert elapsed < 30
    result = json.loads(report.read_text())
    outcomes = {f["path"]: (f["status"], f["reason"]) for f in result["files"]}
    found = {
        (f["location"]["path"], f["location"]["line"], f["code"])
        for f in result["findings"]
        if f["code"] != "AD901"
    }
    leaf = "app/" + "/".join(["d"] * 1100) + "/leaf.py"
    assert found == {("app/good.py", 4, "AD103"), ("app/latin1.py", 4, "AD103"), (leaf, 2, "AD102"),
                     ("app/caf\\xe9.py", 2, "AD103")}  # fmt: skip
    failed = {path: reason for path, (status, reason) in outcomes.items() if status == "failed"}
    assert {f["location"]["path"] for f in result["findings"] if f["code"] == "AD901"} == set(
        failed
    )  # none passes unchecked
    assert failed["app/syntax.py"].startswith("syntax error")
    assert failed["app/py2.py"].startswith("syntax error")
    assert failed["app/nul.py"].startswith("syntax error")
    assert failed["app/bad_utf8.py"].startswith("cannot decode: not valid utf-8")
    assert failed["app/bad_cookie.py"] == "cannot decode: unknown encoding: klingon"
    assert failed["app/bom_clash.py"].startswith("cannot decode: encoding problem")
    for kind in ("parens", "lists", "unary", "binop", "attr", "calls", "andor", "strings", "ifs"):
        assert (
            "nesting too deep" in failed[f"app/deep_{kind}.py"]
            or "too deeply nested" in failed[f"app/deep_{kind}.py"]
        ), kind
    assert outcomes["app/generated.py"] == ("skipped", "larger than 1 MiB")
    assert outcomes["app/unrelated.py"] == ("skipped", "does not mention the upstream")
    assert outcomes["app/empty.py"][0] == outcomes["app/only_bom.py"][0] == "skipped"
    assert not any("evil" in p for p in outcomes)  # never followed: skipped, and said so
    assert outcomes["app/pipe.py"] == ("skipped", "not a regular file")
    assert outcomes["app/link.py"] == outcomes["app/loop"] == ("skipped", "symlink, not followed")
    # The text report names every failed file on one line each, and prints the odd name escaped.
    assert "failed: app/syntax.py: syntax error" in out
    assert "app/caf\\xe9.py:2:" in out


def test_nesting_guard_lets_ordinary_code_through() -> None:
    assert nesting_problem("import zzup\nzzup.call(1)\n") is None
    assert nesting_problem("x = " + "+".join(["1"] * (MAX_NESTING - 10)) + "\n") is None
    assert nesting_problem("x = [" + ", ".join(["1"] * 100_000) + "]\n") is None  # long but flat
    assert nesting_problem("x = " + " and ".join(["a"] * (MAX_NESTING + 10)) + "\n") is not None
    assert nesting_problem("type X = int\n" + "x = 1\n") is None  # newer syntax: left to LibCST
    assert nesting_problem("print 'py2'\n" + "x = " + "-" * 5000 + "1\n") is not None
    assert nesting_problem("print 'py2'\n" + "x = (\n" + "+ 1\n" * 5000 + ")\n") is not None
    assert decode_source(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"


# --- upstream modules: unparsable ones become notes, never a crash -------------------------------


def test_hostile_upstream_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_index_module, "MAX_MODULE_BYTES", 100_000)
    upstream = write_tree(tmp_path / "up", {
        "zzup/__init__.py": "from zzup.good import ok\n",
        "zzup/good.py": "def ok(a):\n    return a\n",
        "zzup/py2.py": "print 'hello'\ndef f(a):\n    pass\n",
        "zzup/latin.py": "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\ndef g(a):\n    return a\n".encode("latin-1"),
        "zzup/badenc.py": b"s = '\xff'\ndef f(a):\n    pass\n",
        "zzup/cookie.py": b"# coding: klingon\ndef f(a):\n    pass\n",
        "zzup/nul.py": b"def f(a):\n    pass\x00\n",
        "zzup/deep.py": "x = " + "-" * 50_000 + "1\ndef f(a):\n    pass\n",
        "zzup/deepdefault.py": "def f(a=" + "-" * 900 + "1):\n    pass\n",
        "zzup/huge.py": "def f(a):\n    pass\n" + "# padding\n" * 20_000,
        "zzup/stuck.py": "class C(" + "Base, " * 5000 + "):\n    pass\n",
    })  # fmt: skip
    broken = ["py2", "badenc", "cookie", "nul", "deep", "huge"]
    lines = ["from zzup.good import ok", "from zzup.latin import g", "from zzup.deepdefault import f as dd",
             "from zzup.stuck import C"] + [f"from zzup.{m} import f as f_{m}" for m in broken]  # fmt: skip
    lines += ["ok(1, 2)", "g(1, 2)"] + [f"f_{m}(1, 2, 3)" for m in broken] + ["dd(1, 2, 3)", "C(1, 2, 3)"]
    down = write_tree(tmp_path / "down", {"app.py": "\n".join(lines) + "\n"})
    result = audit(
        AuditRequest(str(down), f"zzup@{upstream}", old="none", cache_dir=tmp_path / "c", offline=True)
    )
    found = {(f.location.line, f.code) for f in result.findings if f.severity.value == "error"}
    assert found == {
        (len(lines) - len(broken) - 3 - 1 + 1, "AD103"),
        (len(lines) - len(broken) - 3 + 1 + 1, "AD103"),
    } or found >= {(lines.index("ok(1, 2)") + 1, "AD103"), (lines.index("g(1, 2)") + 1, "AD103")}
    assert {line for line, _ in found} <= {lines.index("ok(1, 2)") + 1, lines.index("g(1, 2)") + 1,
                                          lines.index("dd(1, 2, 3)") + 1, lines.index("C(1, 2, 3)") + 1}  # fmt: skip
    notes = "\n".join(result.notes)
    for module, reason in [("py2", "SyntaxError"), ("badenc", "cannot decode: not valid utf-8"),
                           ("cookie", "cannot decode: unknown encoding"), ("nul", "null bytes"),
                           ("deep", "nesting too deep"), ("huge", "larger than 0 MiB, not parsed")]:  # fmt: skip
        assert f"module zzup.{module} could not be parsed" in notes, module
        assert reason in notes, reason


def test_a_very_large_upstream_loads_only_what_is_used(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"zzbig/__init__.py": "from zzbig.m0 import f0\n"}
    for i in range(1500):
        files[f"zzbig/m{i}.py"] = f"def f{i}(a):\n    return a\n" + "".join(
            f"def g{j}(x, y=1):\n    return x\n" for j in range(10)
        )
    upstream = write_tree(tmp_path / "up", files)
    down = write_tree(
        tmp_path / "down", {"app.py": "from zzbig import f0\nfrom zzbig.m7 import f7\nf0(1, 2)\nf7(1)\n"}
    )
    started = time.monotonic()
    result = audit(
        AuditRequest(str(down), f"zzbig@{upstream}", old="none", cache_dir=tmp_path / "c", offline=True)
    )
    assert time.monotonic() - started < 20
    assert [(f.location.line, f.code) for f in result.findings] == [(3, "AD103")]
    assert len(list((tmp_path / "c" / "api").rglob("*.json"))) <= 5  # 3 modules parsed, not 1,500


# --- engine bugs these inputs found (fixed by the engine's owner in 0e127b9; kept as regressions) --


def findings_of(
    tmp_path: Path, upstream: dict[str, str | bytes], downstream: str
) -> set[tuple[int, str, str]]:
    up = write_tree(tmp_path / "up", upstream)
    down = write_tree(tmp_path / "down", {"app.py": downstream})
    result = audit(AuditRequest(str(down), f"pkg@{up}", old="none", cache_dir=tmp_path / "c", offline=True))
    return {(f.location.line, f.severity.value, f.code) for f in result.findings}


CONDITIONAL = {
    "pkg/__init__.py": "",
    "pkg/cond.py": (
        "import sys\n"
        "if sys.version_info >= (3, 12):\n    def versioned(a):\n        return a\n"
        "else:\n    def versioned(a, b):\n        return a\n"
        "try:\n    from pkg._accel import accelerated\n"
        "except ImportError:\n    def accelerated(x):\n        return x\n"
    ),
}


def test_engine_version_conditional_definitions_are_not_certain(tmp_path: Path) -> None:
    found = findings_of(
        tmp_path, CONDITIONAL, "from pkg.cond import versioned\nversioned(1)\nversioned(1, 2)\n"
    )
    assert not any(severity == "error" for _, severity, _ in found), found


def test_engine_import_fallback_definitions_are_not_certain(tmp_path: Path) -> None:
    found = findings_of(tmp_path, CONDITIONAL, "from pkg.cond import accelerated\naccelerated(1, 2, 3)\n")
    assert not any(severity == "error" for _, severity, _ in found), found


GUARDED = {"pkg/__init__.py": "def new_api(a):\n    return a\n"}


def test_engine_contextlib_suppress_is_a_guard(tmp_path: Path) -> None:
    found = findings_of(tmp_path, GUARDED, (
        "import contextlib\nimport pkg\n"
        "with contextlib.suppress(ImportError):\n    from pkg import old_api\n"
        "with contextlib.suppress(AttributeError):\n    pkg.old_api(1)\n"
    ))  # fmt: skip
    assert found == {(4, "info", "AD002"), (6, "info", "AD003")}


def test_engine_callable_getattr_is_a_guard(tmp_path: Path) -> None:
    found = findings_of(
        tmp_path, GUARDED, "import pkg\nif callable(getattr(pkg, 'old_api', None)):\n    pkg.old_api(1)\n"
    )
    assert found == {(3, "info", "AD003")}


# --- the warm path never loads the HTTP stack nor the parsers ------------------------------------

PROBE = (
    "import sys\nfrom apidrift.auditor.cli.main import main\nstatus = main(sys.argv[1:])\n"
    "heavy = ('pypi_simple', 'requests', 'urllib3', 'ssl', 'pydantic', 'bs4', 'libcst', 'griffe', 'jinja2', 'nbformat',"
    " 'multiprocessing', 'apidrift.auditor.downstream.astscan')\n"
    "print('LOADED', sorted(m for m in heavy if m in sys.modules), status)\n"
)


def test_warm_run_imports_no_http_stack_and_no_parser(index: Index, down: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    index.project("zzup", {"zzup-1.0.tar.gz": sdist("zzup", "1.0", UPSTREAM)})
    args = [str(down), "--against", "zzup==1.0", "--from", "none", "--index-url", index.url,
            "--cache-dir", str(tmp_path / "c"), "--no-config", "--quiet"]  # fmt: skip
    runs = [
        subprocess.run(
            [sys.executable, "-c", PROBE, "audit", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        for _ in range(2)
    ]
    cold, warm = (run.stdout.splitlines()[-1] for run in runs)
    assert cold.startswith("LOADED [") and "'pypi_simple'" in cold and cold.endswith(" 1"), runs[0].stderr
    assert (
        "'apidrift.auditor.downstream.astscan'" in cold and "'libcst'" not in cold
    )  # scanned with CPython's parser
    assert warm == "LOADED [] 1", runs[1].stderr  # same answer, from the cache alone
    assert index.hits.count("/simple/zzup/") == 1


# --- engine bugs found here, since fixed ---------------------------------------------


def test_engine_star_import_with_computed_all_is_not_certain(tmp_path: Path) -> None:
    found = findings_of(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/dyn/__init__.py": "from pkg.dyn.impl import *\n",
        "pkg/dyn/impl.py": "def visible(a):\n    return a\n__all__ = [n for n in dir() if not n.startswith('_')]\n",
    }, "from pkg.dyn import visible\nimport pkg.dyn\nvisible(1)\npkg.dyn.visible(1)\n")  # fmt: skip
    assert not any(code in ("AD002", "AD003") for _, _, code in found), found


def test_engine_name_missing_only_from_the_stub_is_not_certain(tmp_path: Path) -> None:
    found = findings_of(tmp_path, {
        "pkg/__init__.py": "def both(a):\n    return a\n\ndef extra(a):\n    return a\n",
        "pkg/__init__.pyi": "def both(a: int) -> int: ...\n",
    }, "import pkg\nfrom pkg import extra\nextra(1)\npkg.extra(1)\n")  # fmt: skip
    assert not any(code in ("AD002", "AD003") for _, _, code in found), found
