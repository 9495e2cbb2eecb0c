"""Outputs for CI: GitHub workflow commands, the Markdown summary, and SARIF checked by two consumers:
the official `sarif-multitool validate` (npm, installed by .ci/run under .ci/node) and `sarif-tools`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from apidrift.auditor.cli.main import main
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
from apidrift.reports import github, markdown, render

ROOT = Path(__file__).resolve().parents[2]
MULTITOOL_DIRS = [ROOT / ".ci" / "node" / "node_modules" / "@microsoft"]

OLD_PKG = (
    "def get_config(vllm_config, available_memory, kv_cache_specs=None):\n    return None\n\n\nFLAG = 1\n"
)
NEW_PKG = (
    "def get_config(vllm_config, available_memory):\n    return None\n\n\n"
    "def tokenize(text, /):\n    return text\n\n\n"
    "class Scheduler:\n    def __init__(self, config, block_size):\n        self.config = config\n"
)
DOWNSTREAM = """\
import pkg

try:
    from pkg import FLAG
except ImportError:
    FLAG = 0

pkg.get_config(1, 2, kv_cache_specs=3)
s = pkg.Scheduler(
    1,
)
pkg.tokenize(text="naïve, 100% ✓")
pkg.gone()
"""


def missing_tool(name: str) -> None:
    """Skip when a tool is absent on a developer's machine; under CI (.ci/run installs it) fail instead."""
    if os.environ.get("CI"):
        pytest.fail(f"{name} is not installed; .ci/run should have installed it")
    pytest.skip(f"{name} is not installed (bash .ci/run installs it)")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One real audit of a local project (src layout) written in every format at once."""
    root = tmp_path_factory.mktemp("ci")
    for relative, text in {
        "old/pkg/__init__.py": OLD_PKG,
        "new/pkg/__init__.py": NEW_PKG,
        "repo/pyproject.toml": '[project]\nname = "app"\nversion = "1.0"\n',
        "repo/src/app/__init__.py": DOWNSTREAM,
        "repo/src/app/broken.py": "import pkg\ndef (:\n",
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    paths = {fmt: root / f"report.{fmt}" for fmt in ("sarif", "github", "markdown", "json")}
    status = main(
        [
            "audit",
            str(root / "repo"),
            "--against",
            f"pkg@{root / 'new'}",
            "--from",
            f"pkg@{root / 'old'}",
            "--offline",
            "--cache-dir",
            str(root / "cache"),
            "--quiet",
        ]
        + [arg for fmt, path in paths.items() for arg in ("--format", f"{fmt}:{path}")]
    )
    assert status == 1
    paths["root"] = root
    return paths


# ---- GitHub workflow commands


def test_escaping_rules() -> None:
    assert github.escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert github.command("error", "x", file="a,b.py", line=3, col=None) == "::error file=a%2Cb.py,line=3::x"


def test_github_annotations_from_a_real_run(
    reports: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = reports["github"].read_text(encoding="utf-8").splitlines()
    commands = [line for line in lines if line.startswith("::")]
    findings = json.loads(reports["json"].read_text())["findings"]
    assert len([c for c in commands if "file=" in c and "title=AD" in c]) == len(findings)
    kw = next(c for c in commands if "AD101" in c)
    # The downstream is repo/ with a src/ layout: paths are relative to the project root (repo/), made
    # relative to the current folder's workspace only when inside it; this run's cwd is elsewhere.
    assert kw.startswith(
        "::error file=src/app/__init__.py,line=8,col=22,endLine=8,endColumn=38,title=AD101 unexpected-keyword::"
    )
    assert "%0AFix: remove `kv_cache_specs=`" in kw and "\n" not in kw
    multi = next(c for c in commands if "AD102" in c)
    assert "line=9," in multi and "endLine=11" in multi and "col=" not in multi  # columns only on one line
    guarded = next(c for c in commands if "AD002" in c)
    assert guarded.startswith("::notice ")  # info level: guarded by `except ImportError`
    posonly = next(c for c in commands if "AD104" in c)
    assert "%25" not in posonly.split("::", 2)[1]  # properties carry no message text
    failed = [c for c in commands if "broken.py" in c]  # one annotation: the AD901 error
    assert (
        len(failed) == 1
        and failed[0].startswith("::error file=src/app/broken.py,line=2,col=5,")
        and "AD901" in failed[0]
    )
    assert lines[-1].startswith("apidrift: app==1.0 against pkg: ")


def test_github_paths_relative_to_the_workspace(
    reports: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = AuditResult(
        downstream=InputInfo("app", "1.0", "directory", str(reports["root"] / "repo")),
        upstream=InputInfo("pkg", None, "path", "new"),
        findings=[_finding("app/__init__.py", "pkg.f(x=1)")],
        files=[FileOutcome("app/__init__.py", FileStatus.SCANNED, use_sites=1)],
    )
    monkeypatch.setenv("GITHUB_WORKSPACE", str(reports["root"]))
    assert "::error file=repo/src/app/__init__.py,line=1," in github.render(result)
    assert "file=src/app/__init__.py," in github.render(result, workspace=reports["root"] / "repo")
    assert "file=app/__init__.py," in github.render(
        replace(result, downstream=InputInfo("app", "1.0", "index", "x.whl"))
    )


def _finding(path: str, source: str, message: str = "f() got an unexpected keyword argument `x`") -> Finding:
    return Finding(
        code="AD101",
        rule="unexpected-keyword",
        severity=Severity.ERROR,
        message=message,
        location=Location(path, 1, 1, 1, len(source) + 1, source),
        symbol="pkg.f",
        upstream="pkg",
        hint="remove `x=`",
    )


# ---- Markdown


def test_markdown_summary_from_a_real_run(reports: dict[str, Path]) -> None:
    text = reports["markdown"].read_text(encoding="utf-8")
    assert text.startswith("### apidrift: app==1.0 against pkg (written for pkg)\n")
    assert ":x: **5 errors**, 0 warnings, 1 info" in text
    assert "| [`AD101` unexpected-keyword](" in text
    assert (
        "| :x: | `src/app/__init__.py:8:22` | `AD101` unexpected-keyword | get\\_config() got an unexpected"
        in text
    )
    assert "<details><summary>Coverage, files and notes</summary>" in text
    assert "failed: `src/app/broken.py`" in text


def test_markdown_escapes_and_caps() -> None:
    nasty = _finding("a|b.py", "x", message="bad | pipe <script> and `co|de` *stars*")
    result = AuditResult(
        downstream=InputInfo("d", "1", "index", "d.whl"),
        upstream=InputInfo("u", "2", "index", "u.whl"),
        findings=[nasty] * 5,
        coverage=[Coverage("u", 1, 1, 1)],
    )
    text = markdown.render(result, max_rows=3)
    row = next(line for line in text.splitlines() if "bad" in line)
    assert "bad \\| pipe \\<script\\> and `co\\|de` \\*stars\\*" in row
    assert "`a\\|b.py:1:1`" in row
    assert len(re.split(r"(?<!\\)\|", row)) == 6  # unescaped pipes: still exactly four cells
    assert "… and 2 more; see the full report." in text
    clean = replace(result, findings=[])
    assert ":white_check_mark: **No breaking changes found.**" in markdown.render(clean)


# ---- SARIF


def multitool() -> Path:
    for base in MULTITOOL_DIRS:
        for candidate in sorted(base.glob("sarif-multitool-*/Sarif.Multitool")):
            if os.access(candidate, os.X_OK) or candidate.exists():
                return candidate
    found = shutil.which("sarif-multitool")
    if found:
        return Path(found)
    missing_tool("sarif-multitool (npm @microsoft/sarif-multitool)")
    raise AssertionError  # unreachable


def validate(sarif: Path, out: Path) -> list[dict]:
    """Run the official validator with GitHub's ingestion rules too; return its errors and warnings."""
    tool = multitool()
    if not os.access(tool, os.X_OK):
        tool.chmod(0o755)  # npm may skip the package's postinstall chmod
    completed = subprocess.run(
        [
            str(tool),
            "validate",
            str(sarif),
            "--output",
            str(out),
            "--level",
            "Error;Warning",
            "--rule-kind",
            "Sarif;Gh",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DOTNET_CLI_TELEMETRY_OPTOUT": "1"},
        check=False,
    )
    assert out.exists(), (
        f"sarif-multitool wrote no log (exit {completed.returncode}): {completed.stdout}{completed.stderr}"
    )
    log = json.loads(out.read_text(encoding="utf-8-sig"))
    run = log["runs"][0]
    assert run["invocations"][0]["executionSuccessful"], run["invocations"]
    return [r for r in run.get("results", []) if r.get("level", "warning") in ("error", "warning")]


def test_sarif_passes_the_official_validator(reports: dict[str, Path], tmp_path: Path) -> None:
    problems = validate(reports["sarif"], tmp_path / "validation.sarif")
    assert problems == [], [(p["ruleId"], p["message"]) for p in problems]


def test_the_validator_does_catch_errors(reports: dict[str, Path], tmp_path: Path) -> None:
    broken = json.loads(reports["sarif"].read_text())
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    path = tmp_path / "broken.sarif"
    path.write_text(json.dumps(broken))
    problems = validate(path, tmp_path / "validation.sarif")
    assert any("startLine" in json.dumps(p) for p in problems)


def test_sarif_reads_back_with_sarif_tools(reports: dict[str, Path]) -> None:
    try:
        from sarif import loader
    except ImportError:
        missing_tool("sarif-tools")
    sarif_file = loader.load_sarif_file(str(reports["sarif"]))
    findings = json.loads(reports["json"].read_text())["findings"]
    assert sarif_file.get_distinct_tool_names() == ["apidrift"]
    assert sarif_file.get_result_count() == len(findings)
    records = sorted((r["Location"], r["Line"], r["Code"], r["Severity"]) for r in sarif_file.get_records())
    expected = sorted(
        (
            f["location"]["path"],
            f["location"]["line"],
            f["code"],
            {"info": "note"}.get(f["severity"], f["severity"]),
        )
        for f in findings
    )
    assert records == expected
    assert any("kv_cache_specs" in r["Description"] for r in sarif_file.get_records())


def test_sarif_source_root_is_the_project_root(reports: dict[str, Path]) -> None:
    run = json.loads(reports["sarif"].read_text())["runs"][0]
    root = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert root.endswith("/repo/") and uri.startswith("src/app/")  # the folder holding pyproject.toml
    from urllib.parse import unquote, urlsplit

    assert Path(unquote(urlsplit(root).path), uri).is_file()  # the path resolves to the real file


def test_sarif_render_is_stable() -> None:
    result = AuditResult(
        downstream=InputInfo("d", "1", "index", "d.whl"),
        upstream=InputInfo("u", "2", "index", "u.whl"),
        findings=[_finding("a.py", "f(x=1)")],
    )
    assert render(result, "sarif") == render(result, "sarif")


# ---- the composite action and the pre-commit hook


def test_action_audit_step(reports: dict[str, Path], tmp_path: Path) -> None:
    """Run the action's own audit script as the runner would, on the project of `reports`."""
    import sys

    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "audit"]
    runner_temp = tmp_path / "runner"
    (runner_temp / "apidrift-venv" / "bin").mkdir(parents=True)
    installed = Path(sys.executable).parent / "apidrift"
    if not installed.exists():
        pytest.skip("the apidrift console script is not installed in this environment")
    (runner_temp / "apidrift-venv" / "bin" / "apidrift").symlink_to(installed)
    (runner_temp / "apidrift-venv" / "bin" / "python").symlink_to(sys.executable)
    root = reports["root"]
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_WORKSPACE": str(root),
        "DOWNSTREAM": str(root / "repo"),
        "AGAINST": f"pkg@{root / 'new'}",
        "FROM": "",
        "FAIL_ON": "",
        "BASELINE": "",
        "SARIF_FILE": str(tmp_path / "apidrift.sarif"),
        "HTML_FILE": str(tmp_path / "report.html"),
        "EXTRA_ARGS": f"--offline --cache-dir {root / 'cache'} --quiet",
    }
    completed = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr  # findings do not fail this step: the last step does
    assert (
        tmp_path / "output"
    ).read_text() == "mode=audit\nexit-code=1\n"  # no pull request: audit, as before
    assert "::error file=repo/src/app/__init__.py,line=8," in completed.stdout  # relative to the workspace
    assert (tmp_path / "summary.md").read_text().startswith("### apidrift: app==1.0 against pkg")
    assert json.loads((tmp_path / "apidrift.sarif").read_text())["runs"][0]["results"]
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    fail = next(s for s in action["runs"]["steps"] if s.get("name") == "Fail on findings")
    assert fail["if"] == "steps.audit.outputs.exit-code == '1' || steps.audit.outputs.exit-code == '3'"

    env["AGAINST"] = "pkg==!!"  # bad input: this step itself fails with status 2
    completed = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 2 and "apidrift: error: cannot parse" in completed.stderr


