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
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n", "app/bad.py": "import pkg\n\ndef f(:\n    pkg.run()\n"})
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
def test_the_unparsable_file_rule_is_configurable(upstream: Path, args: list[str], expected: int, capsys: pytest.CaptureFixture[str]) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n", "app/bad.py": "import pkg\nx = (\n"})
    assert main(audit(upstream, down, *args)) == expected
    out = capsys.readouterr().out
    assert ("AD901" in out) is ("--ignore" not in args)


# ---- the version written for


@pytest.mark.parametrize("old", ["pkg==9.0", "pkg@{tmp}/no-such-folder"])
def test_an_explicit_from_that_cannot_be_had_is_exit_2(upstream: Path, old: str, capsys: pytest.CaptureFixture[str]) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n"})
    assert main(audit(upstream, down, "--from", old.format(tmp=upstream))) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("apidrift: error: --from pkg"), err


def test_an_inferred_old_version_that_cannot_be_had_falls_back_with_a_note(upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    down = write(upstream / "down", {"app/__init__.py": "import pkg\npkg.run(1)\n",
                                     "pyproject.toml": '[project]\nname = "down"\nversion = "1"\ndependencies = ["pkg==0.5"]\n'})  # fmt: skip
    assert main(audit(upstream, down)) == 0
    assert "the inferred old version could not be had" in capsys.readouterr().out
