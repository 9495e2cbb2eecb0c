"""`apidrift fix`: the codemods on fixture packages, judged by CPython and by apidrift's own audit.

A fix case (`tests/fix_cases/*.case`) holds the sections of a two-version case (`[old PATH]`,
`[new PATH]` for the upstream `pkg`, `[downstream PATH]`) and the expected downstream after the
fixes: `[fixed PATH]` with `--unsafe-fixes`, `[safe PATH]` with the safe fixes only (default: the
same as `[fixed]`); a file without either is expected unchanged.

Every case is checked, with and without unsafe fixes, against oracles that are not apidrift:
the fixed file compiles (`compile`), each fixed call binds against the new upstream's signature
(`inspect.signature(...).bind` on the function built from the fixture's new source), each moved
import imports (CPython's import system, in a subprocess, on the new upstream); then by apidrift:
the re-audit reports exactly the findings that were not fixed, and a second fix changes nothing.
"""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from casefiles import parse_case as parse_case_file
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.cache import Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import (
    FIX_PAYLOADS,
    Applicability,
    AuditResult,
    Finding,
    Fix,
    FixKind,
    Location,
    PositionalToKeyword,
    RemoveKeyword,
    RenameKeyword,
    Severity,
)
from apidrift.auditor.fix.codemods import (
    APPLIED,
    GUARDED,
    MANUAL,
    NEEDS_UNSAFE,
    NOT_APPLIED,
    RESOLVED,
    FixError,
    FixResult,
    apply_fixes,
    follow_up,
    not_local_reason,
    plan_fixes,
    write_changes,
)
from apidrift.reports.fix import render

CASES = sorted((Path(__file__).parents[1] / "fix_cases").glob("*.case"))
KINDS = ("old", "new", "downstream", "safe", "fixed")


def parse_case(path: Path) -> dict[str, dict[str, str]]:
    return parse_case_file(path, KINDS)


def run_audit(tmp_path: Path, down: Path) -> AuditResult:
    return audit(
        AuditRequest(
            str(down),
            f"pkg@{tmp_path / 'new'}",
            f"pkg@{tmp_path / 'old'}",
            cache_dir=tmp_path / "cache",
            offline=True,
        )
    )


def key(finding: Finding) -> tuple[str, str, str]:
    return (finding.location.path, finding.code, finding.message)


# ---- oracles that are not apidrift


def new_callable(new_files: dict[str, str], symbol: str) -> object:
    """The callee, built by CPython from the fixture's new upstream source (a class for `Cls.__init__`)."""
    parts = symbol.split(".")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    for cut in range(len(parts) - 1, 0, -1):
        module = "/".join(parts[:cut])
        for relative in (f"{module}.py", f"{module}/__init__.py"):
            if relative in new_files:
                namespace: dict[str, object] = {}
                exec(  # noqa: S102 (the fixed test snippet, to confirm under CPython that it now binds)
                    compile("from __future__ import annotations\n" + new_files[relative], relative, "exec"),
                    namespace,
                )
                value: object = namespace[parts[cut]]
                for attribute in parts[cut + 1 :]:
                    value = getattr(value, attribute)
                return value
    raise AssertionError(f"{symbol} not found in the fixture's new upstream")


def _calls_to(tree: ast.AST, name: str) -> list[ast.Call]:
    def terminal(func: ast.expr) -> str | None:
        return (
            func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        )

    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and terminal(n.func) == name]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def _call_positions(call: ast.Call) -> set[tuple[int, int]]:
    """Where a call starts, and where CPython fails on it (its findings' place): a method whose name is
    written on a later line than the call starts fails at the name (ASCII sources)."""
    positions = {(call.lineno, call.col_offset + 1)}
    func = call.func
    if isinstance(func, ast.Attribute) and func.end_lineno != call.lineno and func.end_col_offset is not None:
        assert func.end_lineno is not None
        positions.add((func.end_lineno, func.end_col_offset - len(func.attr) + 1))
    return positions


