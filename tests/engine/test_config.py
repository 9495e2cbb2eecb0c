"""`[tool.apidrift]` in the downstream's pyproject.toml (or `--config`): every key takes effect, the
command line overrides it, and a bad configuration is one line on stderr with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apidrift.auditor.cli.main import main
from apidrift.auditor.config import Config, ConfigError, find_config, load_config

OLD_PKG = "def get_config(vllm_config, available_memory, kv_cache_specs=None):\n    return None\n"
NEW_PKG = (
    "def get_config(vllm_config, available_memory):\n    return None\n\n\n"
    "class Scheduler:\n    def __init__(self, config, block_size):\n        self.config = config\n"
)
DOWNSTREAM = "import pkg\n\npkg.get_config(1, 2, kv_cache_specs=3)\ns = pkg.Scheduler(1)\npkg.gone()\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "old", {"pkg/__init__.py": OLD_PKG})
    write(tmp_path / "new", {"pkg/__init__.py": NEW_PKG})
    write(tmp_path / "down", {"app/__init__.py": DOWNSTREAM, "app/legacy/old.py": "import pkg\npkg.gone()\n"})
    (tmp_path / "down" / ".git").mkdir()  # the project root: discovery stops here
    return tmp_path


def configure(project: Path, body: str, where: str = "down/pyproject.toml") -> Path:
    path = project / where
    path.write_text(body.replace("NEW", f"pkg@{project / 'new'}").replace("OLD", f"pkg@{project / 'old'}"))
    return path


ERRORS: list[str] = []  # stderr of the last `audit`, for `one_line_error`


def audit(
    project: Path, capsys: pytest.CaptureFixture[str], *args: str, downstream: str = "down"
) -> tuple[int, dict]:
    status = main(
        [
            "audit",
            str(project / downstream),
            "--offline",
            "--cache-dir",
            str(project / "cache"),
            "--format",
            "json",
            *args,
        ]
    )
    captured = capsys.readouterr()
    ERRORS[:] = [captured.err]
    return status, json.loads(captured.out) if captured.out else {}


def codes(report: dict) -> list[tuple[str, int, str]]:
    return [(f["location"]["path"], f["location"]["line"], f["code"]) for f in report["findings"]]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = ERRORS[0] if ERRORS and ERRORS[0] else capsys.readouterr().err
    ERRORS.clear()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("apidrift: error: ") and "Traceback" not in err, err
    return lines[0]


def test_against_and_from_come_from_the_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, '[tool.apidrift]\nagainst = "NEW"\nfrom = "OLD"\n')
    status, report = audit(project, capsys)
    assert status == 1
    assert report["old_upstream"]["location"] == str(project / "old")
    by_code = {f["code"]: f["classification"] for f in report["findings"]}
    assert by_code["AD101"] == "drift"
    assert ("app/legacy/old.py", 2, "AD003") in codes(report)


def test_every_key_takes_effect(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(
        project,
        """
