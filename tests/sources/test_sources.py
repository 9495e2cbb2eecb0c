"""Locating sources: a fake PEP 691 index on 127.0.0.1, local archives and folders, installed distributions.

Tests marked `network` use the real default index (small downloads only).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from apidrift.auditor.cache import ENV_VAR, Cache
from apidrift.auditor.files import atomic_write_bytes, atomic_write_text
from apidrift.auditor.sources import locate as sources_module
from apidrift.auditor.sources.index_client import IndexClient, IndexFile, choose_file, resolve_index_url
from apidrift.auditor.sources.locate import SourceError, SourceTree, locate
from apidrift.auditor.sources.specs import SpecError

# --- building distributions ----------------------------------------------------------------------


def metadata_text(name: str, version: str, requires: tuple[str, ...] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nLong description.\n"


def sdist_bytes(name: str, version: str, files: dict[str, str], *, metadata: bool = True) -> bytes:
    top = f"{name}-{version}"
    entries = dict(files)
    if metadata:
        entries.setdefault("PKG-INFO", metadata_text(name, version))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in entries.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def wheel_bytes(
    name: str,
    version: str,
    files: dict[str, str | bytes],
    *,
    top_level: str | None = None,
    requires: tuple[str, ...] = (),
    record: bool = True,
) -> bytes:
    dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
    entries: dict[str, str | bytes] = dict(files)
    entries[f"{dist_info}/METADATA"] = metadata_text(name, version, requires)
    entries[f"{dist_info}/WHEEL"] = "Wheel-Version: 1.0\n"
    if top_level is not None:
        entries[f"{dist_info}/top_level.txt"] = top_level
    if record:
        entries[f"{dist_info}/RECORD"] = (
            "".join(f"{path},,\n" for path in entries) + f"{dist_info}/RECORD,,\n"
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in entries.items():
            archive.writestr(path, data)
    return buffer.getvalue()


def simple_sdist(name: str, version: str, body: str = "") -> bytes:
    module = name.replace("-", "_")
    return sdist_bytes(name, version, {f"src/{module}/__init__.py": f"VERSION = {version!r}\n{body}"})


def simple_wheel(name: str, version: str, padding: int = 0) -> bytes:
    module = name.replace("-", "_")
    return wheel_bytes(name, version, {f"{module}/__init__.py": f"VERSION = {version!r}\n" + "#" * padding})


# --- the fake index ------------------------------------------------------------------------------


@dataclass
class Hosted:
    filename: str
    data: bytes
    yanked: bool | str = False
    published_sha256: str | None = None  # what the index claims; defaults to the real digest


@dataclass
class FakeIndex:
    """A PEP 691 JSON simple index; `requests` records every path asked for."""

    url: str = ""
    projects: dict[str, list[Hosted]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)  # path -> number of 503 answers still to give
    html: set[str] = field(default_factory=set)  # projects served as PEP 503 HTML, without digests

    def add(self, project: str, filename: str, data: bytes, **kwargs: object) -> Hosted:
        hosted = Hosted(filename, data, **kwargs)  # type: ignore[arg-type]
        self.projects.setdefault(project, []).append(hosted)
        return hosted

    def page(self, project: str) -> bytes | None:
        files = self.projects.get(project)
        if files is None:
            return None
        if project in self.html:
            links = "".join(
                f'<a href="../../files/{f.filename}"{" data-yanked=" if f.yanked else ""}>{f.filename}</a><br/>'
                for f in files
            )
            return f"<!DOCTYPE html><html><body>{links}</body></html>".encode()
        return json.dumps(
            {
                "meta": {"api-version": "1.1"},
                "name": project,
                "files": [
                    {
                        "filename": f.filename,
                        "url": f"../../files/{f.filename}",  # relative, as indexes may serve them
                        "hashes": {"sha256": f.published_sha256 or hashlib.sha256(f.data).hexdigest()},
                        "yanked": f.yanked,
                        "size": len(f.data),
                    }
                    for f in files
                ],
            }
        ).encode()

    def file(self, filename: str) -> bytes | None:
        for files in self.projects.values():
            for f in files:
                if f.filename == filename:
                    return f.data
        return None


def _handler(index: FakeIndex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            index.requests.append(self.path)
            if index.failures.get(self.path, 0) > 0:
                index.failures[self.path] -= 1
                self.send_error(503)
                return
            body: bytes | None
            ctype = "application/octet-stream"
            if match := re.fullmatch(r"/simple/([^/]+)/", self.path):
                body = index.page(match.group(1))
                html = match.group(1) in index.html
                ctype = "text/html; charset=utf-8" if html else "application/vnd.pypi.simple.v1+json"
            elif match := re.fullmatch(r"/files/([^/]+)", self.path):
                body = index.file(match.group(1))
            else:
                body = None
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that hang up early (refused downloads) are expected


@pytest.fixture
def fake_index() -> Iterator[FakeIndex]:
    index = FakeIndex()
    server = QuietServer(("127.0.0.1", 0), _handler(index))
    index.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv(ENV_VAR, raising=False)


def up(spec: str, index: FakeIndex, cache: Cache, **kwargs: object) -> SourceTree:
    return locate(spec, role="upstream", cache=cache, index_url=index.url, **kwargs)  # type: ignore[arg-type]


# --- choosing files and versions -----------------------------------------------------------------


def _file(filename: str, size: int | None, kind: str = "wheel", pure: bool = False) -> IndexFile:
    return IndexFile(filename, "u", "1.0", kind, pure, None, size)  # type: ignore[arg-type]


def test_choose_file_prefers_smaller_of_pure_wheel_and_sdist() -> None:
    sdist = _file("p-1.0.tar.gz", 100, "sdist")
    pure = _file("p-1.0-py3-none-any.whl", 120, pure=True)
    platform = _file("p-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", 10)
    assert choose_file([sdist, pure, platform]) is sdist
    smaller_pure = _file("p-1.0-py2.py3-none-any.whl", 90, pure=True)
    assert choose_file([sdist, smaller_pure, platform]) is smaller_pure
    other = _file("p-1.0-cp311-cp311-win_amd64.whl", 8)
    assert choose_file([platform, other]) is other  # no pure file: any wheel, the smallest


def test_platform_wheel_only_release(fake_index: FakeIndex, cache: Cache) -> None:
    files: dict[str, str | bytes] = {
        "fastthing/__init__.py": "",
        "fastthing/_c.cpython-311-x86_64-linux-gnu.so": b"\x7fELF",
    }
    data = wheel_bytes("fastthing", "2.0", files)
    fake_index.add("fastthing", "fastthing-2.0-cp311-cp311-manylinux_2_17_x86_64.whl", data)
    fake_index.add("fastthing", "fastthing-2.0-cp311-cp311-win_amd64.whl", data + b"pad")
    tree = up("fastthing==2.0", fake_index, cache)
    assert tree.location == "fastthing-2.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    assert tree.compiled_modules == frozenset({"fastthing._c"})
    assert not (tree.root / "fastthing" / "_c.cpython-311-x86_64-linux-gnu.so").exists()


def test_pure_wheel_or_sdist_whichever_is_smaller(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    fake_index.add("demo", "demo-1.0-py3-none-any.whl", simple_wheel("demo", "1.0", padding=5000))
    fake_index.add(
        "demo", "demo-2.0.tar.gz", simple_sdist("demo", "2.0", body="# " + os.urandom(20000).hex())
    )
    fake_index.add("demo", "demo-2.0-py3-none-any.whl", simple_wheel("demo", "2.0"))
    one = up("demo==1.0", fake_index, cache)
    assert one.location == "demo-1.0.tar.gz"
    assert one.root.name == "src" and one.import_names == ("demo",)
    two = up("demo==2.0", fake_index, cache)
    assert two.location == "demo-2.0-py3-none-any.whl"
    assert (two.root / "demo" / "__init__.py").is_file()
    assert two.sha256 == hashlib.sha256(fake_index.file("demo-2.0-py3-none-any.whl") or b"").hexdigest()


@pytest.fixture
def releases(fake_index: FakeIndex) -> FakeIndex:
    for version in ["0.11.0", "0.11.2", "0.12.0", "0.15.1", "0.16.0", "0.16.1", "0.16.2rc1", "0.17.0"]:
        fake_index.add("vllm", f"vllm-{version}.tar.gz", simple_sdist("vllm", version))
    return fake_index


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("vllm==0.16", "0.16.0"),
        ("vllm==0.16.0", "0.16.0"),
        ("vllm~=0.16.0", "0.16.1"),
        ("vllm>=0.11,<0.12", "0.11.2"),
        ("vllm==0.16.2rc1", "0.16.2rc1"),
        ("vllm>=0.16.2rc1,<0.17", "0.16.2rc1"),
        ("vllm<1", "0.17.0"),
    ],
)
def test_specifier_resolution(releases: FakeIndex, cache: Cache, spec: str, expected: str) -> None:
    tree = up(spec, releases, cache)
    assert tree.version == expected
    assert tree.origin == "index" and tree.name == "vllm"
    assert (tree.root / "vllm" / "__init__.py").read_text().startswith(f"VERSION = {expected!r}")


def test_version_not_found_lists_nearest(releases: FakeIndex, cache: Cache) -> None:
    with pytest.raises(SourceError) as info:
        up("vllm==0.16.5", releases, cache)
    message = str(info.value)
    assert "no release matching ==0.16.5" in message
    assert "0.16.0, 0.16.1, 0.17.0" in message and "\n" not in message


def test_only_prereleases_match(releases: FakeIndex, cache: Cache) -> None:
    with pytest.raises(SourceError, match="only pre-releases"):
        up("vllm>0.16.1,<0.17", releases, cache)


def test_unknown_distribution(fake_index: FakeIndex, cache: Cache) -> None:
    with pytest.raises(SourceError, match="no distribution named 'nothere'") as info:
        up("nothere==1.0", fake_index, cache)
    assert "\n" not in str(info.value)


def test_html_index_fallback(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    fake_index.add("demo", "demo-1.1.tar.gz", simple_sdist("demo", "1.1"), yanked=True)
    fake_index.html.add("demo")
    tree = up("demo>=1", fake_index, cache)
    assert tree.version == "1.0" and tree.import_names == ("demo",)
    assert tree.note == "the index publishes no sha256 for demo-1.0.tar.gz: not verified"


def test_yanked_skipped_unless_pinned(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    fake_index.add("demo", "demo-1.1.tar.gz", simple_sdist("demo", "1.1"), yanked="broken import")
    assert up("demo>=1.0", fake_index, cache).version == "1.0"
    assert locate("demo", role="downstream", cache=cache, index_url=fake_index.url).version == "1.0"
    pinned = up("demo==1.1", fake_index, cache)
    assert pinned.version == "1.1"
    assert pinned.note is not None and "yanked" in pinned.note and "broken import" in pinned.note
    # The note survives a cache hit.
    assert up("demo==1.1", fake_index, cache).note == pinned.note


def test_all_matching_yanked(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.1.tar.gz", simple_sdist("demo", "1.1"), yanked=True)
    with pytest.raises(SourceError, match="yanked"):
        up("demo>=1.0", fake_index, cache)


# --- downloads -----------------------------------------------------------------------------------


def test_hash_mismatch_is_refused_and_partial_file_deleted(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"), published_sha256="0" * 64)
    with pytest.raises(SourceError, match="sha256 mismatch for demo-1.0.tar.gz.*refused.*deleted"):
        up("demo==1.0", fake_index, cache)
    assert [p for p in (cache.root / "downloads").rglob("*") if p.is_file()] == []
    assert not (cache.root / "sources").exists()


def test_download_size_bound(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    with pytest.raises(SourceError, match="larger than the download limit"):
        up("demo==1.0", fake_index, cache, max_download_bytes=100)
    assert [p for p in (cache.root / "downloads").rglob("*") if p.is_file()] == []


def test_download_size_bound_without_published_size(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    with IndexClient(cache, fake_index.url, max_download_bytes=100) as client:
        listing = client.project("demo")
        unsized = IndexFile(**{**listing.files[0].__dict__, "size": None})
        with pytest.raises(SourceError, match="larger than the download limit"):
            client.download(unsized)
    assert [p for p in (cache.root / "downloads").rglob("*") if p.is_file()] == []


def test_server_errors_are_retried(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    fake_index.failures = {"/simple/demo/": 1, "/files/demo-1.0.tar.gz": 1}
    with IndexClient(cache, fake_index.url, backoff=0.0) as client:
        listing = client.project("demo")
        path, _digest = client.download(listing.files[0])
    assert path.read_bytes() == fake_index.file("demo-1.0.tar.gz")
    assert fake_index.requests.count("/simple/demo/") == 2
    assert fake_index.requests.count("/files/demo-1.0.tar.gz") == 2
    fake_index.failures = {"/simple/demo/": 99}
    with IndexClient(cache, fake_index.url, backoff=0.0, retries=1) as client:
        with pytest.raises(SourceError, match="answered 503"):
            client.project("demo")


def test_unreachable_index(cache: Cache) -> None:
    with IndexClient(cache, "http://127.0.0.1:9/simple/", retries=0, timeout=(2.0, 2.0)) as client:
        with pytest.raises(SourceError, match="cannot reach the index"):
            client.project("demo")


def test_index_url_precedence(fake_index: FakeIndex, cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypi_simple

    assert resolve_index_url(None) == pypi_simple.PYPI_SIMPLE_ENDPOINT
    monkeypatch.setenv("PIP_INDEX_URL", fake_index.url)
    assert resolve_index_url(None) == fake_index.url
    assert resolve_index_url("http://explicit/simple/") == "http://explicit/simple/"
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    assert locate("demo==1.0", role="upstream", cache=cache).version == "1.0"
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    explicit = locate(
        "demo==1.0", role="upstream", cache=Cache(cache.root / "other"), index_url=fake_index.url
    )
    assert explicit.version == "1.0"


# --- the cache and --offline ---------------------------------------------------------------------


def test_second_run_does_not_touch_the_network(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    first = up("demo==1.0", fake_index, cache)
    asked = list(fake_index.requests)
    assert asked == ["/simple/demo/", "/files/demo-1.0.tar.gz"]
    second = up("demo==1.0", fake_index, cache)
    third = up("demo==1.0.0", fake_index, cache)  # the same version, spelled otherwise
    assert fake_index.requests == asked
    assert second == first == third
    assert not [p for p in (cache.root / "downloads").rglob("*") if p.is_file()]  # archives are not kept


def test_offline_resolves_specifiers_from_the_cache(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    fake_index.add("demo", "demo-1.1.tar.gz", simple_sdist("demo", "1.1"))
    online = up("demo~=1.0", fake_index, cache)
    asked = len(fake_index.requests)
    assert up("demo~=1.0", fake_index, cache, offline=True) == online
    assert up("demo==1.1", fake_index, cache, offline=True) == online
    assert len(fake_index.requests) == asked
    with pytest.raises(SourceError, match=r"offline: demo==1\.0 .*not in the cache"):
        up("demo==1.0", fake_index, cache, offline=True)
    with pytest.raises(SourceError, match=r"offline: demo 1\.0 \(demo-1\.0\.tar\.gz\) is not in the cache"):
        up("demo<1.1", fake_index, cache, offline=True)
    assert len(fake_index.requests) == asked


def test_offline_with_empty_cache(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    with pytest.raises(
        SourceError, match="offline: the index listing of demo .* is not in the cache"
    ) as info:
        up("demo>=1", fake_index, cache, offline=True)
    assert "--offline" in str(info.value)
    assert fake_index.requests == []


def test_cache_hit_from_another_index_says_so(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add("demo", "demo-1.0.tar.gz", simple_sdist("demo", "1.0"))
    first = up("demo==1.0", fake_index, cache)
    assert first.note is None
    other = locate(
        "demo==1.0", role="upstream", cache=cache, index_url="http://127.0.0.1:9/other/", offline=True
    )
    assert other.root == first.root
    assert other.note == f"demo 1.0 comes from the cache, fetched from {fake_index.url}"


def test_cache_root_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    assert Cache().root == Path(platformdirs.user_cache_dir("apidrift")).absolute()
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert Cache().root == tmp_path / "env"
    assert Cache(tmp_path / "arg").root == tmp_path / "arg"
    api = Cache(tmp_path / "arg").dir("api")
    assert api == tmp_path / "arg" / "api" and api.is_dir()


def test_atomic_writes(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "file.json"
    atomic_write_text(target, "one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


# --- import names, roots and metadata ------------------------------------------------------------


def test_import_names_from_egg_info_top_level_with_lib_layout(fake_index: FakeIndex, cache: Cache) -> None:
    # PyYAML's sdist: packages under lib/, a .pyx-only yaml/ folder at the top, top_level.txt in lib/.
    data = sdist_bytes(
        "PyYAML",
        "6.0.1",
        {
            "setup.py": "",
            "yaml/_yaml.pyx": "",
            "lib/PyYAML.egg-info/PKG-INFO": metadata_text("PyYAML", "6.0.1"),
            "lib/PyYAML.egg-info/top_level.txt": "_yaml\nyaml\n",
            "lib/yaml/__init__.py": "",
            "lib/_yaml/__init__.py": "",
            "tests/test_yaml.py": "",
        },
    )
    fake_index.add("pyyaml", "PyYAML-6.0.1.tar.gz", data)
    tree = up("pyyaml==6.0.1", fake_index, cache)
    assert tree.name == "PyYAML"
    assert tree.import_names == ("_yaml", "yaml")
    assert tree.root.name == "lib" and (tree.root / "yaml" / "__init__.py").is_file()


def test_import_names_from_folders_scikit_learn_sdist(fake_index: FakeIndex, cache: Cache) -> None:
    # meson-built sdists carry no top_level.txt: the package folders themselves tell.
    data = sdist_bytes(
        "scikit_learn",
        "1.5.0",
        {
            "meson.build": "",
            "conftest.py": "",
            "sklearn/__init__.py": "",
            "sklearn/linear_model/__init__.py": "",
            "build_tools/get_comment.py": "",
            "maint_tools/sort_whats_new.py": "",
            "doc/conf.py": "",
            "examples/plot.py": "",
            "benchmarks/bench.py": "",
            "asv_benchmarks/benchmarks/__init__.py": "",
        },
    )
    fake_index.add("scikit-learn", "scikit_learn-1.5.0.tar.gz", data)
    tree = up("scikit-learn==1.5.0", fake_index, cache)
    assert tree.import_names == ("sklearn",)
    assert tree.root.name == "tree"


def test_import_names_from_wheel_record(fake_index: FakeIndex, cache: Cache) -> None:
    data = wheel_bytes(
        "scikit-learn",
        "1.5.0",
        {
            "sklearn/__init__.py": "",
            "sklearn/_isotonic.cpython-311-x86_64-linux-gnu.so": b"",
            "scikit_learn.libs/libgomp-a34b3233.so.1.0.0": b"",
        },
    )
    fake_index.add("scikit-learn", "scikit_learn-1.5.0-cp311-cp311-manylinux_2_17_x86_64.whl", data)
    tree = up("scikit-learn==1.5.0", fake_index, cache)
    assert tree.import_names == ("sklearn",)
    assert tree.compiled_modules == frozenset({"sklearn._isotonic"})


def test_import_names_from_wheel_top_level_and_requires(fake_index: FakeIndex, cache: Cache) -> None:
    requires = ('vllm==0.11.0; extra == "datagen"', "torch>=2")
    data = wheel_bytes(
        "speculators", "0.3.0", {"speculators/__init__.py": "", "helper.py": ""}, top_level="speculators\n",
        requires=requires,
    )  # fmt: skip
    fake_index.add("speculators", "speculators-0.3.0-py3-none-any.whl", data)
    tree = up("speculators==0.3.0", fake_index, cache)
    assert tree.import_names == ("speculators",)
    assert tree.requires == requires


def test_requires_from_requires_txt_for_old_sdists(tmp_path: Path, cache: Cache) -> None:
    data = sdist_bytes(
        "olddist",
        "0.1",
        {
            "PKG-INFO": "Metadata-Version: 1.1\nName: olddist\nVersion: 0.1\n",
            "olddist.egg-info/requires.txt": 'six\n\n[fast]\ncython\n\n[:python_version < "3"]\nfutures\n',
            "olddist.egg-info/top_level.txt": "olddist\n",
            "olddist/__init__.py": "",
        },
    )
    path = tmp_path / "olddist-0.1.tar.gz"
    path.write_bytes(data)
    tree = locate(f"olddist@{path}", role="upstream", cache=cache)
    assert tree.requires == ("six", 'cython; extra == "fast"', 'futures; python_version < "3"')
    assert tree.version == "0.1" and tree.origin == "path" and tree.location == str(path)


def test_name_at_archive_path(tmp_path: Path, cache: Cache) -> None:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    path.write_bytes(simple_wheel("demo", "1.0"))
    tree = locate(f"demo@{path}", role="upstream", cache=cache)
    assert tree.origin == "path" and tree.version == "1.0" and tree.import_names == ("demo",)
    assert tree.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert tree.root.is_relative_to(cache.root)
    again = locate(f"other@{path}", role="upstream", cache=cache)
    assert again.note is not None and "holds the distribution demo" in again.note


def test_name_at_bad_paths(tmp_path: Path, cache: Cache) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        locate(f"demo@{tmp_path / 'missing.whl'}", role="upstream", cache=cache)
    text = tmp_path / "notes.txt"
    text.write_text("hi")
    with pytest.raises(SourceError, match="neither a directory, a wheel"):
        locate(f"demo@{text}", role="upstream", cache=cache)
    fake = tmp_path / "demo-1.0.tar.gz"
    fake.write_text("<html>not found</html>")
    with pytest.raises(SourceError, match="not a readable sdist"):
        locate(f"demo@{fake}", role="upstream", cache=cache)


def make_project(root: Path, layout: str) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "My-Project"\nversion = "0.2.0"\ndependencies = ["vllm>=0.11"]\n'
        "[project.optional-dependencies]\ngpu = [\"torch; sys_platform == 'linux'\"]\n"
    )
    base = root / "src" if layout == "src" else root
    (base / "my_project" / "sub").mkdir(parents=True)
    (base / "my_project" / "__init__.py").write_text("")
    (base / "my_project" / "sub" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_it.py").write_text("")
    (root / "setup.py").write_text("")
    return root


@pytest.mark.parametrize("layout", ["src", "flat"])
def test_directory_project(tmp_path: Path, cache: Cache, layout: str) -> None:
    project = make_project(tmp_path / "proj", layout)
    tree = locate(str(project), role="downstream", cache=cache)
    assert tree.origin == "directory" and tree.name == "My-Project" and tree.version == "0.2.0"
    assert tree.import_names == ("my_project",)
    assert tree.root == (project / "src" if layout == "src" else project)
    assert tree.requires == ("vllm>=0.11", "torch; (sys_platform == 'linux') and extra == \"gpu\"")
    # The package folder itself, and NAME@PATH on the project.
    package = locate(str(tree.root / "my_project"), role="downstream", cache=cache)
    assert (
        package.root == tree.root and package.import_names == ("my_project",) and package.name == "My-Project"
    )
    named = locate(f"my-project@{project}", role="upstream", cache=cache)
    assert named.origin == "path" and named.root == tree.root


def test_directory_source_root_with_several_packages(tmp_path: Path, cache: Cache) -> None:
    root = tmp_path / "code"
    for name in ["alpha", "beta", "docs", "tests"]:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "tool.py").write_text("")
    (root / "conftest.py").write_text("")
    (root / "notes").mkdir()
    tree = locate(str(root), role="downstream", cache=cache)
    assert tree.import_names == ("alpha", "beta", "tool")
    assert tree.name == "code" and tree.version is None


def test_directory_without_python(tmp_path: Path, cache: Cache) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no Python package"):
        locate(str(tmp_path / "empty"), role="downstream", cache=cache)
    with pytest.raises(SpecError):
        locate(str(tmp_path / "empty"), role="upstream", cache=cache)


# --- bare names ----------------------------------------------------------------------------------


def test_bare_downstream_name_prefers_local_folder(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path / "proj", "src")
    monkeypatch.chdir(tmp_path)
    tree = locate("proj", role="downstream", cache=cache)
    assert tree.origin == "directory" and tree.import_names == ("my_project",)
    assert tree.note is not None and "proj is a local folder" in tree.note


def test_bare_downstream_name_uses_installed(
    tmp_path: Path, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tree = locate("packaging", role="downstream", cache=cache)
    assert tree.origin == "installed" and tree.import_names == ("packaging",)
    assert (tree.root / "packaging" / "__init__.py").is_file()
    assert tree.note is not None and tree.note.startswith(
        "packaging is not a local folder: using the installed"
    )


def test_bare_downstream_name_falls_back_to_latest_release(
    tmp_path: Path, fake_index: FakeIndex, cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for version in ["0.2.0", "0.3.0", "0.4.0rc1"]:
        data = simple_sdist("zz_apidrift_fake", version)
        fake_index.add("zz-apidrift-fake", f"zz_apidrift_fake-{version}.tar.gz", data)
    tree = locate("zz-apidrift-fake", role="downstream", cache=cache, index_url=fake_index.url)
    assert tree.version == "0.3.0"
    assert tree.note == (
        "zz-apidrift-fake is neither a local folder nor installed: using the latest release on the index, 0.3.0"
    )


def test_bare_upstream_name_is_never_apidrifts_own_environment(fake_index: FakeIndex, cache: Cache) -> None:
    # `packaging` is installed where apidrift runs; that says nothing about the downstream. Without a
    # downstream environment a bare upstream is the latest release on the index, as for a downstream.
    for version in ["98.0", "99.0", "100.0rc1"]:
        fake_index.add("packaging", f"packaging-{version}.tar.gz", simple_sdist("packaging", version))
    tree = up("packaging", fake_index, cache)
    assert tree.origin == "index" and tree.version == "99.0" and tree.import_names == ("packaging",)
    assert tree.note == (
        "packaging: no version given, and no downstream environment (--python PATH or an active "
        "virtualenv): using the latest release on the index, 99.0"
    )


def test_bare_upstream_name_not_installed_is_the_latest_release(fake_index: FakeIndex, cache: Cache) -> None:
    fake_index.add(
        "zz-apidrift-fake", "zz_apidrift_fake-0.3.0.tar.gz", simple_sdist("zz_apidrift_fake", "0.3.0")
    )
    tree = up("zz-apidrift-fake", fake_index, cache)
    assert tree.version == "0.3.0" and tree.origin == "index"
    assert tree.note is not None and tree.note.endswith("using the latest release on the index, 0.3.0")


def fake_environment(prefix: Path, name: str, version: str) -> Path:
    """A virtualenv-like folder with `name` installed (a package and its .dist-info, RECORD included)."""
    site = prefix / "lib" / "python3.12" / "site-packages"
    module = name.replace("-", "_")
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(f"VERSION = {version!r}\n")
    dist_info = site / f"{module}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(metadata_text(name, version))
    (dist_info / "RECORD").write_text(f"{module}/__init__.py,,\n{dist_info.name}/METADATA,,\n")
    return site


def test_bare_upstream_name_in_the_downstreams_environment(
    tmp_path: Path, fake_index: FakeIndex, cache: Cache
) -> None:
    from apidrift.auditor.sources.written_for import Environment, downstream_environment

    fake_index.add(
        "zz-apidrift-fake", "zz_apidrift_fake-0.3.0.tar.gz", simple_sdist("zz_apidrift_fake", "0.3.0")
    )
    fake_environment(tmp_path / "venv", "zz-apidrift-fake", "0.2.5")
    environment = downstream_environment(tmp_path / "venv" / "bin" / "python")
    assert environment is not None
    tree = up("zz-apidrift-fake", fake_index, cache, environment=environment)
    assert (
        tree.origin == "installed" and tree.version == "0.2.5" and tree.import_names == ("zz_apidrift_fake",)
    )
    assert (tree.root / "zz_apidrift_fake" / "__init__.py").read_text() == "VERSION = '0.2.5'\n"
    assert tree.note == (
        f"zz-apidrift-fake: using the version installed in --python {tmp_path / 'venv' / 'bin' / 'python'}, 0.2.5"
    )
    # Not installed there: the latest release, and the output says where it looked.
    other = Environment(
        "the active virtualenv /v", (tmp_path / "venv" / "lib" / "python3.12" / "site-packages",)
    )
    fake_index.add("packaging", "packaging-99.0.tar.gz", simple_sdist("packaging", "99.0"))
    tree = up("packaging", fake_index, cache, environment=other)
    assert tree.origin == "index" and tree.version == "99.0"
    assert tree.note == (
        "packaging is not installed in the active virtualenv /v: using the latest release on the index, 99.0"
    )


def test_installed_pyyaml_maps_to_yaml(cache: Cache) -> None:
    import importlib.metadata
    import site

    from apidrift.auditor.sources.written_for import Environment

    try:
        importlib.metadata.distribution("PyYAML")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("PyYAML is not installed here")
    here = Environment("this environment", tuple(Path(d) for d in site.getsitepackages()))
    tree = locate("PyYAML", role="upstream", cache=cache, environment=here)
    assert "yaml" in tree.import_names and tree.name == "PyYAML"


def test_module_exports() -> None:
    assert set(sources_module.__all__) == {"SourceTree", "SourceError", "SpecError", "locate"}


# --- the real index --------------------------------------------------------------------------------


def _loose(requirement: str) -> str:
    return re.sub(r"[\s'\"]", "", requirement)


@pytest.mark.network
def test_real_speculators(tmp_path: Path) -> None:
    tree = locate("speculators==0.3.0", role="upstream", cache=Cache(tmp_path / "cache"))
    assert (tree.root / "speculators" / "data_generation" / "vllm_hidden_states_generator.py").is_file()
    assert tree.import_names == ("speculators",)
    assert tree.version == "0.3.0" and tree.origin == "index" and tree.sha256
    assert _loose('vllm==0.11.0; extra == "datagen"') in {_loose(r) for r in tree.requires}


@pytest.mark.network
def test_real_pyyaml_maps_to_yaml(tmp_path: Path) -> None:
    # PyYAML 6.0.1 ships an sdist of about 125 kB with its packages under lib/.
    tree = locate("PyYAML==6.0.1", role="upstream", cache=Cache(tmp_path / "cache"))
    assert "yaml" in tree.import_names
    assert (tree.root / "yaml" / "__init__.py").is_file()
