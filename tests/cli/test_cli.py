"""The command line end to end, in-process through `main`, on small packages written into tmp_path.

The upstream is `pkg` in two versions given as `pkg@FOLDER`, the downstream a local folder, and every
run is `--offline` with its own cache, so nothing here touches the network.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from apidrift.auditor.cli.main import main
from apidrift.auditor.cli.options import parse_outputs
from apidrift.auditor.cli.progress import Progress, progress
from apidrift.rules.registry import all_rules

OLD_PKG = """\
def get_config(vllm_config, available_memory, kv_cache_specs=None):
    return None


class Scheduler:
    def __init__(self, config):
        self.config = config
"""

NEW_PKG = """\
def get_config(vllm_config, available_memory):
    return None


class Scheduler:
    def __init__(self, config, block_size):
        self.config = config
"""

DOWNSTREAM = """\
import pkg

pkg.get_config(1, 2, kv_cache_specs=3)
s = pkg.Scheduler(1)
"""

CLEAN = """\
import pkg

pkg.get_config(1, 2)
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp_path/{old,new}/pkg (the upstream's two versions) and tmp_path/down/app (the downstream)."""
    write(tmp_path / "old", {"pkg/__init__.py": OLD_PKG})
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG})
    write(tmp_path / "down", {"app/__init__.py": DOWNSTREAM})
    return tmp_path


def run(project: Path, *args: str, downstream: str | None = None, against: str | None = "new") -> list[str]:
    argv = ["audit", downstream or str(project / "down")]
    if against:
        argv += ["--against", f"pkg@{project / against}"]
    return [*argv, "--offline", "--cache-dir", str(project / "cache"), *args]


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("apidrift: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---- exit statuses


def test_exit_1_on_errors_and_the_findings_are_printed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(run(project)) == 1
    out = capsys.readouterr().out
    assert "app/__init__.py:3:22: AD101 [error]" in out
    assert "app/__init__.py:4:5: AD102 [error]" in out
    assert "`block_size`" in out
    assert "\x1b[" not in out  # not a terminal: no colour
    assert out.rstrip().endswith("Found 2 errors (0 warnings, 0 info).")


def test_exit_0_when_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "down", {"app/__init__.py": CLEAN})
    assert main(run(project)) == 0
    assert capsys.readouterr().out.rstrip().endswith("No breaking changes found.")


def test_with_from_findings_are_labelled_drift(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(project, "--from", f"pkg@{project / 'old'}")) == 1
    out = capsys.readouterr().out
    assert "AD101 [error, drift]" in out and "AD102 [error, drift]" in out


