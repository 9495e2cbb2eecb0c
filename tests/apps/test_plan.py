"""`apidrift plan`: synthetic releases of `libx` on a fake index on 127.0.0.1, and the flagship on the real one.

The synthetic history of `libx` (1.5 is yanked, 2.1rc1 a pre-release):
- `connect(host)`: 1.2 adds `retries: int = 3`; 2.0 makes it required (keyword-only, no default).
- `fetch(url, verify=True)`: 1.3 warns, inside the body, that `verify` is deprecated; 2.0 removes it.
- `legacy()`: deprecated from 1.6 (`warnings.warn(..., DeprecationWarning)` at the top); gone in 2.0.
The downstream calls `connect("h")`, `fetch("u", verify=False)` and imports `legacy`. Each claim the
plan makes (what binds where) is checked against CPython: the releases' sources are compiled here, in
the test, and `inspect.signature(...).bind` is asked (apidrift itself never runs them).
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_html import Browser, browser  # noqa: F401 - the headless Chromium fixture
from test_sources import FakeIndex, QuietServer, _handler, wheel_bytes

from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import FixKind
from apidrift.auditor.plan import PlanRequest, plan

VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "2.0", "2.1rc1")


def libx_source(version: str) -> str:
    v = tuple(int(p) for p in version.split("rc")[0].split("."))
    out = ["import warnings", ""]
    if v >= (2, 0):
        out += ["def connect(host, *, retries: int):", "    return host, retries", ""]
    elif v >= (1, 2):
        out += ["def connect(host, retries: int = 3):", "    return host, retries", ""]
    else:
        out += ["def connect(host):", "    return host", ""]
    if v >= (2, 0):
        out += ["def fetch(url):", "    return url", ""]
    elif v >= (1, 3):
        out += [
            "def fetch(url, verify=None):",
            "    if verify is not None:",
            "        warnings.warn('the verify parameter is deprecated and will be removed', DeprecationWarning)",
            "    return url",
            "",
        ]
    else:
        out += ["def fetch(url, verify=True):", "    return url", ""]
    if v < (2, 0):
        out += ["def legacy():"]
        if v >= (1, 6):
            out += [
                "    warnings.warn('legacy() is deprecated: use connect()', DeprecationWarning, stacklevel=2)"
            ]
        out += ["    return None", ""]
    return "\n".join(out)


DOWNSTREAM = """\
from libx import connect, fetch, legacy

