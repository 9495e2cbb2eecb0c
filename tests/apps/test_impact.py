"""`apidrift impact` on synthetic upstreams and dependents written into tmp_path: inputs, limits, buckets,
results files, resume, the exit status, the reports, and a pool worker killed mid-run."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from localindex import LocalIndex, core_metadata, sdist_bytes, wheel_bytes

from apidrift.auditor.cache import Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.cli.progress import DependentsProgress
from apidrift.auditor.impact import jobs as jobs_module
from apidrift.auditor.impact.inputs import (
    Dependent,
    _parse_requires,
    candidate_names,
    discover,
    pin_excluding,
    read_archive_metadata,
    read_dependents,
    requirements_on,
)
from apidrift.auditor.impact.jobs import Job
from apidrift.auditor.impact.results import ResultStore
from apidrift.auditor.impact.run import ImpactRequest, job_key, prepare, run_impact
from apidrift.auditor.sources.specs import SpecError

OLD_PKG = """\
def get_config(vllm_config, available_memory, kv_cache_specs=None):
    return None


def connect(timeout=5):
    return timeout


class Scheduler:
    def __init__(self, config):
        self.config = config
"""

NEW_PKG = """\
def get_config(vllm_config, available_memory):
    return None


def connect(timeout=10):
    return timeout


class Scheduler:
    def __init__(self, config, block_size):
        self.config = config
"""

DEPENDENTS = {
    "broken": "import pkg\n\npkg.get_config(1, 2, kv_cache_specs=3)\ns = pkg.Scheduler(1)\n",
    "warned": "import pkg\n\npkg.connect()\n",
    "clean": "import pkg\n\npkg.get_config(1, 2)\n",
    "unused": "import os\n\nos.getcwd()\n",
    "pinned": "import pkg\n\ns = pkg.Scheduler(1)\n",
}
EXPECTED = {
    "broken": ("broken", {"AD101": 1, "AD102": 1}),
    "warned": ("at-risk", {"AD202": 1}),
    "clean": ("clean", {}),
    "unused": ("not-using", {}),
    "pinned": ("not-yet-affected", {"AD102": 1}),
    "empty": ("error", {}),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def pyproject(name: str, version: str, requires: list[str]) -> str:
    return f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = {json.dumps(requires)}\n'


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """old/ and new/ (pkg 1.0 and 2.0) and deps/<one project per expected bucket>."""
    write(tmp_path / "old", {"pkg/__init__.py": OLD_PKG, "pyproject.toml": pyproject("pkg", "1.0", [])})
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG, "pyproject.toml": pyproject("pkg", "2.0", [])})
    for name, source in DEPENDENTS.items():
        requires = ["pkg<2"] if name == "pinned" else ["pkg>=1"]
        write(
            tmp_path / "deps" / name,
            {f"{name}/__init__.py": source, "pyproject.toml": pyproject(name, "0.1", requires)},
        )
    write(tmp_path / "deps" / "empty", {"README.txt": "no Python here\n"})
    return tmp_path


def request(world: Path, **options: object) -> ImpactRequest:
    defaults: dict[str, object] = {
        "old": f"pkg@{world / 'old'}", "results_dir": world / "results", "cache_dir": world / "cache",
        "offline": True, "workers": 2,
    }  # fmt: skip
    defaults.update(options)
    return ImpactRequest(f"pkg@{world / 'new'}", tuple(read_dependents(world / "deps")), **defaults)  # type: ignore[arg-type]


def buckets(rows: list[dict[str, object]]) -> dict[str, tuple[object, object]]:
    return {str(row["dependent"]): (row["status"], row["by_rule"]) for row in rows}


def test_the_breaks_are_real_under_cpython(world: Path) -> None:
    """The oracle: run the dependents' calls against the new pkg for real (our own synthetic code)."""

    def runs(name: str) -> subprocess.CompletedProcess[str]:
        path = os.pathsep.join([str(world / "new"), str(world / "deps" / name)])
        return subprocess.run([sys.executable, "-c", f"import {name}"], env={**os.environ, "PYTHONPATH": path},
                              capture_output=True, text=True, check=False)  # fmt: skip

    assert "unexpected keyword argument 'kv_cache_specs'" in runs("broken").stderr
    assert runs("clean").returncode == 0 and runs("warned").returncode == 0
    assert "missing 1 required positional argument: 'block_size'" in runs("pinned").stderr


