"""Jupyter notebooks as downstream files: code cells scanned, findings placed at cell and line, in the
notebook's JSON for SARIF and annotations, suppressions in cells, and `apidrift fix` in place.

The notebooks are written by nbformat (Jupyter's own writer), so their JSON is the one Jupyter
writes. The oracles are the notebook's own bytes (the region a SARIF result names must hold the code
the finding is about), nbformat (the fixed notebook reads back with its outputs untouched), CPython's
parser (each fixed cell parses) and SARIF's official validator.

The real-world proof reads two notebooks from statsmodels' sdists (examples/notebooks/, shipped in
statsmodels-0.12.2.tar.gz and statsmodels-0.14.0.tar.gz on the package index): the 0.12.2
`quasibinomial.ipynb` breaks with numpy 2.0 in its cell 6 (`np.int`), while the 0.14.0
`variance_components.ipynb` (33 uses of numpy) does not. Executed cell by cell (its numpy and pandas
imports, then cells 4 and 6) in throwaway venvs: with numpy 1.23.5 and pandas 1.5.3 every cell
runs; with numpy 2.0.0 and pandas 2.2.2 cell 6 raises `AttributeError: module 'numpy' has no
attribute 'int'`, and 0.14.0's cell 6 (`astype(int)`) runs under both.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from pathlib import Path

import nbformat
import pytest
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.cache import Cache
from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import AuditResult, Severity
from apidrift.auditor.downstream.notebook import python_lines, read_notebook
from apidrift.auditor.fix.codemods import APPLIED, plan_fixes, write_changes
from apidrift.reports import render

DATA = Path(__file__).parents[1] / "data" / "notebooks"

# The old version takes both spellings, `path` as a deprecated alias it hands on to `file_path`: the
# evidence that makes renaming the keyword a safe fix (a parameter merely added where another was
# removed is only a guess).
OLD = {
    "pkg/__init__.py": (
        'import warnings\n\n\ndef load(file_path=None, mode="r", path=None):\n    if path is not None:\n'
        '        warnings.warn("`path` is deprecated, use `file_path`", DeprecationWarning)\n'
        "        file_path = path\n    return file_path\n\n\ndef keep(x):\n    return x\n"
    ),
}
NEW = {
    "pkg/__init__.py": 'def load(file_path, mode="r"):\n    return file_path\n\n\ndef keep(x):\n    return x\n',
}

CELLS = [
    ("markdown", "# Démo\n%not code, a markdown cell"),
    ("code", "%matplotlib inline\nimport pkg"),
    (
        "code",
        "x = pkg.load(path='a.txt')  # ünïcode\n"
        "!ls\n"
        "for i in range(2):\n"
        "    %time pkg.load(path=i)\n"
        "    y = pkg.load(\n"
        "        path=i,\n"
        "    )",
    ),
    ("code", "pkg.load(path='b')  # apidrift: ignore[unexpected-keyword, AD102]"),
    ("code", "%%bash\necho pkg.load(path=1)"),
    ("code", 's = """\n%inside a string is Python\n"""\npkg.keep(s)'),
    ("code", "def broken(:\n    pkg.load(path=1)"),
    ("code", "pkg.keep(1)  # apidrift: ignore"),
]


def notebook(cells: list[tuple[str, str]], **metadata: object) -> str:
    book = nbformat.v4.new_notebook()
    book.metadata.update(
        {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "version": "3.11.7"},
            **metadata,
        }
    )
    for kind, source in cells:
        if kind == "code":
            cell = nbformat.v4.new_code_cell(source, execution_count=1)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="out\nput\n")]
        else:
            cell = nbformat.v4.new_markdown_cell(source)
        book.cells.append(cell)
    return nbformat.writes(book)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_tree(tmp_path / "old", OLD)
    write_tree(tmp_path / "new", NEW)
    (tmp_path / "down").mkdir()
    (tmp_path / "down" / "demo.ipynb").write_text(notebook(CELLS), encoding="utf-8")
    return tmp_path


def run(root: Path, **options: object) -> AuditResult:
    return audit(
        AuditRequest(
            str(root / "down"),
            f"pkg@{root / 'new'}",
            f"pkg@{root / 'old'}",
            cache_dir=root / "cache",
            offline=True,
            **options,  # type: ignore[arg-type]
        )
    )


def test_cells_are_read_as_python_and_ipython_lines_are_left_out() -> None:
    lines = ["%time f()", "x = 1", "!ls", "files = !ls -a", "out = %who_ls", "np.sum?", "?np", "a = '%not'"]
    python, kinds = python_lines(lines)
    assert python == ["pass", "x = 1", "pass", "pass", "pass", "pass", "pass", "a = '%not'"]
    assert kinds == {
        0: "line magic",
        2: "shell escape",
        3: "shell escape",
        4: "line magic",
        5: "help request",
        6: "help request",
    }
    # Inside a string or brackets, and after a backslash, a `%` or `!` is Python's own.
    tricky = [
        's = """',
        "%x",
        '"""',
        "t = (1,",
        "  %2)",
        "u = 1 + \\",
        "  3",
        "  !x",
        "if s:",
        "    %time g()",
    ]
    python, kinds = python_lines(tricky)
    assert sorted(kinds) == [7, 9]
    assert python[9] == "    pass"  # at its indentation: the `if` block still parses
    assert python_lines(["", "%%timeit", "f()"]) == (["", "", ""], {1: "cell magic"})