connect("h")
fetch("u", verify=False)
legacy()
"""


def _namespace(version: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(libx_source(version), f"libx-{version}", "exec"), namespace)  # noqa: S102 (the test's own synthetic code)
    return namespace


def binds(version: str, function: str, *args: Any, **kwargs: Any) -> bool:
    """CPython's verdict on a call of libx's `function` in `version`."""
    namespace = _namespace(version)
    if function not in namespace:
        return False
    try:
        inspect.signature(namespace[function]).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


@pytest.fixture
def index() -> Iterator[FakeIndex]:
    fake = FakeIndex()
    server = QuietServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    for version in VERSIONS:
        data = wheel_bytes("libx", version, {"libx/__init__.py": libx_source(version)}, top_level="libx\n")
        fake.add(
            "libx",
            f"libx-{version}-py3-none-any.whl",
            data,
            yanked="broken upload" if version == "1.5" else False,
        )
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def downstream(tmp_path: Path) -> Path:
    root = tmp_path / "down"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "use.py").write_text(DOWNSTREAM)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1"\ndependencies = ["libx==1.0"]\n'
    )
    return root


def _plan(index: FakeIndex, downstream: Path, tmp_path: Path, **kwargs: Any) -> Any:
    request = PlanRequest(
        str(downstream), "libx", cache_dir=tmp_path / "cache", index_url=index.url, **kwargs
    )
    return plan(request)


def by_code(result: Any, code: str) -> Any:
    (found,) = [h for h in result.histories if h.finding.code == code]
    return found


def test_the_oracle_agrees_with_the_story() -> None:
    """The synthetic releases behave, under CPython, as the module docstring says."""
    assert binds("1.7", "connect", "h") and binds("1.7", "connect", "h", retries=3)
    assert binds("1.2", "connect", "h", retries=3) and not binds("1.1", "connect", "h", retries=3)
    assert not binds("2.0", "connect", "h") and binds("2.0", "connect", "h", retries=3)
    assert binds("1.7", "fetch", "u", verify=False) and not binds("2.0", "fetch", "u", verify=False)
    assert binds("1.0", "fetch", "u") and binds("1.7", "legacy") and "legacy" not in _namespace("2.0")


def test_plan_walks_bisects_and_tells_each_history(
    index: FakeIndex, downstream: Path, tmp_path: Path
) -> None:
    result = _plan(index, downstream, tmp_path)
    # The range: written for 1.0 (the downstream pins it), to the latest final release; 1.5 yanked,
    # 2.1rc1 left out.
    assert (result.from_version, result.to_version) == ("1.0", "2.0")
    assert [r.version for r in result.rows] == ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "2.0"]
    assert result.row("1.5").status == "yanked" and "broken upload" in result.row("1.5").note
    assert any("yanked, not audited: 1.5" in note for note in result.notes)
    # Bisection: 1.0 and 1.3 have the same findings (none), so 1.1 and 1.2 are not audited.
    assert result.audited == ["1.0", "1.3", "1.4", "1.6", "1.7", "2.0"]
    assert [(b.low, b.high, b.skipped) for b in result.bisections] == [("1.0", "1.3", ("1.1", "1.2"))]
    assert any("not audited between them: 1.1, 1.2" in note for note in result.notes)
    # The table: no errors up to 1.7 (1.6 and 1.7 warn about `legacy`, at its import and its call);
    # four in 2.0 (`legacy` is gone: the import and the call; `retries`; `verify`).
    assert [(r.version, r.errors, r.warnings) for r in result.walk if r.status == "audited"] == [
        ("1.0", 0, 0), ("1.3", 0, 0), ("1.4", 0, 0), ("1.6", 0, 2), ("1.7", 0, 2), ("2.0", 3, 0),
    ]  # fmt: skip
    assert all(r.checked == 7 for r in result.rows if r.status == "audited")
    assert result.safe == "1.7" and not result.target_reachable
    assert result.summary() == "safe to upgrade to 1.7; 2.0 has 3 error(s)"

    # `connect("h")`: breaks in 2.0; `retries=` is accepted from 1.2 on while the old call still binds.
    connect = by_code(result, "AD102")
    assert (connect.first_appeared, connect.last_clean) == ("2.0", "1.7")
    assert (connect.window_from, connect.window_to) == ("1.2", "1.7")
    assert connect.migration == "pass `retries` from 1.2 on (to 1.7), where both work"
    assert binds("1.2", "connect", "h") and binds("1.2", "connect", "h", retries=3)  # the window, per CPython
    assert not binds("1.1", "connect", "h", retries=3)  # and not before it
    assert result.row("1.2").status == "looked-at" and result.row("1.1").status == "looked-at"
    assert connect.deprecated_in is None

    # `fetch(..., verify=False)`: deprecated (a warning inside the body naming it) in 1.3, removed in 2.0;
    # leaving `verify` out always worked.
    fetch = by_code(result, "AD101")
    assert fetch.first_appeared == "2.0"
    assert fetch.deprecated_in == "1.3" and "verify parameter is deprecated" in fetch.deprecation
    assert (
        fetch.window_from == "1.0"
        and fetch.migration == "stop passing `verify` (optional there) from 1.0 on (to 1.7), where both work"
    )

    # `from libx import legacy`: deprecated from 1.6 (AD203 there), gone in 2.0; the call `legacy()`
    # goes with the import's error (one break), which names its line.
    gone = [h for h in result.histories if h.finding.code in ("AD002", "AD003")]
    assert [h.finding.symbol for h in gone] == ["libx.legacy"]
    assert (
        gone[0].finding.hint is not None
        and "1 use of it in this file goes with this import (line 5)" in gone[0].finding.hint
    )
    for legacy in gone:
        assert legacy.finding.severity.value == "error" and legacy.first_appeared == "2.0"
        assert legacy.deprecated_in == "1.6" and legacy.deprecation == "legacy() is deprecated: use connect()"
        assert legacy.window_from is None and legacy.migration is None  # no new home to move to
        kinds = [(e.version, e.kind) for e in legacy.events]
        assert kinds == [("1.0", "clean"), ("1.6", "deprecated"), ("2.0", "appeared")]


def test_every_release_gives_the_same_answers(index: FakeIndex, downstream: Path, tmp_path: Path) -> None:
    bisected = _plan(index, downstream, tmp_path / "a")
    every = _plan(index, downstream, tmp_path / "b", every=True)
    assert every.audited == ["1.0", "1.1", "1.2", "1.3", "1.4", "1.6", "1.7", "2.0"] and not every.bisections
    assert [(r.version, r.errors, r.warnings) for r in every.walk] == [
        (r.version, r.errors, r.warnings) for r in bisected.walk
    ]
    summary = [(h.key, h.first_appeared, h.deprecated_in, h.window_from) for h in every.histories]
    assert summary == [(h.key, h.first_appeared, h.deprecated_in, h.window_from) for h in bisected.histories]


def test_range_options(index: FakeIndex, downstream: Path, tmp_path: Path) -> None:
    upto = _plan(index, downstream, tmp_path / "a", old="1.3", to="1.7")
    assert (upto.from_version, upto.to_version, upto.safe, upto.target_reachable) == (
        "1.3",
        "1.7",
        "1.7",
        True,
    )
    assert upto.summary() == "safe to upgrade to 1.7: no errors up to the target"
    # The deprecation warnings (at the import and at the call) are the target's findings: they came in 1.6.
    assert [(h.finding.code, h.first_appeared, h.last_clean) for h in upto.histories] == [
        ("AD203", "1.6", "1.4")
    ] * 2
    ranged = _plan(index, downstream, tmp_path / "a", old=">=1.1,<1.3", to="libx==1.4")
    assert (ranged.from_version, ranged.to_version) == ("1.2", "1.4")  # the highest match, as `audit` picks
    pre = _plan(index, downstream, tmp_path / "b", old="1.7", pre=True)
    assert pre.to_version == "2.1rc1" and [r.version for r in pre.rows] == ["1.7", "2.0", "2.1rc1"]


def test_cli_formats_and_exit_status(
    index: FakeIndex, downstream: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = str(tmp_path / "cache")
    base = [
        "plan",
        str(downstream),
        "--upstream",
        "libx",
        "--index-url",
        index.url,
        "--cache-dir",
        cache,
        "-q",
    ]
    files = {fmt: tmp_path / f"plan.{fmt}" for fmt in ("json", "md", "html")}
    status = main([*base, "--format", "text", "--format", f"json:{files['json']}", "--format", f"markdown:{files['md']}",
                   "--format", f"html:{files['html']}"])  # fmt: skip
    text = capsys.readouterr().out
    assert status == 0  # a plan is information; CI asks for a failure explicitly
    assert "safe to upgrade to 1.7; 2.0 has 3 error(s)" in text
    assert "  1.1           0         0        -  not audited; API read for the history" in text
    assert "  1.5           -         -        -  skipped: yanked" in text
    assert "  2.0           3         0        7  audited" in text
    assert "      deprecated: in 1.3: the verify parameter is deprecated and will be removed" in text
    assert "      migration: pass `retries` from 1.2 on (to 1.7), where both work" in text
    data = json.loads(files["json"].read_text())
    assert (
        data["safe"] == "1.7" and data["target_reachable"] is False and data["not_audited"] == ["1.1", "1.2"]
    )
    assert [(f["finding"]["code"], f["first_appeared"], f["deprecated_in"]) for f in data["findings"]] == [
        ("AD002", "2.0", "1.6"), ("AD102", "2.0", None), ("AD101", "2.0", "1.3"),
    ]  # fmt: skip
    assert data["findings"][1]["migration_window"] == {"from": "1.2", "to": "1.7"}
    assert [r["status"] for r in data["releases"]].count("yanked") == 1
    releases = {r["version"]: r for r in data["releases"]}
    assert releases["1.1"]["findings"] is None and releases["1.0"]["findings"] == []
    assert [(f["code"], f["line"]) for f in releases["1.6"]["findings"]] == [("AD203", 1), ("AD203", 5)]
    assert "| 1.7 :white_check_mark: |" in files["md"].read_text()
    assert main([*base, "--fail-if-latest-unreachable"]) == 1
    assert main([*base, "--to", "1.7", "--fail-if-latest-unreachable"]) == 0
    assert main([*base, "--to", "9.9"]) == 2 and "no release matching" in capsys.readouterr().err
    assert main([*base, "--format", "sarif"]) == 2
    capsys.readouterr()
    assert main([*base, "--from", "2.0", "--to", "1.7"]) == 2
    assert "the written-for release 2.0 is newer than the target 1.7" in capsys.readouterr().err
    assert (
        main(
            [
                "plan",
                str(downstream),
                "--upstream",
                "libx@/tmp",
                "--index-url",
                index.url,
                "--cache-dir",
                cache,
                "-q",
            ]
        )
        == 2
    )
    assert "give the upstream's distribution name" in capsys.readouterr().err


def test_plan_in_the_browser(browser: Browser, index: FakeIndex, downstream: Path, tmp_path: Path) -> None:
    page_file = tmp_path / "plan.html"
    status = main(["plan", str(downstream), "--upstream", "libx", "--index-url", index.url,
                   "--cache-dir", str(tmp_path / "cache"), "-q", "--format", f"html:{page_file}"])  # fmt: skip
    assert status == 0
    page = browser.page(page_file, javascript=False)
    assert page.locator("#summary").inner_text() == "safe to upgrade to 1.7; 2.0 has 3 error(s)"
    assert page.locator("#releases tbody tr").count() == 9
    assert page.locator("#releases tr.safe td").first.inner_text() == "1.7"
    connect = page.locator("article.finding[data-code=AD102]")
    states = connect.locator("ol.timeline li").evaluate_all(
        "cells => cells.map(c => c.dataset.version + ':' + c.dataset.state)"
    )
    assert states == [
        "1.0:fine",
        "1.1:fine",
        "1.2:window",
        "1.3:window",
        "1.4:window",
        "1.6:window",
        "1.7:window",
        "2.0:broken",
    ]
    dashed = connect.locator("ol.timeline li.not-audited").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c).borderTopStyle)"
    )
    assert dashed == ["dashed", "dashed"]  # 1.1 and 1.2 were not audited, and it shows
    colours = {
        connect.locator(f"li[data-state={s}]").first.evaluate("c => getComputedStyle(c).backgroundColor")
        for s in ("fine", "window", "broken")
    }
    assert len(colours) == 3


@pytest.mark.network
@pytest.mark.flagship
def test_flagship_plan(index_cache: Path) -> None:
    """speculators 0.3.0 against vLLM 0.11.0 -> 0.16.0, bisected. Read in the sdists:
    - `Scheduler.__init__` gains a required `block_size: int` in 0.11.1 (absent in 0.11.0): a clean break.
    - `get_kv_cache_config_from_groups` takes `kv_cache_specs` (required) up to 0.11.2 and not from 0.12.0.
    - `SchedulerConfig.is_encoder_decoder: InitVar[bool] = False` appears in 0.11.1; from 0.12.0 it has no
      default: 0.11.1 and 0.11.2 accept both the old call and the new one.
    So only 0.11.0 is free of errors."""
    started = time.perf_counter()
    result = plan(PlanRequest("speculators==0.3.0", "vllm", to="0.16.0", cache_dir=index_cache))
    seconds = time.perf_counter() - started
    assert (result.from_version, result.to_version) == ("0.11.0", "0.16.0")
    walk = [r.version for r in result.walk]
    assert walk[:5] == ["0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0"] and walk[-1] == "0.16.0"
    assert result.row("0.11.0").errors == 0 and result.row("0.16.0").errors == 3
    assert result.safe == "0.11.0"
    errors = {
        h.finding.message.split(" in vllm")[0]: h
        for h in result.histories
        if h.finding.severity.value == "error"
    }
    assert set(errors) == {
        "get_kv_cache_config_from_groups() got an unexpected keyword argument `kv_cache_specs`",
        "Scheduler() is missing required argument `block_size`",
        "SchedulerConfig() is missing required argument `is_encoder_decoder`",
    }
    kv = errors["get_kv_cache_config_from_groups() got an unexpected keyword argument `kv_cache_specs`"]
    block = errors["Scheduler() is missing required argument `block_size`"]
    encoder = errors["SchedulerConfig() is missing required argument `is_encoder_decoder`"]
    assert (kv.first_appeared, kv.window_from) == ("0.12.0", None)
    assert (block.first_appeared, block.window_from) == ("0.11.1", None)
    assert (encoder.first_appeared, encoder.window_from, encoder.window_to) == ("0.12.0", "0.11.1", "0.11.2")
    assert result.not_audited and result.bisections  # the releases 0.14.0 ... 0.15.1 were not needed
    assert seconds < 300, f"the flagship plan took {seconds:.0f}s"
    # The fourth break: `Request(..., eos_token_id=...)` binds in 0.16.0 (a required parameter there) and
    # not in 0.17.0, where `__init__` has no such parameter and a deprecated `eos_token_id` property is
    # left on the class ("Request.eos_token_id will be removed in v0.18...").
    later = plan(PlanRequest("speculators==0.3.0", "vllm", old="0.16.0", to="0.17.0", cache_dir=index_cache))
    (eos,) = [h for h in later.histories if h.finding.code == "AD101" and "eos_token_id" in h.finding.message]
    assert (eos.first_appeared, eos.last_clean, eos.window_from) == ("0.17.0", "0.16.0", None)
    assert eos.deprecated_in == "0.17.0" and eos.deprecation.startswith(
        "Request.eos_token_id will be removed"
    )
    assert later.row("0.17.0").errors == 4 and later.safe is None


@pytest.mark.network
@pytest.mark.flagship
def test_flagship_audit_history(
    index_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`audit speculators==0.3.0 --against vllm==0.16.0 --history`: written for 0.11.0 (its pin), the same
    first releases as the plan above, read in the sdists: `block_size` from 0.11.1, `kv_cache_specs` from
    0.12.0, `is_encoder_decoder` from 0.12.0 with 0.11.1 and 0.11.2 accepting both calls."""
    report = tmp_path / "audit.json"
    status = main(["audit", "speculators==0.3.0", "--against", "vllm==0.16.0", "--history", "--cache-dir", str(index_cache),
                   "-q", "--format", "text", "--format", f"json:{report}"])  # fmt: skip
    text = capsys.readouterr().out
    assert status == 1
    data = json.loads(report.read_text())
    assert data["old_upstream"]["version"] == "0.11.0"
    since = {
        f["message"].split(" in vllm")[0]: f["since"] for f in data["findings"] if f["severity"] == "error"
    }
    block = since["Scheduler() is missing required argument `block_size`"]
    kv = since["get_kv_cache_config_from_groups() got an unexpected keyword argument `kv_cache_specs`"]
    encoder = since["SchedulerConfig() is missing required argument `is_encoder_decoder`"]
    assert (block["first_appeared"], block["last_clean"], block["migration_window"]) == (
        "0.11.1",
        "0.11.0",
        None,
    )
    assert (kv["first_appeared"], kv["last_clean"], kv["migration_window"]) == ("0.12.0", "0.11.2", None)
    assert (encoder["first_appeared"], encoder["migration_window"]) == (
        "0.12.0",
        {"from": "0.11.1", "to": "0.11.2"},
    )
    assert (
        "  history: since vllm 0.11.1 (fine in 0.11.0)" in text
        and "  history: since vllm 0.12.0 (fine in 0.11.2)" in text
    )


@pytest.mark.network
def test_long_deprecation_history_packaging_legacy_version(index_cache: Path) -> None:
    """python-inspector 0.9.3 (`python_inspector/resolution.py`: `from packaging.version import
    LegacyVersion`, used in an annotation) against packaging 20.4 -> 22.0. Read in the sdists:
    `LegacyVersion.__init__` has no warning in 20.4; from 20.5 it warns "Creating a LegacyVersion has been
    deprecated and will be removed in the next major release" (DeprecationWarning); 21.3 still has the
    class; 22.0 has no `LegacyVersion` at all. 20.6 is yanked on the index."""
    result = plan(
        PlanRequest("python-inspector==0.9.3", "packaging", old="20.4", to="22.0", cache_dir=index_cache)
    )
    assert result.row("20.6").status == "yanked"
    assert result.safe == "21.3" and result.row("22.0").errors == 1
    (gone,) = [h for h in result.histories if h.finding.severity.value == "error"]
    assert gone.finding.code == "AD002" and gone.finding.symbol == "packaging.version.LegacyVersion"
    assert gone.finding.location.path == "python_inspector/resolution.py"
    assert (gone.first_appeared, gone.last_clean) == ("22.0", "21.3")
    assert gone.deprecated_in == "20.5"  # nine releases (20.5 to 21.3) before the removal
    assert gone.deprecation.startswith("Creating a LegacyVersion has been deprecated")
    assert result.not_audited  # bisected: not every release was audited


def test_untrusted_text_is_escaped(index: FakeIndex, downstream: Path, tmp_path: Path) -> None:
    """A deprecation message is the upstream's text: no escape sequence reaches a terminal, no markup a page."""
    from apidrift.reports import render_plan

    result = _plan(index, downstream, tmp_path)
    fetch = by_code(result, "AD101")
    fetch.deprecation = "\x1b[2J<script>alert(1)</script> | **bold**"
    text, page, md = (render_plan(result, fmt) for fmt in ("text", "html", "markdown"))
    assert "\x1b" not in text and "\\x1b[2J<script>" in text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>" not in md and "\\<script\\>" in md and "\\| \\*\\*bold\\*\\*" in md


# 1.1 and 1.2 accept `timeout=` as a deprecated alias of `deadline=` (the evidence a rename rests on)
SEND_WITH_ALIAS = (
    "import warnings\n\n\n"
    "def send(data, timeout: float | None = None, deadline: float | None = None):\n"
    "    if timeout is not None:\n"
    "        warnings.warn('`timeout` is deprecated, use `deadline`', DeprecationWarning)\n"
    "        deadline = timeout\n"
    "    return data\n"
)
LIBY = {
    # version: (liby/__init__.py, liby/old.py, liby/new.py or None)
    "1.0": ("def send(data, timeout: float | None = None):\n    return data\n", "def helper():\n    return 1\n\nVALUE = 1\n", None),
    "1.1": (SEND_WITH_ALIAS, "def helper():\n    return 1\n\nVALUE = 1\n", "def helper():\n    return 1\n"),
    "1.2": (SEND_WITH_ALIAS, "def helper():\n    return 1\n\nVALUE = 1\n", "def helper():\n    return 1\n"),
    "2.0": ("def send(data, deadline: float | None = None):\n    return data\n", "VALUE = 1\n", "def helper():\n    return 1\n"),
}  # fmt: skip


def test_windows_for_a_renamed_keyword_and_a_moved_name(tmp_path: Path) -> None:
    """`send(timeout=)` becomes `send(deadline=)` in 2.0, and `helper` moves from `liby.old` to `liby.new`;
    1.1, the version written for, already has both the new keyword (the old one its deprecated alias)
    and the new home (the same code), beside the old ones."""
    fake = FakeIndex()
    server = QuietServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        for version, (init, old, new) in LIBY.items():
            files = {"liby/__init__.py": init, "liby/old.py": old, **({"liby/new.py": new} if new else {})}
            fake.add(
                "liby",
                f"liby-{version}-py3-none-any.whl",
                wheel_bytes("liby", version, files, top_level="liby\n"),
            )
        root = tmp_path / "down"
        (root / "user").mkdir(parents=True)
        (root / "user" / "__init__.py").write_text(
            "from liby import send\nfrom liby.old import helper\n\nsend(b'x', timeout=1.0)\n"
        )
        result = plan(
            PlanRequest(
                str(root), "liby", old="1.1", cache_dir=tmp_path / "cache", index_url=fake.url, every=True
            )
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    rename = by_code(result, "AD101")
    assert rename.finding.fix is not None and rename.finding.fix.kind is FixKind.RENAME_KEYWORD
    assert (rename.first_appeared, rename.window_from, rename.window_to) == ("2.0", "1.1", "1.2")
    assert rename.migration == "pass `deadline=` instead of `timeout` from 1.1 on (to 1.2), where both work"
    moved = by_code(result, "AD002")
    assert moved.finding.fix is not None and moved.finding.fix.kind is FixKind.MOVE_IMPORT
    assert (moved.first_appeared, moved.window_from) == ("2.0", "1.1")
    assert moved.migration == "import `helper` from `liby.new` from 1.1 on (to 1.2), where both work"


def test_audit_history(
    index: FakeIndex,
    downstream: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`audit --history` gives each finding the history `plan` tells (same walk, same answers), in every format."""
    import apidrift.auditor.plan.walk as plan_module

    walked: list[str] = []
    real_audit = plan_module.audit

    def counted(request: Any) -> Any:
        walked.append(request.against)
        return real_audit(request)

    monkeypatch.setattr(plan_module, "audit", counted)
    cache = str(tmp_path / "cache")
    base = [
        "audit",
        str(downstream),
        "--against",
        "libx==2.0",
        "--index-url",
        index.url,
        "--cache-dir",
        cache,
        "-q",
    ]
    files = {fmt: tmp_path / f"audit.{fmt}" for fmt in ("json", "md", "html", "sarif")}
    status = main([*base, "--history", "--format", "text", "--format", f"json:{files['json']}", "--format", f"markdown:{files['md']}",
                   "--format", f"html:{files['html']}", "--format", f"sarif:{files['sarif']}"])  # fmt: skip
    text = capsys.readouterr().out
    assert status == 1  # the gate is unchanged: four errors
    # The walk audits 1.0, 1.3, 1.4, 1.6 and 1.7; the target's audit is the one just made, not redone.
    assert sorted(walked) == ["libx==1.0", "libx==1.3", "libx==1.4", "libx==1.6", "libx==1.7"]
    data = json.loads(files["json"].read_text())
    assert data["old_upstream"]["version"] == "1.0"  # written for 1.0: the downstream pins it
    since = {(f["code"], f["location"]["line"]): f["since"] for f in data["findings"]}
    assert {k: (v["first_appeared"], v["last_clean"], v["deprecated_in"], v["migration_window"]) for k, v in since.items()} == {
        ("AD002", 1): ("2.0", "1.7", "1.6", None),  # `from libx import legacy`: deprecated from 1.6, gone in 2.0
        ("AD102", 3): ("2.0", "1.7", None, {"from": "1.2", "to": "1.7"}),  # `retries=` accepted from 1.2
        ("AD101", 4): ("2.0", "1.7", "1.3", {"from": "1.0", "to": "1.7"}),  # `verify` deprecated in 1.3
    }  # fmt: skip
    assert all(v["upstream"] == "libx" and v["written_for"] == "1.0" for v in since.values())
    assert since[("AD101", 4)]["deprecation"] == "the verify parameter is deprecated and will be removed"
    assert since[("AD102", 3)]["migration"] == "pass `retries` from 1.2 on (to 1.7), where both work"
    # The same answers as `apidrift plan`.
    planned = _plan(index, downstream, tmp_path)
    assert sorted((h.finding.code, h.first_appeared, h.deprecated_in, h.window_from) for h in planned.histories) == sorted(
        (f["code"], v["first_appeared"], v["deprecated_in"], (v["migration_window"] or {}).get("from"))
        for f in data["findings"] for v in [f["since"]]
    )  # fmt: skip
    assert (
        "  history: since libx 2.0 (fine in 1.7); pass `retries` from 1.2 on (to 1.7), where both work"
        in text
    )
    assert (
        "  history: since libx 2.0 (fine in 1.7); deprecated in 1.3: the verify parameter is deprecated and will be removed; "
        "stop passing `verify` (optional there) from 1.0 on (to 1.7), where both work"
    ) in text
    assert (
        "  history: since libx 2.0 (fine in 1.7); deprecated in 1.6: legacy() is deprecated: use connect()"
        in text
    )
    assert (
        "note: --history: libx releases 1.0 to 2.0 (8 in the range, 6 audited, 2 not audited: same findings at both ends); yanked, skipped: 1.5"
        in text
    )
    assert "<br>History: since libx 2.0 (fine in 1.7); deprecated in 1.6" in files["md"].read_text()
    page = files["html"].read_text()
    assert page.count('<p class="history"><strong>History:</strong> since libx 2.0 (fine in 1.7)') == 3
    sarif = json.loads(files["sarif"].read_text())
    results = sarif["runs"][0]["results"]
    assert sorted(r["properties"]["since"]["deprecated_in"] or "-" for r in results) == [
        "-",
        "1.3",
        "1.6",
    ]

    # Without --history nothing changes: no `since` anywhere.
    assert main([*base, "--format", f"json:{files['json']}"]) == 1
    assert all("since" not in f for f in json.loads(files["json"].read_text())["findings"])
    # Without an old version there is no history, and a note says what it needs.
    assert main([*base, "--from", "none", "--history", "--format", f"json:{files['json']}"]) == 1
    plain = json.loads(files["json"].read_text())
    assert plain["old_upstream"] is None and all("since" not in f for f in plain["findings"])
    assert any(
        n.startswith("--history needs the version the downstream was written for") for n in plain["notes"]
    )


def test_the_version_in_use_is_never_an_upgrade_and_progress_is_for_a_terminal(
    index: FakeIndex,
    downstream: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # From 1.7 to 2.0: 2.0 breaks three calls (CPython agrees), 1.7 is the only release without errors.
    assert not binds("2.0", "connect", "h") and binds("1.7", "connect", "h")
    stuck = _plan(index, downstream, tmp_path / "a", old="1.7", to="2.0")
    assert stuck.safe == "1.7" and not stuck.target_reachable
    assert (
        stuck.summary() == "no later release is free of errors: 1.7 is the version in use; 2.0 has 3 error(s)"
    )
    same = _plan(index, downstream, tmp_path / "a", old="1.7", to="1.7")
    assert same.summary() == "1.7 is the version in use, the target: no errors"
    base = ["plan", str(downstream), "--upstream", "libx", "--index-url", index.url,
            "--cache-dir", str(tmp_path / "cache"), "--from", "1.4", "--to", "2.0"]  # fmt: skip
    # stderr is not a terminal (a log, a CI step): no line per release audited
    assert main(base) == 0
    captured = capsys.readouterr()
    assert "safe to upgrade to 1.7; 2.0 has 3 error(s)" in captured.out
    assert "auditing against" not in captured.err

    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(base) == 0
    assert "apidrift: auditing against libx==1.4 (1 audited" in terminal.text
