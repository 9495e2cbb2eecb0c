"""`apidrift diff`: API changes between two versions, with and without a downstream's uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.engine import DiffRequest, diff_versions
from apidrift.auditor.upstream.diff import ChangeKind, compare_signatures
from apidrift.reports.diff import render

P = ParamKind.POSITIONAL_OR_KEYWORD


def sig(*params: Parameter) -> Signature:
    return Signature(tuple(params))


def kinds(old: Signature, new: Signature) -> list[tuple[ChangeKind, bool]]:
    return [(kind, breaking) for kind, _, breaking in compare_signatures(old, new)]


def test_signature_changes_are_named_and_graded() -> None:
    a, b = Parameter("a", P), Parameter("b", P, True, "1")
    assert kinds(sig(a, b), sig(a, b)) == []
    assert kinds(sig(a, b), sig(a)) == [(ChangeKind.PARAMETER_REMOVED, True)]
    assert kinds(sig(a), sig(a, Parameter("c", P))) == [(ChangeKind.PARAMETER_ADDED_REQUIRED, True)]
    assert kinds(sig(a), sig(a, Parameter("c", P, True, "0"))) == [(ChangeKind.PARAMETER_ADDED, False)]
    assert kinds(sig(a, b), sig(a, Parameter("c", P, True, "0"), b)) == [
        (ChangeKind.PARAMETER_ADDED, True)
    ]  # shifts b
    assert kinds(sig(a, b), sig(a, Parameter("b", P, True, "2"))) == [(ChangeKind.DEFAULT_CHANGED, False)]
    assert kinds(sig(a, b), sig(a, Parameter("b", P))) == [(ChangeKind.PARAMETER_NOW_REQUIRED, True)]
    assert kinds(sig(a, b), sig(b, a)) == [(ChangeKind.PARAMETER_MOVED, True)]
    assert kinds(sig(a, b), sig(a, Parameter("b", ParamKind.KEYWORD_ONLY, True, "1"))) == [
        (ChangeKind.PARAMETER_KIND_CHANGED, True)
    ]
    renamed = compare_signatures(
        sig(Parameter("path", P, annotation="str")), sig(Parameter("file_path", P, annotation="str"))
    )
    assert renamed == [
        (
            ChangeKind.PARAMETER_RENAMED,
            "`path` removed, `file_path` added at its place (same annotation): they may differ in meaning",
            True,
        )
    ]
    unrelated = compare_signatures(sig(Parameter("filename", P)), sig(Parameter("source", P)))
    assert [k for k, _, _ in unrelated] == [
        ChangeKind.PARAMETER_REMOVED,
        ChangeKind.PARAMETER_ADDED_REQUIRED,
    ]  # no false rename


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


OLD = {
    "pkg/__init__.py": "from pkg.core import Reader\n",
    "pkg/core.py": "class Reader:\n    def __init__(self, source):\n        pass\n\ndef load(path, fast=False):\n    pass\n\ndef unused(x):\n    pass\n\ndef gone(x):\n    pass\n",
}
NEW = {
    "pkg/__init__.py": "from pkg.io import Reader\n",
    "pkg/io.py": "class Reader:\n    def __init__(self, source, *, strict):\n        pass\n",
    "pkg/core.py": "def load(path, mode, fast=False):\n    pass\n\ndef unused(x, y):\n    pass\n",
}
DOWN = {"app.py": "from pkg import Reader\nfrom pkg.core import load\n\nReader('s')\nload('p')\n"}


def test_diff_of_whole_versions_lists_every_change(tmp_path: Path) -> None:
    request = DiffRequest(
        f"pkg@{write(tmp_path / 'old', OLD)}", f"pkg@{write(tmp_path / 'new', NEW)}", cache_dir=tmp_path / "c"
    )
    result = diff_versions(request)
    found = {(c.path, c.kind) for c in result.changes}
    assert ("pkg.core.Reader", ChangeKind.MOVED) in found
    assert ("pkg.core.load", ChangeKind.PARAMETER_ADDED_REQUIRED) in found
    assert ("pkg.core.unused", ChangeKind.PARAMETER_ADDED_REQUIRED) in found
    assert ("pkg.core.gone", ChangeKind.REMOVED) in found
    moved = next(c for c in result.changes if c.kind == ChangeKind.MOVED)
    assert moved.new == "pkg.Reader"


def test_diff_used_by_keeps_only_what_the_downstream_touches(tmp_path: Path) -> None:
    request = DiffRequest(
        f"pkg@{write(tmp_path / 'old', OLD)}",
        f"pkg@{write(tmp_path / 'new', NEW)}",
        used_by=str(write(tmp_path / "down", DOWN)),
        cache_dir=tmp_path / "c",
    )
    result = diff_versions(request)
    paths = {c.path for c in result.changes}
    assert "pkg.core.unused" not in paths and "pkg.core.gone" not in paths
    load = next(c for c in result.changes if c.path == "pkg.core.load")
    assert load.kind == ChangeKind.PARAMETER_ADDED_REQUIRED and "`mode`" in load.detail
    assert load.uses == ("app.py:5",) and load.breaking  # the call it breaks; the import still works
    reader = [c for c in result.changes if c.path in ("pkg.Reader", "pkg.core.Reader")]
    assert any(c.kind == ChangeKind.PARAMETER_ADDED_REQUIRED and "strict" in c.detail for c in reader)
    text = render(result)
    assert "parameter-added-required breaks app.py:5" in text
    moved = next(c for c in result.changes if c.kind == ChangeKind.MOVED)
    assert (
        not moved.breaking and moved.breaks_some_callers and moved.uses == ()
    )  # imported through `pkg`, which still has it
    assert text.strip().endswith("(2 breaking, 1 other).")


@pytest.mark.network
def test_flagship_diff_names_the_three_breaks(index_cache: Path) -> None:
    result = diff_versions(
        DiffRequest("vllm==0.11.0", "vllm==0.16.0", used_by="speculators==0.3.0", cache_dir=index_cache)
    )
    details = {(c.path, c.kind, c.detail) for c in result.changes}
    # the use sites as `audit` reports the three errors: under src/, at the line where CPython fails
    generator = "src/speculators/data_generation/vllm_hidden_states_generator.py"
    assert sorted({u for c in result.changes if c.breaking for u in c.uses}) == [
        f"{generator}:136",
        f"{generator}:148",
        f"{generator}:194",
    ]
    assert (
        "vllm.v1.core.kv_cache_utils.get_kv_cache_config_from_groups",
        ChangeKind.PARAMETER_REMOVED,
        "`kv_cache_specs` removed",
    ) in details
    assert any(
        p.endswith("Scheduler") and k == ChangeKind.PARAMETER_ADDED_REQUIRED and "`block_size: int`" in d
        for p, k, d in details
    )
    assert any(
        p.endswith("SchedulerConfig")
        and k == ChangeKind.PARAMETER_ADDED_REQUIRED
        and "is_encoder_decoder" in d
        for p, k, d in details
    )


def test_diff_command_prints_and_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from apidrift.auditor.cli.main import main

    old, new = write(tmp_path / "old", OLD), write(tmp_path / "new", NEW)
    down = write(tmp_path / "down", DOWN)
    args = ["diff", f"pkg@{old}", f"pkg@{new}", "--used-by", str(down), "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "pkg.core.load" in out and "BREAKING" in out and "breaks app.py:5" in out
    assert main([*args, "--fail-on-breaking"]) == 1
    capsys.readouterr()
    assert main([*args, "--format", "json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert {c["path"] for c in data["changes"]} >= {"pkg.core.load"}
    assert main(["diff", "pkg@/nonexistent/folder", f"pkg@{new}"]) == 2


USED_OLD = {"pkg/__init__.py": (
    "class A:\n    def __init__(self, config, size=1):\n        self.got = (config, size)\n\n"
    "class B:\n    def __init__(self, config, size=1):\n        self.got = (config, size)\n\n"
    "def f(a, b=0):\n    return (a, b)\n"
)}  # fmt: skip
USED_NEW = {"pkg/__init__.py": (
    "class A:\n    def __init__(self, vllm_config, size=1):\n        self.got = (vllm_config, size)\n\n"
    "class B:\n    def __init__(self, vllm_config, size=1):\n        self.got = (vllm_config, size)\n\n"
    "def f(a, extra=None, b=0):\n    return (a, b)\n"
)}  # fmt: skip
USED_DOWN = {"app.py": "import pkg\n\npkg.A(config=1)\npkg.B(1)\npkg.f(1, b=2)\npkg.f(1, 2)\n"}


def test_used_by_lists_per_change_exactly_the_sites_it_breaks(tmp_path: Path) -> None:
    import subprocess
    import sys

    old, new, down = (
        write(tmp_path / "old", USED_OLD),
        write(tmp_path / "new", USED_NEW),
        write(tmp_path / "down", USED_DOWN),
    )
    # The oracle: each downstream call run against the new version (and the old one, where all work).
    probe = "import pkg\nfor call in {calls!r}:\n    try:\n        r = eval(call)\n        print(call, 'ok', getattr(r, 'got', r))\n    except TypeError:\n        print(call, 'TypeError')\n"
    calls = ["pkg.A(config=1)", "pkg.B(1)", "pkg.f(1, b=2)", "pkg.f(1, 2)"]
    runs = {}
    for name, folder in (("old", old), ("new", new)):
        out = subprocess.run([sys.executable, "-c", probe.format(calls=calls)], cwd=tmp_path, env={"PYTHONPATH": str(folder)},
                             capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
        runs[name] = dict(zip(calls, out))
    assert all(" ok " in line for line in runs["old"].values())
    assert runs["new"]["pkg.A(config=1)"].endswith("TypeError")  # line 3 breaks
    assert runs["new"]["pkg.B(1)"] == runs["old"]["pkg.B(1)"]  # line 4 does not
    assert runs["new"]["pkg.f(1, b=2)"] == runs["old"]["pkg.f(1, b=2)"]  # line 5 does not
    assert runs["new"]["pkg.f(1, 2)"] != runs["old"]["pkg.f(1, 2)"]  # line 6: 2 lands in `extra` now

    result = diff_versions(
        DiffRequest(f"pkg@{old}", f"pkg@{new}", used_by=str(down), cache_dir=tmp_path / "c")
    )
    by_path = {(c.path, c.kind): c for c in result.changes}
    a, b = by_path[("pkg.A", ChangeKind.PARAMETER_RENAMED)], by_path[("pkg.B", ChangeKind.PARAMETER_RENAMED)]
    assert (a.breaking, a.uses) == (True, ("app.py:3",))
    assert (b.breaking, b.uses, b.breaks_some_callers) == (False, (), True)  # B is called positionally only
    shift = by_path[("pkg.f", ChangeKind.PARAMETER_ADDED)]
    assert (shift.breaking, shift.uses) == (True, ("app.py:6",))  # not line 5, which passes `b` by keyword
    assert sum(c.breaking for c in result.changes) == 2
    text = render(result)
    assert "parameter-replaced breaks app.py:3" in text and "not here  parameter-replaced" in text


def test_used_by_paths_and_lines_are_those_audit_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A src/ layout project and a call over several lines whose keyword is gone (as speculators 0.3.0
    calls vLLM's `get_kv_cache_config_from_groups(..., kv_cache_specs=...)`): `diff --used-by` names
    the file and line `audit` names, and explains its labels."""
    from apidrift.auditor.cli.main import main

    old = write(tmp_path / "old", {"pkg/__init__.py": "def get(config, groups, specs, memory):\n    pass\n\ndef other(a, b=1):\n    pass\n"})  # fmt: skip
    new = write(tmp_path / "new", {"pkg/__init__.py": "def get(config, groups, memory):\n    pass\n\ndef other(a):\n    pass\n"})  # fmt: skip
    call = "import pkg\n\n\ndef run():\n    return pkg.get(\n        1,\n        groups=2,\n        specs=3,\n        memory=4,\n    )\n\npkg.other(1)\n"
    down = write(tmp_path / "proj", {"pyproject.toml": '[project]\nname = "proj"\nversion = "1.0"\n',
                                     "src/proj/__init__.py": "", "src/proj/use.py": call})  # fmt: skip
    common = ["--cache-dir", str(tmp_path / "c"), "--offline"]
    assert main(["audit", str(down), "--against", f"pkg@{new}", "--from", f"pkg@{old}", *common]) == 1
    audited = capsys.readouterr().out
    assert "src/proj/use.py:5:12: AD101" in audited  # where CPython fails: the call's first line
    assert main(["diff", f"pkg@{old}", f"pkg@{new}", "--used-by", str(down), *common]) == 0
    out = capsys.readouterr().out
    assert "  parameter-removed breaks src/proj/use.py:5\n" in out
    assert "  not here  parameter-removed: `b` removed" in out  # pkg.other(1) passes no `b`
    legend = out.splitlines()[1:4]
    assert [line.split()[0] for line in legend] == ["BREAKING", "not", "changed"]
    assert "none of the downstream's use sites" in legend[1]
    # and `diff --help` explains them too
    assert main(["diff", "--help"]) == 0
    helped = capsys.readouterr().out
    assert "not here  with --used-by: breaks some callers, but none of the downstream's" in helped