[tool.apidrift]
against = "NEW"
fail-on = "warning"
ignore = ["missing-required-argument"]
severity = { AD003 = "info", calls = "warning" }
exclude = ["app/legacy/*"]
ignore-symbols = ["pkg.nothing-matches-this"]
""",
    )
    status, report = audit(project, capsys)
    assert codes(report) == [("app/__init__.py", 3, "AD101"), ("app/__init__.py", 5, "AD003")]
    assert {f["code"]: f["severity"] for f in report["findings"]} == {"AD101": "warning", "AD003": "info"}
    assert status == 1  # fail-on warning: the re-graded AD101 fails
    skipped = {f["path"]: f["reason"] for f in report["files"] if f["status"] == "skipped"}
    assert skipped["app/legacy/old.py"] == "excluded by configuration"


def test_ignore_symbols_with_globs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, '[tool.apidrift]\nagainst = "NEW"\nignore-symbols = ["pkg.get_*", "pkg.Scheduler"]\n')
    _, report = audit(project, capsys)
    assert {f["symbol"] for f in report["findings"]} == {"pkg.gone"}


def test_command_line_overrides_the_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(
        project,
        '[tool.apidrift]\nagainst = "pkg@/nowhere"\nfail-on = "never"\nseverity = { AD101 = "info" }\n',
    )
    status, report = audit(
        project,
        capsys,
        "--against",
        f"pkg@{project / 'new'}",
        "--fail-on",
        "error",
        "--severity",
        "AD101=warning",
    )
    assert status == 1
    assert {f["code"]: f["severity"] for f in report["findings"]}["AD101"] == "warning"


def test_lists_on_the_command_line_add_to_the_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, '[tool.apidrift]\nagainst = "NEW"\nignore = ["AD101"]\n')
    _, report = audit(project, capsys, "--ignore", "AD102")
    assert {f["code"] for f in report["findings"]} == {"AD003"}


def test_package_folder_uses_the_project_root_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, '[tool.apidrift]\nagainst = "NEW"\nignore = ["names"]\n')
    status, report = audit(project, capsys, downstream="down/app")
    assert status == 1
    assert {f["code"] for f in report["findings"]} == {"AD101", "AD102"}


def test_explicit_config_and_no_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, '[tool.apidrift]\nagainst = "NEW"\nignore = ["calls"]\n')
    dedicated = configure(project, 'against = "NEW"\nignore = ["names"]\n', where="apidrift.toml")
    _, report = audit(project, capsys, "--config", str(dedicated))
    assert {f["code"] for f in report["findings"]} == {"AD101", "AD102"}
    status, _ = audit(project, capsys, "--no-config")
    assert status == 2
    assert "no upstream to audit against" in one_line_error(capsys)


def test_a_pyproject_without_the_table_is_no_config(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, '[project]\nname = "down"\n[tool.other]\nx = 1\n')
    status, report = audit(project, capsys, "--against", f"pkg@{project / 'new'}")
    assert status == 1 and len(report["findings"]) == 4


def test_verbose_says_which_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = configure(project, '[tool.apidrift]\nagainst = "NEW"\n')
    main(
        [
            "audit",
            str(project / "down"),
            "--offline",
            "--cache-dir",
            str(project / "cache"),
            "-v",
            "--format",
            f"json:{project / 'r.json'}",
        ]
    )
    assert f"configuration: [tool.apidrift] in {path}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[tool.apidrift]\nagainst = "NEW"\nfail_on = "error"\n',
            "unknown key `fail_on` (did you mean `fail-on`?)",
        ),
        ('[tool.apidrift]\nagainst = "NEW"\nbogus = 1\n', "unknown key `bogus`"),
        ("[tool.apidrift]\nagainst = 3\n", "`against` must be a non-empty string"),
        (
            '[tool.apidrift]\nagainst = "NEW"\nfail-on = "sometimes"\n',
            "`fail-on` must be one of error, warning, info, never",
        ),
        (
            '[tool.apidrift]\nagainst = "NEW"\nignore = ["AD999"]\n',
            "`ignore`: no rule, rule name or family 'AD999'",
        ),
        ('[tool.apidrift]\nagainst = "NEW"\nignore = [1]\n', "`ignore` must be a list of strings"),
        (
            '[tool.apidrift]\nagainst = "NEW"\nseverity = { AD101 = "fatal" }\n',
            "`severity.AD101` must be one of error, warning, info",
        ),
        (
            '[tool.apidrift]\nagainst = "NEW"\nseverity = { nope = "info" }\n',
            "`severity`: no rule, rule name or family 'nope'",
        ),
        ('[tool.apidrift]\nagainst = "NEW"\nseverity = "info"\n', "`severity` must be a table"),
        (
            '[tool.apidrift]\nagainst = "NEW"\nexclude = "tests/*"\nignore-symbols = [[]]\n',
            "`ignore-symbols` must be a list of strings",
        ),
        ("[tool.apidrift]\nagainst = \n", "invalid TOML"),
        ("[tool]\napidrift = 3\n", "[tool.apidrift] must be a table"),
    ],
)
def test_bad_configuration_is_exit_2_with_one_line(
    project: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    path = configure(project, body)
    status, report = audit(project, capsys)
    assert status == 2 and report == {}
    line = one_line_error(capsys)
    assert message in line
    assert str(path) in line


def test_missing_or_tableless_explicit_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit(project, capsys, "--config", str(project / "nope.toml"))[0] == 2
    assert "no such configuration file" in one_line_error(capsys)
    other = configure(project, '[project]\nname = "x"\n', where="pyproject.toml")
    assert audit(project, capsys, "--config", str(other))[0] == 2
    assert "no [tool.apidrift] table" in one_line_error(capsys)


def test_find_config(tmp_path: Path) -> None:
    write(tmp_path / "repo", {"pyproject.toml": "", "src/pkg/__init__.py": ""})
    (tmp_path / "repo" / ".git").mkdir()
    assert find_config(str(tmp_path / "repo")) == tmp_path / "repo" / "pyproject.toml"
    assert find_config(str(tmp_path / "repo" / "src" / "pkg")) == tmp_path / "repo" / "pyproject.toml"
    write(tmp_path / "bare", {"inner/pkg/__init__.py": ""})
    (tmp_path / "bare" / ".git").mkdir()
    assert find_config(str(tmp_path / "bare" / "inner")) is None  # stops at the repository root
    assert find_config("vllm==0.16.0") is None
    assert find_config(str(tmp_path / "missing")) is None


def test_load_config_values(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.apidrift]\nagainst = " vllm==0.16.0 "\nexclude = "tests/*"\n')
    config = load_config(path)
    assert config == Config(against="vllm==0.16.0", exclude=("tests/*",), path=path)
    assert config.found and not Config().found
    path.write_text("[tool.apidrift]\nagainst = ''\n")
    with pytest.raises(ConfigError, match="`against` must be a non-empty string"):
        load_config(path)
