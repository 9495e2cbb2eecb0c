"""Two-version case files: each `tests/cases/*.case` tells a before/after story.

A case file holds sections `[old PATH]`, `[new PATH]` (the upstream package `pkg` in two versions)
and `[downstream PATH]`. An expected finding is a comment on the downstream line it is reported on:
`# E: AD101` for an error, `# I: AD002` for info (several codes: `# E: AD101 AD102`); a quoted
fragment after a code must be in that finding's message (`# E: AD101 "`kv_cache_specs`"`), one after
`hint:` in its hint. Every other line must stay silent. A case whose description sets `# flags: ...`
or `# exit: N` runs through the command line (`apidrift audit ... --format json`) with those options. Each case runs twice: as written, and with every upstream module re-exported
from a private implementation module, so that each check also goes through aliases.
The format, and how to add a case and run only it: tests/cases/README.md.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from casefiles import CaseOptions, case_options, parse_case, write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import AuditResult, Classification

CASES = sorted((Path(__file__).parents[1] / "cases").glob("*.case"))
# `# E: AD101 AD102`, each code optionally followed by quoted fragments of its message or hint:
# `# E: AD101 "`kv_cache_specs`" hint:"remove `kv_cache_specs=`"` (a `"` inside a fragment as `\"`).
_FRAGMENT = r'(?:hint:)?"(?:[^"\\]|\\.)*"'
EXPECT = re.compile(rf"#\s*([EWI]):\s*((?:AD\d{{3}}(?:\s+{_FRAGMENT})*\s*)+)")
_TOKEN = re.compile(rf"AD\d{{3}}|{_FRAGMENT}")
LETTER = {"error": "E", "warning": "W", "info": "I"}


def reexported(files: dict[str, str]) -> dict[str, str]:
    """Move each upstream module's body to `pkg/_impl/...` and re-export its names from the old place."""
    result: dict[str, str] = {}
    for relative, text in files.items():
        parts = Path(relative).parts
        if (
            parts[0] != "pkg"
            or not relative.endswith((".py", ".pyi"))  # a Cython source is a compiled module: left in place
            or parts[-1] == "__init__.py"
            or any(m in text for m in ("getattr", "import *", "globals()"))
        ):
            result[relative] = text
            continue
        hidden = Path("pkg", "_impl", *parts[1:]).as_posix()
        result[hidden] = text.replace("from . import", "from pkg import").replace("from .", "from pkg.")
        module = ".".join(Path(hidden).with_suffix("").parts)
        names = _top_level_names(text)
        result[relative] = "".join(f"from {module} import {name}\n" for name in dict.fromkeys(names))
        result.setdefault("pkg/_impl/__init__.py", "")
    return result