def test_pre_commit_hook(
    reports: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "apidrift" and hook["language"] == "python" and hook["pass_filenames"] is False
    program, *args = hook["entry"].split()
    assert program == "apidrift"
    root = reports["root"]
    (root / "repo" / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "1.0"\n\n[tool.apidrift]\nagainst = "pkg@{root / "new"}"\n'
    )
    monkeypatch.chdir(root / "repo")
    assert main([*args, "--offline", "--cache-dir", str(root / "cache")]) == 1
    assert "AD101" in capsys.readouterr().out


def test_pre_commit_hook_runs_on_a_commit_that_only_changes_pins() -> None:
    """pre-commit runs a hook when one staged file passes its `types` (all of them) and `files` (a
    regex searched in the path). A commit that only upgrades a pin is the one that needs the audit: every
    pin or lock file `bump` reads, and the configuration, trigger it, as Python files do; others do not.
    (Checked with pre-commit 4.7.0's own classifier on the same file names.)"""
    import re

    import yaml

    from apidrift.auditor.sources.lockfiles import is_read_by_bump

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert not hook.get("types") and not hook.get("types_or")  # `types: [python]` would skip pin-only commits
    files = re.compile(hook["files"])
    pins = ["pyproject.toml", "requirements.txt", "requirements-dev.txt", "requirements/ci.txt", "uv.lock",
            "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml", "pylock.ci.toml"]  # fmt: skip
    assert all(is_read_by_bump(pin) for pin in pins)
    runs = [*pins, "app/x.py", "stubs/y.pyi", "setup.cfg", "apidrift.toml", "svc/pyproject.toml"]
    skips = ["README.md", "docs/requirements.md", "data.json", "uv.lock.bak", "notes.txt", "x.pyc"]
    assert [name for name in runs if not files.search(name)] == []
    assert [name for name in skips if files.search(name)] == []