def test_every_bucket_from_a_folder_of_projects(world: Path) -> None:
    result = run_impact(request(world))
    assert buckets(result.rows) == {name: (status, rules) for name, (status, rules) in EXPECTED.items()}
    by_name = {row["dependent"]: row for row in result.rows}
    assert by_name["pinned"]["pin"] == "pkg<2"
    assert "no Python package or module" in by_name["empty"]["error"]
    assert by_name["broken"]["found"] == 3 and by_name["broken"]["checked"] == 3
    assert all(isinstance(row["wall_seconds"], float) for row in result.rows)
    # Grouped by upstream symbol: the pinned dependent is counted apart.
    groups = {(g.symbol, g.code): g for g in result.groups()}
    scheduler = groups[("pkg.Scheduler.__init__", "AD102")]
    assert scheduler.dependents == ("broken",) and scheduler.pinned == ("pinned",) and scheduler.sites == 1
    assert "block_size" in scheduler.message
    assert groups[("pkg.connect", "AD202")].severity == "warning"
    assert result.old["label"] == "pkg==1.0" and result.release["label"] == "pkg==2.0"


def test_rows_are_written_as_json_lines_and_parquet(world: Path) -> None:
    result = run_impact(request(world))
    folder = world / "results"
    rows = [json.loads(line) for line in (folder / "dependents.jsonl").read_text().splitlines()]
    findings = [json.loads(line) for line in (folder / "findings.jsonl").read_text().splitlines()]
    assert sorted(r["dependent"] for r in rows) == sorted(EXPECTED)
    assert sorted((f["dependent"], f["code"]) for f in findings) == [
        ("broken", "AD101"), ("broken", "AD102"), ("pinned", "AD102"), ("warned", "AD202")]  # fmt: skip
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "dependents.parquet").to_pylist()
    assert {r["dependent"]: r["status"] for r in table} == {k: v[0] for k, v in EXPECTED.items()}
    assert json.loads(next(r for r in table if r["dependent"] == "broken")["by_rule"]) == {
        "AD101": 1,
        "AD102": 1,
    }
    found = pq.read_table(folder / "findings.parquet").to_pylist()
    assert len(found) == len(result.findings()) == 4
    assert {f["line"] for f in found if f["dependent"] == "broken"} == {3, 4}


def test_resume_skips_what_is_done_and_reruns_errors(world: Path, tmp_path: Path) -> None:
    first = run_impact(request(world))
    trace = tmp_path / "trace"
    trace.mkdir()
    second = run_impact(request(world, resume=True, trace_dir=trace))
    started = [json.loads(p.read_text())["key"] for p in trace.iterdir()]
    empty_key = next(r["key"] for r in first.rows if r["dependent"] == "empty")
    assert started == [empty_key]  # only the error is audited again
    assert buckets(second.rows) == buckets(first.rows)
    assert sorted(len(r["findings"]) for r in second.rows) == sorted(len(r["findings"]) for r in first.rows)
    # Other versions are another key: nothing is skipped.
    third = run_impact(request(world, resume=True, trace_dir=trace, old=f"pkg@{world / 'new'}"))
    assert len(list(trace.iterdir())) == 1 + len(EXPECTED)
    assert buckets(third.rows)["broken"] == ("clean", {})


def test_the_list_file(tmp_path: Path, world: Path) -> None:
    listing = write(tmp_path / "lists", {"deps.txt": (
        "# dependents\n"
        "typer==0.15.1\n"
        "rich-click   # a bare name: its latest release\n"
        f"../deps/clean\n"
        f"{world / 'deps' / 'broken'}\n"
        "app@../deps/warned\n"
        "typer==0.15.1\n"
    )}) / "deps.txt"  # fmt: skip
    found = read_dependents(listing)
    assert found == [
        Dependent("typer==0.15.1", "typer==0.15.1"),
        Dependent("rich-click", "rich-click", latest=True),
        Dependent(str(world / "deps" / "clean"), "../deps/clean"),
        Dependent(str(world / "deps" / "broken"), str(world / "deps" / "broken")),
        Dependent(f"app@{world / 'deps' / 'warned'}", "app@../deps/warned"),
    ]
    bad = write(tmp_path / "bad", {"deps.txt": "ok==1\nnot a spec at all\n"}) / "deps.txt"
    with pytest.raises(SpecError, match=r"deps.txt:2"):
        read_dependents(bad)