def test_findings_are_placed_in_their_cells(project: Path) -> None:
    result = run(project)
    found = sorted((f.code, f.location.cell, f.location.line, f.location.column) for f in result.findings)
    # (each call's missing `file_path` goes with its unexpected `path=`: CPython raises on the keyword)
    assert found == [
        ("AD101", 3, 1, 14),
        ("AD101", 3, 5, 9),  # `y = pkg.load(\n path=i,\n )`: the call's first line, where CPython raises
        ("AD901", 7, 1, 1),
    ]
    kw = next(f for f in result.findings if f.code == "AD101" and f.location.line == 1)
    assert kw.location.source_line == "x = pkg.load(path='a.txt')  # ünïcode"
    assert kw.location.where == "demo.ipynb:cell 3:1:14"
    # The context shown is that cell's lines only, counted in the cell.
    multi = next(f for f in result.findings if f.code == "AD101" and f.location.line == 5)
    assert multi.context_start == 3 and multi.context[0] == "for i in range(2):"
    assert multi.context[-1] == "    )"
    broken = next(f for f in result.findings if f.code == "AD901")
    assert broken.message.startswith("cell 7 cannot be parsed") and broken.severity is Severity.ERROR
    coverage = result.coverage[0]
    # `%time pkg.load(path=i)` names the upstream: one use left unread; `%matplotlib` and `!ls` do not.
    assert coverage.not_checkable.get("notebook-magic") == 1
    assert coverage.not_checkable.get("unparsable-file") == 1
    assert [o.status.value for o in result.files] == ["scanned"]


def test_every_report_names_the_cell(project: Path) -> None:
    result = run(project)
    text = render(result, "text")
    assert "demo.ipynb:cell 3:1:14: AD101" in text
    assert "demo.ipynb:cell 7:1:1: AD901" in text
    html = render(result, "html")
    assert "cell 3, line 1, column 14" in html and "<code>demo.ipynb:cell 3:1:14</code>" in html
    assert "`demo.ipynb:cell 3:1:14`" in render(result, "markdown")
    data = json.loads(render(result, "json"))
    location = next(f["location"] for f in data["findings"] if f["code"] == "AD101")
    assert location["cell"] == 3 and len(location["json_region"]) == 4


