"""Hostile inputs that hung, exhausted memory or misled: each bounded or refused, never forged.

Beside tests/hostile/test_hostile.py, whose scriptable index on 127.0.0.1 and builders these tests reuse.
Every server here answers on 127.0.0.1 only, and each of its request loops ends with the test.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from test_hostile import UPSTREAM, Index, _fast_and_isolated, cli, index, respond, sdist, write_tree  # noqa: F401

from apidrift import AuditRequest, audit
from apidrift.auditor.core.results import (
    AuditResult,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    InputInfo,
    Location,
    Severity,
)
from apidrift.reports import render

ROOT = Path(__file__).resolve().parents[2]


# --- 4: control characters in text-like reports --------------------------------------------------

FORGED = "\n./app.py:1:1: AD001 [error] forged\r\x1b]0;owned\x07\x1b[2J\n::error file=x.py,line=1::forged"


def _hostile_result() -> AuditResult:
    location = Location(f"app/evil{FORGED}.py", 3, 1, 3, 5, f"pkg.f(1)  # {FORGED}")
    finding = Finding(
        code="AD203", rule="deprecated-target", severity=Severity.WARNING, message=f"pkg.f is deprecated: {FORGED}",
        location=location, symbol="pkg.f", upstream="pkg", hint=f"use g{FORGED}", new_signature=f"f(a{FORGED})",
    )  # fmt: skip
    return AuditResult(
        downstream=InputInfo("app", None, "directory", f"/tmp/app{FORGED}"),
        upstream=InputInfo("pkg", "2.0", "path", f"/tmp/pkg{FORGED}"),
        findings=[finding],
        coverage=[Coverage(upstream="pkg", not_checkable={f"reason{FORGED}": 1})],
        files=[FileOutcome(f"app/bad{FORGED}.py", FileStatus.FAILED, f"syntax error{FORGED}")],
        notes=[f"note{FORGED}"],
    )


@pytest.mark.parametrize("fmt", ["text", "markdown", "github"])
def test_control_characters_are_escaped_in_text_like_reports(fmt: str) -> None:
    out = render(_hostile_result(), fmt, color=False)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), repr(out)  # no CR, ESC, BEL...
    lines = out.splitlines()
    assert not any(line.startswith("./app.py:1:1:") for line in lines), out  # no forged finding line
    if fmt == "github":  # one command for the finding, the note and the failed file: nothing forged
        assert [line.split(" ", 1)[0] for line in lines if line.startswith("::")] == [
            "::warning",
            "::notice",
            "::warning",
        ], out
    assert not any(line.startswith("::error") for line in lines), out
    assert "\\x1b]0;owned\\x07" in out  # shown, escaped, so the reader sees what was there


def test_forged_deprecation_message_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upstream = write_tree(tmp_path / "up", {"zzup/__init__.py": (
        "import warnings\n"
        "def call(a):\n"
        f"    warnings.warn({FORGED!r}, DeprecationWarning)\n"
        "    return a\n"
    )})  # fmt: skip
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1)\n"})
    for fmt in ("text", "github"):
        status, out, err = cli(
            capsys,
            str(down),
            "--against",
            f"zzup@{upstream}",
            "--offline",
            "--cache-dir",
            str(tmp_path / "c"),
            "--format",
            fmt,
        )
        assert status in (0, 1), err
        assert "AD203" in out, out  # the deprecation is reported...
        assert not any(line.startswith(("./app.py:1:1:", "::error")) for line in out.splitlines()), (
            out
        )  # ...forging nothing
        assert "\x1b" not in out and "\x07" not in out


# --- 9: the GitHub Action ------------------------------------------------------------------------


def _strict_yaml(text: str) -> object:
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader: Strict, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        keys = [loader.construct_object(key, deep=deep) for key, _ in node.value]
        duplicates = sorted({str(k) for k in keys if keys.count(k) > 1})
        if duplicates:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate keys {duplicates}", node.start_mark
            )
        return loader.construct_mapping(node, deep=deep)

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Strict)


def test_strict_yaml_loader_refuses_duplicate_keys() -> None:
    import yaml

    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate keys"):
        _strict_yaml("a: 1\nb: 2\na: 3\n")


def test_action_yml_has_no_duplicate_keys() -> None:
    action = _strict_yaml((ROOT / "action.yml").read_text())
    assert isinstance(action, dict) and "upload-sarif" in action["inputs"]


def _audit_step() -> str:
    action = _strict_yaml((ROOT / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "audit"]  # type: ignore[index]
    return step["run"]


def test_action_args_are_split_without_glob_expansion(tmp_path: Path) -> None:
    """The action's own audit script, run by bash as the runner does, with a recorder for apidrift."""
    bin_dir = tmp_path / "runner" / "apidrift-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    record = tmp_path / "argv.json"
    recorder = bin_dir / "apidrift"
    recorder.write_text(
        f"#!{sys.executable}\nimport json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\nsys.exit(1)\n"
    )
    recorder.chmod(0o755)
    work = write_tree(
        tmp_path / "work", {"tests/test_a.py": "", "tests/test_b.py": ""}
    )  # what `tests/*` would match
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "DOWNSTREAM": ".",
        "AGAINST": "pkg==2.0",
        "FROM": "", "FAIL_ON": "", "BASELINE": "", "SARIF_FILE": "", "HTML_FILE": "",
        "EXTRA_ARGS": "--exclude tests/* --ignore 'a b' --exclude \"*.pyi\"",
    }  # fmt: skip
    script = tmp_path / "audit.sh"
    script.write_text(_audit_step())
    run = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=work, env=env,
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "output").read_text() == "mode=audit\nexit-code=1\n"
    argv = json.loads(record.read_text())
    assert argv[argv.index("--against") :] == [
        "--against",
        "pkg==2.0",
        "--exclude",
        "tests/*",
        "--ignore",
        "a b",
        "--exclude",
        "*.pyi",
    ]

    env["EXTRA_ARGS"] = "--exclude 'unbalanced"
    record.unlink()
    run = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=work, env=env,
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert run.returncode == 2 and "cannot parse the args input" in run.stderr
    assert not record.exists()


