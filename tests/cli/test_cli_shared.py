"""What the commands share: options declared once (auditor/cli/options.py), one source for formats
and levels, inputs located once (auditor/engine.py `Inputs`), and a baseline applied in one place."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
from test_fix import _cli_case

from apidrift.auditor import config, engine
from apidrift.auditor.baseline import apply_baseline, read_baseline, record_baseline
from apidrift.auditor.cli import options
from apidrift.auditor.cli.main import cli, main
from apidrift.auditor.engine import AuditRequest, DiffRequest, audit, diff_versions
from apidrift.auditor.fix.codemods import run_fix
from apidrift.reports import RENDERERS

COMMANDS = ("audit", "fix", "diff", "plan", "impact", "bump", "upgrade")
CLI_FOLDER = Path(options.__file__).parent


def _helps(name: str) -> dict[str, str]:
    """Each command that takes option `name`: the help it shows for it."""
    found = {}
    for command_name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and name in param.opts:
                found[command_name] = param.help or ""
    return found


@pytest.mark.parametrize("name", ["--offline", "--index-url", "--cache-dir"])
def test_the_fetch_options_are_in_every_command_that_fetches_with_one_help(name: str) -> None:
    helps = _helps(name)
    assert sorted(helps) == sorted(COMMANDS)
    assert len(set(helps.values())) == 1 or name == "--cache-dir"
    if name == "--cache-dir":  # impact alone adds that every job shares it
        assert {h for c, h in helps.items() if c != "impact"} == {
            "Cache folder (default: the user cache dir)."
        }
        assert helps["impact"] == "Cache folder (default: the user cache dir), shared by every job."


@pytest.mark.parametrize(
    ("name", "takers"),
    [
        ("--quiet", ("audit", "fix", "plan", "impact", "bump", "upgrade")),
        ("--no-config", ("audit", "fix", "plan", "bump", "upgrade")),
        ("--color", ("audit", "bump", "upgrade")),
        ("--severity", ("audit", "plan", "bump", "upgrade")),
        ("--ignore-symbol", ("audit", "fix", "plan", "bump", "upgrade")),
        ("--ignore", ("audit", "fix", "plan", "bump", "upgrade")),
    ],
)
def test_a_shared_option_says_the_same_in_every_command(name: str, takers: tuple[str, ...]) -> None:
    helps = _helps(name)
    assert sorted(helps) == sorted(takers)
    # fix words what it does to a rule or a symbol as fixing, not reporting; the rest is the same text
    texts = {h for c, h in helps.items() if not (c == "fix" and name in ("--ignore", "--ignore-symbol"))}
    assert len(texts) == 1, texts


def test_shared_options_are_declared_only_in_the_options_module() -> None:
    shared = ("--cache-dir", "--offline", "--index-url", "--no-config", "--ignore-symbol", "--severity")
    for path in sorted(CLI_FOLDER.glob("*.py")):
        if path.name == "options.py":
            continue
        text = path.read_text(encoding="utf-8")
        for name in shared:
            assert not re.search(rf"click\.option\(\s*\"{name}\"", text), (
                f"{path.name} declares {name} itself"
            )


def test_one_source_for_formats_and_levels() -> None:
    assert tuple(RENDERERS) == options.FORMATS
    assert options.FAIL_ON is config.FAIL_ON and options.LEVELS is config.LEVELS
    assert (*config.LEVELS, "never") == options.FAIL_ON
    fail_on = {c: p for c in COMMANDS for p in cli.commands[c].params if p.name == "fail_on"}
    for command, param in fail_on.items():
        assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == config.FAIL_ON, command


# ---- inputs located once


@pytest.fixture
def located(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every spec located, with its role, in order: by the engine or by anything that imports `locate`
    when it runs (as `fix` once did, locating the downstream a second time)."""
    from apidrift.auditor.sources import locate as locate_module

    calls: list[tuple[str, str]] = []
    real = locate_module.locate

    def counting(spec: str, *, role: Any, **kwargs: Any) -> Any:
        calls.append((role, spec))
        return real(spec, role=role, **kwargs)

    monkeypatch.setattr(engine, "locate", counting)
    monkeypatch.setattr(locate_module, "locate", counting)
    return calls


def test_fix_plans_on_the_downstream_its_audit_located(
    tmp_path: Path, located: list[tuple[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    down, opts, _ = _cli_case(tmp_path)
    assert main(["fix", str(down), *opts]) == 1
    assert "app.py" in capsys.readouterr().out
    downstreams = [spec for role, spec in located if role == "downstream"]
    assert downstreams[0] == str(down) and downstreams.count(str(down)) == 1
    # the fixed text, audited again in a temporary folder (a call fix may reveal the call's next break)
    assert all(Path(spec).name.startswith("apidrift-fix-") for spec in downstreams[1:])
    assert (
        len([role for role, _ in located if role != "downstream"]) == 2
    )  # the upstream, the version written for


def test_fix_writes_into_the_root_the_audit_reports(tmp_path: Path, located: list[tuple[str, str]]) -> None:
    down, opts, _ = _cli_case(tmp_path)
    request = AuditRequest(str(down), opts[1], opts[3], cache_dir=tmp_path / "cache", offline=True)
    result = run_fix(request)
    assert result.changes and all((down / change.path).is_file() for change in result.changes)
    # the audited downstream once; any other is the fixed text audited again in a temporary folder
    downstreams = [spec for role, spec in located if role == "downstream"]
    assert downstreams.count(str(down)) == 1
    assert all(Path(spec).name.startswith("apidrift-fix-") for spec in downstreams if spec != str(down))


def test_audit_carries_its_root_and_takes_inputs_already_located(
    tmp_path: Path, located: list[tuple[str, str]]
) -> None:
    down, opts, _ = _cli_case(tmp_path)
    request = AuditRequest(str(down), opts[1], opts[3], cache_dir=tmp_path / "cache", offline=True)
    inputs = engine.locate_inputs(request)
    assert len(located) == 3
    first, second = audit(request, inputs), audit(request, inputs)
    assert len(located) == 3, "an audit on located inputs locates nothing"
    assert first.root == second.root == inputs.root == down
    assert first.as_dict()["findings"] == second.as_dict()["findings"]
    assert "root" not in first.as_dict()
    assert first.timings["fetch"] == inputs.seconds


def test_diff_locates_each_version_once(tmp_path: Path, located: list[tuple[str, str]]) -> None:
    down, opts, _ = _cli_case(tmp_path)
    request = DiffRequest(opts[3], opts[1], str(down), cache_dir=tmp_path / "cache", offline=True)
    result = diff_versions(request)
    assert [role for role, _ in located] == ["upstream", "upstream", "downstream"]
    assert result.downstream is not None and result.old.location != result.new.location


# ---- the baseline, applied in auditor/baseline.py


def test_record_then_apply_a_baseline(tmp_path: Path) -> None:
    down, opts, _ = _cli_case(tmp_path)
    request = AuditRequest(str(down), opts[1], opts[3], cache_dir=tmp_path / "cache", offline=True)
    result = audit(request)
    found = len(result.findings)
    assert found
    file = tmp_path / "baseline.json"
    assert record_baseline(result, file) == found
    assert result.findings == [] and result.notes[-1].startswith(f"baseline {file}: recorded ")

    again = audit(request)
    parts = apply_baseline(again, read_baseline(file), file)
    assert again.findings == [] and len(parts.accepted) == found and parts.unmatched == 0
    assert again.notes[-1].endswith(" not shown, 0 new")