def test_requirements_with_extras_and_markers_name_the_upstream() -> None:
    requires = ('Click>=7; extra == "cli"', "other", 'click<8.2; python_version >= "3.8"', "bad ;;")
    assert [str(r) for r in requirements_on(requires, "click")] == [
        'Click>=7; extra == "cli"',
        'click<8.2; python_version >= "3.8"',
    ]
    assert pin_excluding(requires, "click", "8.2.0") is None  # one requirement allows it
    assert pin_excluding(('click<8.2; extra == "cli"',), "click", "8.2.0") == 'click<8.2; extra == "cli"'
    assert pin_excluding(("click>=8",), "click", "8.2.0") is None
    assert pin_excluding(("other<1",), "click", "8.2.0") is None


def test_archive_metadata(tmp_path: Path) -> None:
    wheel = tmp_path / "alpha-1.0-py3-none-any.whl"
    wheel.write_bytes(
        wheel_bytes("alpha", "1.0", {"alpha/__init__.py": ""}, ["pkg>=1", 'pkg[x]; extra == "y"'])
    )
    assert _parse_requires(read_archive_metadata(wheel), static=True) == ("pkg>=1", 'pkg[x]; extra == "y"')
    sdist = tmp_path / "beta-1.0.tar.gz"
    sdist.write_bytes(
        sdist_bytes("beta", "1.0", {"beta/__init__.py": ""}, ["pkg<2", "[cli]", "other"], in_pkg_info=False)
    )
    assert _parse_requires(read_archive_metadata(sdist), static=False) == ("pkg<2", 'other; extra == "cli"')
    assert _parse_requires(core_metadata("x", "1", [], metadata_version="1.2"), static=False) is None
    assert _parse_requires(core_metadata("x", "1", [], metadata_version="2.2"), static=False) == ()


def build_index(root: Path) -> LocalIndex:
    """alpha (PEP 658 metadata), beta (an sdist only, pinned below pkg 2), gamma (no pkg), pkg 1.0 and 2.0."""
    index = LocalIndex(root)
    alpha = "import pkg\n\npkg.Scheduler(1)\n"
    data = wheel_bytes("alpha", "1.0", {"alpha/__init__.py": alpha}, ['pkg>=1; extra == "sched"'])
    index.add(
        "alpha",
        "alpha-1.0-py3-none-any.whl",
        data,
        core_metadata("alpha", "1.0", ['pkg>=1; extra == "sched"']),
    )
    index.add(
        "beta",
        "beta-0.9.tar.gz",
        sdist_bytes("beta", "0.9", {"beta/__init__.py": "import pkg\n"}, ["pkg>=1"]),
    )
    index.add(
        "beta",
        "beta-1.0.tar.gz",
        sdist_bytes("beta", "1.0", {"beta/__init__.py": alpha}, ["pkg<2"], in_pkg_info=False),
    )
    index.add(
        "gamma",
        "gamma-1.0-py3-none-any.whl",
        wheel_bytes("gamma", "1.0", {"gamma/__init__.py": alpha}, ["other"]),
    )
    index.add("pkg", "pkg-1.0-py3-none-any.whl", wheel_bytes("pkg", "1.0", {"pkg/__init__.py": OLD_PKG}, []))
    index.add("pkg", "pkg-2.0-py3-none-any.whl", wheel_bytes("pkg", "2.0", {"pkg/__init__.py": NEW_PKG}, []))
    return index