# --- 5 and 10: files of other projects, and unreadable file names, in a listing -------------------


def _wheel(name: str, version: str, files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(
            f"{name}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
    return buffer.getvalue()


def test_files_of_other_projects_in_a_listing_are_skipped(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = {"zzup/__init__.py": "def call(a, b, c):\n    return a\n"}  # would make line 2 below an error
    index.project("zzup", {
        "zzup-1.0.tar.gz": sdist("zzup", "1.0", UPSTREAM),
        "ZZup-1.1.tar.gz": sdist("zzup", "1.1", UPSTREAM),  # the same project, differently spelled
        "evilproj-9.0.tar.gz": sdist("evilproj", "9.0", evil),
        "zzup_extra-9.1.tar.gz": sdist("zzup_extra", "9.1", evil),
        "evilproj-9.2-py3-none-any.whl": _wheel("evilproj", "9.2", evil),
    })  # fmt: skip
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1)\n"})
    status, out, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup>=1",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        "text",
    )
    assert status == 0, out + err
    assert "zzup==1.1" in out and "9.0" not in out and "9.1" not in out and "9.2" not in out, out
    assert not any("evilproj" in hit or "extra" in hit or "9999" in hit for hit in index.hits)
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==9.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert status == 2 and "no release matching ==9.0; nearest: 1.0, 1.1" in err, err


def test_a_file_name_with_a_5000_digit_version_is_skipped(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index.project("zzup", {
        "zzup-1.0.tar.gz": sdist("zzup", "1.0", UPSTREAM),
        "zzup-" + "9" * 5000 + ".tar.gz": sdist("zzup", "9", UPSTREAM),  # int() refuses more than 4,300 digits
        "zzup-1." + "9" * 300 + ".tar.gz": sdist("zzup", "1.9", UPSTREAM),  # a name longer than a file system stores
    })  # fmt: skip
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1)\n"})
    status, out, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup>=1",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        "text",
    )
    assert status == 0, out + err
    assert "zzup==1.0 (index: zzup-1.0.tar.gz)" in out


# --- 1: the relocation search ---------------------------------------------------------------------


def run_cli(
    args: list[str], *, timeout: float = 60, memory: int = 3 << 30, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`apidrift ARGS` in a child process whose address space is capped, killed after `timeout` seconds."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "apidrift", *args], capture_output=True, text=True, timeout=timeout,
                             preexec_fn=cap, cwd=cwd, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"apidrift {' '.join(args[:3])}... still running after {timeout} s")
    return run, time.monotonic() - started


MISSING = 200


