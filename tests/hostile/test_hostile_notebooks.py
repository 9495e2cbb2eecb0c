"""Hostile notebooks: each bounded (size, cells, containers, nesting, code) or refused with a reason as
the file's outcome, never an exception, a hang or unbounded memory. Beside tests/hostile/test_hostile.py."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest
from casefiles import write_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from apidrift import AuditRequest, audit
from apidrift.auditor.core.results import AuditResult, FileStatus
from apidrift.auditor.downstream import notebook as nb
from apidrift.auditor.downstream.notebook import NotebookError, read_notebook

KERNEL = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}


def book(cells: list[object], metadata: object = None, major: int = 4) -> str:
    metadata = KERNEL if metadata is None else metadata
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": major, "nbformat_minor": 5})


def code(source: object) -> dict[str, object]:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}


def audited(tmp_path: Path, files: dict[str, str | bytes]) -> AuditResult:
    write_tree(tmp_path / "new", {"pkg/__init__.py": "def f(x):\n    return x\n"})
    down = tmp_path / "down"
    down.mkdir(exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):
            (down / name).write_bytes(content)
        else:
            (down / name).write_text(content, encoding="utf-8")
    (down / "ok.ipynb").write_text(book([code("import pkg\npkg.f(1, 2)")]), encoding="utf-8")
    return audit(
        AuditRequest(str(down), f"pkg@{tmp_path / 'new'}", cache_dir=tmp_path / "cache", offline=True)
    )


def outcome(result: AuditResult, name: str) -> tuple[str, str | None]:
    found = next(o for o in result.files if o.path == name)
    return found.status.value, found.reason


def assert_still_audited(result: AuditResult) -> None:
    """The hostile file cost only itself: the good notebook beside it was audited."""
    found = [f.location.where for f in result.findings if f.location.path == "ok.ipynb"]
    assert found == ["ok.ipynb:cell 1:2:1"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"pkg": 0, "cells": [', "not a notebook: a cell is not an object at line 1 column 22"),
        ('["pkg"]', "not a notebook: expected a JSON object at line 1 column 1"),
        (
            '{"cells": [{"pkg": 0, "source": 3}]}',
            "not a notebook: a cell's source is neither a string nor an array of strings",
        ),
        ('{"cells": [{"source": ["import pkg", 1]}]}', "not a notebook: expected a string"),
        ('{"pkg": 0, "cells": {}}', "not a notebook: 'cells' is not an array"),
        (book([code("import pkg")]) + " []", "not a notebook: extra data after the notebook"),
        (book([code("import pkg")], major=3), "nbformat 3 notebook: only nbformat 4 is read"),
        (b'{"cells": [{"source": "import pkg\xff"}]}', "not valid UTF-8 at byte 33: invalid start byte"),
    ],
)
def test_malformed_notebooks_fail_with_a_reason(tmp_path: Path, content: str | bytes, reason: str) -> None:
    result = audited(tmp_path, {"bad.ipynb": content})
    status, why = outcome(result, "bad.ipynb")
    assert status == "failed" and why is not None and why.startswith(reason), why
    assert_still_audited(result)
    assert any(f.code == "AD901" and f.location.path == "bad.ipynb" for f in result.findings)


def test_deep_json_nesting_is_refused_before_decoding(tmp_path: Path) -> None:
    deep = book([code("import pkg")], metadata={"x": json.loads("[" * 150 + "]" * 150)})
    assert read_notebook(deep.encode()).text == "import pkg\n"  # 150 levels: a real notebook may nest so
    hostile = book([code("import pkg")], metadata={"x": 0}).replace("0", "[" * 100_000 + "]" * 100_000)
    started = time.perf_counter()
    result = audited(tmp_path, {"deep.ipynb": hostile})
    assert outcome(result, "deep.ipynb") == (
        "failed",
        f"notebook JSON nested deeper than {nb.MAX_JSON_DEPTH} levels",
    )
    assert time.perf_counter() - started < 30
    assert_still_audited(result)


def test_a_notebook_that_names_no_upstream_is_not_decoded(tmp_path: Path) -> None:
    result = audited(tmp_path, {"other.ipynb": '{"cells": [ broken'})
    assert outcome(result, "other.ipynb") == ("skipped", "does not mention the upstream")  # as a .py file
    escaped = book([code("import pkg as p\np.f(1, 2)")]).replace("import pkg", "import \\u0070kg")
    assert "\\u0070kg" in escaped and "pkg" not in escaped  # its one mention written with a JSON escape
    result = audited(tmp_path, {"escaped.ipynb": escaped})
    assert outcome(result, "escaped.ipynb")[0] == "scanned"  # decoded, then scanned
    assert [f.location.where for f in result.findings if f.location.path == "escaped.ipynb"] == [
        "escaped.ipynb:cell 1:2:1"
    ]


def test_brackets_inside_strings_are_no_containers() -> None:
    text = book([code('print("' + "[{" * 600_000 + '")')])
    assert "print(" in read_notebook(text.encode()).text


def test_many_values_are_refused_in_bounded_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hostile(count: int) -> str:
        return book([code("import pkg")], metadata={"x": 0}).replace(
            "0", "[" + ",".join(['{"a": ""}'] * count) + "]"
        )

    started = time.perf_counter()
    result = audited(tmp_path, {"many.ipynb": hostile(nb.MAX_JSON_VALUES)})
    assert outcome(result, "many.ipynb") == (
        "failed",
        "notebook JSON with more than 1,000,000 strings, arrays and objects",
    )
    assert time.perf_counter() - started < 30
    assert_still_audited(result)
    monkeypatch.setattr(nb, "MAX_JSON_VALUES", 50_000)  # the same walk, smaller, under tracemalloc
    text = hostile(15_000)  # 45,001 values: an object, its key and its string each
    tracemalloc.start()
    try:
        read_notebook(text.encode())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text)  # the text, never a decoded object per value


def test_too_many_cells_and_too_much_code(tmp_path: Path) -> None:
    cells = book([code("import pkg")] + [code("")] * nb.MAX_CELLS)
    code_heavy = book([code("import pkg\n" + "x = 1\n" * 200_000)] * 2)  # 2.4 MB of code in two cells
    result = audited(tmp_path, {"cells.ipynb": cells, "code.ipynb": code_heavy})
    assert outcome(result, "cells.ipynb") == ("failed", "notebook with more than 10,000 cells")
    assert outcome(result, "code.ipynb") == ("failed", "code cells larger than 2 MiB in all")
    assert_still_audited(result)


def test_a_notebook_over_the_size_bound_is_never_read_whole(tmp_path: Path) -> None:
    images = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "A" * (nb.MAX_NOTEBOOK_BYTES)},
    }
    large = book([dict(code("import pkg"), outputs=[images])])
    result = audited(tmp_path, {"large.ipynb": large})
    assert outcome(result, "large.ipynb") == ("skipped", "notebook larger than 32 MiB")
    assert_still_audited(result)


def test_large_outputs_within_the_bound_are_skipped_over_quickly(tmp_path: Path) -> None:
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "QUJD" * 7_000_000}}
    text = book([dict(code("import pkg\npkg.f(1, 2)"), outputs=[image] * 1)])
    started = time.perf_counter()
    read = read_notebook(text.encode())
    assert time.perf_counter() - started < 10 and read.lines == ("import pkg", "pkg.f(1, 2)")


def test_a_cell_too_deep_for_the_parser_costs_that_cell_only(tmp_path: Path) -> None:
    deep = code("import pkg\nx = " + "(" * 5_000 + "1" + ")" * 5_000)
    result = audited(tmp_path, {"deep.ipynb": book([deep, code("import pkg\npkg.f(1, 2, 3)")])})
    assert outcome(result, "deep.ipynb")[0] == "scanned"
    found = sorted((f.code, f.location.where) for f in result.findings if f.location.path == "deep.ipynb")
    assert found == [("AD103", "deep.ipynb:cell 2:2:1"), ("AD901", "deep.ipynb:cell 1:1:1")]


def test_escaped_surrogates_and_control_characters_in_cells(tmp_path: Path) -> None:
    text = book([code("import pkg\ns = '\ud800'\npkg.f(1, 2)\x00"), code("import pkg\npkg.f('\x1b[2J', 2)")])
    assert "\\ud800" in text and "\\u001b" in text  # as the JSON escapes them
    result = audited(tmp_path, {"odd.ipynb": text})
    assert outcome(result, "odd.ipynb")[0] == "scanned"
    found = sorted((f.code, f.location.where) for f in result.findings if f.location.path == "odd.ipynb")
    assert found == [("AD103", "odd.ipynb:cell 2:2:1"), ("AD901", "odd.ipynb:cell 1:1:1")]
    assert_still_audited(result)


def test_links_and_special_files_named_ipynb_are_not_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.ipynb"
    secret.write_text(book([code("import pkg\npkg.f(1, 2)")]), encoding="utf-8")
    down = tmp_path / "down"
    down.mkdir()
    os.symlink(secret, down / "link.ipynb")
    os.mkfifo(down / "pipe.ipynb")
    result = audited(tmp_path, {})
    assert outcome(result, "link.ipynb") == ("skipped", "symlink, not followed")
    assert outcome(result, "pipe.ipynb") == ("skipped", "not a regular file")
    assert FileStatus.SCANNED in {o.status for o in result.files}
    assert_still_audited(result)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)


def test_the_walk_reads_the_non_finite_floats_json_writes() -> None:
    """Python's `json.dumps` (and so Jupyter, through nbformat) writes NaN and infinities as `NaN`,
    `Infinity` and `-Infinity`, which `json.loads` reads back: a notebook holding one in its metadata
    or outputs is a notebook (the walk refused it)."""
    values = [float("nan"), float("inf"), -float("inf"), [1.5, float("nan")]]
    cells = [dict(code("import os\n"), outputs=[{"data": v} for v in values], metadata={"v": values})]
    metadata = {"nan": values[0], "inf": values[1], "-inf": values[2], "list": values[3]}
    text = json.dumps({"metadata": metadata, "cells": cells, "nbformat": 4})
    assert "NaN" in text and "-Infinity" in text
    assert list(read_notebook(text.encode("utf-8")).lines) == ["import os"]


@settings(max_examples=150, deadline=None)
@given(
    metadata=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
    outputs=st.lists(JSON_VALUES, max_size=3),
    sources=st.lists(st.text(max_size=40), min_size=1, max_size=4),
    indent=st.sampled_from([None, 1, 2]),
    ascii_only=st.booleans(),
)
def test_the_walk_reads_what_json_reads(
    metadata: dict[str, object],
    outputs: list[object],
    sources: list[str],
    indent: int | None,
    ascii_only: bool,
) -> None:
    """Whatever the other values hold and however the file is laid out, the walk reads the code
    cells' lines as json does, and each line's characters are where the map says."""
    cells = [dict(code(source), outputs=outputs, metadata=metadata) for source in sources]
    text = json.dumps(
        {"metadata": metadata, "cells": cells, "nbformat": 4}, indent=indent, ensure_ascii=ascii_only
    )
    try:
        read = read_notebook(text.encode("utf-8", "surrogatepass"))
    except NotebookError as error:  # only a code cell that is too much for the bounds may refuse it
        pytest.fail(f"refused: {error}")
    expected = []
    for source in sources:
        expected += nb.cell_lines(source) if source else []
    assert list(read.lines) == expected
    raw = text.split("\n")  # JSON's own line ends (U+0085 or U+2028 in a string end no line of the file)
    for runs in read.map.segments:
        for run in runs:
            start = run.json_column - 1
            assert raw[run.json_line - 1][start : start + len(run.escaped)] == run.escaped