def test_discovery_through_a_local_index(tmp_path: Path) -> None:
    candidates = write(tmp_path, {"candidates.txt": "alpha\nbeta\ngamma\nmissing\n"}) / "candidates.txt"
    with build_index(tmp_path / "index") as index:
        found = {
            d.name: d for d in discover(candidates, "pkg", "2.0", Cache(tmp_path / "cache"), index.url, False)
        }
        assert found["alpha"].how == "metadata" and found["alpha"].requirements == (
            'pkg>=1; extra == "sched"',
        )
        assert found["alpha"].dependent == Dependent("alpha==1.0", "alpha", origin="discover")
        assert found["beta"].how == "sdist" and found["beta"].dependent is not None
        assert found["beta"].dependent.pin == "pkg<2"
        assert found["gamma"].dependent is None and "does not require pkg" in str(found["gamma"].reason)
        assert found["missing"].dependent is None and "no distribution named" in str(found["missing"].reason)
        # The whole command: the release from the index, --from defaulting to the release before it.
        out = tmp_path / "summary.json"
        status = main(["impact", "pkg==2.0", "--discover", str(candidates), "--index-url", index.url,
                       "--cache-dir", str(tmp_path / "cache"), "--results", str(tmp_path / "results"),
                       "--format", f"json:{out}", "--quiet", "-j", "1"])  # fmt: skip
    summary = json.loads(out.read_text())
    assert status == 1
    assert summary["old"]["label"] == "pkg==1.0"
    assert {d["dependent"]: d["status"] for d in summary["dependents"]} == {
        "alpha": "broken",
        "beta": "not-yet-affected",
    }
    assert {d["name"] for d in summary["dropped"]} == {"gamma", "missing"}
    assert summary["groups"][0]["symbol"] == "pkg.Scheduler.__init__"
    assert summary["groups"][0]["dependents"] == ["alpha"] and summary["groups"][0]["pinned"] == ["beta"]


def test_discovery_from_a_corpus_folder_and_from_the_cache(tmp_path: Path) -> None:
    """Candidates the tool obtains itself: the names in a folder of requirements and lock files (pins
    and unpinned requirements, `requirements/` files, lock files in sub-folders; the upstream left out),
    and `cached`, the projects whose listing the cache holds for the index (after one run over them)."""
    corpus = write(
        tmp_path / "corpus",
        {
            "app1/requirements.txt": "alpha>=0.5  # the scheduler\n-r more.txt\npkg==1.0\n",
            "app2/poetry.lock": '[[package]]\nname = "gamma"\nversion = "1.0"\n',
            "app2/requirements/dev.txt": "beta\n",
            "app3/notes.txt": "delta\n",
        },
    )
    cache = Cache(tmp_path / "cache")
    with build_index(tmp_path / "index") as index:
        names = candidate_names(corpus, "pkg", cache, index.url)
        assert names == ["alpha", "gamma", "beta"]
        found = {d.name: d for d in discover(names, "pkg", "2.0", cache, index.url, False)}
        assert {n for n, d in found.items() if d.dependent is not None} == {"alpha", "beta"}
        assert "does not require pkg" in str(found["gamma"].reason)
        out = tmp_path / "summary.json"
        status = main(["impact", "pkg==2.0", "--discover", "cached", "--index-url", index.url,
                       "--cache-dir", str(tmp_path / "cache"), "--results", str(tmp_path / "results"),
                       "--format", f"json:{out}", "--quiet", "-j", "1"])  # fmt: skip
        assert set(candidate_names("cached", "pkg", cache, index.url)) == {"alpha", "beta", "gamma"}
    summary = json.loads(out.read_text())
    assert status == 1
    assert {d["dependent"]: d["status"] for d in summary["dependents"]} == {
        "alpha": "broken",
        "beta": "not-yet-affected",
    }
    assert any("names from the projects whose listing the cache holds" in n for n in summary["notes"])


def job(world: Path, name: str, **options: object) -> Job:
    defaults: dict[str, object] = {
        "key": name, "dependent": str(world / "deps" / name), "label": name, "latest": False,
        "release": f"pkg@{world / 'new'}", "old": f"pkg@{world / 'old'}", "upstream": "pkg",
        "upstream_version": "2.0", "cache_dir": str(world / "cache"), "offline": True,
    }  # fmt: skip
    defaults.update(options)
    return Job(**defaults)  # type: ignore[arg-type]


def test_a_job_past_its_time_limit_is_a_timeout_row(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs_module, "_audit", lambda request: time.sleep(60))  # the forked child inherits it
    started = time.monotonic()
    row = jobs_module._in_fork(job(world, "broken", timeout=1.0))
    assert row["status"] == "timeout" and "longer than 1 s" in row["error"]
    assert time.monotonic() - started < 30