@pytest.mark.parametrize("hazard", ["fifo", "zero", "outside", "deep", "big"])
def test_relocation_search_is_bounded(hazard: str, tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "zzup/__init__.py": "def call(a):\n    return a\n",
        "zzup/moved.py": "def gone0(a):\n    return a\n",  # the one genuine relocation
    }
    if hazard == "big":  # every missing name mentioned, none defined: each name made the search reread it all
        files["zzup/big.py"] = "".join(f"# gone{i % MISSING} is not here\n" for i in range(300_000))
    up = write_tree(tmp_path / "up", files)
    deepest = None
    if hazard == "fifo":
        os.mkfifo(up / "zzup" / "zz.py")  # opening it blocks forever
    elif hazard == "zero":
        (up / "zzup" / "zero.py").symlink_to("/dev/zero")  # reading it never ends
    elif hazard == "outside":
        outside = write_tree(tmp_path / "elsewhere", {"evil.py": "def gone1(a):\n    return a\n"})
        (up / "zzup" / "evil.py").symlink_to(outside / "evil.py")
    elif hazard == "deep":
        deepest = up / "zzup" / "d"
        os.mkdir(deepest)
        for _ in range(1499):
            deepest = deepest / "d"
            os.mkdir(deepest)
        (deepest / "leaf.py").write_text("x = 1\n")
    names = ", ".join(f"gone{i}" for i in range(MISSING))
    down = write_tree(
        tmp_path / "down", {"app/__init__.py": f"from zzup import {names}\nimport zzup\nzzup.call(1)\n"}
    )
    report = tmp_path / "report.json"
    try:
        run, elapsed = run_cli(["audit", str(down), "--against", f"zzup@{up}", "--from", "none", "--offline", "--no-config",
                                "--quiet", "--cache-dir", str(tmp_path / "c"), "--format", f"json:{report}"], timeout=45)  # fmt: skip
    finally:
        if deepest is not None:
            from test_hostile import remove_deep

            remove_deep(up / "zzup" / "d")
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    hints = {f["symbol"]: f.get("hint") or "" for f in json.loads(report.read_text())["findings"]}
    assert len(hints) >= MISSING - 1
    relocated = [hint for hint in hints.values() if "zzup.moved.gone0" in hint]
    assert len(relocated) == 1, hints  # still found where it moved...
    assert not any("evil" in hint for hint in hints.values())  # ...never through a link out of the tree
    assert elapsed < (
        8 if hazard == "big" else 30
    )  # "big": each file read once (16 s before, rereading it per name)


# --- 3: a tar header bomb -------------------------------------------------------------------------


def _pax_bomb(path: Path, declared: int, kind: bytes = tarfile.XHDTYPE) -> None:
    """A gzip tar whose first member is an extended header declaring `declared` bytes (of zeros)."""
    import gzip

    header = tarfile.TarInfo("././@PaxHeader")
    header.type = kind
    header.size = declared
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(header.tobuf(format=tarfile.USTAR_FORMAT))
        block = b"\0" * (1 << 20)
        for _ in range(declared // len(block)):
            out.write(block)
        out.write(b"\0" * (declared % len(block) + 512 * 4))


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.GNUTYPE_LONGNAME], ids=["pax", "gnu-longname"])
def test_tar_extended_header_bomb_is_refused_before_it_is_buffered(kind: bytes, tmp_path: Path) -> None:
    import tracemalloc

    from apidrift.auditor.sources.archive import extract_archive
    from apidrift.auditor.sources.specs import SourceError

    bomb = tmp_path / "zzup-1.0.tar.gz"
    _pax_bomb(bomb, 256 << 20, kind)
    assert bomb.stat().st_size < 2 << 20  # 256 MiB declared, under 2 MB on disk
    tracemalloc.start()
    try:
        with pytest.raises(SourceError) as info:
            extract_archive(bomb, tmp_path / "out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak  # never buffered (it was: 256 MiB, and 2 GiB for a 2 MB archive)
    assert re.search(
        r"zzup-1\.0\.tar\.gz: an extended tar header of 268435456 bytes .*refused", str(info.value)
    )
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".tmp-*"))


def test_ordinary_pax_headers_still_read(tmp_path: Path) -> None:
    from apidrift.auditor.sources.archive import extract_archive

    archive = tmp_path / "zzup-1.0.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        name = "zzup-1.0/zzup/" + "long_" * 40 + "name.py"  # over 100 characters: a pax path header
        data = b"def f(a):\n    return a\n"
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.pax_headers = {"comment": "x" * 1000}
        tar.addfile(info, io.BytesIO(data))
    extraction = extract_archive(archive, tmp_path / "out")
    assert (extraction.tree / "zzup" / ("long_" * 40 + "name.py")).read_bytes() == data


# --- 8: a wheel's RECORD is a claim, its files are the facts ----------------------------------------