def assert_fixed_calls_bind(before: str, after: str, outcomes: list, new_files: dict[str, str]) -> int:
    """Each call whose every keyword finding was fixed binds against the new signature, as CPython binds."""
    by_call: dict[tuple[str, tuple[int, int]], list] = {}
    for outcome in outcomes:
        fix = outcome.finding.fix
        if (
            outcome.finding.code in ("AD101", "AD103")
            and fix is not None
            and isinstance(fix.data, (RenameKeyword, RemoveKeyword, PositionalToKeyword))
            and fix.data.call is not None
        ):
            by_call.setdefault((outcome.finding.symbol, fix.data.call), []).append(outcome)
    checked = 0
    old_tree, new_tree = ast.parse(before), ast.parse(after)
    for (symbol, where), group in by_call.items():
        if any(o.status != APPLIED for o in group):
            continue
        function = new_callable(new_files, symbol)
        name = symbol.split(".")[-2] if symbol.endswith(".__init__") else symbol.split(".")[-1]
        line, column = where
        old_calls = _calls_to(old_tree, name)
        index = next(i for i, c in enumerate(old_calls) if (line, column) in _call_positions(c))
        call = _calls_to(new_tree, name)[index]
        assert not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords)
        inspect.signature(function).bind(
            *[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg}
        )
        checked += 1
    return checked