def _top_level_names(source: str) -> list[str]:
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:  # `a = ...`, `(a, b) = ...`
                names.extend(
                    n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


Key = tuple[str, int, str, str]  # file, line, severity letter, code


def expectations(files: dict[str, str]) -> dict[Key, list[tuple[str, str]]]:
    """Each expected finding, with the (field, fragment) pairs its message or hint must contain."""
    expected: dict[Key, list[tuple[str, str]]] = {}
    for relative, text in files.items():
        for number, line in enumerate(text.splitlines(), start=1):
            for letter, body in EXPECT.findall(line):
                fragments: list[tuple[str, str]] = []
                for token in _TOKEN.findall(body):
                    if token.startswith("AD"):
                        fragments = expected.setdefault((relative, number, letter, token), [])
                    else:
                        field, _, quoted = token.rpartition('"')[0].partition('"')
                        fragments.append(
                            ("hint" if field == "hint:" else "message", quoted.replace('\\"', '"'))
                        )
    return expected


def expected_findings(files: dict[str, str]) -> set[Key]:
    return set(expectations(files))


@dataclass(frozen=True)
class Found:
    path: str
    line: int
    letter: str
    code: str
    message: str
    hint: str | None

    @property
    def key(self) -> Key:
        return (self.path, self.line, self.letter, self.code)


def run_folders(
    new: Path, old: Path | None, down: Path, cache: Path, options: CaseOptions
) -> tuple[list[Found], int | None]:
    """The audit of `down` against `new` (and `old`): through the library, or through the command
    line with the case's flags (then also its exit status)."""
    if not options.command_line:
        result = audit(
            AuditRequest(
                downstream=str(down),
                against=f"pkg@{new}",
                old=f"pkg@{old}" if old else None,
                cache_dir=cache,
                offline=True,
            )
        )
        found = [
            Found(f.location.path, f.location.line, LETTER[f.severity.value], f.code, f.message, f.hint)
            for f in result.findings
        ]
        return found, None
    report = cache.parent / "report.json"
    argv = ["audit", str(down), "--against", f"pkg@{new}", "--from", f"pkg@{old}" if old else "none"]
    argv += ["--cache-dir", str(cache), "--offline", "--no-config", "--quiet", "--format", f"json:{report}"]
    status = main([*argv, *options.flags])
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    found = [
        Found(
            f["location"]["path"],
            f["location"]["line"],
            LETTER[f["severity"]],
            f["code"],
            f["message"],
            f.get("hint"),
        )
        for f in data["findings"]
    ]
    return found, status


def check_case(sections: dict[str, dict[str, str]], found: list[Found]) -> None:
    """The findings are exactly the expected ones, each with its expected message and hint fragments."""
    expected = expectations(sections["downstream"])
    listing = "\n".join(
        f"{f.path}:{f.line}: {f.code} [{f.letter}] {f.message} (hint: {f.hint})" for f in found
    )
    assert {f.key for f in found} == set(expected), listing
    for finding in found:
        for field, fragment in expected[finding.key]:
            text = finding.message if field == "message" else finding.hint or ""
            assert fragment in text, f"{finding.key}: {field} lacks {fragment!r}\n{listing}"


@pytest.mark.parametrize("variant", ["direct", "reexport"])
@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_case(case: Path, variant: str, tmp_path: Path) -> None:
    sections = parse_case(case)
    new_files = sections["new"]
    old_files = sections["old"]
    if variant == "reexport":
        new_files, old_files = reexported(new_files), reexported(old_files)
    new = write_tree(tmp_path / "new", new_files)
    old = write_tree(tmp_path / "old", old_files) if old_files else None
    down = write_tree(tmp_path / "down", sections["downstream"])
    options = case_options(case)
    found, status = run_folders(new, old, down, tmp_path / "cache", options)
    check_case(sections, found)
    if options.exit is not None:
        assert status == options.exit, f"exit status {status}, expected {options.exit}"


def case_result(name: str, tmp_path: Path) -> AuditResult:
    """The audit of a case file's downstream against its new tree (its old tree as the old version)."""
    sections = parse_case(Path(__file__).parents[1] / "cases" / f"{name}.case")
    new = write_tree(tmp_path / "new", sections["new"])
    old = write_tree(tmp_path / "old", sections["old"]) if sections["old"] else None
    down = write_tree(tmp_path / "down", sections["downstream"])
    request = AuditRequest(
        str(down), f"pkg@{new}", f"pkg@{old}" if old else None, cache_dir=tmp_path / "cache"
    )
    return audit(request)


def run_case(name: str, tmp_path: Path) -> list:
    return case_result(name, tmp_path).findings


def test_dynamic_attributes_are_named_with_the_class_that_writes_them(tmp_path: Path) -> None:
    # The one not-checkable use of the case says why, and which class of the MRO makes it so.
    sections = parse_case(
        Path(__file__).parents[1] / "cases" / "instance_dict_removals_keep_the_namespace_complete.case"
    )
    request = AuditRequest(
        str(write_tree(tmp_path / "down", sections["downstream"])),
        f"pkg@{write_tree(tmp_path / 'new', sections['new'])}",
        f"pkg@{write_tree(tmp_path / 'old', sections['old'])}",
        cache_dir=tmp_path / "cache",
        offline=True,
    )
    (coverage,) = audit(request).coverage
    assert coverage.not_checkable == {"dynamic-attributes:pkg.Writes": 1}


def test_explanations_name_the_guess_the_move_and_the_deprecation(tmp_path: Path) -> None:
    hints = {(f.location.line, f.code): f.hint for f in run_case("explanations", tmp_path)}
    assert hints[(1, "AD002")] == "moved: now importable as `pkg.Reader` (from pkg import Reader)"
    assert "\u201cretired() is deprecated: use helper()\u201d" in hints[(2, "AD002")]
    assert "nor found elsewhere" in hints[(3, "AD002")]  # no false move
    # a parameter added where another was removed is a guess, worded as one: never "renamed"
    assert hints[(5, "AD101")].startswith(
        "remove `path=`: pkg has no parameter of that name; a parameter `file_path` was added where `path` "
        "was (same position, same annotation `str`); they may differ in meaning"
    )
    assert hints[(6, "AD101")].startswith("remove `filename=`")  # `source` is not similar: no false rename
    # the missing `file_path` goes with the unexpected keyword: CPython raises on the keyword first
    assert "then: open_file() is missing required argument `file_path`" in hints[(5, "AD101")]
    assert (5, "AD102") not in hints


def test_uses_of_a_failing_value_are_listed_once(tmp_path: Path) -> None:
    findings = run_case("uses_of_a_failing_value_fold_under_its_break", tmp_path)
    assert [(f.location.line, f.code) for f in findings] == [(4, "AD003"), (7, "AD003")]
    assert findings[0].hint is not None and findings[0].hint.endswith(
        "5 uses of what it gives in this file (through a name or value bound from it) fail with it "
        "(lines 5, 6, 8, 9, 10)"
    )


def test_drift_findings_show_old_and_new_signatures(tmp_path: Path) -> None:
    findings = {(f.location.line, f.code): f for f in run_case("drift", tmp_path)}
    remap = findings[(4, "AD201")]  # the messages' quotes are on the case's expectation lines
    assert (
        remap.old_signature == "(img, size, scale=1.0)"
        and remap.new_signature == "(img, scale=1.0, size=None)"
    )
    assert findings[(2, "AD301")].classification is Classification.PRE_EXISTING
    assert remap.classification is Classification.DRIFT


def test_getattr_misses_quote_the_shim_and_the_old_warning(tmp_path: Path) -> None:
    migration = {(f.location.line, f.code): f for f in run_case("getattr_migration_shim", tmp_path / "m")}
    assert "has been moved to the `pkg-settings` package." in migration[(2, "AD002")].hint
    assert "\u201c`pkg:validate_model` has been removed in V2.\u201d" in migration[(4, "AD002")].hint
    assert "\u201c`pkg.utils:deep_update` has been removed in V2.\u201d" in migration[(6, "AD002")].hint
    assert "has been moved to `pkg.tools:parse_obj_as`" in migration[(3, "AD203")].message
    assert migration[(2, "AD002")].classification is Classification.DRIFT
    shim = {(f.location.line, f.code): f for f in run_case("getattr_deprecation_shim", tmp_path / "d")}
    assert (
        "deprecated it: \u201c'pkg.escape' is deprecated and will be removed in 3.0."
        in shim[(2, "AD002")].hint
    )
    assert shim[(2, "AD002")].classification is Classification.DRIFT
    assert "'pkg.open_conn' is deprecated" in shim[(3, "AD203")].message
    lazy = {(f.location.line, f.code): f for f in run_case("getattr_lazy_table", tmp_path / "l")}
    assert lazy[(3, "AD002")].classification is Classification.DRIFT
    assert "\u201cNo pkg attribute cached_download\u201d" in lazy[(3, "AD002")].hint
    assert lazy[(11, "AD003")].classification is Classification.PRE_EXISTING  # in no table, before or after


def test_a_served_name_gone_is_drift_where_the_use_goes_further(tmp_path: Path) -> None:
    findings = {
        f.location.line: f for f in run_case("served_name_gone_is_drift_where_the_use_goes_further", tmp_path)
    }
    for line in (3, 4):
        assert findings[line].classification is Classification.DRIFT, findings[line]
        assert "deprecated it: \u201cThe pkg.np module is deprecated" in findings[line].hint


def test_positional_through_warning_shim_is_a_warning_naming_decorator_and_fix(tmp_path: Path) -> None:
    """PCBench M1: the call runs (CPython warns, same binding); only a warning, never an error, and it
    names the keyword-only parameters, the decorator, the warning category and the keywords to pass."""
    findings = run_case("decorator_warning_on_extra_positionals_is_a_warning", tmp_path)
    shims = {f.location.line: f for f in findings if f.code == "AD205"}
    assert {f.code for f in findings} == {"AD205"}
    assert sorted(shims) == [3, 4, 7, 10, 11, 18]
    assert all(f.severity.value == "warning" for f in shims.values())
    kmeans = shims[4]
    assert "`init`, `n_init` positionally" in kmeans.message
    assert "`pkg.validation._deprecate_positional_args`, which warns (FutureWarning)" in kmeans.message
    assert kmeans.hint == "pass `init`, `n_init` by keyword (init=..., n_init=...)"
    assert kmeans.fix is not None and [p.name for p in kmeans.fix.data.parameters] == ["init", "n_init"]
    rectangle = shims[7]
    assert "`angle` positionally" in rectangle.message
    assert "`pkg._api.make_keyword_only`, which warns through `warn_deprecated`" in rectangle.message
    assert "`radius`, `orientation` positionally" in shims[11].message
    assert "`c` positionally" in shims[18].message and "(DeprecationWarning)" in shims[18].message


def test_missing_import_hints_and_folded_uses(tmp_path: Path) -> None:
    found = run_case("missing_import_explained_and_its_uses_folded", tmp_path)
    hints = {(f.location.line, f.code): f.hint or "" for f in found}
    assert hints[(2, "AD002")].endswith("; 2 uses of it in this file go with this import (lines 7, 8)")
    assert hints[(3, "AD002")].startswith(
        "in pkg it was `markupsafe.Markup`, re-exported from another distribution: import it from there"
    )
    assert "1 use of it in this file goes with this import (line 9)" in hints[(3, "AD002")]
    assert "moved" not in hints[(4, "AD002")] and "nor found elsewhere" in hints[(4, "AD002")]
    assert hints[(5, "AD002")] == "moved: now importable as `pkg._impl.helper` (from pkg._impl import helper)"
    fixes = {f.location.line: f.fix for f in found if f.code == "AD002"}
    assert fixes[4] is None and fixes[5] is not None


def test_always_raising_callee_quotes_the_upstream_message(tmp_path: Path) -> None:
    findings = {(f.location.line, f.code): f for f in run_case("callee_always_raises", tmp_path)}
    assert "'pkg.mapper()' function is removed as of 2.0. Use the" in findings[(4, "AD108")].message
    assert "InvalidRequestError" in findings[(4, "AD108")].message
    interp = findings[(6, "AD108")].message
    assert "NotImplementedError" in interp and "`interp2d` has been removed in 1.14.0." in interp
    assert "pkg.interp.interp2d.__init__" in interp
    # the helper's f-string, filled from the literal argument and the helper's literal default
    assert "'expired expired in 1.0: use pkg.new_expired() instead'" in findings[(8, "AD108")].message


def test_a_receiver_one_of_whose_values_is_upstream_is_counted_not_dropped(tmp_path: Path) -> None:
    """Dash 2.9's `self.server`: bound to a parameter and to `up.Flask(...) if server else None`; its
    uses were missing from the coverage (the first binding, unknown, ended the reading)."""
    result = case_result("a_receiver_one_of_whose_values_is_upstream_is_counted", tmp_path)
    (coverage,) = result.coverage
    assert [(f.location.line, f.code) for f in result.findings] == [(28, "AD004")]
    # lines 14, 15 (Dash) and 23 (Either): three uses counted as not checkable, with their reason
    assert coverage.not_checkable.get("receiver-unknown:bindings-disagree") == 3


def test_uses_of_a_value_from_a_failing_import_are_listed_once(tmp_path: Path) -> None:
    findings = [
        f
        for f in run_case("uses_of_a_value_from_a_failing_import_fold_under_it", tmp_path)
        if f.code != "AD301"
    ]
    assert [(f.location.line, f.code) for f in findings] == [(1, "AD002")]
    assert findings[0].hint is not None and findings[0].hint.endswith(
        "1 use of it in this file goes with this import (line 5); 3 uses of what it gives in this file "
        "(through a name or value bound from it) fail with it (lines 6, 7, 9)"
    )


def test_a_base_named_through_a_module_alias_gives_the_old_version_its_members(tmp_path: Path) -> None:
    # the old version resolves the method through the aliased base: the break is drift, not unknown-before
    findings = run_case("base_named_through_a_module_alias_is_its_class", tmp_path)
    assert [(f.location.line, f.code, f.classification) for f in findings] == [
        (5, "AD103", Classification.DRIFT)
    ]


def test_parameters_whose_callers_disagree_or_escape_are_counted(tmp_path: Path) -> None:
    """A parameter without annotation whose callers in the file disagree, or whose function escapes
    (read as a value, decorated, called with `*args`, a method called through a receiver not followed):
    its uses are counted as not checkable with their reason, never dropped, never errors; a parameter
    no caller hands an upstream object (`own_only(object())`) stays out of the coverage."""
    result = case_result("parameters_take_what_every_caller_passes", tmp_path)
    (coverage,) = result.coverage
    assert sorted(f.location.line for f in result.findings) == [8, 20, 27, 35, 51, 55, 118]
    # disagree, handed_on, decorated, starred, Unknown.go: one use each
    assert coverage.not_checkable.get("receiver-unknown:untyped-parameter") == 5
    # `c.never_there()` on an instance of `pkg.Client` or of a subclass (a caller's annotation)
    assert coverage.not_checkable.get("attribute-of-annotated-type") == 1


def test_values_from_another_module_not_followed_are_counted(tmp_path: Path) -> None:
    """A value another module of the downstream hands over that may be an upstream object but is not
    followed (returns that disagree, a generator, a decorator not followed, the constructor of a decorated
    subclass of an upstream class) is counted with its reason;
    a function returning only the downstream's own objects gives no site."""
    result = case_result("values_from_another_module_not_followed_are_counted", tmp_path)
    (coverage,) = result.coverage
    assert result.findings == []
    assert {(s.path, s.line, s.reason) for s in coverage.sites} == {
        ("app/main.py", 3, "receiver-unknown:returns-disagree"),
        ("app/main.py", 4, "receiver-unknown:generator"),
        ("app/main.py", 5, "receiver-unknown:decorated"),
        ("app/main.py", 7, "receiver-unknown:decorated"),
    }


def test_a_cached_scan_is_read_again_through_the_summaries_of_today(tmp_path: Path) -> None:
    """The scan cache holds each file's own reading (its sites, in terms of the downstream's modules,
    and what it hands to them); the values are followed across modules on every run: when `helpers.py`
    changes what `get()` returns, `main.py`'s cached scan gives the new answer."""
    sections = parse_case(
        Path(__file__).parents[1] / "cases" / "values_returned_by_another_module_are_followed.case"
    )
    new = write_tree(tmp_path / "new", sections["new"])
    old = write_tree(tmp_path / "old", sections["old"])
    down = write_tree(tmp_path / "down", sections["downstream"])

    def lines() -> list[int]:
        request = AuditRequest(str(down), f"pkg@{new}", f"pkg@{old}", cache_dir=tmp_path / "cache")
        return sorted(f.location.line for f in audit(request).findings if f.location.path == "app/main.py")

    assert lines() == [7, 9, 10, 11, 12, 13, 15, 19]
    helpers = down / "app" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("return pkg.make()", "return object()"))
    assert lines() == [19]  # `fetch()` still returns `pkg.Table()`
    helpers.write_text(helpers.read_text().replace("return object()", "return pkg.make()"))
    assert lines() == [7, 9, 10, 11, 12, 13, 15, 19]


