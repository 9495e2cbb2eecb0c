"""`apidrift impact` on a real release: click 8.2.0 (from 8.1.8) against 19 real dependents.

Each bucket was checked by reading both click versions and the dependent's release:
- click 8.2.0 added a required `ctx` to `Parameter.make_metavar` / `Argument.make_metavar`
  (click/core.py) and to `ParamType.get_metavar` (click/types.py).
- typer 0.15.1 calls both without it (typer/core.py:389, :504) and overrides `make_metavar(self)`
  (typer/core.py:381), which click 8.2 calls with ctx.
- cloup 3.0.5: `Argument.get_help_record` calls `self.make_metavar()` (cloup/_params.py:13), and
  `arg.make_metavar()` with `arg: click.Argument` (cloup/_option_groups.py:191).
- gTTS 2.5.4 requires `click<8.2,>=7.1` (its PKG-INFO): not yet affected.
- six 1.17.0 never imports click: not using it.
- The others use click without meeting those changes (no make_metavar/get_metavar call or override).
rich-click 1.8.5 is left out: its `param.make_metavar()` calls (rich_help_rendering.py:214, :500) are
broken by click 8.2 too, but apidrift does not know `param`'s type there and stays silent.

Cold, this fetches 21 releases (a few MB in all): 48 s on 2 busy cores (load about 10).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift.auditor.impact.inputs import read_dependents
from apidrift.auditor.impact.run import ImpactRequest, run_impact

pytestmark = pytest.mark.network

EXPECTED = {
    "typer==0.15.1": "broken",
    "cloup==3.0.5": "broken",
    "gTTS==2.5.4": "not-yet-affected",
    "six==1.17.0": "not-using",
    "flask==3.1.0": "clean",
    "black==24.10.0": "clean",
    "celery==5.4.0": "clean",
    "nltk==3.9.1": "clean",
    "pip-tools==7.4.1": "clean",
    "uvicorn==0.34.0": "clean",
    "mkdocs==1.6.1": "clean",
    "cookiecutter==2.6.0": "clean",
    "sphinx-click==6.0.0": "clean",
    "click-default-group==1.2.4": "clean",
    "click-didyoumean==0.3.1": "clean",
    # `group_ctx.protected_args = args` (click_repl/_repl.py:134, and :137 in its `finally`): click 8.2
    # made `Context.protected_args` a property without a setter (see test_click_8_2_breaks_users_or_only_tests)
    "click-repl==0.3.0": "broken",
    "click-plugins==1.1.1": "clean",
    "click-log==0.4.0": "clean",
    "click-option-group==0.5.6": "clean",
}


def test_click_8_2_against_real_dependents(tmp_path: Path, index_cache: Path) -> None:
    listing = tmp_path / "dependents.txt"
    listing.write_text("\n".join(EXPECTED) + "\n", encoding="utf-8")
    request = ImpactRequest(
        "click==8.2.0", tuple(read_dependents(listing)), old="click==8.1.8", results_dir=tmp_path / "results",
        cache_dir=index_cache, workers=2, timeout=300,
    )  # fmt: skip
    result = run_impact(request)
    assert {row["dependent"]: row["status"] for row in result.rows} == EXPECTED
    rows = {row["dependent"]: row for row in result.rows}
    errors = {
        (f["path"], f["line"], f["code"])
        for f in rows["typer==0.15.1"]["findings"]
        if f["severity"] == "error"
    }
    assert errors == {
        ("typer/core.py", 381, "AD106"),
        ("typer/core.py", 389, "AD102"),
        ("typer/core.py", 504, "AD102"),
    }
    cloup = {
        (f["path"], f["line"], f["code"], f["symbol"])
        for f in rows["cloup==3.0.5"]["findings"]
        if f["severity"] == "error"
    }
    # cloup/_option_groups.py:191: `arg.make_metavar()` with `arg: click.Argument` (a parameter's
    # annotation): under click 8.2.0 `click.Argument(["x"]).make_metavar()` raises "missing 1 required
    # positional argument: 'ctx'" (confirmed), under 8.1.8 it returns "X".
    assert cloup == {
        ("cloup/_params.py", 13, "AD102", "click.core.Argument.make_metavar"),
        ("cloup/_option_groups.py", 191, "AD102", "click.core.Argument.make_metavar"),
    }
    assert rows["gTTS==2.5.4"]["pin"] == "click<8.2,>=7.1"
    groups = {(g.symbol, g.code): g for g in result.groups()}
    assert groups[("click.core.Argument.make_metavar", "AD102")].dependents == ("cloup==3.0.5",)
    assert groups[("click.core.Parameter.make_metavar", "AD102")].dependents == ("typer==0.15.1",)
    assert groups[("click.types.ParamType.get_metavar", "AD102")].dependents == ("typer==0.15.1",)
    assert all(row["found"] > 0 for name, row in rows.items() if name != "six==1.17.0")


# Whom each break reaches, established by installing each release with click 8.1.8 and with click 8.2.0
# in throwaway virtual environments and running it:
# - typer 0.15.1 breaks its users: any app's `--help` raises "TypeError: TyperArgument.make_metavar()
#   takes 1 positional argument but 2 were given" under 8.2.0 (fine under 8.1.8).
# - towncrier 24.8.0 and ufmt 2.8.0 break only their own tests: `towncrier --help`, `ufmt --help` work
#   under 8.2.0, but `CliRunner(mix_stderr=False)` raises TypeError in their test suites (towncrier:
#   `python -m twisted.trial towncrier.test.test_check` 20 passed -> 1 error; ufmt: `python -m unittest
#   ufmt.tests.cli` 7 errors, every one "unexpected keyword argument 'mix_stderr'", in setUp).
# - black 25.1.0: clean (formats a file under both).
# - nf-core 3.2.0 binds `rich_click` to the name click (`import rich_click as click`): the uses are
#   rich_click's, said in its row, not audited.
# - sqlfluff 3.4.0 guards `CliRunner(mix_stderr=False)` with `if "mix_stderr" in
#   inspect.signature(CliRunner).parameters:` (sqlfluff/utils/testing/cli.py:23): its
#   `invoke_assert_code(args=[lint, ["--help"]])` succeeds under both clicks (the test is True under 8.1.8,
#   False under 8.2.0): clean, the guarded call an info.
# - click-repl 0.3.0 breaks its users: a REPL registered with `register_repl(cli)` and given a command on
#   stdin runs it under 8.1.8 and raises "AttributeError: property 'protected_args' of 'Context' object
#   has no setter" under 8.2.0 (click_repl/_repl.py:134, then :137 in its `finally`). `group_ctx` is the
#   context click's `pass_context` hands `repl` (or its parent).
REACH = {
    "typer==0.15.1": ("broken", "users"),
    "towncrier==24.8.0": ("broken", "own-code"),
    "ufmt==2.8.0": ("broken", "own-code"),
    "black==25.1.0": ("clean", None),
    "nf-core==3.2.0": ("clean", None),
    "sqlfluff==3.4.0": ("clean", None),
    "click-repl==0.3.0": ("broken", "users"),
}


def test_click_8_2_breaks_users_or_only_tests(tmp_path: Path, index_cache: Path) -> None:
    from apidrift.reports import impact_text

    listing = tmp_path / "dependents.txt"
    listing.write_text("\n".join(REACH) + "\n", encoding="utf-8")
    request = ImpactRequest(
        "click==8.2.0", tuple(read_dependents(listing)), old="click==8.1.8", results_dir=tmp_path / "results",
        cache_dir=index_cache, workers=2, timeout=300,
    )  # fmt: skip
    result = run_impact(request)
    rows = {row["dependent"]: row for row in result.rows}
    assert {name: (row["status"], row["reach"]) for name, row in rows.items()} == REACH
    sites = {
        name: {(f["path"], f["line"], f["role"]) for f in row["findings"] if f["severity"] == "error"}
        for name, row in rows.items()
    }
    assert sites["towncrier==24.8.0"] == {("towncrier/test/test_check.py", 260, "tests")}
    assert sites["ufmt==2.8.0"] == {("ufmt/tests/cli.py", 25, "tests")}
    assert {role for _, _, role in sites["typer==0.15.1"]} == {"shipped"}
    stores = {
        (f["path"], f["line"], f["code"])
        for f in rows["click-repl==0.3.0"]["findings"]
        if f["severity"] == "error"
    }
    assert stores == {("click_repl/_repl.py", 134, "AD006"), ("click_repl/_repl.py", 137, "AD006")}
    guarded = [(f["path"], f["line"], f["code"], f["severity"]) for f in rows["sqlfluff==3.4.0"]["findings"]]
    assert guarded == [("src/sqlfluff/utils/testing/cli.py", 24, "AD101", "info")]
    assert result.as_dict()["buckets"]["breaks-users"] == ["click-repl==0.3.0", "typer==0.15.1"]
    assert result.as_dict()["buckets"]["breaks-own-code"] == ["towncrier==24.8.0", "ufmt==2.8.0"]
    assert [a.split(":")[0] for a in rows["nf-core==3.2.0"]["aliases"]] == ["uses rich_click as click"]
    text = impact_text.render(result)
    assert (
        "Breaks its users (an error in code the dependent ships): 2: click-repl==0.3.0, typer==0.15.1" in text
    )
    assert "click_repl/_repl.py:134 AD006 (shipped)" in text
    assert "towncrier/test/test_check.py:260 AD101 (tests)" in text


def test_click_8_2_module_getattr_deprecations_are_warnings(tmp_path: Path, index_cache: Path) -> None:
    """`from click.parser import OptionParser` and `click.__version__` are served by click 8.2.0's module
    `__getattr__` with a DeprecationWarning (both raise under `python -W error::DeprecationWarning` with
    click 8.2.0 installed, neither under 8.1.8): warnings, with click's message."""
    from apidrift.auditor.engine import AuditRequest, audit

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "import click\nfrom click.parser import OptionParser\n\nprint(click.__version__)\n", encoding="utf-8"
    )
    result = audit(
        AuditRequest(str(tmp_path / "app"), "click==8.2.0", old="click==8.1.8", cache_dir=index_cache)
    )
    found = {(f.location.line, f.code, f.severity.value) for f in result.findings}
    assert found == {(2, "AD203", "warning"), (4, "AD203", "warning")}
    messages = " ".join(f.message for f in result.findings)
    assert (
        "'parser.OptionParser' is deprecated" in messages
        and "'__version__' attribute is deprecated" in messages
    )