def assert_imports_import(after: str, new_root: Path, before: str = "") -> None:
    """Every unguarded name the fixes import from `pkg` (a `from pkg... import name` the file did not
    have) imports on the new upstream (CPython)."""

    def pairs(tree: ast.AST, skip: set[int]) -> list[tuple[str, str]]:
        return [
            (n.module or "", alias.name)
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "pkg" and id(n) not in skip
            for alias in n.names
        ]

    tree = ast.parse(after)
    guarded = {
        id(n)
        for t in ast.walk(tree)
        if isinstance(t, ast.Try)
        for s in t.body + [h for x in t.handlers for h in x.body]
        for n in ast.walk(s)
    }
    untouched = set(pairs(ast.parse(before), set()))
    statements = [f"from {m} import {n}" for m, n in pairs(tree, guarded) if (m, n) not in untouched]
    if not statements:
        return
    code = "import sys\nsys.path.insert(0, sys.argv[1])\n" + "\n".join(statements)
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(new_root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def assert_runs(down: Path, path: str, new_root: Path) -> None:
    """The fixed file runs under CPython with the new upstream on the path, every warning an error
    (a fix to a name that still warns is no fix): used where the re-audit finds nothing left."""
    code = "import runpy, sys\nsys.path[:0] = [sys.argv[1]]\nrunpy.run_path(sys.argv[2])"
    done = subprocess.run(
        [sys.executable, "-I", "-W", "error", "-c", code, str(new_root), str(down / path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


# ---- every case, safe only and with unsafe fixes


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_fix_case(case: Path, unsafe: bool, tmp_path: Path) -> None:
    sections = parse_case(case)
    write_tree(tmp_path / "new", sections["new"])
    write_tree(tmp_path / "old", sections["old"])
    down = write_tree(tmp_path / "down", sections["downstream"])
    before = run_audit(tmp_path, down)
    fixed = follow_up(plan_fixes(before, down, unsafe=unsafe), lambda folder: run_audit(tmp_path, folder))

    expected = {}
    for path, text in sections["downstream"].items():
        fixed_text = sections["fixed"].get(path, text)
        expected[path] = fixed_text if unsafe else sections["safe"].get(path, fixed_text)
    changes = {c.path: c.after for c in fixed.changes}
    for path, text in sections["downstream"].items():
        assert changes.get(path, text) == expected[path], f"{path}:\n{changes.get(path, text)}"

    bound = 0
    for change in fixed.changes:
        compile(change.after, change.path, "exec", dont_inherit=True)  # CPython's compiler takes it
        bound += assert_fixed_calls_bind(change.before, change.after, fixed.outcomes, sections["new"])
        assert_imports_import(change.after, tmp_path / "new", change.before)
    applied = [o for o in fixed.outcomes if o.status == APPLIED]
    assert bound == len(
        {(o.finding.symbol, o.finding.fix.data.call) for o in applied if o.finding.code in ("AD101", "AD103")}
    )
    if not unsafe:
        assert not any(o.finding.fix and o.finding.fix.applicability is Applicability.UNSAFE for o in applied)

    written = write_changes(fixed)
    assert sorted(p.relative_to(down).as_posix() for p in written) == sorted(changes)
    after = run_audit(tmp_path, down)
    gone = Counter(key(o.finding) for o in fixed.outcomes if o.status in (APPLIED, RESOLVED))
    assert Counter(key(f) for f in after.findings) == Counter(key(f) for f in before.findings) - gone, (
        "the re-audit must show exactly the findings that were not fixed"
    )

    again = plan_fixes(after, down, unsafe=unsafe)
    assert again.changes == [], "a second run changes nothing"
    assert not again.with_status(APPLIED, RESOLVED)
    for change in fixed.changes:
        if "apidrift: ignore" not in change.after and not any(
            f.location.path == change.path and f.severity is Severity.ERROR for f in after.findings
        ):
            assert_runs(down, change.path, tmp_path / "new")


def test_the_cases_cover_every_fix_kind_and_outcome(tmp_path: Path) -> None:
    statuses: Counter[tuple[FixKind | None, str]] = Counter()
    for index, case in enumerate(CASES):
        sections = parse_case(case)
        root = tmp_path / str(index)
        write_tree(root / "new", sections["new"])
        write_tree(root / "old", sections["old"])
        down = write_tree(root / "down", sections["downstream"])
        for outcome in plan_fixes(run_audit(root, down), down, unsafe=True).outcomes:
            fix = outcome.finding.fix
            statuses[(fix.kind if fix else None, outcome.status)] += 1
    # (a missing argument of a call that also passes an unexpected keyword is no finding of its own any
    # more, but part of the keyword's: so no case has a manual step another fix resolves)
    for wanted in [(FixKind.RENAME_KEYWORD, APPLIED), (FixKind.REMOVE_KEYWORD, APPLIED), (FixKind.MOVE_IMPORT, APPLIED),
                   (FixKind.MOVE_IMPORTS, APPLIED),
                   (FixKind.MANUAL, MANUAL), (FixKind.MOVE_IMPORT, GUARDED),
                   (FixKind.REPLACE_NAME, APPLIED), (FixKind.POSITIONAL_TO_KEYWORD, APPLIED)]:  # fmt: skip
        assert statuses[wanted], f"no case exercises {wanted}: {statuses}"


# ---- layout of removed arguments and names, on their own


def finding_at(source: str, needle: str, kind: FixKind, **data: str) -> Finding:
    """A finding whose location is the first occurrence of `needle` in `source`, with a fix of `kind`
    whose payload has the fields `data`."""
    offset = source.index(needle)
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    safe = (FixKind.RENAME_KEYWORD, FixKind.MOVE_IMPORT)
    applicability = Applicability.SAFE if kind in safe else Applicability.UNSAFE
    return Finding(
        "AD002" if kind is FixKind.MOVE_IMPORT else "AD101", "rule", Severity.ERROR, "f() got it",
        Location("m.py", line, column, line, column + len(needle), source.splitlines()[line - 1]),
        "pkg.f", "pkg", fix=Fix(kind, applicability, "", FIX_PAYLOADS[kind](**data), "a test's evidence"),  # type: ignore[arg-type]
    )  # fmt: skip


LAYOUTS = [
    # (source, needle, kind, data, expected)
    ("f(a, kv=1)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(a)\n"),
    ("f(kv=1, a=2)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(a=2)\n"),
    ("f(kv=1)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f()\n"),
    ("f(a, kv=1,)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(a,)\n"),
    ("f(\n    kv=1,\n)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f()\n"),
    ("f(\n    a,\n    kv=1\n)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(\n    a\n)\n"),
    ("f(\n    a,\n    kv=1)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(\n    a)\n"),
    ("f(\n    kv=1,  # gone\n    # stays\n    b=2,\n)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"},
     "f(\n    # stays\n    b=2,\n)\n"),
    ("f(\n    a=1,  # about a\n    kv=1,  # gone\n)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(\n    a=1,  # about a\n)\n"),
    ("f(\n    a=1,\n    # about kv\n    kv=1)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(\n    a=1\n    # about kv\n)\n"),
    ("f(a, kv=1,  # on a's line\n  b=2)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(a,  # on a's line\n  b=2)\n"),
    ("x = f(\n    a,\n    kv=g(\n        1,  # inner\n    ),\n    b=2,\n)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"},
     "x = f(\n    a,\n    b=2,\n)\n"),
    ("f(*args, kv=1, **kw)\n", "kv=", FixKind.REMOVE_KEYWORD, {"name": "kv"}, "f(*args, **kw)\n"),
    ("f(path = 1)\n", "path", FixKind.RENAME_KEYWORD, {"old": "path", "new": "file_path"}, "f(file_path = 1)\n"),
    ("from a import B\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "module": "a", "new_module": "n.m"}, "from n.m import B\n"),
    ("from a import (B)  # c\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "module": "a", "new_module": "n"}, "from n import (B)  # c\n"),
    ("from a import B as C, d\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"}, "from a import d\nfrom n import B as C\n"),
    ("from a import d, B\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"}, "from a import d\nfrom n import B\n"),
    ("from a import (d, B)\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"}, "from a import (d)\nfrom n import B\n"),
    ("from a import (\n    d,\n    B,  # bee\n)\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"},
     "from a import (\n    d,\n)\nfrom n import B  # bee\n"),
    ("from a import (\n    B,\n    d\n)\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"}, "from a import (\n    d\n)\nfrom n import B\n"),
    ("if x: from a import B, c\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"}, "if x: from a import c; from n import B\n"),
    ("# -*- coding: utf-8 -*-\r\nfrom a import d, B\r\nf(kv=1)\r\n", "B", FixKind.MOVE_IMPORT, {"name": "B", "new_module": "n"},
     "# -*- coding: utf-8 -*-\r\nfrom a import d\r\nfrom n import B\r\nf(kv=1)\r\n"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "needle", "kind", "data", "expected"), LAYOUTS)