def test_a_module_imported_only_under_a_failed_major_version_test_is_not_checked(tmp_path: Path) -> None:
    """The uses of a private module imported only under a test of the upstream's major version that
    the audited version fails are counted `module-not-imported` (the module never runs), not reported;
    where the audited version is not known they are `module-version-gated`."""
    sections = parse_case(
        Path(__file__).parents[1] / "cases" / "module_imported_only_under_a_major_version_test.case"
    )
    new = write_tree(tmp_path / "new", sections["new"])
    down = write_tree(tmp_path / "down", sections["downstream"])
    result = audit(AuditRequest(str(down), f"pkg@{new}", cache_dir=tmp_path / "cache"))
    (coverage,) = result.coverage
    gated = {(s.path, s.line) for s in coverage.sites if s.reason == "module-not-imported"}
    assert gated == {("app/_old.py", 1), ("app/_old.py", 3), ("app/_old.py", 5)}
    assert coverage.not_checkable["module-not-imported"] == 4  # `from ... import do_complete`: two sites
    assert not any(f.location.path == "app/_old.py" and f.severity.value == "error" for f in result.findings)
    # without a version the upstream's folder says, whether `_old.py` or `_new.py` (imported in the
    # `else`: since major 8) runs is not known
    (new / "pyproject.toml").unlink()
    (new / "pkg" / "__init__.py").write_text("")
    unknown = audit(AuditRequest(str(down), f"pkg@{new}", cache_dir=tmp_path / "cache2"))
    (coverage,) = unknown.coverage
    assert coverage.not_checkable.get("module-version-gated") == 5
    assert {s.path for s in coverage.sites if s.reason == "module-version-gated"} == {
        "app/_old.py",
        "app/_new.py",
    }