def test_sarif_and_annotations_point_into_the_notebooks_json(project: Path) -> None:
    result = run(project)
    raw = (project / "down" / "demo.ipynb").read_text(encoding="utf-8").splitlines()
    sarif = json.loads(render(result, "sarif"))
    checked = 0
    for item in sarif["runs"][0]["results"]:
        region = item["locations"][0]["physicalLocation"]["region"]
        line = raw[region["startLine"] - 1]
        start = region["startColumn"] - 1
        if (
            item["ruleId"] == "AD101"
        ):  # the region holds the keyword (or the multi-line call) as the JSON writes it
            assert line[start:].startswith(("path=", "pkg.load(")), (line, region)
            assert item["properties"]["notebookCell"] == 3
            checked += 1
        if item["ruleId"] == "AD101" and item["properties"]["cellLine"] == 1:
            assert "missing required argument `file_path`" in item["message"]["text"] + json.dumps(item)
            checked += 1
    assert checked == 3
    github = render(result, "github")
    annotation = next(line for line in github.splitlines() if "AD101" in line and "cell 3:1:14" in line)
    region = next(
        r["locations"][0]["physicalLocation"]["region"]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "AD101" and r["properties"]["cellLine"] == 1
    )
    assert f"line={region['startLine']},col={region['startColumn']}," in annotation


def test_sarif_with_notebook_locations_passes_the_official_validator(project: Path, tmp_path: Path) -> None:
    from test_ci_formats import validate

    path = tmp_path / "notebook.sarif"
    path.write_text(render(run(project), "sarif"), encoding="utf-8")
    problems = validate(path, tmp_path / "validation.sarif")
    assert problems == [], [(p["ruleId"], p["message"]) for p in problems]


def test_suppressions_in_cells(project: Path) -> None:
    result = run(project, warn_unused_ignores=True)
    assert not [f for f in result.findings if f.location.cell == 4]  # both of cell 4's are suppressed
    assert result.notes.count("unused suppression: demo.ipynb:cell 8:1: # apidrift: ignore") == 1