def test_layout(source: str, needle: str, kind: FixKind, data: dict[str, str], expected: str) -> None:
    finding = finding_at(source, needle, kind, **data)
    fixed = apply_fixes(source, [finding])
    assert fixed.reasons == [None]
    assert fixed.code == expected
    compile(fixed.code, "m.py", "exec", dont_inherit=True)
    again = apply_fixes(fixed.code, [finding])  # the same (now stale) finding: nothing left to do
    assert again.code == fixed.code and again.reasons[0] is not None


def test_two_fixes_in_one_call_and_one_import() -> None:
    source = "from a import B, c, D\nf(\n    x,\n    old=1,\n    gone=2,\n    y=3,\n)\n"
    findings = [
        finding_at(source, "old=", FixKind.RENAME_KEYWORD, old="old", new="new"),
        finding_at(source, "gone=", FixKind.REMOVE_KEYWORD, name="gone"),
        finding_at(source, "B", FixKind.MOVE_IMPORT, name="B", new_module="n"),
        finding_at(source, "D", FixKind.MOVE_IMPORT, name="D", new_module="n"),
    ]
    fixed = apply_fixes(source, findings)
    assert fixed.reasons == [None] * 4
    assert fixed.code == "from a import c\nfrom n import B, D\nf(\n    x,\n    new=1,\n    y=3,\n)\n"
    assert fixed.dropped_values == [None, "2", None, None]


