"""The cold-start work keeps results identical: the faster walk is `ast.walk`, a kept upstream model
gives each audit what a fresh one gives (findings and notes), bind's memo is bind."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.core.bind import _FLAVOR, CallShape, _bind, bind
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream import kept
from apidrift.auditor.upstream.astwalk import walk, walk_once


def test_walk_gives_ast_walks_nodes_in_its_order_on_the_standard_library() -> None:
    folder = Path(inspect.getfile(ast)).parent
    files = sorted(folder.glob("*.py"))[:120]
    assert len(files) > 50
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        expected = list(ast.walk(tree))
        got = walk(tree)
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), path
        assert walk_once(tree) is walk_once(tree)  # made once, kept on the node


def _facts(result) -> tuple:  # type: ignore[no-untyped-def]
    findings = sorted((f.code, f.location.path, f.location.line, f.message) for f in result.findings)
    return findings, sorted(result.notes), result.coverage[0].found, result.coverage[0].checked


@pytest.fixture()
def kept_on():  # type: ignore[no-untyped-def]
    kept.enable(True)
    yield
    kept.enable(False)


def test_a_kept_upstream_model_gives_each_audit_what_a_fresh_one_gives(tmp_path: Path) -> None:
    old = write_tree(tmp_path / "old", {"pkg/__init__.py": "def f(a, b=1):\n    return a\n",
                                         "pkg/broken.py": "def g(a):\n    return a\n"})  # fmt: skip
    new = write_tree(tmp_path / "new", {"pkg/__init__.py": "def f(a):\n    return a\n",
                                         "pkg/broken.py": "def g(a:\n"})  # fmt: skip
    uses_broken = write_tree(
        tmp_path / "a", {"a.py": "from pkg import f\nfrom pkg.broken import g\nf(1, b=2)\ng(1)\n"}
    )
    plain = write_tree(tmp_path / "b", {"b.py": "import pkg\npkg.f(1, 2)\npkg.f(1)\n"})

    def run(downstream: Path, cache: str) -> tuple:  # type: ignore[type-arg]
        request = AuditRequest(downstream=str(downstream), against=f"pkg@{new}", old=f"pkg@{old}",
                               cache_dir=tmp_path / cache)  # fmt: skip
        return _facts(audit(request))

    fresh = {name: run(path, f"fresh-{name}") for name, path in (("a", uses_broken), ("b", plain))}
    assert any("could not be parsed" in note for note in fresh["a"][1])
    assert fresh["a"][0] and fresh["b"][0]
    kept.enable(True)
    try:
        # One process, one cache, the same two upstream versions: the model is built once and kept.
        sequence = [run(path, "kept") for path in (uses_broken, plain, uses_broken, plain)]
    finally:
        kept.enable(False)
    assert sequence == [fresh["a"], fresh["b"], fresh["a"], fresh["b"]]  # the broken module's note: a's only


def test_the_same_index_arguments_give_the_same_model_only_while_kept(kept_on: None, tmp_path: Path) -> None:
    from apidrift.auditor.upstream.api_index import ApiIndex

    built: list[object] = []

    def build(args):  # type: ignore[no-untyped-def]
        built.append(args)
        return ApiIndex(**args)

    args = {"root": tmp_path, "import_names": ("pkg",), "compiled_modules": frozenset({"b", "a"})}
    first = kept.index(dict(args), build)
    assert kept.index({**args, "compiled_modules": frozenset({"a", "b"})}, build) is first
    assert len(built) == 1
    kept.enable(False)
    assert kept.index(dict(args), build) is not first


def test_binds_memo_answers_what_binding_answers() -> None:
    sig = Signature((Parameter("a", ParamKind.POSITIONAL_OR_KEYWORD),
                     Parameter("b", ParamKind.KEYWORD_ONLY, has_default=True, default="1")))  # fmt: skip
    shapes = [CallShape(1, ()), CallShape(1, ("b",)), CallShape(2, ()), CallShape(0, ("b",)),
              CallShape(1, ("c",)), CallShape(0, (), star_args=True)]  # fmt: skip
    for _ in range(2):  # the second round is answered from the memo
        for shape in shapes:
            assert bind(shape, sig) == _bind(shape, sig, _FLAVOR)