def test_fix_rewrites_cell_sources_in_place(project: Path) -> None:
    path = project / "down" / "demo.ipynb"
    before = path.read_text(encoding="utf-8")
    fixed = plan_fixes(run(project), project / "down")
    assert [o.status for o in fixed.outcomes if o.finding.code == "AD101"] == [APPLIED, APPLIED]
    write_changes(fixed)
    after = path.read_text(encoding="utf-8")
    changed = [
        (a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b
    ]  # one line of JSON per edited source line: every other byte is as it was
    assert changed == [
        (
            "    \"x = pkg.load(path='a.txt')  # ünïcode\\n\",",
            "    \"x = pkg.load(file_path='a.txt')  # ünïcode\\n\",",
        ),
        ('    "        path=i,\\n",', '    "        file_path=i,\\n",'),
    ]
    old, new = nbformat.reads(before, as_version=4), nbformat.reads(after, as_version=4)
    nbformat.validate(new)
    assert [c.get("outputs") for c in old.cells] == [c.get("outputs") for c in new.cells]
    assert new.cells[2].source.splitlines()[3] == "    %time pkg.load(path=i)"  # IPython's lines as they were
    for cell in new.cells:
        if cell.cell_type == "code" and cell.source.startswith(("x =", "s =")):
            compile("\n".join(python_lines(cell.source.splitlines())[0]), "cell", "exec")
    again = plan_fixes(run(project), project / "down")
    assert again.changes == []  # a second run has nothing left to do
    assert not [f for f in run(project).findings if f.code == "AD101"]


def test_fix_keeps_a_source_written_as_one_string_and_escaped_text(tmp_path: Path) -> None:
    write_tree(tmp_path / "old", OLD)
    write_tree(tmp_path / "new", NEW)
    book = json.loads(notebook([("code", "import pkg\npkg.load(path='é')\n")]))
    book["cells"][0]["source"] = "import pkg\npkg.load(path='é')\n"  # a string, as nbformat also allows
    text = json.dumps(book, indent=2, ensure_ascii=True)  # another writer: indent 2, \u escapes
    (tmp_path / "down").mkdir()
    (tmp_path / "down" / "one.ipynb").write_text(text, encoding="utf-8")
    fixed = plan_fixes(run(tmp_path), tmp_path / "down")
    write_changes(fixed)
    after = (tmp_path / "down" / "one.ipynb").read_text(encoding="utf-8")
    assert after == text.replace("pkg.load(path='\\u00e9')", "pkg.load(file_path='\\u00e9')")


def test_fix_leaves_a_notebook_changed_since_the_audit(project: Path) -> None:
    result = run(project)
    path = project / "down" / "demo.ipynb"
    path.write_text(
        path.read_text(encoding="utf-8").replace("path='a.txt'", "path='b.txt'"), encoding="utf-8"
    )
    fixed = plan_fixes(result, project / "down")
    first = next(o for o in fixed.outcomes if o.finding.code == "AD101" and o.finding.location.line == 1)
    assert first.status == "not-applied" and first.reason == "the notebook changed since the audit"


def test_cli_fix_diff_names_cells(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = ["--against", f"pkg@{project / 'new'}", "--from", f"pkg@{project / 'old'}", "--offline"]
    status = main(["fix", str(project / "down"), *options, "--cache-dir", str(project / "cache")])
    out = capsys.readouterr().out
    assert status == 1  # the manual step and the unparsable cell remain
    assert "#   cell 3:1:14 AD101 safe fix: rename `path=` to `file_path=`" in out
    assert "+    \"x = pkg.load(file_path='a.txt')  # ünïcode\\n\"," in out


def test_a_folder_of_notebooks_only_is_a_downstream(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ["--against", f"pkg@{project / 'new'}", "--from", f"pkg@{project / 'old'}", "--offline"]
    status = main(
        ["audit", str(project / "down"), *options, "--cache-dir", str(project / "cache"), "--quiet"]
    )
    assert status == 1
    assert "demo.ipynb:cell 3:1:14: AD101" in capsys.readouterr().out


def test_other_kernels_and_checkpoints_are_not_read(project: Path) -> None:
    down = project / "down"
    (down / "r.ipynb").write_text(
        notebook([("code", "import pkg\npkg.load(path=1)")], kernelspec={"name": "ir", "language": "R"}),
        encoding="utf-8",
    )
    (down / ".ipynb_checkpoints").mkdir()
    (down / ".ipynb_checkpoints" / "demo-checkpoint.ipynb").write_text(notebook(CELLS), encoding="utf-8")
    result = run(project)
    outcomes = {o.path: (o.status.value, o.reason) for o in result.files}
    assert outcomes["r.ipynb"] == ("skipped", "not a Python notebook (kernel language: R)")
    assert not [p for p in outcomes if "checkpoint" in p]


def test_a_notebook_map_is_exact_for_escapes_and_astral_characters() -> None:
    source = 'a = "\\t😀"; pkg.f(x=1)\n\tpkg.g()'
    book = notebook([("code", source)])
    read = read_notebook(book.encode())
    raw = book.splitlines()
    for line, column, expected in ((1, 12, "pkg.f"), (1, 17, "(x=1)"), (2, 2, "pkg.g")):
        json_line, json_column = read.map.json_position(line, column)  # type: ignore[misc]
        assert raw[json_line - 1][json_column - 1 :].startswith(expected)
    assert read.lines == ('a = "\\t😀"; pkg.f(x=1)', "\tpkg.g()")


# ---- real notebooks from statsmodels' sdists, against numpy 2.0

QUASIBINOMIAL = DATA / "statsmodels-0.12.2-quasibinomial.ipynb"
VARIANCE_COMPONENTS = DATA / "statsmodels-0.14.0-variance_components.ipynb"
SHIPPED = {  # file here: (sdist, member, sha256 of the member)
    QUASIBINOMIAL: (
        "statsmodels-0.12.2.tar.gz",
        "statsmodels-0.12.2/examples/notebooks/quasibinomial.ipynb",
        "8f778b13c4efd0f624660af9206fcb8ed542a1e8efed46a2115fa219ca2f18b7",
    ),
    VARIANCE_COMPONENTS: (
        "statsmodels-0.14.0.tar.gz",
        "statsmodels-0.14.0/examples/notebooks/variance_components.ipynb",
        "c9dc0dfbfd9c651158731699434730ea079629869351e625d4f5fa0648f303ae",
    ),
}


def test_the_real_notebooks_read_as_json_reads_them() -> None:
    """The walk's cells and lines are json's, and each line's characters are where the map says they are
    in the file (checked the same way on all 209 notebooks of statsmodels 0.12.2, 0.13.5 and 0.14.0)."""
    for path in SHIPPED:
        data = path.read_bytes()
        read = read_notebook(data)
        expected = []
        for cell in json.loads(data)["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and source:
                expected += source.splitlines()
        assert list(read.lines) == expected
        raw = data.decode("utf-8").splitlines()
        for runs in read.map.segments:
            for run in runs:
                start = run.json_column - 1
                assert raw[run.json_line - 1][start : start + len(run.escaped)] == run.escaped


def test_the_real_notebooks_are_the_shipped_bytes() -> None:
    for path, (_, _, digest) in SHIPPED.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path


@pytest.mark.network
def test_the_real_notebooks_are_in_statsmodels_sdists(index_cache: Path) -> None:
    from apidrift.auditor.sources.index_client import IndexClient

    with IndexClient(Cache(index_cache)) as client:
        files = {f.filename: f for f in client.project("statsmodels").files}
        for path, (sdist, member, _) in SHIPPED.items():
            archive, _ = client.download(files[sdist])
            with tarfile.open(archive) as tar:
                shipped = tar.extractfile(member)
                assert shipped is not None and shipped.read() == path.read_bytes(), member


@pytest.mark.network
def test_a_real_notebook_broken_by_numpy_2(index_cache: Path, tmp_path: Path) -> None:
    down = tmp_path / "notebooks"
    down.mkdir()
    (down / "quasibinomial.ipynb").write_bytes(QUASIBINOMIAL.read_bytes())
    result = audit(AuditRequest(str(down), "numpy==2.0.0", "numpy==1.23.5", cache_dir=index_cache))
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    assert [(f.code, f.location.where, f.symbol) for f in errors] == [
        ("AD003", "quasibinomial.ipynb:cell 6:3:49", "numpy.int")
    ]
    assert errors[0].location.source_line == 'df["site"] = 1 + np.floor(df.index / 10).astype(np.int)'
    raw = QUASIBINOMIAL.read_text(encoding="utf-8").splitlines()
    line, column, _, end_column = errors[0].location.json_region  # type: ignore[misc]
    assert raw[line - 1][column - 1 : end_column - 1] == "np.int"
    sarif = json.loads(render(result, "sarif"))
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, column)
    path = tmp_path / "real.sarif"
    path.write_text(render(result, "sarif"), encoding="utf-8")
    from test_ci_formats import validate

    assert validate(path, tmp_path / "validation.sarif") == []


@pytest.mark.network
def test_a_real_clean_notebook_is_silent(index_cache: Path, tmp_path: Path) -> None:
    down = tmp_path / "notebooks"
    down.mkdir()
    (down / "variance_components.ipynb").write_bytes(VARIANCE_COMPONENTS.read_bytes())
    result = audit(AuditRequest(str(down), "numpy==2.0.0", "numpy==1.23.5", cache_dir=index_cache))
    assert result.findings == []
    coverage = result.coverage[0]
    assert coverage.found == coverage.checked >= 30 and result.unchecked is None


def test_readme_shows_notebooks() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert re.search(r"notebook", readme, re.IGNORECASE) and ".ipynb" in readme