def test_a_rename_onto_a_keyword_already_passed_is_left_alone() -> None:
    source = "f(path=1, file_path=2)\n"
    fixed = apply_fixes(
        source, [finding_at(source, "path=", FixKind.RENAME_KEYWORD, old="path", new="file_path")]
    )
    assert fixed.code == source and "already passes `file_path=`" in (fixed.reasons[0] or "")


# ---- what the user reads


def _plan_case(name: str, tmp_path: Path, *, unsafe: bool) -> FixResult:
    sections = parse_case(Path(__file__).parents[1] / "fix_cases" / f"{name}.case")
    write_tree(tmp_path / "new", sections["new"])
    write_tree(tmp_path / "old", sections["old"])
    down = write_tree(tmp_path / "down", sections["downstream"])
    return plan_fixes(run_audit(tmp_path, down), down, unsafe=unsafe)


def test_a_removed_keyword_whose_call_lacks_a_required_parameter_is_one_manual_step(tmp_path: Path) -> None:
    fixed = _plan_case("keyword_renamed_and_required", tmp_path, unsafe=True)
    assert len(fixed.with_status(MANUAL)) == 1
    report = render(fixed)
    assert "drop `lexer_name=`, and:\n" in report
    assert "pass `lexer` to Syntax(): required, no default (new in pkg)" in report


def test_manual_steps_name_the_parameter_its_annotation_position_and_missing_default(tmp_path: Path) -> None:
    fixed = _plan_case("manual", tmp_path, unsafe=True)
    assert fixed.changes == [] and len(fixed.with_status(MANUAL)) == 2
    report = render(fixed)
    assert (
        "pass `block_size`, an `int`, to Scheduler(): required, no default (new in pkg); "
        "parameter 4 of 5, after `structured_output_manager`, passed by position or by keyword"
    ) in report
    assert (
        "pass `seed`, an `int`, to make_config(): required, no default (its default was removed in pkg)"
        in report
    )
    assert (
        "pass `is_encoder_decoder`, a `dict[str, bool]`, to make_config()" in report
    )  # a comma in the annotation
    assert "passed by keyword only" in report


