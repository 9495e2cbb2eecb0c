"""A new user's first runs: the gate passes only what it checked, paths work where the user stands,
hints are right, reports can be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apidrift.auditor.cli.main import main

NEW_PKG = """\
def run(a, b=0):
    return a


class Engine:
    def __init__(self, config, *, seed: int = 0):
        self.config = config
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def audit(tmp_path: Path, downstream: Path, *args: str, upstream: str = "new") -> list[str]:
    return ["audit", str(downstream), "--against", f"pkg@{tmp_path / upstream}", "--offline",
            "--cache-dir", str(tmp_path / "cache"), *args]  # fmt: skip


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG})
    return tmp_path


# ---- unparsable downstream files


def test_an_unparsable_file_is_an_error_finding_with_cpythons_line_and_message(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(
        upstream / "down",
        {
            "app/__init__.py": "import pkg\npkg.run(1)\n",
            "app/bad.py": "import pkg\n\ndef f(:\n    pkg.run()\n",
        },
    )
    assert main(audit(upstream, down)) == 1
    out = capsys.readouterr().out
    try:  # the oracle: CPython's own parser
        compile((down / "app/bad.py").read_text(), "bad.py", "exec")
    except SyntaxError as error:
        line, message = error.lineno, error.msg
    assert f"app/bad.py:{line}:" in out and "AD901 [error]" in out and message in out
    assert main(audit(upstream, down, "--format", "json")) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["code"], f["rule"], f["location"]["path"], f["location"]["line"]) for f in findings] == [
        ("AD901", "unparsable-file", "app/bad.py", line)
    ]


@pytest.mark.parametrize(("args", "expected"), [(["--ignore", "unparsable-file"], 0), (["--severity", "AD901=warning"], 0),
                                                (["--severity", "input=warning", "--fail-on", "warning"], 1)])  # fmt: skip