@pytest.mark.parametrize("claim", ["RECORD", "top_level.txt"])
def test_wheel_record_does_not_claim_modules_it_does_not_ship(
    claim: str, index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("zzup/__init__.py", "def call(a):\n    return a\n")
        archive.writestr("zzup-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zzup\nVersion: 1.0\n")
        if claim == "top_level.txt":
            archive.writestr("zzup-1.0.dist-info/top_level.txt", "zzup\nos\n")
        archive.writestr(
            "zzup-1.0.dist-info/RECORD",
            "zzup/__init__.py,,\nos/__init__.py,,\nos/path.py,,\nzzup-1.0.dist-info/RECORD,,\n",
        )
    index.project("zzup", {"zzup-1.0-py3-none-any.whl": buffer.getvalue()})
    down = write_tree(
        tmp_path / "down",
        {"app/__init__.py": "import os\nimport zzup\nos.getcwd()\nos.path.join('a')\nzzup.call(1)\n"},
    )
    status, out, err = cli(
        capsys,
        str(down),
        "--against",
        "zzup==1.0",
        "--index-url",
        index.url,
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        "text",
    )
    assert status == 0, out + err  # `os` is not this wheel's: nothing about it is reported
    assert "AD001" not in out and "Coverage of zzup: 2 use sites found" in out, out


# --- 2: index responses: decoded size, streaming, an overall deadline -----------------------------


def _listing(index: Index, name: str = "zzup") -> bytes:
    page = {"meta": {"api-version": "1.1"}, "name": name, "files": [
        {"filename": f"{name}-1.0.tar.gz", "url": f"{index.base}/files/{name}-1.0.tar.gz", "hashes": {}}]}  # fmt: skip
    return json.dumps(page).encode()


def _gzip_bomb(prefix: bytes, padding: int) -> bytes:
    """`prefix` then `padding` spaces (valid JSON whitespace would follow a complete object), gzip-compressed."""
    import zlib

    packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    parts = [packer.compress(prefix)]
    block = b" " * (1 << 20)
    for _ in range(padding // len(block)):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    return b"".join(parts)


def test_gzip_listing_bomb_is_refused_by_decoded_size(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracemalloc

    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    bomb = _gzip_bomb(_listing(index)[:-1], 128 << 20)  # 128 MiB of blanks inside the object, ~130 kB sent
    assert len(bomb) < 1 << 20
    index.routes["/simple/zzup/"] = respond(
        bomb, "application/vnd.pypi.simple.v1+json", Content_Encoding="gzip"
    )
    monkeypatch.setenv("APIDRIFT_MAX_LISTING_BYTES", str(8 << 20))
    tracemalloc.start()
    try:
        with IndexClient(Cache(tmp_path / "c"), index.url) as client, pytest.raises(SourceError) as info:
            client.project("zzup")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak  # it was the whole decoded page, and more
    assert "the index page of zzup" in str(
        info.value
    ) and "larger than 8388608 bytes (decoded); refused" in str(info.value)


def test_plain_large_listing_is_refused_while_streamed(index: Index, tmp_path: Path) -> None:
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    body = _listing(index)[:-1] + b" " * (3 << 20) + b"}"
    index.routes["/simple/zzup/"] = respond(body, "application/vnd.pypi.simple.v1+json")
    with IndexClient(Cache(tmp_path / "c"), index.url, max_listing_bytes=1 << 20) as client:
        with pytest.raises(SourceError, match="larger than 1048576 bytes"):
            client.project("zzup")
        index.routes["/simple/zzup/"] = respond(
            _gzip_bomb(_listing(index), 0), "application/vnd.pypi.simple.v1+json", Content_Encoding="gzip"
        )
        assert [f.filename for f in client.project("zzup").files] == [
            "zzup-1.0.tar.gz"
        ]  # a real gzip page reads


def test_dripped_listing_hits_the_overall_deadline(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    body = _listing(index)

    def drip(h: BaseHTTPRequestHandler) -> None:  # one byte every 0.5 s: each socket read succeeds
        h.send_response(200)
        h.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        for i in range(len(body)):
            if index.release.wait(0.5):
                return
            h.wfile.write(body[i : i + 1])
            h.wfile.flush()

    index.routes["/simple/zzup/"] = drip
    monkeypatch.setenv("APIDRIFT_LISTING_TIMEOUT", "3")
    started = time.monotonic()
    with IndexClient(Cache(tmp_path / "c"), index.url, timeout=(2.0, 2.0)) as client:
        with pytest.raises(SourceError, match=r"the index page of zzup .* took longer than 3 s; refused"):
            client.project("zzup")
    assert time.monotonic() - started < 8


def test_dripped_download_hits_the_deadline_without_tiny_reads(index: Index, tmp_path: Path) -> None:
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    data = sdist("zzup", "1.0", UPSTREAM)
    index.project("zzup", {"zzup-1.0.tar.gz": data})

    def drip(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        for i in range(len(data)):
            if index.release.wait(0.5):
                return
            h.wfile.write(data[i : i + 1])
            h.wfile.flush()

    index.routes["/files/zzup-1.0.tar.gz"] = drip
    started = time.monotonic()
    with IndexClient(Cache(tmp_path / "c"), index.url, timeout=(2.0, 2.0), max_download_seconds=2) as client:
        listing = client.project("zzup")
        with pytest.raises(SourceError, match="took longer than 2 s; refused"):
            client.download(listing.files[0])
    assert time.monotonic() - started < 8


def test_limit_variables_are_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    monkeypatch.setenv("APIDRIFT_LISTING_TIMEOUT", "soon")
    with pytest.raises(SourceError, match="APIDRIFT_LISTING_TIMEOUT='soon': expected a positive number"):
        IndexClient(Cache(tmp_path / "c"), "http://127.0.0.1:9/simple/")
    monkeypatch.setenv("APIDRIFT_LISTING_TIMEOUT", "30")
    monkeypatch.setenv("APIDRIFT_MAX_DOWNLOAD_BYTES", "1_000")
    client = IndexClient(Cache(tmp_path / "c"), "http://127.0.0.1:9/simple/")
    assert (client.max_listing_seconds, client.max_download_bytes) == (30.0, 1000)


# --- 10: the smaller ones -------------------------------------------------------------------------


def test_html_file_ids_are_unique_when_slugs_collide() -> None:
    paths = ["a-b.py", "a_b.py", "a b.py", "a-b-py-heading", "a-b.py 2"]
    findings = [
        Finding(code="AD103", rule="too-many-positional", severity=Severity.ERROR, message="m",
                location=Location(path, 1, 1, 1, 2, "f(1)"), symbol="pkg.f", upstream="pkg")
        for path in paths
    ]  # fmt: skip
    result = AuditResult(
        downstream=InputInfo("app", None, "directory", "/app"),
        upstream=InputInfo("pkg", "2", "path", "/pkg"),
        findings=findings,
    )
    page = render(result, "html")
    ids = re.findall(r'\sid="([^"]+)"', page)
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicated == [], duplicated
    sections = re.findall(r'<section class="file" id="([^"]+)" data-file="([^"]+)"', page)
    assert len(sections) == len(paths) and {path for _, path in sections} == set(paths)
    for anchor in re.findall(r'href="#(file-[^"]+)"', page):
        assert anchor in ids  # every link into the per-file sections lands somewhere


def test_diff_of_folders_without_a_version_prints_no_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from apidrift.auditor.cli.main import main

    old = write_tree(tmp_path / "old", {"zzup/__init__.py": "def call(a, b):\n    return a\n"})
    new = write_tree(tmp_path / "new", {"zzup/__init__.py": "def call(a):\n    return a\n"})
    assert main(["diff", f"zzup@{old}", f"zzup@{new}", "--cache-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "None" not in out, out
    assert out.splitlines()[0] == f"API changes from zzup ({old}) to zzup ({new})", out


def test_downstream_fifos_and_symlinks_get_an_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    up = write_tree(tmp_path / "up", UPSTREAM)
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1)\n"})
    outside = write_tree(tmp_path / "outside", {"evil.py": "import zzup\nzzup.call(1, 2)\n"})
    os.mkfifo(down / "app" / "pipe.py")
    (down / "app" / "link.py").symlink_to(outside / "evil.py")
    (down / "app" / "folder").symlink_to(outside)
    (down / "app" / "data.txt").symlink_to(outside / "evil.py")  # not Python, not a folder: no outcome needed
    report = tmp_path / "r.json"
    status, _, err = cli(
        capsys,
        str(down),
        "--against",
        f"zzup@{up}",
        "--offline",
        "--cache-dir",
        str(tmp_path / "c"),
        "--format",
        f"json:{report}",
    )
    assert status == 0, err
    outcomes = {f["path"]: (f["status"], f["reason"]) for f in json.loads(report.read_text())["files"]}
    assert outcomes == {
        "app/__init__.py": ("scanned", None),
        "app/pipe.py": ("skipped", "not a regular file"),
        "app/link.py": ("skipped", "symlink, not followed"),
        "app/folder": ("skipped", "symlink, not followed"),
    }


def test_from_inference_honours_environment_markers() -> None:
    from apidrift.auditor.sources.written_for import choose_old

    requires = ("zzup==0.1; python_version < '1'", "zzup==0.2; sys_platform == 'no-such-platform'",
                "zzup==1.5; python_version >= '3'", "zzup==9.9")  # fmt: skip
    choice = choose_old(None, "zzup", "app", requires)
    assert choice.spec == "zzup==1.5", choice
    assert (
        choose_old(None, "zzup", "app", ('zzup==2.0; extra == "fast"',)).spec == "zzup==2.0"
    )  # extras still count
    never = choose_old(None, "zzup", "app", ("zzup==0.1; python_version < '1'",))
    assert never.spec is None or (never.spec.startswith("zzup==") and "0.1" not in never.spec)


@pytest.mark.parametrize("option", ["--baseline", "--config"])
@pytest.mark.parametrize("hazard", ["fifo", "zero", "folder", "huge"])
def test_baseline_and_config_read_only_bounded_regular_files(
    option: str, hazard: str, tmp_path: Path
) -> None:
    up = write_tree(tmp_path / "up", UPSTREAM)
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1)\n"})
    target = tmp_path / "given"
    if hazard == "fifo":
        os.mkfifo(target)
    elif hazard == "zero":
        target.symlink_to("/dev/zero")
    elif hazard == "folder":
        target.mkdir()
    else:
        with open(target, "wb") as handle:  # sparse: 100 MB claimed, nothing written
            handle.truncate(100 << 20)
    args = [
        "audit",
        str(down),
        "--against",
        f"zzup@{up}",
        "--from",
        "none",
        "--offline",
        "--quiet",
        "--cache-dir",
        str(tmp_path / "c"),
        option,
        str(target),
    ]
    if option == "--baseline":
        args.append("--no-config")
    run, elapsed = run_cli(args, timeout=30, memory=1 << 30)
    assert run.returncode == 2, run.stderr
    assert (
        run.stderr.startswith("apidrift: error: ")
        and run.stderr.count("\n") == 1
        and "Traceback" not in run.stderr
    ), run.stderr
    assert any(word in run.stderr for word in ("not a regular file", "larger than", "is a directory")), (
        run.stderr
    )
    assert elapsed < 20


# --- 6: upstream loading bounded in time and depth ------------------------------------------------


def test_long_assignment_chain_loads_in_linear_time(tmp_path: Path) -> None:
    n = 20_000  # about 300 KB: ran past 5 minutes when every assignment rescanned the module for its docstring
    up = write_tree(
        tmp_path / "up",
        {
            "zzup/__init__.py": "def f0(a):\n    return a\n"
            + "".join(f"f{i} = f{i - 1}\n" for i in range(1, n))
        },
    )
    down = write_tree(tmp_path / "down", {"app.py": "from zzup import f0\nf0(1, 2)\n"})
    run, elapsed = run_cli(["audit", str(down), "--against", f"zzup@{up}", "--from", "none", "--offline", "--no-config", "--quiet",
                            "--cache-dir", str(tmp_path / "c"), "--format", "text"], timeout=60)  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "app.py:2:1: AD103" in run.stdout
    assert elapsed < 30


def test_six_hundred_class_chain_resolves_without_recursion(tmp_path: Path) -> None:
    n = 600
    classes = "class C0:\n    def __init__(self, a):\n        self.a = a\n" + "".join(
        f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, n)
    )
    up = write_tree(tmp_path / "up", {"zzup/__init__.py": classes})
    down = write_tree(
        tmp_path / "down",
        {"app.py": f"from zzup import C{n - 1}\nC{n - 1}(1)\nC{n - 1}(1, 2)\nC{n - 1}(1).a\n"},
    )
    result = audit(AuditRequest(str(down), f"zzup@{up}", old="none", cache_dir=tmp_path / "c", offline=True))
    assert [(f.location.line, f.code) for f in result.findings] == [
        (3, "AD103")
    ]  # inherited __init__(self, a)


def test_module_over_its_load_budget_is_not_checkable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "".join(f"def f{i}(a):\n    return a\n" for i in range(3000))
    up = write_tree(tmp_path / "up", {"zzup/__init__.py": "from zzup.big import f1\n", "zzup/big.py": body})
    down = write_tree(tmp_path / "down", {"app.py": "from zzup.big import f1, nothing\nf1(1, 2)\n"})
    monkeypatch.setenv("APIDRIFT_MODULE_LOAD_SECONDS", "0.001")
    result = audit(AuditRequest(str(down), f"zzup@{up}", old="none", cache_dir=tmp_path / "c", offline=True))
    assert not [f for f in result.findings if f.severity.value == "error"], (
        result.findings
    )  # unknown, not missing
    (coverage,) = result.coverage
    assert coverage.not_checkable.get("load-budget", 0) >= 2, coverage.not_checkable
    assert any(
        "zzup.big" in note and "took longer than the load budget of 0.001 s" in note for note in result.notes
    ), result.notes


def test_mro_matches_cpython_on_random_hierarchies(tmp_path: Path) -> None:
    """The rewritten C3 merge against CPython's own `__mro__` (the classes are our own, built here)."""
    import random

    from apidrift.auditor.core.refs import AttrRef, ModuleRef
    from apidrift.auditor.upstream.api_index import ApiIndex
    from apidrift.auditor.upstream.resolve import ClassValue, Resolver

    rng = random.Random(15)
    for trial in range(10):
        lines, namespace = [], {}
        for i in range(12):
            bases = rng.sample(range(i), k=min(i, rng.randint(0, 3)))
            candidate = f"class K{i}({', '.join(f'K{b}' for b in bases)}):\n    pass\n"
            try:
                exec(candidate, namespace)  # noqa: S102 - CPython decides which hierarchies are consistent
            except TypeError:
                candidate = f"class K{i}:\n    pass\n"
                exec(candidate, namespace)  # noqa: S102
            lines.append(candidate)
        up = write_tree(tmp_path / f"t{trial}", {"zzmro/__init__.py": "".join(lines)})
        resolver = Resolver(ApiIndex(up, ["zzmro"]))
        for i in range(12):
            value = resolver.resolve(AttrRef(ModuleRef("zzmro"), f"K{i}"))
            assert isinstance(value, ClassValue)
            mro = resolver.mro(value.info)
            assert mro is not None
            ours = [e.path.rsplit(".", 1)[-1] if not isinstance(e, str) else e for e in mro]
            assert ours == [c.__name__ for c in namespace[f"K{i}"].__mro__[:-1]], (trial, i)


def test_local_upstream_links_out_of_the_tree_and_fifo_metadata(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "elsewhere", {"evil.py": "def f(a, b, c):\n    return a\n"})
    up = write_tree(tmp_path / "up", {"zzup/__init__.py": "def call(a):\n    return a\n"})
    (up / "zzup" / "evil.py").symlink_to(outside / "evil.py")  # a module that is a link out of the tree
    os.mkfifo(up / "PKG-INFO")  # opening a metadata FIFO would block the audit forever
    os.mkfifo(up / "pyproject.toml")
    down = write_tree(
        tmp_path / "down", {"app.py": "from zzup.evil import f\nimport zzup\nf(1)\nzzup.call(1)\n"}
    )
    run, elapsed = run_cli(["audit", str(down), "--against", f"zzup@{up}", "--from", "none", "--offline", "--no-config", "--quiet",
                            "--cache-dir", str(tmp_path / "c"), "--format", "text"], timeout=30)  # fmt: skip
    assert run.returncode == 0, (
        run.stdout + run.stderr
    )  # the outside file's f(a, b, c) is never read: no AD102
    assert "AD102" not in run.stdout and "a link out of its tree" in run.stdout, run.stdout
    assert elapsed < 20


# --- issue 36, 1 and 3: the `__getattr__` evaluator's bounds are never evidence -------------------

_LAZY_NAMES = [f"name_{i:05d}" for i in range(12_000)]
# Each builds a value larger than the evaluator follows before serving the name CPython serves (run
# for real, each module hands back the name asked: `import zzup.a; zzup.a.name_00001`).
_BIG_VALUE_SHIMS = {
    "join": f"_LAZY = {_LAZY_NAMES!r}\n\ndef __getattr__(name):\n    doc = ', '.join(_LAZY)\n"
    "    if name in _LAZY:\n        return name\n    raise AttributeError(name)\n",
    "concatenation": f"_S = {'x' * 60_000!r}\n\ndef __getattr__(name):\n    doc = _S + _S\n"
    "    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
    "format_width": "def __getattr__(name):\n    doc = '{:>3000000000}'.format(name)\n"
    "    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
    "percent_width": "def __getattr__(name):\n    doc = '%3000000000s' % name\n"
    "    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
    "fstring": "_S = 'y' * 1\n_T = " + repr("z" * 60_000) + "\n\ndef __getattr__(name):\n"
    "    doc = f'{_T}{_T}{name}'\n    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
    "starred": "_T = " + repr(["z"] * 60_000) + "\n\ndef __getattr__(name):\n"
    "    doc = [*_T, *_T]\n    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
    # 526 s for two names when only steps were counted: 100,000 sorts of 100,000 characters
    "sorted_in_a_loop": "_S = " + repr("".join(chr(97 + i % 26) for i in range(100_000))) + "\n\n"
    "def __getattr__(name):\n    for c in _S:\n        t = sorted(_S)\n"
    "    if name == 'name_00001':\n        return name\n    raise AttributeError(name)\n",
}


def test_an_evaluation_bound_is_not_checkable_never_a_miss(tmp_path: Path) -> None:
    files = {
        "zzup/__init__.py": "def f(a):\n    return a\n",
        **{f"zzup/{shape}.py": code for shape, code in _BIG_VALUE_SHIMS.items()},
    }
    up = write_tree(tmp_path / "up", files)
    uses = "".join(
        f"import zzup.{shape}\nzzup.{shape}.name_00001\nzzup.{shape}.name_00002\n"
        for shape in _BIG_VALUE_SHIMS
    )
    down = write_tree(tmp_path / "down", {"app.py": uses + "zzup.f(1)\n"})
    report = tmp_path / "report.json"
    run, elapsed = run_cli(["audit", str(down), "--against", f"zzup@{up}", "--from", "none", "--offline", "--no-config",
                            "--quiet", "--cache-dir", str(tmp_path / "c"), "--format", f"json:{report}"],
                           timeout=90, memory=1 << 30)  # fmt: skip
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    data = json.loads(report.read_text())
    assert not data["findings"], data["findings"]
    (coverage,) = data["coverage"]
    assert coverage["not_checkable"].get("evaluation-limit", 0) == 2 * len(_BIG_VALUE_SHIMS), coverage
    assert elapsed < 45


def test_alias_chains_and_namespace_loops_are_bounded(tmp_path: Path) -> None:
    """20,000 aliases of a `__getattr__` table, the first changed (CPython serves `y`), and a loop
    binding a billion names through `globals()`: each not checkable, quickly, never a miss."""
    n = 20_000
    chain = (
        "a0 = {'x': 1}\n"
        + "".join(f"a{i} = a{i - 1}\n" for i in range(1, n))
        + "a0['y'] = 2\n\n"
        + f"def __getattr__(name):\n    if name in a{n - 1}:\n        return name\n    raise AttributeError(name)\n"
    )
    letters = "".join(chr(0x4E00 + i) for i in range(1000))
    loop = f"_S = {letters!r}\nfor _c in _S:\n    for _d in _S:\n        for _e in _S:\n            globals()[_c + _d + _e] = 1\n"
    up = write_tree(
        tmp_path / "up",
        {"zzup/__init__.py": "def f(a):\n    return a\n", "zzup/chain.py": chain, "zzup/loop.py": loop},
    )
    down = write_tree(
        tmp_path / "down",
        {"app.py": "import zzup.chain\nimport zzup.loop\nzzup.chain.y\nzzup.loop.x\nzzup.f(1)\n"},
    )
    report = tmp_path / "report.json"
    run, elapsed = run_cli(["audit", str(down), "--against", f"zzup@{up}", "--from", "none", "--offline", "--no-config",
                            "--quiet", "--cache-dir", str(tmp_path / "c"), "--format", f"json:{report}"],
                           timeout=90, memory=1 << 30)  # fmt: skip
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    data = json.loads(report.read_text())
    assert not data["findings"], data["findings"]
    (coverage,) = data["coverage"]
    assert coverage["not_checkable"].get("evaluation-limit", 0) >= 1, coverage
    assert elapsed < 45


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        # a chain 3,000 values deep: hashing or reading it would recurse as deep
        (
            ["a0 = pkg.A()", *(f"a{i} = a{i - 1}.m()" for i in range(1, 3000)), "a2999.removed()"],
            "value-depth",
        ),
        # a name bound 2,000 times over itself: each use would read every binding
        (["b = pkg.A()", *(f"b = pkg.A() if {i} else b.m()" for i in range(2000)), "b.removed()"], None),
    ],
    ids=["deep-chain", "many-bindings"],
)
def test_values_beyond_the_evaluators_bounds_are_counted_not_an_abort(
    body: list[str], reason: str | None, tmp_path: Path
) -> None:
    """Valid Python that the value model cannot follow to the end: the file is scanned (no AD901, no
    scanner error), in bounded time, and the uses past the bound are counted as not checkable, not
    reported as errors and not silently "checked". Before the bounds, the first file was a scanner
    error (an AD901 error) and the second took 8 s for 2,000 lines (quadratic)."""
    write_tree(tmp_path / "up", {"pkg/__init__.py": "class A:\n    def m(self):\n        return self\n"})
    write_tree(tmp_path / "down", {"app.py": "import pkg\n" + "\n".join(body) + "\n"})
    started = time.process_time()
    result = audit(
        AuditRequest(str(tmp_path / "down"), f"pkg@{tmp_path / 'up'}", cache_dir=str(tmp_path / "c"))
    )
    assert time.process_time() - started < 60  # a bound, not a benchmark: seconds here
    assert [f.code for f in result.findings] == []
    (coverage,) = result.coverage
    unknown = {k: v for k, v in coverage.not_checkable.items() if k.startswith("receiver-unknown")}
    assert unknown, coverage.not_checkable
    if reason is not None:
        assert unknown.get(f"receiver-unknown:{reason}", 0) >= 1, unknown