def test_unsafe_fixes_are_labelled_in_the_output_never_in_the_code(tmp_path: Path) -> None:
    safe = _plan_case("keywords", tmp_path / "a", unsafe=False)
    report = render(safe)
    assert "Unsafe fixes not applied (they change behaviour; rerun with --unsafe-fixes" in report
    assert len(safe.with_status(NEEDS_UNSAFE)) == 9
    # a rename rests on the old version's evidence, said with it; a parameter added where another was
    # removed (`catch_exceptions` where `mix_stderr` was) is no rename, in the fix nor in the hint
    assert "safe fix: rename `path=` to `file_path=`" in report
    assert "accepts both spellings: its decorator passes `path=` on as `file_path=`" in report
    assert "catch_exceptions" not in report
    hint = next(o.finding.hint for o in safe.outcomes if "mix_stderr" in o.finding.message)
    assert hint is not None and "a parameter `catch_exceptions` was added where `mix_stderr` was" in hint
    assert "they may differ in meaning" in hint and "rename" not in hint
    unsafe = _plan_case("keywords", tmp_path / "b", unsafe=True)
    report = render(unsafe)
    assert (
        "UNSAFE: changes behaviour: get_config() no longer receives `{}` (passed as `kv_cache_specs=`)"
        in report
    )
    assert all(
        "UNSAFE" not in change.after and "apidrift" not in change.after.replace("apidrift: ignore", "")
        for change in unsafe.changes
    )
    # with --diff every line outside the patch is a comment, so the output is a patch as it is
    patch_lines = [line for line in report.splitlines() if not line.startswith("#")]
    assert patch_lines[0].startswith("--- a/app.py") and patch_lines[1].startswith("+++ b/app.py")


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_the_diff_output_applies_with_patch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sections = parse_case(Path(__file__).parents[1] / "fix_cases" / "imports.case")
    write_tree(tmp_path / "new", sections["new"])
    write_tree(tmp_path / "old", sections["old"])
    down = write_tree(tmp_path / "down", sections["downstream"])
    status = main(["fix", str(down), "--against", f"pkg@{tmp_path / 'new'}", "--from", f"pkg@{tmp_path / 'old'}",
                   "--cache-dir", str(tmp_path / "cache"), "--offline"])  # fmt: skip
    assert status == 1  # changes to apply
    report = capsys.readouterr().out
    assert (down / "app.py").read_text() == sections["downstream"]["app.py"], "--diff writes nothing"
    done = subprocess.run(
        ["patch", "-p1", "--quiet"],
        input=report,
        cwd=down,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (down / "app.py").read_text() == sections["fixed"]["app.py"]


# ---- the command: --write, idempotence, refusals


def _cli_case(tmp_path: Path, name: str = "keywords") -> tuple[Path, list[str], dict[str, dict[str, str]]]:
    sections = parse_case(Path(__file__).parents[1] / "fix_cases" / f"{name}.case")
    write_tree(tmp_path / "new", sections["new"])
    write_tree(tmp_path / "old", sections["old"])
    down = write_tree(tmp_path / "down", sections["downstream"])
    options = [
        "--against",
        f"pkg@{tmp_path / 'new'}",
        "--from",
        f"pkg@{tmp_path / 'old'}",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--offline",
    ]
    return down, options, sections


def test_write_then_run_again_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    down, options, sections = _cli_case(tmp_path)
    (down / "app.py").chmod(0o640)
    assert main(["fix", str(down), *options, "--write", "--unsafe-fixes"]) == 1  # manual steps remain
    out = capsys.readouterr()
    assert (down / "app.py").read_text() == sections["fixed"]["app.py"]
    assert (down / "app.py").stat().st_mode & 0o777 == 0o640
    assert "fixed app.py:" in out.out and "apidrift: wrote 1 file" in out.err
    assert sorted(p.name for p in down.iterdir()) == ["app.py"], "no temporary file left behind"
    assert main(["fix", str(down), *options, "--write", "--unsafe-fixes"]) == 1
    assert (down / "app.py").read_text() == sections["fixed"]["app.py"]
    second = capsys.readouterr()
    assert "nothing applied" in second.out and "apidrift: wrote 0 files" in second.err
    assert main(["fix", str(down), *options]) == 1  # --diff: the manual step is still to do
    assert "no changes" in capsys.readouterr().out


def test_exit_status_zero_when_everything_is_fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down, options, _ = _cli_case(tmp_path, "imports")
    assert main(["fix", str(down), *options, "--write"]) == 0  # all moved imports fixed: nothing left to do
    assert main(["fix", str(down), *options]) == 0
    assert "no changes" in capsys.readouterr().out


@pytest.mark.parametrize("downstream", ["speculators==0.3.0", "speculators~=0.3", "pytest"])
def test_write_is_refused_outside_a_local_tree(
    downstream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # so that no folder is named like the distribution
    status = main(["fix", downstream, "--against", "vllm==0.16.0", "--write", "--offline", "--cache-dir", str(tmp_path / "cache"),
                   "--index-url", "http://127.0.0.1:9/simple/"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("apidrift: error: --write:")
    assert "local source tree" in err and "--diff" in err
    assert not (tmp_path / "cache").exists(), "refused before anything was fetched"


def test_write_is_refused_into_the_cache_or_installed_packages(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    inside = cache.root / "sources" / "demo" / "tree"
    assert "apidrift's cache" in (not_local_reason("directory", inside, cache.root) or "")
    assert "installed packages" in (not_local_reason("directory", Path(inspect.getfile(pytest)).parent) or "")
    assert not_local_reason("index", tmp_path) == "it is a release fetched from the package index"
    assert not_local_reason("installed", tmp_path) == "it is an installed distribution"
    assert not_local_reason("directory", tmp_path) is None
    fixed = plan_fixes(
        AuditResult(*_inputs()), tmp_path, local=False, not_local_reason="it is an installed distribution"
    )
    with pytest.raises(FixError, match="refusing to write: it is an installed distribution"):
        write_changes(fixed)


def _inputs() -> tuple:
    from apidrift.auditor.core.results import InputInfo

    return InputInfo("down", None, "installed", "x"), InputInfo("pkg", "2", "path", "y")


def test_a_file_changed_since_the_audit_is_not_touched(tmp_path: Path) -> None:
    down, _, _ = _cli_case(tmp_path)
    result = run_audit(tmp_path, down)
    (down / "app.py").write_text("# rewritten meanwhile\n" + (down / "app.py").read_text())
    fixed = plan_fixes(result, down, unsafe=True)
    assert fixed.changes == []
    assert {o.reason for o in fixed.with_status(NOT_APPLIED)} >= {"the file changed since the audit"}


def test_encoding_and_newlines_are_kept(tmp_path: Path) -> None:
    write_tree(
        tmp_path / "new",
        {"pkg/__init__.py": "", "pkg/io.py": 'def open_file(file_path: str = ""):\n    return 1\n'},
    )
    write_tree(
        tmp_path / "old", {"pkg/__init__.py": "", "pkg/io.py": "def open_file(path: str):\n    return 1\n"}
    )
    source = "# -*- coding: latin-1 -*-\r\nfrom pkg.io import open_file\r\n\r\nopen_file(path='caf\u00e9')  # \u00e9t\u00e9\r\n"
    (tmp_path / "down").mkdir()
    (tmp_path / "down" / "app.py").write_bytes(source.encode("latin-1"))
    fixed = plan_fixes(run_audit(tmp_path, tmp_path / "down"), tmp_path / "down", unsafe=True)
    write_changes(fixed)  # the unsafe removal: `file_path` in place of `path` would be a guess
    data = (tmp_path / "down" / "app.py").read_bytes()
    assert data == source.replace("path='caf\u00e9'", "").encode("latin-1")


# ---- the flagship, for real


@pytest.mark.network
@pytest.mark.flagship
def test_flagship_fix(index_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from apidrift.auditor.sources.locate import locate

    tree = locate("speculators==0.3.0", role="downstream", cache=Cache(index_cache))
    project = tree.root.parent if tree.root.name == "src" else tree.root
    local = tmp_path / "speculators-0.3.0"
    shutil.copytree(project, local)
    generator = local / "src/speculators/data_generation/vllm_hidden_states_generator.py"
    original = generator.read_text()
    common = ["--against", "vllm==0.16.0", "--cache-dir", str(index_cache)]

    # Without --unsafe-fixes nothing changes, and the dropped keyword is offered, labelled unsafe.
    assert main(["fix", str(local), *common]) == 1
    out = capsys.readouterr().out
    assert "---" not in out and "drop `kv_cache_specs=`" in out and "rerun with --unsafe-fixes" in out

    assert main(["fix", str(local), *common, "--unsafe-fixes"]) == 1
    out = capsys.readouterr().out
    removed = [line for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-            kv_cache_specs=kv_cache_spec,"] and added == []
    assert (
        "UNSAFE: changes behaviour: get_kv_cache_config_from_groups() no longer receives `kv_cache_spec`"
        in out
    )
    assert "pass `block_size`, an `int`, to Scheduler(): required, no default (new in vllm==0.16.0)" in out
    assert "after `structured_output_manager`" in out
    assert "pass `is_encoder_decoder`, an `InitVar[bool]`, to SchedulerConfig()" in out
    assert generator.read_text() == original, "--diff writes nothing"

    before = audit(AuditRequest(str(local), "vllm==0.16.0", cache_dir=index_cache))
    assert main(["fix", str(local), *common, "--unsafe-fixes", "--write"]) == 1  # the two manual steps remain
    capsys.readouterr()
    assert generator.read_text() == original.replace("            kv_cache_specs=kv_cache_spec,\n", "", 1)
    compile(generator.read_text(), str(generator), "exec", dont_inherit=True)
    after = audit(AuditRequest(str(local), "vllm==0.16.0", cache_dir=index_cache))
    errors = sorted((f.code, f.message) for f in after.findings if f.severity is Severity.ERROR)
    assert [code for code, _ in errors] == ["AD102", "AD102"]
    assert (
        "`block_size`" in errors[0][1] + errors[1][1]
        and "`is_encoder_decoder`" in errors[0][1] + errors[1][1]
    )
    fixed_keys = {("AD101", f.message) for f in before.findings if f.code == "AD101"}
    assert Counter((f.code, f.message) for f in after.findings) == Counter(
        (f.code, f.message) for f in before.findings if (f.code, f.message) not in fixed_keys
    ), "the AD101 is gone and nothing new appears"

    # The fetched release itself: a diff is fine, writing into it is refused.
    assert main(["fix", "speculators==0.3.0", *common, "--unsafe-fixes"]) == 1
    out = capsys.readouterr().out
    assert (
        "a diff only: it is a release fetched from the package index" in out
        and "-            kv_cache_specs=" in out
    )
    assert main(["fix", "speculators==0.3.0", *common, "--write"]) == 2


def test_readme_documents_the_fix_command() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "apidrift fix DOWNSTREAM --against UPSTREAM" in readme
    assert "--unsafe-fixes" in readme and "--write" in readme
    assert "**A fix is safe only on the upstream's own evidence**" in readme
    assert "a guess: a hint worded as one, never a fix" in readme


def test_a_file_changed_between_plan_and_write_stops_the_whole_write(tmp_path: Path) -> None:
    down, _, sections = _cli_case(tmp_path, "imports")
    (down / "other.py").write_text(sections["downstream"]["app.py"])
    fixed = plan_fixes(run_audit(tmp_path, down), down)
    assert sorted(c.path for c in fixed.changes) == ["app.py", "other.py"]
    (down / "other.py").write_text("# edited meanwhile\n")
    with pytest.raises(FixError, match="other.py changed since it was read; nothing written"):
        write_changes(fixed)
    assert (down / "app.py").read_text() == sections["downstream"]["app.py"], (
        "no file is written when one is refused"
    )


def test_the_html_report_marks_as_fixable_what_apidrift_fix_edits() -> None:
    from apidrift.auditor.fix.codemods import EDIT_KINDS
    from apidrift.reports.html import _EDIT_KINDS

    assert set(_EDIT_KINDS) == set(EDIT_KINDS)
    assert set(EDIT_KINDS) == set(FixKind) - {FixKind.MANUAL}


def test_a_move_says_whether_the_new_home_is_the_old_definition(tmp_path: Path) -> None:
    fixed = _plan_case("moved_and_changed", tmp_path, unsafe=False)
    hints = {o.finding.symbol: o.finding.hint or "" for o in fixed.outcomes}
    assert hints["pkg.core.Writer"].startswith("moved: now importable as `pkg.io.Writer`")
    assert hints["pkg.core.Reader"].startswith("an object of the same name is importable as `pkg.io.Reader`")
    assert "its code is not the old one's: check its uses there" in hints["pkg.core.Reader"]
    report = render(fixed)
    assert "evidence: `pkg.io.Writer` has the code the old `pkg.core.Writer` had" in report
    assert (
        "import `Reader` from `pkg.io`: the definition there is not the old one's (review its uses)" in report
    )