def test_the_unparsable_file_rule_is_configurable(
    upstream: Path, args: list[str], expected: int, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(
        upstream / "down",
        {"app/__init__.py": "import pkg\npkg.run(1)\n", "app/bad.py": "import pkg\nx = (\n"},
    )
    assert main(audit(upstream, down, *args)) == expected
    out = capsys.readouterr().out
    assert ("AD901" in out) is ("--ignore" not in args)


# ---- the version written for


@pytest.mark.parametrize("old", ["pkg==9.0", "pkg@{tmp}/no-such-folder"])
def test_an_explicit_from_that_cannot_be_had_is_exit_2(
    upstream: Path, old: str, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n"})
    assert main(audit(upstream, down, "--from", old.format(tmp=upstream))) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("apidrift: error: --from pkg"), err


def test_an_inferred_old_version_that_cannot_be_had_falls_back_with_a_note(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n",
                                     "pyproject.toml": '[project]\nname = "down"\nversion = "1"\ndependencies = ["pkg==0.5"]\n'})  # fmt: skip
    assert main(audit(upstream, down)) == 0
    assert "the inferred old version could not be had" in capsys.readouterr().out


# ---- the gate passes only what it checked


def test_a_downstream_that_does_not_use_the_upstream_is_exit_3_said_first(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import os\n"})
    assert main(audit(upstream, down)) == 3
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "apidrift: nothing checked: down does not use pkg (no file imports pkg)"
    assert "No breaking changes found" not in out
    assert main(audit(upstream, down, "--format", "json")) == 3
    assert json.loads(capsys.readouterr().out)["unchecked"].startswith(
        "nothing checked: down does not use pkg"
    )
    assert main(audit(upstream, down, "--fail-on", "never")) == 0  # asked never to fail
    capsys.readouterr()
    for fmt, first in (("markdown", ":warning: **nothing checked: down does not use pkg"),
                       ("github", "::warning title=apidrift%3A nothing checked::nothing checked: down does not use pkg")):  # fmt: skip
        assert main(audit(upstream, down, "--format", fmt)) == 3
        out = capsys.readouterr().out
        assert first in out and "No breaking changes found" not in out, out


def test_use_sites_none_of_which_could_be_checked_is_exit_3(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\n\ndef f(args):\n    pkg.run(*args)\n"})
    assert main(audit(upstream, down, "--format", "json")) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["coverage"][0]["found"] == 2 and report["coverage"][0]["checked"] == 1  # the import only
    assert "uses pkg at 1 site beyond its imports, but none could be checked" in report["unchecked"]
    write(
        down, {"app/more.py": "import pkg\npkg.run(1)\n"}
    )  # one call checked: the gate has checked something
    assert main(audit(upstream, down)) == 0


def test_findings_still_exit_1_when_nothing_else_was_checked(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\n\ndef f(:\n"})
    assert main(audit(upstream, down)) == 1
    assert "AD901" in capsys.readouterr().out


class _FakeIndex:
    """An index that lists four releases; the metadata of two of them require the upstream."""

    def __init__(self) -> None:
        from apidrift.auditor.sources.index_client import IndexFile, ProjectListing

        versions = ["0.1.0", "0.2.0", "0.3.0a1", "0.3.0", "0.3.1"]
        self.listing = ProjectListing("down", "test", tuple(
            IndexFile(f"down-{v}-py3-none-any.whl", f"u/{v}", v, "wheel", True, None, 10, metadata_url=f"m/{v}")
            for v in versions))  # fmt: skip
        self.requires = {
            "0.1.0": ["pkg==0.5; extra == 'x'"],
            "0.2.0": ["pkg>=1"],
            "0.3.0": ["other"],
            "0.3.1": [],
        }
        self.asked: list[str] = []

    def project(self, name: str):
        return self.listing

    def metadata(self, file) -> str:
        self.asked.append(file.version)
        lines = "".join(f"Requires-Dist: {r}\n" for r in self.requires[file.version])
        return f"Metadata-Version: 2.1\nName: down\nVersion: {file.version}\n{lines}"


def test_the_releases_that_require_the_upstream_are_named_from_their_metadata() -> None:
    from apidrift.auditor.sources.dependents import releases_requiring

    index = _FakeIndex()
    found = releases_requiring(index, "down", "pkg")  # type: ignore[arg-type]
    assert found.lines == ["down 0.2.0 requires pkg>=1", "down 0.1.0 requires pkg==0.5 (extra x)"]
    assert index.asked == ["0.3.1", "0.2.0", "0.1.0"]  # the newest of each series; no pre-release
    index.asked.clear()
    assert releases_requiring(index, "down", "pkg", count=2).lines == ["down 0.2.0 requires pkg>=1"]  # type: ignore[arg-type]
    assert index.asked == ["0.3.1", "0.2.0"]


@pytest.mark.network
def test_the_releases_of_speculators_that_require_vllm(index_cache: Path) -> None:
    """speculators 0.3.0's METADATA (read from its wheel) has `Requires-Dist: vllm==0.11.0; extra == "datagen"`."""
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.dependents import releases_requiring
    from apidrift.auditor.sources.index_client import IndexClient

    with IndexClient(Cache(index_cache)) as client:
        found = releases_requiring(client, "speculators", "vllm")
    assert "speculators 0.3.0 requires vllm==0.11.0 (extra datagen)" in found.lines


# ---- paths relative to the project root, in every format


SRC_LAYOUT = {
    "pyproject.toml": '[project]\nname = "app"\nversion = "1.0"\n',
    "src/app/__init__.py": "import pkg\n\npkg.run(1, c=2)\n",
}


def test_fix_diff_on_a_src_layout_applies_with_git_from_the_project_root(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    import subprocess

    git = shutil.which("git")
    assert git, "git is needed for this test"
    repo = write(upstream / "repo", SRC_LAYOUT)
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(upstream),
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run([git, "init", "-q"], cwd=repo, check=True, env=env)
    for folder in (repo, repo / "src", repo / "src" / "app"):  # wherever the user names the downstream from
        status = main(["fix", str(folder), "--against", f"pkg@{upstream / 'new'}", "--offline", "--cache-dir",
                       str(upstream / "cache"), "--unsafe-fixes"])  # fmt: skip
        patch = capsys.readouterr().out
        assert status == 1 and "+++ b/src/app/__init__.py" in patch, patch
        (upstream / "fix.diff").write_text(patch)
        applied = subprocess.run(
            [git, "apply", "--check", str(upstream / "fix.diff")],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert applied.returncode == 0, applied.stderr
    subprocess.run([git, "apply", str(upstream / "fix.diff")], cwd=repo, check=True, env=env)
    assert (repo / "src/app/__init__.py").read_text() == "import pkg\n\npkg.run(1)\n"


def test_every_format_names_the_same_path(
    upstream: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = write(upstream / "repo", SRC_LAYOUT)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    outputs = {
        fmt: upstream / f"report.{fmt}" for fmt in ("text", "json", "sarif", "github", "markdown", "html")
    }
    args = [a for fmt, path in outputs.items() for a in ("--format", f"{fmt}:{path}")]
    assert main(audit(upstream, repo, *args, "--quiet")) == 1
    wanted = "src/app/__init__.py"
    report = json.loads(outputs["json"].read_text())
    assert [f["location"]["path"] for f in report["findings"]] == [wanted]
    assert report["downstream"]["root"] == str(repo.resolve())
    assert f"{wanted}:3:12:" in outputs["text"].read_text()
    assert f"::error file={wanted},line=3," in outputs["github"].read_text()
    assert f"`{wanted}:3:12`" in outputs["markdown"].read_text()
    assert wanted in outputs["html"].read_text()
    sarif = json.loads(outputs["sarif"].read_text())
    run = sarif["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": wanted, "uriBaseId": "SRCROOT"}
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.resolve().as_uri() + "/"


# ---- hints that are right


@pytest.mark.parametrize(
    ("new_annotation", "suggested"), [("int", False), ("int | None", True), ("Optional[int]", True)]
)
def test_ad202_suggests_the_old_default_only_where_the_new_annotation_takes_it(
    tmp_path: Path, new_annotation: str, suggested: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path / "old",
        {
            "pkg/__init__.py": "from typing import Optional\n\nclass Config:\n    def __init__(self, name, seed: Optional[int] = None):\n        pass\n"
        },
    )
    write(
        tmp_path / "new",
        {
            "pkg/__init__.py": f"from typing import Optional\n\nclass Config:\n    def __init__(self, name, seed: {new_annotation} = 0):\n        pass\n"
        },
    )
    down = write(tmp_path / "down", {"app/__init__.py": "import pkg\n\npkg.Config('x')\n"})
    assert main(audit(tmp_path, down, "--from", f"pkg@{tmp_path / 'old'}", "--format", "json")) == 0
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "AD202" and "changed from None to 0" in finding["message"]
    assert ("pass `seed=None`" in finding["hint"]) is suggested, finding["hint"]
    if not suggested:
        assert f"does not fit the new annotation `{new_annotation}`" in finding["hint"]


# ---- the command line a new user meets


def test_rules_of_one_family_and_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    from apidrift.rules.base import Family
    from apidrift.rules.registry import all_rules

    assert main(["rules", "calls"]) == 0
    lines = [
        line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")
    ]  # not the fixes
    in_order = sorted(all_rules(), key=lambda r: r.code)  # listed by code
    assert [line.split()[0] for line in lines] == [r.code for r in in_order if r.family is Family.CALLS]
    assert main(["rules", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["code"], r["name"], r["family"]) for r in data] == [
        (r.code, r.name, r.family.value) for r in in_order
    ]
    assert main(["rules", "AD901", "--format", "json"]) == 0
    assert "## What it does" in json.loads(capsys.readouterr().out)["docs"]


def test_audit_help_gives_the_exit_statuses_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--help"]) == 0
    out = capsys.readouterr().out
    for status in ("0  nothing at or above", "1  findings", "2  bad usage", "3  nothing was checked"):
        assert f"\n    {status}" in out, out
    assert "apidrift audit speculators==0.3.0 --against vllm==0.16.0" in out
    assert "apidrift audit . --against" in out


def test_one_line_on_stderr_when_every_report_goes_to_a_file(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n"})
    html, sarif = upstream / "report.html", upstream / "report.sarif"
    assert main(audit(upstream, down, "--format", f"html:{html}", "--format", f"sarif:{sarif}")) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"apidrift: wrote {html}, {sarif} (no findings)"]
    assert main(audit(upstream, down, "--format", f"html:{html}", "--quiet")) == 0
    assert capsys.readouterr().err == ""


def test_a_network_error_is_one_short_line(
    upstream: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.sources import index_client

    monkeypatch.setattr(index_client, "DEFAULT_RETRIES", 0)  # refused is refused: no need to wait for backoff
    down = write(upstream / "down", {"app/__init__.py": "import pkg\n"})
    status = main(["audit", str(down), "--against", "pkg==1.0", "--index-url", "http://127.0.0.1:9/simple/",
                   "--cache-dir", str(upstream / "cache")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert (
        err[0]
        == "apidrift: error: cannot reach the index http://127.0.0.1:9/simple/: connection refused by 127.0.0.1:9 (--offline uses the cache only)"
    )


def test_network_failures_are_named_in_a_few_words() -> None:
    from apidrift.auditor.sources.index_client import network_failure

    resolve = OSError("HTTPSConnectionPool(host='idx.invalid', port=443): Max retries exceeded with url: /simple/x/ "
                      "(Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve 'idx.invalid'\"))")  # fmt: skip
    assert network_failure(resolve) == "cannot resolve the host name idx.invalid"
    timeout = OSError("HTTPSConnectionPool(host='idx.invalid', port=443): Read timed out. (read timeout=60)")
    assert network_failure(timeout) == "timed out talking to idx.invalid:443"


# ---- reports people read


def _long_finding():
    from apidrift.auditor.core.results import Finding, Location, Severity

    fields = [f"field_{i}: int = {i}" for i in range(40)]
    old = "(self, " + ", ".join(fields) + ") -> None"
    new = old.replace("field_20: int = 20", "field_20: int = 21")
    source = "    Config()"
    return Finding(
        code="AD202", rule="default-changed", severity=Severity.WARNING,
        message="constructor of pkg.Config: the default of `field_20` changed from 20 to 21 in pkg==2",
        location=Location("app/mod.py", 3, 5, 3, 13, source), symbol="pkg.Config", upstream="pkg",
        new_signature=new, old_signature=old, hint="pass `field_20=20` to keep the old behaviour",
    )  # fmt: skip


def test_text_elides_long_signatures_around_what_changed() -> None:
    from apidrift.auditor.core.results import AuditResult, InputInfo
    from apidrift.reports import render

    finding = _long_finding()
    result = AuditResult(
        InputInfo("app", "1", "directory", "/x"), InputInfo("pkg", "2", "path", "/y"), findings=[finding]
    )
    text = render(result, "text")
    new_line = next(line for line in text.splitlines() if line.startswith("  new: "))
    assert (
        new_line
        == "  new: (..., 20 unchanged, ..., field_19: int = 19, field_20: int = 21, field_21: int = 21, ..., 18 unchanged) -> None"
    )
    assert len(new_line) < 200 and len(finding.new_signature) > 700
    full = json.loads(render(result, "json"))["findings"][0]
    assert full["new_signature"] == finding.new_signature  # whole in JSON


# ---- the HTML report, in Debian's Chromium

from test_html import Browser, browser, screenshot, visible_findings  # noqa: E402, F401  (the fixture is used by name)

HTML_OLD = (
    "from typing import Optional\n\n"
    "def load(path, mode='r'):\n    return path\n\n"
    "class Config:\n    def __init__(self, name, "
    + ", ".join(f"f{i}=0" for i in range(10))
    + ", seed: Optional[int] = None):\n        pass\n"
)
HTML_NEW = HTML_OLD.replace("def load(path,", "def load(file_path=None,").replace(
    "seed: Optional[int] = None", "seed: int = 0"
)
HTML_DOWN = {
    "pyproject.toml": '[project]\nname = "app"\nversion = "1"\n\n[tool.apidrift]\nexclude = ["build/*"]\n',
    "app/a.py": "import pkg\n\ncfg = pkg.Config(\n    'x',\n    f0=1,\n)\npkg.load(path='p')\nprint(cfg)\n",
    "app/b.py": "import pkg\npkg.load(path='q', mode='w')\n",
}


@pytest.fixture
def html_report(tmp_path: Path) -> tuple[Path, dict]:
    write(tmp_path / "old", {"pkg/__init__.py": HTML_OLD})
    write(tmp_path / "new", {"pkg/__init__.py": HTML_NEW})
    down = write(tmp_path / "down", HTML_DOWN)
    page, data = tmp_path / "report.html", tmp_path / "report.json"
    status = main(
        audit(
            tmp_path,
            down,
            "--from",
            f"pkg@{tmp_path / 'old'}",
            "--format",
            f"html:{page}",
            "--format",
            f"json:{data}",
        )
    )
    assert status == 1
    return page, json.loads(data.read_text())


def test_html_report_reads_well_in_chromium(browser: Browser, html_report: tuple[Path, dict], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path, data = html_report
    page = browser.page(path)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.reload()
    screenshot(page, tmp_path / "first-hour.png", capsys, full_page=True)
    shown = visible_findings(page)
    # Grouped by file, files in the order of their most severe finding, then by path; in each file the
    # most severe first, then by position (`path=` is unknown at 7:10; the missing `file_path` of the
    # same call goes with it: CPython raises on the keyword first).
    assert [(f["severity"], f["rule"], f["file"]) for f in shown] == [
        ("error", "AD101", "app/a.py"), ("warning", "AD202", "app/a.py"),
        ("error", "AD101", "app/b.py")]  # fmt: skip
    warning = page.locator("article.finding[data-rule=AD202]")
    # The whole call (lines 3-6) with two lines around it, the call's lines marked as the use.
    numbers = warning.locator("figure.source .ln").all_inner_texts()
    assert numbers == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert (
        warning.locator(".src-use").count() == 4 and "f0=1," in warning.locator("figure.source").inner_text()
    )
    # Folded unchanged parameters keep their true numbers: `seed` is parameter 12 (name, f0..f9 before it).
    seed = warning.locator(".sig-new li.param-changed")
    assert seed.inner_text().startswith("seed: int = 0")
    assert seed.evaluate("li => li.value") == 12
    assert "11 unchanged parameters (1–11)" in warning.locator(".sig-new .param-folded summary").inner_text()
    # The AD202 hint does not tell to pass None to an `int` parameter.
    assert "seed=None" not in warning.locator(".hint").inner_text()
    # A copyable suppression comment per finding; a mark on what `apidrift fix` edits.
    assert page.locator("p.suppress code").all_inner_texts() == [
        f"# apidrift: ignore[{f['rule']}]" for f in shown
    ]
    assert page.locator("button.copy").first.is_visible()
    page.locator("button.copy").first.click()
    page.wait_for_function("document.querySelector('button.copy').textContent !== 'Copy'")
    assert (
        page.locator("article.finding[data-rule=AD101] .fixable").count() == 2
        and warning.locator(".fixable").count() == 0
    )
    # Date, version, command line and configuration in the footer; the time is the run's.
    footer = page.locator("footer").inner_text()
    assert f"Generated by apidrift {data['tool']['version']} on {data['run']['date']}" in footer
    assert data["run"]["command"].startswith("apidrift audit ") and data["run"]["command"] in footer
    assert "pyproject.toml" in footer and "exclude = ['build/*']" in footer
    assert f"The run took {data['run']['seconds']:.1f} s." in footer
    # Old and new parameters aligned row by row: `mode` on one row, `path` (removed) and `file_path`
    # (added) each beside a gap.
    renamed = page.locator("article.finding[data-rule=AD101]").first
    mode_y = [
        renamed.locator(f".sig-{side} li", has_text="mode=").bounding_box()["y"] for side in ("old", "new")
    ]
    assert mode_y[0] == mode_y[1]
    assert renamed.locator(".sig-old li").count() == renamed.locator(".sig-new li").count() == 3
    renamed.screenshot(path=str(tmp_path / "aligned.png"))
    # The upstream definition, file and line in the target version's sources, in a panel.
    definition = warning.locator("details.definition")
    assert definition.locator("summary").inner_text().startswith("Defined at pkg/__init__.py:7 in pkg")
    definition.locator("summary").click()
    assert "7    def __init__(self, name, f0=0" in definition.locator("pre").inner_text()
    assert HTML_NEW.splitlines()[6].startswith(
        "    def __init__(self, name,"
    )  # line 7 of the new version, as the panel says
    # The filter state lives in the address: a reload keeps it.
    page.select_option("#filter-severity", "warning")
    assert page.evaluate("location.hash") == "#severity=warning"
    page.reload()
    assert [f["rule"] for f in visible_findings(page)] == ["AD202"]
    assert page.locator("#filter-severity").input_value() == "warning"
    screenshot(page, tmp_path / "first-hour-warning.png", capsys, full_page=True)
    assert errors == []


def test_a_finding_on_a_keyword_carries_the_whole_call(
    upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = write(
        upstream / "down", {"app/__init__.py": "import pkg\n\n\n\nx = pkg.run(\n    1,\n    c=2,\n)\n"}
    )
    assert main(audit(upstream, down, "--format", "json")) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    # the call's first line, where CPython raises (not the keyword's, 7)
    assert finding["location"]["line"] == 5
    start, lines = finding["context_start"], finding["context"]
    assert start == 3 and lines == [
        "",
        "",
        "x = pkg.run(",
        "    1,",
        "    c=2,",
        ")",
    ]  # the call (5-8) and two lines before


# ---- a bare upstream name


def test_a_bare_upstream_is_the_downstreams_version_else_the_latest_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from localindex import LocalIndex, wheel_bytes

    # `click` is installed where apidrift runs (it depends on it): that must never be what is audited.
    down = write(
        tmp_path / "down",
        {"app/__init__.py": "import click\nimport zzfakevllm\n\nclick.run(1, 2)\nzzfakevllm.go(1)\n"},
    )
    index = LocalIndex(tmp_path / "index")
    index.add(
        "click",
        "click-99.0-py3-none-any.whl",
        wheel_bytes("click", "99.0", {"click/__init__.py": "def run(a):\n    pass\n"}, []),
    )
    index.add("zzfakevllm", "zzfakevllm-0.16.0-py3-none-any.whl", wheel_bytes("zzfakevllm", "0.16.0", {"zzfakevllm/__init__.py": "def go():\n    pass\n"}, []))  # fmt: skip
    with index:
        common = ["--from", "none", "--index-url", index.url, "--cache-dir", str(tmp_path / "cache"), "--color", "never"]  # fmt: skip
        # Not installed anywhere: the latest release, as for a bare downstream (was: "not installed", exit 2).
        assert main(["audit", str(down), "--against", "zzfakevllm", *common]) == 1
        out = capsys.readouterr().out
        assert "using the latest release on the index, 0.16.0" in out
        assert "app/__init__.py:5" in out
        # Installed in apidrift's own environment only: still the latest release, said so.
        assert main(["audit", str(down), "--against", "click", *common]) == 1
        out = capsys.readouterr().out
        assert "click: no version given, and no downstream environment" in out
        assert "using the latest release on the index, 99.0" in out and "app/__init__.py:4" in out
        # Installed in the downstream's environment (`--python`): that version, said so.
        site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
        write(site, {"click/__init__.py": "def run(a, b):\n    pass\n",
                     "click-7.5.dist-info/METADATA": "Metadata-Version: 2.1\nName: click\nVersion: 7.5\n\n",
                     "click-7.5.dist-info/RECORD": "click/__init__.py,,\n"})  # fmt: skip
        python = tmp_path / "venv" / "bin" / "python"
        write(python.parent, {"python": ""})
        assert main(["audit", str(down), "--against", "click", "--python", str(python), *common]) == 0
        out = capsys.readouterr().out
        assert f"click: using the version installed in --python {python}, 7.5" in out


# ---- a default that delegates to the same value is no change


@pytest.mark.network
def test_click_8_2_invoke_catch_exceptions_none_is_no_change(tmp_path: Path, index_cache: Path) -> None:
    """click 8.2.0's `CliRunner.invoke(catch_exceptions: bool | None = None)` starts with `if
    catch_exceptions is None: catch_exceptions = self.catch_exceptions`, which `__init__` sets from its
    `catch_exceptions: bool = True`; 8.1.8's default is `True` (and its CliRunner takes no such
    argument). Run under both releases in throwaway environments, `CliRunner().invoke(cmd)` on a command
    raising ValueError catches it in both. No AD202; the call's other defaults are unchanged too."""
    from apidrift.auditor.engine import AuditRequest
    from apidrift.auditor.engine import audit as run_audit

    down = write(tmp_path / "down", {"app/__init__.py": (
        "import click\nfrom click.testing import CliRunner\n\n\n@click.command()\ndef cli():\n    pass\n\n\n"
        "def test_cli():\n    runner = CliRunner()\n    result = runner.invoke(cli, ['--help'])\n    return result\n"
    )})  # fmt: skip
    result = run_audit(AuditRequest(str(down), "click==8.2.0", old="click==8.1.8", cache_dir=index_cache))
    assert [f for f in result.findings if f.code == "AD202"] == []
    assert result.coverage[0].checked >= 3  # the command, the runner and its invoke were checked
    # `diff` reads it the same way: no default change of invoke's catch_exceptions
    from apidrift.auditor.engine import DiffRequest, diff_versions

    changes = diff_versions(DiffRequest("click==8.1.8", "click==8.2.0", cache_dir=index_cache)).changes
    assert any("mix_stderr" in c.detail for c in changes)  # the runner's real break is listed
    assert not [
        c for c in changes if c.path == "click.testing.CliRunner.invoke" and "catch_exceptions" in c.detail
    ]


# ---- the old default judged against the new annotation, type aliases written out

ALIASED = """\
from typing import Literal, Optional, TypeAlias
{aliases}

class LoadConfig:
    def __init__(self, path, strategy: {annotation} = None):
        pass
"""


@pytest.mark.parametrize(
    ("aliases", "annotation", "fit"),
    [
        ('Strategy = Literal["lazy", "eager", "prefetch"]', "Strategy | None", True),
        ('Strategy: TypeAlias = Literal["lazy", "eager"]', "Optional[Strategy]", True),
        ('Strategy = Literal["lazy", "eager"]', '"Strategy | None"', True),
        ('Lazy = Literal["lazy"]\nStrategy = Lazy | Literal["eager"]', "Strategy | None", True),
        ('Strategy = Literal["eager", "prefetch"]', "Strategy | None", False),
        ("Strategy = int", "Strategy | None", False),
        ("class Strategy(str):\n    pass", "Strategy | None", None),  # a class: not known either way
        ('Strategy = Literal["eager"]\nif True:\n    Strategy = Literal["lazy"]', "Strategy | None", None),
    ],
)
def test_ad202_hint_reads_the_new_annotation_through_type_aliases(
    tmp_path: Path, aliases: str, annotation: str, fit: bool | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`the old default 'lazy' does not fit the new annotation SafetensorsLoadStrategy | None` was wrong:
    the alias is a Literal holding 'lazy'. CPython's own reading is the oracle: `typing.get_args` of the
    evaluated annotation says whether 'lazy' is among the Literal values."""
    import subprocess
    import sys

    old = "class LoadConfig:\n    def __init__(self, path, strategy: str = 'lazy'):\n        pass\n"
    write(tmp_path / "old", {"pkg/__init__.py": old})
    write(tmp_path / "new", {"pkg/__init__.py": ALIASED.format(aliases=aliases, annotation=annotation)})
    if fit is not None:  # the oracle, in a child process on the test's own upstream text
        probe = (
            "import typing, pkg\n"
            "def values(tp):\n"
            "    if typing.get_origin(tp) is typing.Literal:\n        return set(typing.get_args(tp))\n"
            "    return {v for arg in typing.get_args(tp) for v in values(arg)}\n"
            "tp = typing.get_type_hints(pkg.LoadConfig.__init__)['strategy']\n"
            "print('lazy' in values(tp) or str in (tp, *typing.get_args(tp)))\n"
        )
        done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "new")},
                              capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
        assert done.stdout.strip() == str(fit)
    down = write(tmp_path / "down", {"app/__init__.py": "import pkg\n\npkg.LoadConfig('x')\n"})
    assert main(audit(tmp_path, down, "--from", f"pkg@{tmp_path / 'old'}", "--format", "json")) == 0
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "AD202" and "changed from 'lazy' to None" in finding["message"]
    hint = finding["hint"]
    if fit is True:
        assert hint == "pass `strategy='lazy'` to keep the old behaviour"
    elif fit is False:
        assert hint.startswith(f"the old default 'lazy' does not fit the new annotation `{annotation}`")
    else:
        assert hint == (
            f"pass `strategy='lazy'` to keep the old behaviour, if the new annotation `{annotation}` accepts it"
        )


def test_ad202_hint_reads_a_dataclass_fields_annotation_through_its_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As vLLM's config dataclasses declare it: `safetensors_load_strategy: SafetensorsLoadStrategy | None`,
    the alias a module-level `Literal[...]` that holds the old default 'lazy'."""
    old = "from dataclasses import dataclass\n\n@dataclass\nclass LoadConfig:\n    safetensors_load_strategy: str = 'lazy'\n"
    new = (
        "from dataclasses import dataclass\nfrom typing import Literal\n\n"
        'SafetensorsLoadStrategy = Literal["lazy", "eager", "prefetch", "torchao"]\n\n\n'
        "@dataclass\nclass LoadConfig:\n    safetensors_load_strategy: SafetensorsLoadStrategy | None = None\n"
    )
    write(tmp_path / "old", {"pkg/__init__.py": old})
    write(tmp_path / "new", {"pkg/config/__init__.py": "", "pkg/config/load.py": new,
                             "pkg/__init__.py": "from pkg.config.load import LoadConfig\n"})  # fmt: skip
    down = write(tmp_path / "down", {"app/__init__.py": "import pkg\n\npkg.LoadConfig()\n"})
    assert main(audit(tmp_path, down, "--from", f"pkg@{tmp_path / 'old'}", "--format", "json")) == 0
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "AD202"
    assert finding["hint"] == "pass `safetensors_load_strategy='lazy'` to keep the old behaviour"


def test_type_aliases_read_once_bound_type_expressions_only() -> None:
    import ast
    import sys

    from apidrift.auditor.upstream.analyses.aliases import expand, type_aliases

    source = (
        "from typing import Literal, TypeAlias\nimport typing\n"
        'A = Literal["lazy", "eager"]\nB: TypeAlias = "A | int"\nC: typing.TypeAlias = A | None\n'
        "D = compute()\nE = Literal['x']\nE = Literal['y']\nF = int\ndef f():\n    global F\n    F = str\n"
        "G = list[A]\n"
    )
    if sys.version_info >= (3, 12):  # `type X = ...` exists from 3.12 on (checked there with 3.12.1)
        source += 'type H = Literal["lazy"]\ntype I[T] = list[T]\n'
    aliases = type_aliases(ast.parse(source))
    expected = {"A": "Literal['lazy', 'eager']", "B": "'A | int'", "C": "A | None", "G": "list[A]"}
    if sys.version_info >= (3, 12):
        expected["H"] = "Literal['lazy']"
    assert aliases == expected  # D: a call; E, F: bound twice; I: generic
    assert expand("A | None", aliases) == "Literal['lazy', 'eager'] | None"
    assert expand("B", aliases) == "Literal['lazy', 'eager'] | int"  # a forward reference, read through
    assert expand("C", aliases) == "Literal['lazy', 'eager'] | None"
    assert expand("Literal['A']", aliases) is None  # values, not names
    assert expand("A | None", aliases, frozenset({"A"})) is None  # a class body binds A
    assert expand("X | None", {"X": "Y", "Y": "X"}) in ("X | None", "Y | None", None)  # a cycle ends


# ---- the README's accuracy table is the real tier's output


def test_every_row_of_the_readme_accuracy_table_is_a_pair_the_real_tier_measures() -> None:
    """tests/real/test_real_world.py prints each pair's row of the table and fails where the README's
    figures differ from what it measured; here, offline: no row is without such a test."""
    import test_real_world as real

    rows = real.readme_accuracy_rows()
    assert len(rows) >= 10
    measured = {(real._label(d), real._label(u)) for d, u in real.CLEAN_PAIRS + real.COMPILED_CLEAN_PAIRS}
    measured |= {(real._label(d), real._label(u)) for d, u, _found, _share in real.STRANGER_PAIRS}
    measured.add((real._label("pandas==2.2.3"), real._label("numpy==2.1.2")))
    assert sorted(set(rows) - measured) == []
    row = real.accuracy_row("alembic==1.14.0", "sqlalchemy==2.0.36", 0, 2080, 1795)
    assert row == "| alembic 1.14.0 | sqlalchemy 2.0.36 | 0 | 2,080 | 1,795 (86%) |"
