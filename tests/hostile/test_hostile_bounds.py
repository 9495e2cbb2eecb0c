"""Hostile inputs on `bump`, `impact` and the reports: bounded, refused or skipped with a reason, never
a hang, an "internal error" or a forged line.

Beside tests/hostile/test_hostile.py, whose scriptable index on 127.0.0.1 and builders these tests reuse.
Every server here listens on 127.0.0.1 only, and each of its loops is bounded and ends with the test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from test_hostile import Index, _fast_and_isolated, index, respond, write_tree  # noqa: F401
from test_hostile_limits import _wheel

from apidrift.auditor.cache import Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.sources.index_client import IndexClient

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(status: int, err: str, *needles: str) -> None:
    assert status == 2, err
    assert err.startswith("apidrift: error: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# --- 4: PEP 658 metadata under a deadline; discovery's page fetched once, capped -------------------


def _drip(index: Index, body: bytes, every: float = 0.5, at_most: int = 30) -> object:
    """Send `body` one byte every `every` seconds (each socket read succeeds), at most `at_most` bytes."""

    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        for i in range(min(len(body), at_most)):
            if index.release.wait(every):
                return
            h.wfile.write(body[i : i + 1])
            h.wfile.flush()

    return handle


def _project_with_metadata(index: Index, name: str, requires: str) -> bytes:
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nRequires-Dist: {requires}\n".encode()
    wheel = f"{name}-1.0-py3-none-any.whl"
    index.project(
        name,
        {wheel: _wheel(name, "1.0", {f"{name}/__init__.py": ""})},
        **{wheel: {"core-metadata": {"sha256": hashlib.sha256(metadata).hexdigest()}}},
    )
    index.routes[f"/files/{wheel}.metadata"] = respond(metadata)
    return metadata


def test_dripped_metadata_file_hits_the_deadline_in_discovery(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.impact.inputs import discover

    metadata = _project_with_metadata(index, "cand", "zzup>=1")
    index.routes["/files/cand-1.0-py3-none-any.whl.metadata"] = _drip(index, metadata)  # type: ignore[assignment]
    monkeypatch.setenv("APIDRIFT_LISTING_TIMEOUT", "2")
    candidates = tmp_path / "candidates.txt"
    candidates.write_text("cand\n")
    started = time.monotonic()
    (found,) = discover(candidates, "zzup", "2.0", Cache(tmp_path / "c"), index.url, False)
    assert time.monotonic() - started < 8
    assert found.dependent is None and found.reason is not None, found
    assert "the core metadata took longer than 2 s; refused" in found.reason, found.reason
    # The project page was read once: the metadata links come from the same (capped) request.
    assert index.hits.count("/simple/cand/") == 1, index.hits


def test_dripped_metadata_file_hits_the_deadline_for_releases_that_require_it(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.sources.dependents import releases_requiring

    metadata = _project_with_metadata(index, "cand", "zzup>=1")
    index.routes["/files/cand-1.0-py3-none-any.whl.metadata"] = _drip(index, metadata)  # type: ignore[assignment]
    monkeypatch.setenv("APIDRIFT_LISTING_TIMEOUT", "2")
    started = time.monotonic()
    with IndexClient(Cache(tmp_path / "c"), index.url) as client:
        with pytest.raises(Exception, match="the metadata of cand-1.0-py3-none-any.whl took longer than 2 s"):
            client.metadata(client.project("cand").files[0])
        found = releases_requiring(client, "cand", "zzup")  # falls back to the small wheel: no answer
    assert time.monotonic() - started < 12
    assert found.lines == [] and found.read == 1, found


def test_discovery_page_is_capped_like_any_listing(
    index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.impact.inputs import discover

    _project_with_metadata(index, "cand", "zzup>=1")
    page = index.routes["/simple/cand/"]
    served = []

    def first_small_then_huge(h: BaseHTTPRequestHandler) -> None:
        served.append(1)
        if len(served) == 1:
            page(h)
        else:  # what a second request would meet: an endless page, 3 MiB here
            respond(b"{" + b" " * (3 << 20), "application/vnd.pypi.simple.v1+json")(h)

    index.routes["/simple/cand/"] = first_small_then_huge
    monkeypatch.setenv("APIDRIFT_MAX_LISTING_BYTES", str(1 << 20))
    candidates = tmp_path / "candidates.txt"
    candidates.write_text("cand\n")
    (found,) = discover(candidates, "zzup", "2.0", Cache(tmp_path / "c"), index.url, False)
    assert found.dependent is not None and found.how == "metadata", found
    assert found.requirements == ("zzup>=1",)
    assert len(served) == 1
    with IndexClient(Cache(tmp_path / "c2"), index.url) as client:  # a fresh client meets the huge page
        with pytest.raises(Exception, match="larger than 1048576 bytes"):
            client.project_page("cand")


# --- 7 and 8: the impact results folder: no write through a link, no forged row trusted -----------


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """pkg 1.0 (old/) and 2.0 (new/), and two dependents: one it breaks, one it does not."""
    from test_impact import NEW_PKG, OLD_PKG, pyproject

    write_tree(tmp_path / "old", {"pkg/__init__.py": OLD_PKG, "pyproject.toml": pyproject("pkg", "1.0", [])})
    write_tree(tmp_path / "new", {"pkg/__init__.py": NEW_PKG, "pyproject.toml": pyproject("pkg", "2.0", [])})
    for name, source in (
        ("broken", "import pkg\n\ns = pkg.Scheduler(1)\n"),
        ("clean", "import pkg\n\npkg.connect\n"),
    ):
        write_tree(
            tmp_path / "deps" / name,
            {f"{name}/__init__.py": source, "pyproject.toml": pyproject(name, "0.1", ["pkg>=1"])},
        )
    return tmp_path


def impact(capsys: pytest.CaptureFixture[str], world: Path, *extra: str) -> tuple[int, str, str]:
    return run(
        capsys, "impact", f"pkg@{world / 'new'}", "--from", f"pkg@{world / 'old'}", "--dependents",
        str(world / "deps"), "--results", str(world / "results"), "--cache-dir", str(world / "cache"),
        "--offline", "--jobs", "1", "--quiet", "--fail-on", "never", *extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("planted", "resume"), [("dependents.parquet", False), ("findings.parquet", False), ("dependents.jsonl", True),
                            ("findings.jsonl", True), ("dependents.jsonl", False)],
)  # fmt: skip
def test_impact_never_writes_through_a_link_in_its_results_folder(
    world: Path, capsys: pytest.CaptureFixture[str], planted: str, resume: bool
) -> None:
    victim = world / "victim.txt"
    victim.write_text("precious\n")
    results = world / "results"
    results.mkdir()
    if resume:  # a finished run first: --resume then appends
        status, _, err = impact(capsys, world)
        assert status == 0, err
        (results / planted).unlink()
    (results / planted).symlink_to(victim)
    status, _, err = impact(capsys, world, *(["--resume"] if resume else []))
    one_line_error(status, err, f"{results / planted} is a symbolic link; refused")
    assert victim.read_text() == "precious\n"
    assert (results / planted).is_symlink()


def test_parquet_is_renamed_into_place_not_written_through_a_late_link(world: Path, tmp_path: Path) -> None:
    """A link planted after the run started (past the check) is replaced, its target never written."""
    pytest.importorskip("pyarrow")
    from apidrift.auditor.impact.results import ImpactResult, ResultStore

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    store = ResultStore(tmp_path / "results")
    (tmp_path / "results" / "dependents.parquet").symlink_to(victim)
    store.write_parquet(ImpactResult(release={}, old={}))
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "results" / "dependents.parquet").is_symlink()
    with pytest.raises(RuntimeError, match="is a symbolic link; refused"):
        (tmp_path / "results" / "dependents.jsonl").symlink_to(victim)
        store.append({"key": "k", "dependent": "d", "status": "clean"})
    assert victim.read_text() == "precious\n"


def _rows(results: Path) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in (results / "dependents.jsonl").read_text().splitlines()]
    return {str(row["dependent"]): row for row in rows}


def test_a_forged_row_does_not_replace_a_verdict_on_resume(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = impact(capsys, world, "--format", "json")
    assert status == 0, err
    assert {r["dependent"]: r["status"] for r in json.loads(out)["dependents"]} == {
        "broken": "broken",
        "clean": "clean",
    }
    results = world / "results"
    forged = dict(_rows(results)["broken"], status="clean", errors=0, by_rule={})
    garbage = [
        forged,  # a verdict changed, its check left as it was
        {**forged, "check": "0" * 32},
        {"key": [1], "status": "clean"},
        {"key": forged["key"], "status": "clean", "dependent": 5, "errors": "many", "by_rule": []},
        {"key": forged["key"], "status": "nonsense"},
        ["not", "a", "row"],
        "x" * 100,
    ]
    with open(results / "dependents.jsonl", "a") as out_file:
        for item in garbage:
            out_file.write(json.dumps(item) + "\n")
        out_file.write("[" * 100_000 + "\n")  # deeper than the parser recurses
    with open(results / "findings.jsonl", "a") as out_file:
        out_file.write(json.dumps({"key": [1], "attempt": None}) + "\n")
        out_file.write(json.dumps({"key": forged["key"], "attempt": forged["attempt"], "severity": "info",
                                   "code": "AD999", "rule": "forged", "message": "@x", "symbol": "s"}) + "\n")  # fmt: skip
    status, out, err = impact(capsys, world, "--resume", "--format", "json")
    assert status == 0, err
    report = json.loads(out)
    assert {r["dependent"]: r["status"] for r in report["dependents"]} == {
        "broken": "broken",
        "clean": "clean",
    }
    assert any("without a valid check" in note and "not reused" in note for note in report["notes"]), report[
        "notes"
    ]
    assert any("malformed" in note for note in report["notes"]), report["notes"]
    assert any("1 dependent already audited" in note for note in report["notes"]), report["notes"]
    # Rows written by apidrift itself are reused, with their findings.
    status, out, err = impact(capsys, world, "--resume", "--format", "json")
    report = json.loads(out)
    assert any("2 dependents already audited" in note for note in report["notes"]), report["notes"]
    assert {r["dependent"]: r["errors"] for r in report["dependents"]} == {"broken": 1, "clean": 0}
    assert all("check" not in row for row in report["dependents"])


# --- 8: hostile metadata and lock files --------------------------------------------------------------

DEEP_TOML = "x = " + "[" * 200_000 + "]" * 200_000 + "\n"
LONG_VERSION = "1" * 5000


@pytest.mark.parametrize(
    "project",
    [
        '[project]\nname = "app"\nversion = "1"\ndependencies = ["zzup"]\noptional-dependencies = "x"\n',
        '[project]\nname = "app"\nversion = "1"\ndependencies = 5\noptional-dependencies = {a = ["zzup"]}\n',
        '[project]\nname = "app"\noptional-dependencies = {a = 5, 7 = ["zzup"]}\n',
        '[project]\nname = "app"\n' + DEEP_TOML.replace("x = ", "dependencies = "),
        '[tool.apidrift]\nfail-on = "error"\n' + DEEP_TOML,
        f'[project]\nname = "app"\ndependencies = ["zzup=={LONG_VERSION}"]\n',
        f'[project]\nname = "app"\ndependencies = ["zzup>={LONG_VERSION}.*"]\n',
    ],
    ids=["extras-string", "deps-int", "extras-values", "deep-deps", "deep-config", "long-pin", "long-range"],
)
def test_hostile_pyproject_of_the_downstream(
    project: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    up = write_tree(tmp_path / "up", {"zzup/__init__.py": "def call(a):\n    return a\n"})
    down = write_tree(tmp_path / "down", {"app/__init__.py": "import zzup\nzzup.call(1, 2)\n"})
    (down / "pyproject.toml").write_text(project)
    args = ["audit", str(down), "--against", f"zzup@{up}", "--offline", "--cache-dir", str(tmp_path / "c")]
    if "tool.apidrift" in project:
        args += ["--config", str(down / "pyproject.toml")]
        status, _, err = run(capsys, *args)
        one_line_error(status, err, "invalid TOML: nested too deeply to read")
        return
    status, out, err = run(capsys, *args, "--no-config")
    assert status == 1, err  # the audit ran: the call with two arguments is found
    assert "AD103" in out and "internal error" not in err, out + err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("Pipfile.lock", '{"_meta": {}, "default": ' + "[" * 200_000 + "]" * 200_000 + "}", "not valid JSON (nested too deeply to read)"),
        ("uv.lock", "version = 1\n" + DEEP_TOML, "not valid TOML (nested too deeply to read)"),
        ("poetry.lock", DEEP_TOML, "not valid TOML (nested too deeply to read)"),
        ("pyproject.toml", '[project]\nname = "app"\ndependencies = 5\noptional-dependencies = "x"\n', None),
        ("pyproject.toml", f'[project]\nname = "app"\ndependencies = ["zzup=={LONG_VERSION}"]\n', None),
        ("requirements.txt", f"zzup=={LONG_VERSION}\nzzup>={LONG_VERSION}\n", None),
    ],
    ids=["deep-pipfile", "deep-uv", "deep-poetry", "pyproject-types", "pyproject-long", "requirements-long"],
)  # fmt: skip
def test_hostile_lock_files_in_bump(
    name: str, content: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_tree(tmp_path / "p", {"app/__init__.py": "import zzup\n"})
    empty = '{"_meta": {}, "default": {}}' if name == "Pipfile.lock" else ""
    old = write_tree(tmp_path / "old", {name: empty}) / name
    new = write_tree(tmp_path / "new", {name: content}) / name
    status, out, err = run(
        capsys, "bump", str(project), "--old", str(old), "--new", str(new), "--offline", "--cache-dir",
        str(tmp_path / "c"),
    )  # fmt: skip
    if message is not None:
        one_line_error(status, err, message)
        return
    assert status == 0 and "internal error" not in err, out + err
    assert "Changed packages: none" in out, out
    if "==" in content:
        assert "not a requirement; left out" in out, out  # said, not silently dropped


def test_requirements_with_unreadable_versions_are_skipped() -> None:
    from apidrift.auditor.impact.inputs import pin_excluding, requirements_on
    from apidrift.auditor.sources.written_for import choose_old

    for line in (f"zzup=={LONG_VERSION}", f"zzup>={LONG_VERSION}", f"zzup~={LONG_VERSION}.1"):
        assert requirements_on([line, "zzup<3"], "zzup")[0].specifier.contains("2.0")
        assert pin_excluding([line], "zzup", "2.0") is None
        choice = choose_old(None, "zzup", "app", (line,), "2.0")
        assert choice.spec is None or LONG_VERSION not in choice.spec


# --- 6: bump and impact reports escape what they print; Markdown makes nothing live ----------------

LIVE = (
    "ping @octocat and @org/team, see https://evil.example/x and www.evil.example or mail a@evil.example #12"
)


def _bump_result(text: str) -> object:
    from test_hostile_limits import _hostile_result

    from apidrift.auditor.bump import BumpResult, FileRead, PackageChange

    audit = _hostile_result()
    audit.findings = [
        dataclasses.replace(f, message=f"{f.message} {text}", upstream="pkg") for f in audit.findings
    ]
    change = PackageChange("pkg", f"pkg{text}", "1.0", f"2.0{text}", "upgrade", ("uv.lock",), "audited",
                           findings=list(audit.findings), coverage=audit.coverage[0], notes=[f"note {text}"])  # fmt: skip
    skipped = PackageChange(
        "other", f"other{text}", "1", "2", "upgrade", status="not audited", reason=f"why {text}"
    )
    files = [FileRead("new", f"work tree{text}", f"uv.lock{text}", "uv", 3)]
    return BumpResult(
        audit.downstream, f"old{text}", f"new{text}", files, [change, skipped], audit, [f"n {text}"]
    )


def _impact_result(text: str) -> object:
    from apidrift.auditor.impact.results import ImpactResult

    finding = {"code": "AD203", "rule": "deprecated-target", "severity": "warning", "symbol": f"pkg.f{text}",
               "message": f"pkg.f is deprecated: {text}", "classification": None, "path": f"a{text}.py", "line": 1}  # fmt: skip
    rows = [
        {"key": "a", "dependent": f"dep{text}", "version": f"1{text}", "status": "at-risk", "warnings": 1,
         "by_rule": {"AD203": 1}, "found": 1, "checked": 1, "findings": [finding], "notes": [text]},
        {"key": "b", "dependent": f"bad{text}", "status": "error", "error": f"failed: {text}", "findings": []},
    ]  # fmt: skip
    release = {"label": f"pkg==2.0{text}"}
    return ImpactResult(
        release, {"label": f"pkg==1.0{text}"}, rows, [{"name": f"x{text}", "reason": text}], [text]
    )


def _renderers() -> dict[str, object]:
    from apidrift.reports import bump, impact_markdown, impact_text

    return {
        "bump-text": lambda t: bump.render_text(_bump_result(t)),  # type: ignore[arg-type]
        "bump-markdown": lambda t: bump.render_markdown(_bump_result(t)),  # type: ignore[arg-type]
        "impact-text": lambda t: impact_text.render(_impact_result(t)),  # type: ignore[arg-type]
        "impact-markdown": lambda t: impact_markdown.render(_impact_result(t)),  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("which", ["bump-text", "bump-markdown", "impact-text", "impact-markdown"])
def test_bump_and_impact_reports_escape_control_characters(which: str) -> None:
    from test_hostile_limits import FORGED

    out = _renderers()[which](FORGED)  # type: ignore[operator]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), repr(out)  # no CR, ESC, BEL...
    lines = out.splitlines()
    assert not any(line.lstrip().startswith(("./app.py:1:1:", "::error")) for line in lines), out
    assert "\\x1b]0;owned\\x07" in out  # shown, escaped


def _live_words(markdown: str) -> list[str]:
    """@mentions, URLs, e-mail addresses and issue references GitHub would make live: outside code spans
    and outside the target of a deliberate link."""
    text = re.sub(r"\]\([^)\s]*\)", "]", markdown)  # [label](target): the target is ours
    text = re.sub(r"(`+)(?:(?!\1).)+?\1", " ", text)  # code spans
    return re.findall(r"(?<![\w\\])@\w|://|\bwww\.|(?<![\w&])#\d", text)


@pytest.mark.parametrize("which", ["audit", "bump-markdown", "impact-markdown", "plan"])
def test_markdown_outputs_make_no_mention_or_link_live(which: str) -> None:
    from test_hostile_limits import _hostile_result

    from apidrift.reports import render

    if which == "audit":
        result = _hostile_result()
        result.findings[0] = dataclasses.replace(
            result.findings[0], message=f"{result.findings[0].message} {LIVE}"
        )
        result.notes.append(LIVE)
        out = render(result, "markdown")
    elif which == "plan":
        from apidrift.reports.markdown import cell

        out = cell(LIVE)  # plan's Markdown writes every untrusted text through `cell`
    else:
        out = _renderers()[which](LIVE)  # type: ignore[operator]
    assert "@octocat" in out and "evil.example/x" in out  # shown...
    assert _live_words(out) == [], out  # ...but nothing live


# --- 5: --scheduler to something that is not a Dask scheduler ---------------------------------------


@pytest.fixture
def not_dask() -> Iterator[tuple[str, list[bytes]]]:
    """A TCP server on 127.0.0.1 that accepts and then sends what the test puts in `say` (nothing: silent)."""
    say: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        for _ in range(600):  # at most 60 s, ended with the test
            if stop.is_set():
                return
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if say == [b"hang up"]:
                conn.close()
                continue
            held.append(conn)
            for data in say:
                conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}", say
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.parametrize("speaks", ["silence", "http", "huge-length", "hang-up", "tls"])
def test_scheduler_that_is_not_dask_is_a_one_line_error_within_the_timeout(
    speaks: str, world: Path, not_dask: tuple[str, list[bytes]], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    pytest.importorskip("distributed")
    from apidrift.auditor.impact import run as run_module

    monkeypatch.setattr(run_module, "SCHEDULER_TIMEOUT", 2.0)
    address, say = not_dask
    expected = {
        "silence": "no Dask handshake within 2 s; is",
        "http": "does not speak Dask's protocol",
        "huge-length": "does not speak Dask's protocol (its first message announces 4294967296 bytes)",
        "hang-up": "closed the connection before its Dask handshake",
        "tls": "tls:// needs Dask's TLS configuration",
    }[speaks]
    if speaks == "http":
        say.append(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    elif speaks == "huge-length":
        say.append((1 << 32).to_bytes(8, sys.byteorder) + b"x" * 64)
    elif speaks == "tls":
        address = "tls://127.0.0.1:1"
    elif speaks == "hang-up":
        say.append(b"hang up")
    started = time.monotonic()
    status, _, err = impact(capsys, world, "--scheduler", address)
    assert time.monotonic() - started < 8
    one_line_error(status, err, expected)


# --- 9: links at the base as in the work tree; a hard memory limit; import names learned in bounds ---


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def _linked_repo(root: Path, target: str, *, in_base: bool = True, in_work_tree: bool = True) -> Path:
    """repo/project/requirements.txt a link to `target` (at the base commit and/or in the work tree)."""
    project = write_tree(
        root / "repo" / "project", {"app/__init__.py": "import zzup\n", "reqs/base.txt": "zzup==1.0\n"}
    )
    write_tree(root / "repo", {"outside.txt": "leaked==1.0\n"})
    _git(root / "repo", "init", "-q", "-b", "main")
    if in_base:
        (project / "requirements.txt").symlink_to(target)
    else:
        (project / "requirements.txt").write_text("zzup==1.0\n")
    _git(root / "repo", "add", "-A")
    _git(root / "repo", "commit", "-q", "-m", "base")
    (project / "reqs" / "base.txt").write_text("zzup==2.0\n")
    (project / "requirements.txt").unlink()
    if in_work_tree:
        (project / "requirements.txt").symlink_to(target)
    else:
        (project / "requirements.txt").write_text("zzup==2.0\n")
    return project


def test_a_link_inside_the_project_is_read_at_the_base_as_in_the_work_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _linked_repo(tmp_path, "reqs/base.txt")
    status, out, err = run(
        capsys, "bump", str(project), "--base", "main", "--offline", "--cache-dir", str(tmp_path / "c"),
        "--format", "json",
    )  # fmt: skip
    assert "internal error" not in err and "symbolic link" not in err, err
    data = json.loads(out)["bump"]
    assert sorted((f["side"], f["path"], f["pins"]) for f in data["files_read"]) == [
        ("new", "requirements.txt", 1),
        ("old", "requirements.txt", 1),
    ]
    assert [(c["name"], c["old"], c["new"]) for c in data["changes"]] == [("zzup", "1.0", "2.0")]
    assert status == 2  # offline: zzup's releases cannot be had, said (not a pass)


@pytest.mark.parametrize("side", ["base", "work tree", "both"])
@pytest.mark.parametrize("target", ["../outside.txt", "/etc/hostname", "reqs/../../outside.txt"])
def test_a_link_leading_out_of_the_project_is_refused_on_either_side(
    side: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _linked_repo(tmp_path, target, in_base=side != "work tree", in_work_tree=side != "base")
    status, _, err = run(
        capsys, "bump", str(project), "--base", "main", "--offline", "--cache-dir", str(tmp_path / "c")
    )
    one_line_error(status, err, "requirements.txt: a symbolic link leading outside", "not read")
    assert "leaked" not in err


def test_a_hard_memory_limit_below_memory_limit_is_said_and_used(tmp_path: Path) -> None:
    """Under `ulimit -v` 3 GiB, `--memory-limit 8192` cannot be set: the audit runs under 3 GiB, and says so."""
    write_tree(
        tmp_path / "old",
        {
            "pkg/__init__.py": "def f(a):\n    pass\n",
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0"\n',
        },
    )
    write_tree(
        tmp_path / "new",
        {
            "pkg/__init__.py": "def f(a, b):\n    pass\n",
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "2.0"\n',
        },
    )
    write_tree(tmp_path / "deps" / "a", {"a/__init__.py": "import pkg\n\npkg.f(1)\n",
                                         "pyproject.toml": '[project]\nname = "a"\nversion = "0.1"\ndependencies = ["pkg>=1"]\n'})  # fmt: skip
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "from apidrift.auditor.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "impact", f"pkg@{tmp_path / 'new'}", "--from", f"pkg@{tmp_path / 'old'}",
         "--dependents", str(tmp_path / "deps"), "--results", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c"),
         "--offline", "--jobs", "1", "--memory-limit", "8192", "--format", "json", "--quiet"],
        check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [(r["dependent"], r["status"]) for r in report["dependents"]] == [("a", "broken")]
    assert any("--memory-limit 8192 MB is above" in n and "3072 MB" in n for n in report["notes"]), report[
        "notes"
    ]


def test_a_limit_that_cannot_be_set_is_an_error_row_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    from apidrift.auditor.impact.jobs import Job, limited_result

    def refuse(*_: object) -> None:
        raise ValueError("not allowed to raise maximum limit")

    monkeypatch.setattr(resource, "setrlimit", refuse)
    job = Job("k", "/nonexistent", "dep", False, "pkg==2", "pkg==1", "pkg", "2", memory_mb=512)
    row = limited_result(job)
    assert row["status"] == "error"
    assert row["error"] == "cannot set the audit's limits (memory 512 MB): not allowed to raise maximum limit"


def _pins(count: int, version: str) -> str:
    return "".join(f"dist{i:02d}=={version}\n" for i in range(count))


@pytest.mark.parametrize("provider", [7, None])
def test_bump_learns_import_names_within_bounds(
    provider: int | None, index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 changed pins, one unexplained import (`mystery`): releases are fetched only until it is
    accounted for, and never more than MAX_IMPORT_NAME_FETCHES."""
    from apidrift.auditor import bump as bump_module
    from apidrift.auditor.bump import BumpRequest, run_bump

    monkeypatch.setattr(bump_module, "MAX_IMPORT_NAME_FETCHES", 12, raising=False)
    for i in range(30):
        name = f"dist{i:02d}"
        module = "mystery" if i == provider else name
        index.project(name, {
            f"{name}-{v}-py3-none-any.whl": _wheel(name, v, {f"{module}/__init__.py": "def f(a):\n    pass\n"})
            for v in ("1.0", "2.0")
        })  # fmt: skip
    project = write_tree(tmp_path / "p", {"main.py": "import mystery\n\nmystery.f(1)\n"})
    (tmp_path / "old.txt").write_text(_pins(30, "1.0"))
    (tmp_path / "new.txt").write_text(_pins(30, "2.0"))
    result = run_bump(BumpRequest(project, old_file=tmp_path / "old.txt", new_file=tmp_path / "new.txt",
                                  cache_dir=tmp_path / "c", index_url=index.url))  # fmt: skip
    listed = [hit for hit in index.hits if hit.startswith("/simple/")]
    statuses = {c.name: c.status for c in result.changes}
    if provider is not None:
        assert statuses["dist07"] == "audited"
        assert len(set(listed)) <= 8, listed  # dist00..dist07, then nothing: `mystery` is accounted for
        assert sum(s == "not used" for s in statuses.values()) == 29
    else:
        assert len(set(listed)) == 12, listed
        skipped = [c for c in result.changes if c.status == "not audited"]
        assert len(skipped) == 18
        assert all("12 releases were already fetched" in (c.reason or "") for c in skipped)
