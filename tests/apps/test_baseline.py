"""The accepted-findings file: matched by file, rule, symbol and source text (not line), duplicates counted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from apidrift.auditor.baseline import BaselineError, key, read_baseline, split, write_baseline
from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import Finding, Location, Severity

NEW_PKG = "def get_config(vllm_config, available_memory):\n    return None\n"
CALL = "pkg.get_config(1, 2, kv_cache_specs=3)"


def finding(line: int, source: str = CALL, path: str = "app/mod.py", code: str = "AD101") -> Finding:
    return Finding(
        code=code,
        rule="unexpected-keyword",
        severity=Severity.ERROR,
        message="m",
        location=Location(path, line, 1, line, len(source) + 1, "    " * (line % 2) + source),
        symbol="pkg.get_config",
        upstream="pkg",
    )


def test_split_ignores_line_numbers_and_indentation() -> None:
    baseline = Counter([key(finding(3))])
    parts = split([finding(40)], baseline)
    assert parts.accepted == [finding(40)] and parts.new == [] and parts.unmatched == 0


def test_split_counts_duplicates() -> None:
    baseline = Counter([key(finding(3))])
    parts = split([finding(9), finding(3)], baseline)
    assert [f.location.line for f in parts.accepted] == [3]  # file order: the first one is accepted
    assert [f.location.line for f in parts.new] == [9]


def test_split_distinguishes_file_rule_symbol_and_text() -> None:
    baseline = Counter([key(finding(3))])
    others = [
        finding(3, path="app/other.py"),
        finding(3, code="AD102"),
        finding(3, source="pkg.get_config(x=1)"),
    ]
    parts = split(others, baseline)
    assert parts.new == others and parts.accepted == [] and parts.unmatched == 1


def test_write_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "accepted.json"
    assert write_baseline(path, [finding(3), finding(5), finding(7, code="AD102")]) == 3
    document = json.loads(path.read_text())
    assert document["apidrift_baseline"] == 1
    assert [(e["code"], e["count"]) for e in document["findings"]] == [("AD101", 2), ("AD102", 1)]
    assert document["findings"][0]["source"] == CALL  # stripped
    assert read_baseline(path) == Counter({key(finding(3)): 2, key(finding(7, code="AD102")): 1})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "is not valid JSON"),
        ("[]", "is not an apidrift baseline"),
        ('{"apidrift_baseline": 1, "findings": {}}', "`findings` must be a list"),
        (
            '{"apidrift_baseline": 1, "findings": [{"path": "a"}]}',
            "entry 1 needs path, code, symbol and source",
        ),
        (
            '{"apidrift_baseline": 1, "findings": [{"path": "a", "code": "b", "symbol": "c", "source": "d", "count": 0}]}',
            "entry 1 is malformed",
        ),
    ],
)
def test_bad_baseline_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(BaselineError, match=message):
        read_baseline(path)


# ---- end to end


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "new" / "pkg").mkdir(parents=True)
    (tmp_path / "new" / "pkg" / "__init__.py").write_text(NEW_PKG)
    (tmp_path / "down" / "app").mkdir(parents=True)
    (tmp_path / "down" / "app" / "__init__.py").write_text(f"import pkg\n\n{CALL}\npkg.gone()\n")
    return tmp_path


def audit(project: Path, *args: str) -> list[str]:
    return [
        "audit",
        str(project / "down"),
        "--against",
        f"pkg@{project / 'new'}",
        "--offline",
        "--cache-dir",
        str(project / "cache"),
        *args,
    ]


def test_gate_fails_only_on_new_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    accepted = project / "accepted.json"
    assert main(audit(project, "--write-baseline", str(accepted))) == 0  # today's findings are accepted
    out = capsys.readouterr()
    assert "wrote 2 accepted findings" in out.err
    assert "recorded 2 findings as accepted" in out.out

    assert main(audit(project, "--baseline", str(accepted))) == 0
    assert "2 accepted findings not shown, 0 new" in capsys.readouterr().out

    # Lines move, and the same broken call is added once more: only the new copy fails the gate.
    source = project / "down" / "app" / "__init__.py"
    source.write_text(f"import pkg\n# a comment\n\n\n{CALL}\npkg.gone()\n\ndef f():\n    {CALL}\n")
    assert main(audit(project, "--baseline", str(accepted), "--format", "json")) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["location"]["line"]) for f in report["findings"]] == [("AD101", 9)]
    assert "baseline " + str(accepted) + ": 2 accepted findings not shown, 1 new" in report["notes"]

    # Fixed findings are said to be no longer found.
    source.write_text("import pkg\n")
    assert main(audit(project, "--baseline", str(accepted))) == 0
    assert "2 accepted no longer found" in capsys.readouterr().out


def test_bad_baseline_is_exit_2_before_the_audit(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = project / "bad.json"
    bad.write_text("not json")
    assert main(audit(project, "--baseline", str(bad))) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "is not valid JSON" in captured.err