def test_pre_existing_findings_fail_only_when_asked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With an old version, the gate is on what the upgrade causes: a call that was already broken
    under the old version (`pre-existing`) is reported but exits 0, unless --fail-on-pre-existing."""
    write(project / "down", {"app/__init__.py": "import pkg\n\npkg.get_config(1)\n"})  # broken on both
    old = f"pkg@{project / 'old'}"
    assert main(run(project, "--from", old)) == 0
    assert "AD102 [error, pre-existing]" in capsys.readouterr().out
    assert main(run(project, "--from", old, "--fail-on-pre-existing")) == 1
    write(project / "down", {"app/__init__.py": "import pkg\n\npkg.get_config(1)\npkg.Scheduler(1)\n"})
    assert main(run(project, "--from", old)) == 1  # drift still fails


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--against", "pkg==!!"], "cannot parse 'pkg==!!'"),
        (["--ignore", "AD999"], "--ignore: no rule, rule name or family 'AD999'"),
        (["--severity", "AD999=info"], "--severity: no rule, rule name or family 'AD999'"),
        (["--severity", "AD101=fatal"], "expected RULE=LEVEL"),
        (["--format", "xml"], "unknown format 'xml'"),
        (["--format", "json", "--format", "text"], "only one --format can go to standard output"),
        (
            ["--format", "json", "--format", "sarif:x.sarif", "--output", "r.json"],
            "--output takes one report",
        ),
        (["--format", "json:/nonexistent-folder/x.json"], "folder /nonexistent-folder does not exist"),
        (["--baseline", "/nonexistent-folder/b.json"], "does not exist (create it with --write-baseline)"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    project: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run(project, *argv, against=None if "--against" in argv else "new")
    assert main(args) == 2
    captured = capsys.readouterr()
    assert message in one_line_error(captured.err)
    assert captured.out == ""


def test_nonexistent_downstream_folder(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(project, downstream=str(project / "nope"))) == 2
    assert "nope" in one_line_error(capsys.readouterr().err)


def test_nonexistent_upstream_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(project, against="missing")) == 2
    assert "missing" in one_line_error(capsys.readouterr().err)


def test_no_against_anywhere(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(project, against=None)) == 2
    assert "no upstream to audit against" in one_line_error(capsys.readouterr().err)


def test_unknown_option_is_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run(project, "--frobnicate")) == 2
    assert "--frobnicate" in one_line_error(capsys.readouterr().err)


# ---- outputs


def test_output_writes_the_file_and_nothing_to_stdout(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / "report.json"
    assert main(run(project, "--format", "json", "--output", str(target))) == 1
    assert capsys.readouterr().out == ""
    data = json.loads(target.read_text())
    assert sorted(f["code"] for f in data["findings"]) == ["AD101", "AD102"]


def test_several_formats_in_one_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {fmt: project / f"report.{fmt}" for fmt in ("sarif", "html", "json", "markdown", "github")}
    args = ["--format", "text"] + [a for fmt, p in paths.items() for a in ("--format", f"{fmt}:{p}")]
    assert main(run(project, *args)) == 1
    out = capsys.readouterr().out
    assert "AD101 [error]" in out  # text on stdout
    assert json.loads(paths["sarif"].read_text())["version"] == "2.1.0"
    assert len(json.loads(paths["json"].read_text())["findings"]) == 2
    assert paths["html"].read_text().count('<article class="finding') == 2
    assert "| rule | findings |" in paths["markdown"].read_text()
    assert paths["github"].read_text().count("::error file=") == 2


def test_parse_outputs(tmp_path: Path) -> None:
    outputs = parse_outputs(("text", f"sarif:{tmp_path}/b.sarif"), None)
    assert [(o.fmt, o.path) for o in outputs] == [("text", None), ("sarif", tmp_path / "b.sarif")]
    assert parse_outputs((), tmp_path / "r.txt")[0].path == tmp_path / "r.txt"
    assert parse_outputs((), None)[0].fmt == "text"
    html = parse_outputs((f"HTML:{tmp_path}/report.html",), None)[0]
    assert (html.fmt, html.path) == ("html", tmp_path / "report.html")


def test_color_always(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(run(project, "--color", "always"))
    assert "\x1b[31m" in capsys.readouterr().out


# ---- suppressions


def test_inline_suppressions_and_unused_ones(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        project / "down",
        {
            "app/__init__.py": (
                "import pkg\n\n"
                "pkg.get_config(1, 2, kv_cache_specs=3)  # apidrift: ignore[AD101]\n"
                "s = pkg.Scheduler(1)  # apidrift: ignore[names]\n"
                "pkg.get_config(1, 2)  # apidrift: ignore\n"
            )
        },
    )
    assert main(run(project, "--warn-unused-ignores", "--format", "json")) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["location"]["line"]) for f in data["findings"]] == [("AD102", 4)]
    unused = [note for note in data["notes"] if note.startswith("unused suppression")]
    assert unused == [
        "unused suppression: app/__init__.py:4: # apidrift: ignore[names]",
        "unused suppression: app/__init__.py:5: # apidrift: ignore",
    ]
    main(run(project, "--format", "json"))
    quiet = json.loads(capsys.readouterr().out)
    assert not [note for note in quiet["notes"] if note.startswith("unused suppression")]


def test_exclude_and_ignore_symbol(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "down", {"app/legacy.py": "import pkg\npkg.get_config(1, 2, kv_cache_specs=3)\n"})
    main(run(project, "--exclude", "app/legacy.py", "--ignore-symbol", "pkg.Scheduler", "--format", "json"))
    data = json.loads(capsys.readouterr().out)
    assert [(f["location"]["path"], f["code"]) for f in data["findings"]] == [("app/__init__.py", "AD101")]
    assert {
        "path": "app/legacy.py",
        "status": "skipped",
        "reason": "excluded by configuration",
        "use_sites": 0,
    } in data["files"]


# ---- stderr: quiet, verbose, progress


def test_quiet_and_verbose(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(run(project, "--quiet", "--write-baseline", str(project / "b.json")))
    assert capsys.readouterr().err == ""
    main(run(project, "--verbose", "--format", "json:" + str(project / "r.json")))
    err = capsys.readouterr().err
    assert f"upstream: pkg: read from {project / 'new'}" in err
    assert "parsed upstream modules: 1 written to the cache" not in err  # the first run cached it
    assert re.search(
        r"parsed upstream modules: 0 written to the cache, [1-9]\d* cache entries already there", err
    )
    assert re.search(r"timings: fetch [\d.]+s, scan [\d.]+s", err)
    assert f"wrote the json report to {project / 'r.json'}" in err


def test_progress_is_silent_unless_a_terminal(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(run(project))
    assert capsys.readouterr().err == ""  # pytest's stderr is not a TTY
    with progress("x", enabled=False) as shown:
        assert shown is None


def test_progress_draws_and_erases_on_a_terminal() -> None:
    stream = io.StringIO()
    with Progress("auditing down against pkg", stream, interval=0.01) as shown:
        deadline = time.monotonic() + 5
        while shown.frames_drawn < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    text = stream.getvalue()
    assert "auditing down against pkg (" in text and "s)" in text
    assert text.endswith("\r\x1b[2K")  # the line is erased, so the report starts clean


# ---- rules


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line for line in out if not line.startswith(" ")]  # not the fixes under a rule
    assert [line.split()[0] for line in lines] == sorted(
        rule.code for rule in all_rules()
    )  # AD106 before AD107
    assert any(line.split()[1] == "unexpected-keyword" for line in lines)
    # a table: every column starts where it starts on the first line, whatever the longest name
    rules = {rule.code: rule for rule in all_rules()}
    starts = None
    for line in lines:
        rule = rules[line.split()[0]]
        cells = [rule.code, rule.name, rule.severity.value, rule.family.value, rule.summary]
        found, at = [], 0
        for cell in cells:
            at = line.index(cell, at)
            found.append(at)
            at += len(cell)
        assert line.endswith(rule.summary)
        starts = starts or found
        assert found == starts, line
    # under each rule that can make fixes, which ones
    fixes = {
        out[i - 1].split()[0]: line.split("fixes: ")[1] for i, line in enumerate(out) if line.startswith(" ")
    }
    assert fixes["AD101"] == "safe rename-keyword, safe remove-keyword, unsafe remove-keyword, manual step"
    assert fixes["AD201"] == "safe positional-to-keyword, unsafe positional-to-keyword"
    assert fixes["AD003"] == "safe rename-attribute, unsafe rename-attribute, safe replace-name, manual step"
    assert fixes["AD001"] == "safe move-imports, unsafe move-imports"
    assert fixes["AD102"] == "manual step"
    assert "AD104" not in fixes


def test_rules_say_on_what_evidence_each_fix_rests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "AD101"]) == 0
    out = capsys.readouterr().out
    assert (
        "## Fixes `apidrift fix` makes\n- safe `rename-keyword`: the old version accepted both spellings"
        in out
    )
    assert main(["rules", "--format", "json"]) == 0
    data = {rule["code"]: rule for rule in json.loads(capsys.readouterr().out)}
    assert {(f["kind"], f["applicability"]) for f in data["AD002"]["fixes"]} == {
        ("rename-attribute", "safe"),
        ("rename-attribute", "unsafe"),
        ("move-import", "safe"),
        ("replace-name", "safe"),
        ("move-import", "unsafe"),
        ("manual", "manual"),
    }
    assert all(f["when"] for rule in data.values() for f in rule["fixes"])


@pytest.mark.parametrize("name", ["AD101", "ad101", "unexpected-keyword"])
def test_rules_code_prints_its_docs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", name]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# AD101 unexpected-keyword (error, family calls)")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
        assert section in out


def test_rules_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "AD999"]) == 2
    assert "no rule, rule name or family 'AD999'" in one_line_error(capsys.readouterr().err)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("apidrift, version ")


def test_an_internal_error_is_one_line_with_exit_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import apidrift.auditor.engine as engine

    def broken(request: object) -> None:
        raise RuntimeError("something we did not foresee\nsecond line")

    monkeypatch.setattr(engine, "audit", broken)
    monkeypatch.delenv("APIDRIFT_DEBUG", raising=False)
    status = main(["audit", ".", "--against", "pkg@.", "--no-config"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.strip() == (
        "apidrift: internal error: RuntimeError: something we did not foresee (set APIDRIFT_DEBUG=1 for the traceback)"
    )


def test_an_explicit_old_version_that_cannot_be_had_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = tmp_path / "up"
    (upstream / "pkg").mkdir(parents=True)
    (upstream / "pkg" / "__init__.py").write_text("def f(a):\n    return a\n")
    down = tmp_path / "down"
    down.mkdir()
    (down / "app.py").write_text("import pkg\npkg.f(1, 2)\n")
    status = main(
        [
            "audit",
            str(down),
            "--against",
            f"pkg@{upstream}",
            "--from",
            f"pkg@{tmp_path / 'missing.tar.gz'}",
            "--no-config",
            "--cache-dir",
            str(tmp_path / "c"),
            "--format",
            "json",
        ]
    )
    assert status == 2
    assert "missing.tar.gz" in one_line_error(capsys.readouterr().err)
