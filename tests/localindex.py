"""A package index on 127.0.0.1 for tests and benchmarks: PEP 503 pages, PEP 658 metadata files, and
wheels and sdists built in memory from {path: text} dicts. Nothing here runs what it packs."""

from __future__ import annotations

import hashlib
import html
import io
import tarfile
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType


def core_metadata(name: str, version: str, requires: list[str], *, metadata_version: str = "2.1") -> str:
    lines = [f"Metadata-Version: {metadata_version}", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


def wheel_bytes(name: str, version: str, files: dict[str, str], requires: list[str]) -> bytes:
    stem = f"{name.replace('-', '_')}-{version}"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for path, text in files.items():
            zipped.writestr(path, text)
        zipped.writestr(f"{stem}.dist-info/METADATA", core_metadata(name, version, requires))
        zipped.writestr(
            f"{stem}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zipped.writestr(f"{stem}.dist-info/RECORD", "".join(f"{p},,\n" for p in files))
    return buffer.getvalue()


def sdist_bytes(
    name: str, version: str, files: dict[str, str], requires: list[str], *, in_pkg_info: bool = True
) -> bytes:
    """An sdist; with `in_pkg_info=False` the requirements are only in the egg-info's requires.txt."""
    stem = f"{name.replace('-', '_')}-{version}"
    members = {f"{stem}/{path}": text for path, text in files.items()}
    members[f"{stem}/PKG-INFO"] = core_metadata(
        name, version, requires if in_pkg_info else [], metadata_version="2.1" if in_pkg_info else "1.2"
    )
    if not in_pkg_info:
        members[f"{stem}/{name.replace('-', '_')}.egg-info/requires.txt"] = "\n".join(requires) + "\n"
        members[f"{stem}/{name.replace('-', '_')}.egg-info/PKG-INFO"] = core_metadata(
            name, version, [], metadata_version="1.2"
        )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tarred:
        for path, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class LocalIndex:
    """Files under `root`; `add` writes a file (and its .metadata when asked); `url` once started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.projects: dict[
            str, list[tuple[str, str, str | None]]
        ] = {}  # name -> (filename, sha256, metadata sha256)
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    def add(self, name: str, filename: str, data: bytes, metadata: str | None = None) -> None:
        folder = self.root / "files"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / filename).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        meta_digest = None
        if metadata is not None:
            (folder / f"{filename}.metadata").write_text(metadata, encoding="utf-8")
            meta_digest = hashlib.sha256(metadata.encode()).hexdigest()
        self.projects.setdefault(name, []).append((filename, digest, meta_digest))
        self._write_page(name)

    def _write_page(self, name: str) -> None:
        anchors = []
        for filename, digest, meta in self.projects[name]:
            extra = (
                f' data-core-metadata="sha256={meta}" data-dist-info-metadata="sha256={meta}"' if meta else ""
            )
            anchors.append(
                f'<a href="/files/{html.escape(filename)}#sha256={digest}"{extra}>{html.escape(filename)}</a><br>'
            )
        page = self.root / "simple" / name / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><head><meta name=\"pypi:repository-version\" content=\"1.1\"></head><body>\n"
                        + "\n".join(anchors) + "\n</body></html>\n", encoding="utf-8")  # fmt: skip

    def __enter__(self) -> LocalIndex:
        handler = partial(_QuietHandler, directory=str(self.root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/simple/"
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass
