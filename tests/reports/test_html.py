"""The HTML report: self-contained markup, the signature diff, and the page in a real browser.

The browser is Debian's Chromium (/usr/bin/chromium) driven by Playwright for Python; no browser is
ever downloaded. Each test run writes screenshots under pytest's tmp dir and prints their paths.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import AuditResult, Finding, InputInfo, Location, Severity
from apidrift.reports import html as html_report
from apidrift.reports.sigdiff import diff_signatures, parse_signature

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

OLD_PKG = """\
def get_config(vllm_config, available_memory, kv_cache_specs=None):
    return None


def tokenize(text, mode="fast"):
    return text


class Scheduler:
    def __init__(self, config):
        self.config = config
"""
NEW_PKG = """\
def get_config(vllm_config, available_memory: int, *, block_size: int):
    return None


def tokenize(text, /, mode="slow"):
    return text


class Scheduler:
    def __init__(self, config, block_size):
        self.config = config
"""
DOWNSTREAM = {
    "app/__init__.py": (
        "import pkg\n\n"
        "pkg.get_config(1, 2, kv_cache_specs=3, block_size=4)\n"
        "s = pkg.Scheduler(1)\n"
        "pkg.tokenize(text='<script>alert(1)</script>')\n"
    ),
    "app/util.py": "import pkg\nfrom pkg import gone\n\ntry:\n    from pkg import also_gone\nexcept ImportError:\n    pass\n",
}


# ---- markup, without a browser


def _result(message: str = "f() got an unexpected keyword argument `x`") -> AuditResult:
    return AuditResult(
        downstream=InputInfo("d", "1", "index", "d.whl"),
        upstream=InputInfo("u", "2", "index", "u.whl"),
        findings=[
            Finding(
                code="AD101",
                rule="unexpected-keyword",
                severity=Severity.ERROR,
                message=message,
                location=Location("a.py", 3, 5, 3, 8, "    f(x=1)"),
                symbol="u.f",
                upstream="u",
                new_signature="(a, /, b: int = 2) -> None",
                old_signature="(a, b=1, x=None)",
                hint="remove `x=`",
            )
        ],
    )


def test_self_contained_and_escaped() -> None:
    page = html_report.render(_result(message="bad </script><script>alert(1)</script> & `x`"))
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert "<style>" in page and "<script>" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)  # nothing fetched or linked out
    assert "<link" not in page and "@import" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; <code>x</code>" in page
    assert page.count("<script>") == 1


def test_finding_markup() -> None:
    page = html_report.render(_result())
    assert '<span class="ln" aria-hidden="true">3</span>    <mark>f(x</mark>=1)' in page
    assert 'href="#rule-ad101"' in page and 'id="rule-ad101"' in page  # linked to the included docs
    assert "<h4>What it does</h4>" in page
    assert '<del><code>x=None</code></del> <span class="tag tag-removed">removed</span>' in page
    assert "kind: positional-or-keyword \u2192 positional-only" in page
    assert "default: 1 \u2192 2" in page and "type: none \u2192 int" in page
    assert "1 parameter removed (x); 2 parameters changed (a, b); return type changed" in page
    assert "<strong>Fix:</strong> remove <code>x=</code>" in page
    named = html_report.render(_result(message="the default of `b` changed"))
    assert (
        "<strong><code>b=1</code></strong>" in named and "<strong><code>b: int = 2</code></strong>" in named
    )


def test_split_marked() -> None:
    assert html_report.split_marked(Location("a.py", 1, 3, 1, 5, "abcdef")) == ("ab", "cd", "ef")
    assert html_report.split_marked(Location("a.py", 1, 3, 4, 2, "x = f(  ")) == ("x ", "= f(", "  ")
    assert html_report.split_marked(Location("a.py", 1, 9, 1, 99, "short")) == ("short", "", "")


def test_parse_signature() -> None:
    params, returns = parse_signature(
        "(a, b: dict[str, int] = {'k': (1, 2)}, /, *args: Any, c, d=')', **kw) -> X[Y]"
    )
    assert [(p.name, p.kind) for p in params] == [
        ("a", "positional-only"),
        ("b", "positional-only"),
        ("args", "var-positional"),
        ("c", "keyword-only"),
        ("d", "keyword-only"),
        ("kw", "var-keyword"),
    ]
    assert params[1].annotation == "dict[str, int]" and params[1].default == "{'k': (1, 2)}"
    assert params[4].default == "')'" and returns == "X[Y]"
    assert parse_signature("(*, a)")[0][0].kind == "keyword-only"
    assert parse_signature("()") == ([], None)
    assert parse_signature("not a signature") is None


def test_diff_signatures() -> None:
    diff = diff_signatures("(a, b=1, x=None) -> int", "(a, b, *, y: str)")
    assert diff is not None
    assert diff.removed == ["x"] and diff.added == ["y"] and diff.changed == ["b"]
    assert diff.returns_changed
    (b,) = [row for row in diff.new if row.param.name == "b"]
    assert b.changes == ("now required (default removed)",)
    assert [row.param.required for row in diff.new] == [True, True, True]


# ---- in the browser


def _browser_or_skip() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("playwright or /usr/bin/chromium is missing; .ci/run should have installed them")
        pytest.skip("needs playwright and Debian's chromium (bash .ci/run installs both)")
    return sync_playwright


class Browser:
    """Headless Chromium with a fresh profile; `page(url, javascript=...)` opens a page."""

    def __init__(self, playwright: Any, profiles: Path) -> None:
        self.playwright = playwright
        self.profiles = profiles
        self.contexts: dict[bool, Any] = {}

    def page(self, path: Path, *, javascript: bool = True) -> Any:
        if javascript not in self.contexts:
            profile = self.profiles / ("js" if javascript else "nojs")
            profile.mkdir()
            self.contexts[javascript] = self.playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                headless=True,
                java_script_enabled=javascript,
                viewport={"width": 1280, "height": 900},
                offline=True,  # the report must need no network at all
            )
        page = self.contexts[javascript].new_page()
        page.set_default_timeout(5_000)  # a local file: anything slower is a failure, not a wait
        page.goto(path.as_uri())
        return page

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        opened = Browser(playwright, tmp_path_factory.mktemp("chromium-profiles"))
        try:
            yield opened
        finally:
            opened.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A real audit of a small local project, as HTML plus the same findings as JSON."""
    root = tmp_path_factory.mktemp("html")
    files = {"old/pkg/__init__.py": OLD_PKG, "new/pkg/__init__.py": NEW_PKG}
    files.update({f"down/{k}": v for k, v in DOWNSTREAM.items()})
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    page, data = root / "report.html", root / "report.json"
    status = main(
        [
            "audit",
            str(root / "down"),
            "--against",
            f"pkg@{root / 'new'}",
            "--from",
            f"pkg@{root / 'old'}",
            "--offline",
            "--cache-dir",
            str(root / "cache"),
            "--format",
            f"html:{page}",
            "--format",
            f"json:{data}",
        ]
    )
    assert status == 1
    findings = json.loads(data.read_text())["findings"]
    assert len({f["code"] for f in findings}) >= 3  # enough rules for filtering to mean something
    return page, findings


def visible_findings(page: Any) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        "article.finding",
        "els => els.filter(e => e.offsetParent !== null).map(e => ({rule: e.dataset.rule, file: e.dataset.file,"
        " severity: e.dataset.severity, text: e.innerText}))",
    )


def screenshot(page: Any, path: Path, capsys: pytest.CaptureFixture[str], **options: Any) -> None:
    page.screenshot(path=str(path), **options)
    assert path.stat().st_size > 10_000
    with capsys.disabled():
        print(f"\n  screenshot: {path}")


def check_filters(page: Any, findings: list[dict[str, Any]]) -> None:
    """Every finding visible at first; filtering to one rule (and severity, file, text) hides the others."""
    shown = visible_findings(page)
    assert len(shown) == len(findings)
    assert Counter(f["rule"] for f in shown) == Counter(f["code"] for f in findings)
    for finding in findings:  # each finding's message is on the page, visibly
        text = re.sub(r"`", "", finding["message"])
        assert any(text in f["text"] for f in shown), text
    status = page.locator("#filter-status")
    assert status.inner_text() == f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"

    counts = Counter(f["code"] for f in findings)
    for code, count in counts.items():
        page.select_option("#filter-rule", code)
        shown = visible_findings(page)
        assert [f["rule"] for f in shown] == [code] * count
        assert status.inner_text() == f"{count} of {len(findings)} findings shown"
    page.select_option("#filter-rule", "")
    assert len(visible_findings(page)) == len(findings)

    page.select_option("#filter-severity", "info")
    assert {f["severity"] for f in visible_findings(page)} == {"info"}
    page.select_option("#filter-severity", "")

    first_file = findings[0]["location"]["path"]
    page.select_option("#filter-file", first_file)
    assert {f["file"] for f in visible_findings(page)} == {first_file}
    hidden_sections = page.eval_on_selector_all("section.file", "els => els.filter(e => e.hidden).length")
    assert hidden_sections == len({f["location"]["path"] for f in findings}) - 1
    page.click("button[type=reset]")
    page.wait_for_function(
        f"document.querySelectorAll('article.finding:not([hidden])').length === {len(findings)}"
    )

    symbol = findings[-1]["symbol"]
    page.fill("#filter-text", symbol.upper())
    assert all(symbol in f["text"] for f in visible_findings(page)) and visible_findings(page)
    page.fill("#filter-text", "no-such-text-anywhere")
    assert visible_findings(page) == [] and page.locator("#no-match").is_visible()
    page.fill("#filter-text", "")


def test_report_in_the_browser(
    browser: Browser,
    report: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, findings = report
    page = browser.page(path)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.reload()
    assert page.title().startswith("apidrift: ")
    assert page.locator("#filters").is_visible()  # the script revealed the filters
    screenshot(page, tmp_path / "report.png", capsys, full_page=True)
    check_filters(page, findings)
    # The deep link a reader can share: #rule=CODE filters on load.
    code = findings[0]["code"]
    page.goto(path.as_uri() + f"#rule={code}")
    page.reload()
    assert {f["rule"] for f in visible_findings(page)} == {code}
    # The markup a screen reader relies on.
    assert page.locator("main").count() == 1 and page.locator("h1").count() == 1
    assert page.locator("label[for=filter-rule]").inner_text() == "Rule"
    assert page.locator("#filter-status").get_attribute("role") == "status"
    assert page.locator("article.finding mark").count() == len(findings)
    assert page.locator(".tag-removed").count() >= 1 and page.locator(".tag-added").count() >= 1
    assert errors == []


def test_report_without_javascript_and_in_print(
    browser: Browser, report: tuple[Path, list[dict[str, Any]]]
) -> None:
    path, findings = report
    page = browser.page(path, javascript=False)
    assert len(visible_findings(page)) == len(findings)  # everything is in the markup
    assert not page.locator("#filters").is_visible()  # filters need the script: not shown without it
    js_page = browser.page(path)
    js_page.select_option("#filter-rule", findings[0]["code"])
    js_page.emulate_media(media="print")
    assert not js_page.locator("#filters").is_visible()
    assert not js_page.locator("nav").is_visible()
    assert len(visible_findings(js_page)) == Counter(f["code"] for f in findings)[findings[0]["code"]]
    js_page.emulate_media(media="screen")
    js_page.select_option("#filter-rule", "")
    assert len(visible_findings(js_page)) == len(findings)


# ---- the flagship, for real


@pytest.mark.network
@pytest.mark.flagship
def test_flagship_html_report(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page_path, data_path = tmp_path / "flagship.html", tmp_path / "flagship.json"
    args = [
        "audit",
        "speculators==0.3.0",
        "--against",
        "vllm==0.16.0",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--verbose",
        "--format",
        f"html:{page_path}",
        "--format",
        f"json:{data_path}",
    ]
    assert main(args) == 1
    err = capsys.readouterr().err  # --verbose: what was fetched, then (second run) what came from the cache
    assert re.search(
        r"upstream: vllm==0\.16\.0: vllm-0\.16\.0\S* fetched from \S+, sha256 [0-9a-f]{64}", err
    ), err
    assert main(args) == 1
    err = capsys.readouterr().err
    assert (
        "upstream: vllm==0.16.0: " in err
        and "from the cache (extracted earlier)" in err
        and "fetched" not in err
    )
    findings = json.loads(data_path.read_text())["findings"]
    assert {f["code"] for f in findings} >= {"AD101", "AD102"}
    page = browser.page(page_path)
    header = page.locator("header").inner_text()
    assert "speculators==0.3.0" in header and "vllm==0.16.0" in header
    screenshot(page, tmp_path / "flagship.png", capsys, full_page=True)
    check_filters(page, findings)
    page.select_option("#filter-rule", "AD101")
    screenshot(page, tmp_path / "flagship-AD101.png", capsys)