def test_a_job_past_its_memory_limit_is_a_memory_row(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status = Path("/proc/self/status").read_text()
    used_mb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmSize:"))) // 1024
    monkeypatch.setattr(jobs_module, "_audit", lambda request: bytearray(4 * 1024**3))
    row = jobs_module._in_fork(job(world, "broken", memory_mb=used_mb + 200))
    assert row["status"] == "memory" and f"{used_mb + 200} MB" in row["error"]


def test_the_subprocess_child_gives_the_fork_child_s_rows(world: Path) -> None:
    for name in ("broken", "pinned", "empty"):
        forked = jobs_module._in_fork(job(world, name))
        spawned = jobs_module._in_subprocess(job(world, name))
        keep = ("status", "errors", "warnings", "by_rule", "pin", "found", "checked", "error")
        assert {k: spawned[k] for k in keep} == {k: forked[k] for k in keep}, name
    assert jobs_module._in_subprocess(job(world, "broken", timeout=0.1))["status"] == "timeout"


def big_dependent(root: Path, files: int = 80) -> None:
    """A slow audit (hundreds of files to scan), so that a worker can be killed while it runs."""
    body = "import pkg\n\n" + "".join(
        f"def f{i}():\n    pkg.get_config(1, 2)\n    pkg.connect(3)\n" for i in range(40)
    )
    write(
        root,
        {f"big/m{i}.py": body for i in range(files)}
        | {"big/__init__.py": "", "big/bad.py": "import pkg\npkg.Scheduler(1)\n"},
    )


def kill_when_started(
    trace: Path, keys: set[str], killed: list[dict[str, object]], delay: float = 0.3
) -> threading.Thread:
    """A thread that SIGKILLs the worker process that starts one of `keys`, once, `delay` s after it started."""

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            for marker in sorted(trace.iterdir()):
                data = json.loads(marker.read_text())
                if data["key"] in keys:
                    time.sleep(delay)
                    os.kill(int(data["pid"]), signal.SIGKILL)
                    killed.append(data)
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    return thread


def expected_with_big(count: int) -> dict[str, tuple[str, dict[str, int]]]:
    big = {f"big{i}": ("broken", {"AD102": 1}) for i in range(count)}
    return {**EXPECTED, **big}


def test_a_pool_worker_killed_mid_run_loses_no_dependent(world: Path, tmp_path: Path) -> None:
    for number in range(2):
        big_dependent(world / "deps" / f"big{number}")
    trace = tmp_path / "trace"
    trace.mkdir()
    dependents = read_dependents(world / "deps")
    keys = {job_key(d, prepare(request(world))) for d in dependents if d.label.startswith("big")}
    killed: list[dict[str, object]] = []
    thread = kill_when_started(trace, keys, killed)
    result = run_impact(request(world, trace_dir=trace))
    thread.join()
    assert killed, "no worker was killed"
    starts = [json.loads(p.read_text())["key"] for p in trace.iterdir()]
    assert starts.count(killed[0]["key"]) >= 2  # the killed worker's job ran again
    assert buckets(result.rows) == expected_with_big(2)
    assert max(int(r["attempts"]) for r in result.rows) >= 2


def test_exit_status_and_reports_from_the_command(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["impact", f"pkg@{world / 'new'}", "--from", f"pkg@{world / 'old'}", "--dependents", str(world / "deps"),
            "--offline", "--cache-dir", str(world / "cache"), "--results", str(tmp_path / "r"), "-q"]  # fmt: skip
    html, md = tmp_path / "impact.html", tmp_path / "impact.md"
    assert main([*base, "--format", "text", "--format", f"html:{html}", "--format", f"markdown:{md}"]) == 1
    text = capsys.readouterr().out
    assert (
        "`pkg.Scheduler.__init__` AD102 missing-required-argument: breaks 1 dependent, 1 call site (+1 pinned below the release)"
        in text
    )
    assert "broken 1, at-risk 1, not-yet-affected 1, clean 1, not-using 1, error 1" in text
    page = html.read_text()
    assert 'class="f-status" value="broken"' in page and 'id="f-text"' in page and "<script>" in page
    assert "http://" not in page and "https://" not in page  # self-contained
    assert "| broken | broken |" in md.read_text()
    assert main([*base, "--fail-on", "never"]) == 0
    only_warned = (
        write(tmp_path / "w", {"deps.txt": f"{world / 'deps' / 'warned'}\n{world / 'deps' / 'pinned'}\n"})
        / "deps.txt"
    )
    base[base.index("--dependents") + 1] = str(only_warned)
    assert main(base) == 0  # a warning, and a break pinned away, are below --fail-on error
    assert main([*base, "--fail-on", "warning"]) == 1
    assert main(["impact", "pkg@/nonexistent", "--dependents", str(only_warned), "--offline", "-q",
                 "--results", str(tmp_path / "r2")]) == 2  # fmt: skip


def test_the_release_as_a_bare_wheel_or_folder_path(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "pkg-2.0-py3-none-any.whl").write_bytes(
        wheel_bytes("pkg", "2.0", {"pkg/__init__.py": NEW_PKG}, [])
    )
    monkeypatch.chdir(tmp_path)
    for release in ("./dist/pkg-2.0-py3-none-any.whl", str(world / "new")):
        out = tmp_path / "summary.json"
        status = main(["impact", release, "--from", f"pkg@{world / 'old'}", "--dependents", str(world / "deps"),
                       "--offline", "--cache-dir", str(world / "cache"), "--results", str(tmp_path / "r"), "-q",
                       "--format", f"json:{out}"])  # fmt: skip
        summary = json.loads(out.read_text())
        assert status == 1 and summary["release"]["label"] == "pkg==2.0", release
        assert {d["dependent"]: d["status"] for d in summary["dependents"]}["broken"] == "broken"


def test_progress_shows_an_eta() -> None:
    stream = io.StringIO()
    show = DependentsProgress(stream)
    show(1, 4, {"status": "broken"})
    time.sleep(0.05)
    show(2, 4, {"status": "clean"})
    assert "2/4 dependents, 1 broken, ETA " in stream.getvalue()
    show.close()


def test_store_ignores_torn_lines(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    row = {
        "key": "k",
        "dependent": "d",
        "status": "broken",
        "findings": [{"code": "AD101", "severity": "error"}],
    }
    store.append(row)
    with open(tmp_path / "dependents.jsonl", "a") as out:
        out.write('{"key": "torn", "sta')
    previous = store.previous()
    assert list(previous) == ["k"] and previous["k"]["findings"] == [{"code": "AD101", "severity": "error"}]


def test_the_dashboard_filters_in_a_browser(world: Path, tmp_path: Path) -> None:
    from test_html import Browser, _browser_or_skip

    from apidrift.reports.impact_html import render

    page_path = tmp_path / "impact.html"
    page_path.write_text(render(run_impact(request(world))), encoding="utf-8")
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        browser = Browser(playwright, tmp_path)
        try:
            page = browser.page(page_path)

            def visible() -> list[str]:
                return page.eval_on_selector_all(
                    "tr.dependent", "rows => rows.filter(r => !r.hidden).map(r => r.id)"
                )

            assert sorted(visible()) == sorted(EXPECTED)
            page.uncheck('input.f-status[value="clean"]')
            assert "clean" not in visible() and "broken" in visible()
            page.select_option("#f-rule", "AD102")
            assert sorted(visible()) == ["broken", "pinned"]
            page.fill("#f-text", "pinn")
            assert visible() == ["pinned"]
            groups = page.eval_on_selector_all("tr.group", "rows => rows.filter(r => !r.hidden).length")
            assert groups == 1  # the Scheduler group: AD102, and its dependents include "pinned"
        finally:
            browser.close()


def test_the_dashboard_renders_code_spans_and_prefers_public_names_as_examples() -> None:
    """Messages name code in backticks: the HTML shows <code>, never a raw backtick. A group's example is
    a message naming public names when one exists, even where a private spelling is more common."""
    import re

    from apidrift.auditor.impact.results import ImpactResult
    from apidrift.reports.impact_html import render

    def finding(message: str) -> dict[str, object]:
        return {"code": "AD101", "rule": "unexpected-keyword", "severity": "error", "message": message,
                "symbol": "pkg.core.get_config", "classification": "drift", "path": "app.py", "line": 3,
                "column": 1, "source_line": "pkg.get_config(1, kv=2)"}  # fmt: skip

    private = "`_get_config()` got an unexpected keyword argument `kv` in pkg==2.0"
    public = "`get_config()` got an unexpected keyword argument `kv` in pkg==2.0"
    rows = [
        {"key": name, "dependent": name, "version": "1.0", "status": "broken", "by_rule": {"AD101": 1},
         "errors": 1, "findings": [finding(message)], "notes": ["read `pkg` from the cache"]}
        for name, message in (("a", private), ("b", private), ("c", public))
    ]  # fmt: skip
    release = {"name": "pkg", "version": "2.0", "label": "pkg==2.0", "origin": "path", "location": "/r"}
    result = ImpactResult(
        release=release, old={"name": "pkg", "version": "1.0", "label": "pkg==1.0"}, rows=rows
    )
    (group,) = result.groups()
    assert group.message == public and group.dependents == ("a", "b", "c")
    page = render(result)
    assert "<code>get_config()</code> got an unexpected keyword argument <code>kv</code>" in page
    body = re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.S)
    assert "`" not in body  # no raw backtick anywhere in what is shown


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """kill -9 of the command: its pool workers (and so the resource tracker they hold) go with it."""
    script = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import os, time; from apidrift.auditor.impact.run import _warm; "
        "_warm(%d); print(os.getpid(), flush=True); time.sleep(60)' % os.getpid()], stdout=subprocess.PIPE, text=True)\n"
        "print(child.stdout.readline().strip(), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    assert Path(f"/proc/{worker}").exists()
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{worker}/stat").read_text().split()[2]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the worker outlived its parent")


def test_ctrl_c_exits_130(
    world: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from apidrift.auditor.impact import run as run_module

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "run_impact", interrupted)
    args = ["impact", f"pkg@{world / 'new'}", "--from", f"pkg@{world / 'old'}", "--dependents", str(world / "deps"),
            "--results", str(world / "results"), "--cache-dir", str(world / "cache"), "--offline", "--quiet"]  # fmt: skip
    assert main(args) == 130
    assert "apidrift: interrupted" in capsys.readouterr().err


def test_a_candidate_is_taken_at_its_last_release_before_the_moment() -> None:
    from datetime import datetime, timezone

    from apidrift.auditor.impact.inputs import release_before, upload_time
    from apidrift.auditor.sources.index_client import IndexFile, ProjectListing

    def file(version: str, when: str | None, kind: str = "wheel", yanked: bool = False) -> IndexFile:
        name = f"dep-{version}-py3-none-any.whl" if kind == "wheel" else f"dep-{version}.tar.gz"
        return IndexFile(name, f"https://example.invalid/{name}", version, kind, kind == "wheel", None, 1,
                         yanked=yanked, upload_time=when)  # type: ignore[arg-type]  # fmt: skip

    listing = ProjectListing("dep", "index", (
        file("1.0", "2025-01-01T00:00:00+00:00"), file("1.0", "2024-12-31T00:00:00+00:00", "sdist"),
        file("1.1", "2025-05-09T00:00:00+00:00"), file("1.2", "2025-05-11T00:00:00+00:00"),
        file("1.2b1", "2025-05-01T00:00:00+00:00"), file("1.1.1", "2025-05-09T12:00:00+00:00", yanked=True),
    ))  # fmt: skip
    moment = datetime(2025, 5, 10, 22, 21, tzinfo=timezone.utc)
    assert release_before(listing, moment) == "1.1"  # not 1.2 (after), 1.2b1 (a pre-release), 1.1.1 (yanked)
    assert release_before(listing, datetime(2024, 1, 1, tzinfo=timezone.utc)) is None
    assert upload_time(listing, "1.0") == datetime(2024, 12, 31, tzinfo=timezone.utc)  # its first file
    assert upload_time(listing, "9.9") is None


def test_library_log_records_are_silent_unless_verbose() -> None:
    """A library's warning would break the progress line: silent, unless `--verbose` asks for them."""
    code = (
        "import logging, sys\n"
        "from apidrift.auditor.cli.progress import quiet_libraries, show_log_records\n"
        "quiet_libraries()\n"
        "logging.getLogger('urllib3.connectionpool').warning('Retrying (1)')\n"
        "if sys.argv[1] == 'verbose':\n"
        "    show_log_records()\n"
        "    logging.getLogger('urllib3.connectionpool').warning('Retrying (2)')\n"
    )
    quiet = subprocess.run([sys.executable, "-c", code, "quiet"], capture_output=True, text=True, check=True)
    assert quiet.stderr == ""
    verbose = subprocess.run(
        [sys.executable, "-c", code, "verbose"], capture_output=True, text=True, check=True
    )
    assert verbose.stderr == "apidrift: Retrying (2)\n"
