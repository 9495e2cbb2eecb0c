"""The cold-start work keeps results identical: the faster walk is `ast.walk`, a kept upstream model
gives each audit what a fresh one gives (findings and notes), bind's memo is bind, the import facts
read from a file's prefix are the whole file's, the old version's import walk made on demand classifies
as before."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.core.bind import _FLAVOR, CallShape, _bind, bind
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream import kept
from apidrift.auditor.upstream import resolve as resolve_module
from apidrift.auditor.upstream.analyses.needs import facts_prefix, import_failure, own_imports
from apidrift.auditor.upstream.api_index import ApiIndex
from apidrift.auditor.upstream.astwalk import walk, walk_once
from apidrift.auditor.upstream.resolve import FunctionValue, Missing, Resolver


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


def _import_facts_of(source: bytes, dotted: str, package: bool) -> tuple:  # type: ignore[type-arg]
    tree = ast.parse(source)
    return import_failure(tree, dotted, package), own_imports(tree, dotted, package)


_TRICKY = {
    # a `def` at indentation 0 inside a string after the imports: the cut does not parse, the whole does
    "in_string": b'import pkg.a\nDOC = """\ndef not_code():\n"""\nfrom pkg import b\ndef f():\n    pass\n',
    "bom": b"\xef\xbb\xbfimport pkg.a\ndef f():\n    pass\n",
    "semicolon": b"def f():\n    pass\nx = 1; import pkg.late\nclass C:\n    pass\n",
    "semicolon_continued": b"def f():\n    pass\nx = 1;  \\\n   import pkg.late\nclass C:\n    pass\n",
    "form_feed": b"def f():\n    pass\n\x0cfrom pkg import late\ndef g():\n    pass\n",
    "raise_at_end": b"import pkg.a\ndef f():\n    pass\nraise ImportError('gone')\n",
    "try_after_defs": (
        b"def f():\n    pass\ntry:\n    import other\nexcept ImportError:\n"
        b"    raise ImportError('pip install \"pkg[x]\"')\n@dec\ndef g():\n    pass\n"
    ),
    "carriage_returns": b"'''doc'''\rdef f():\r    pass\rimport pkg.late\r",
    "crlf": b"import pkg.a\r\ndef f():\r\n    pass\r\nfrom . import b\r\nclass C:\r\n    pass\r\n",
    "none": b"def f():\n    return 1\n",
    "docstring_example": b'"""Use it:\n\nfrom pkg import x\n"""\ndef f():\n    pass\n',
}


@pytest.mark.parametrize("name", sorted(_TRICKY))
def test_the_facts_prefix_reads_the_import_facts_the_whole_file_gives(name: str) -> None:
    source = _TRICKY[name]
    whole = _import_facts_of(source, "pkg.mod", False)
    prefix = facts_prefix(source)
    try:
        cut = _import_facts_of(prefix, "pkg.mod", False)
    except SyntaxError:
        assert name == "in_string"  # the reader falls back to the whole file
        return
    assert cut == whole
    assert len(prefix) < len(source) or name in ("carriage_returns", "raise_at_end")


def test_the_facts_prefix_agrees_with_the_whole_file_on_the_standard_library() -> None:
    folder = Path(inspect.getfile(ast)).parent
    files = sorted(p for p in folder.rglob("*.py") if "site-packages" not in p.parts)[:900]
    assert len(files) > 500
    compared = shorter = 0
    for path in files:
        source = path.read_bytes()
        try:
            whole = _import_facts_of(source, "pkg.mod", path.name == "__init__.py")
        except (SyntaxError, ValueError):
            continue  # the test suite's deliberately broken files
        prefix = facts_prefix(source)
        try:
            cut = _import_facts_of(prefix, "pkg.mod", path.name == "__init__.py")
        except SyntaxError:
            continue  # read whole by the index
        assert cut == whole, path
        compared += 1
        shorter += len(prefix) < len(source)
    assert compared > 500 and shorter > compared // 2


def test_the_old_versions_import_walk_classifies_as_the_full_one(tmp_path: Path) -> None:
    """The old version's import walk runs only where the new version's import raises: a module raising
    in both versions stays pre-existing, one raising only in the new one drift."""
    raising = "raise ImportError('pkg.{0} was removed: use pkg.modern')\n"
    old = write_tree(tmp_path / "old", {"pkg/__init__.py": "", "pkg/gone.py": raising.format("gone"),
                                        "pkg/kept.py": "def f():\n    pass\n",
                                        "pkg/through.py": "from pkg.inner import x\n",
                                        "pkg/inner.py": "x = 1\n"})  # fmt: skip
    new = write_tree(tmp_path / "new", {"pkg/__init__.py": "", "pkg/gone.py": raising.format("gone"),
                                        "pkg/kept.py": raising.format("kept"),
                                        "pkg/through.py": "from pkg.inner import x\n",
                                        "pkg/inner.py": "x = 1\n" + raising.format("inner")})  # fmt: skip
    down = write_tree(
        tmp_path / "down", {"app.py": "import pkg.gone\nimport pkg.kept\nfrom pkg import through\n"}
    )
    result = audit(AuditRequest(downstream=str(down), against=f"pkg@{new}", old=f"pkg@{old}",
                                cache_dir=tmp_path / "cache"))  # fmt: skip
    got = sorted((f.location.line, f.code, f.classification.value) for f in result.findings)
    assert got == [(1, "AD005", "pre-existing"), (2, "AD005", "drift"), (3, "AD005", "drift")]


def test_the_whole_tree_reads_take_no_file_through_a_link(tmp_path: Path) -> None:
    """The attribute-store index and the spelled names read every file of the tree but none through a
    link (in the tree or out of it), without resolving each path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("from pkg import mod\nmod.planted = 1\nmod.called()\n")
    root = write_tree(tmp_path / "up", {"pkg/__init__.py": "", "pkg/mod.py": "x = 1\n",
                                        "pkg/real.py": "from pkg import mod\nmod.other = 2\n"})  # fmt: skip
    index = ApiIndex(root, ["pkg"], name="pkg")
    assert index.may_call("other") and not index.may_call("called")
    (root / "pkg" / "setter.py").symlink_to(outside / "evil.py")
    (root / "pkg" / "inside.py").symlink_to(root / "pkg" / "real.py")
    index = ApiIndex(root, ["pkg"], name="pkg")
    assert index.assigned_elsewhere("pkg.mod", "other")
    assert not index.assigned_elsewhere("pkg.mod", "planted")
    assert index.may_call("called")  # a file not read: any method may be called


def _star_resolver(tmp_path: Path, files: dict[str, str]) -> Resolver:
    root = write_tree(tmp_path / "up", files)
    return Resolver(ApiIndex(root, ["pkg"], name="pkg"))


def test_a_name_a_later_star_import_binds_needs_no_store_index(tmp_path: Path) -> None:
    """`from .a import *` then `from .b import *`: a name only `b` binds is `b`'s without asking whether
    another module stores it on `a` (a read of every file of the upstream); a name neither binds but
    another module stores on `a` is still unknown, not missing."""
    resolver = _star_resolver(tmp_path, {
        "pkg/__init__.py": "from pkg.a import *\nfrom pkg.b import *\n",
        "pkg/a.py": "x = 1\n",
        "pkg/b.py": "def f():\n    pass\n",
        "pkg/setup.py": "from pkg import a\na.planted = 1\n",
    })  # fmt: skip
    found = resolver.resolve(AttrRef(ModuleRef("pkg"), "f"))
    assert isinstance(found, FunctionValue) and found.path == "pkg.b.f"
    assert resolver.index._attribute_stores is None  # not read
    planted = resolver.resolve(AttrRef(ModuleRef("pkg"), "planted"))
    assert isinstance(planted, Unknown) and planted.reason is Reason.ASSIGNED_BY_ANOTHER_MODULE
    assert isinstance(resolver.resolve(AttrRef(ModuleRef("pkg"), "nowhere")), Missing)


def test_a_star_import_whose_getattr_may_serve_the_name_is_read_in_full(tmp_path: Path) -> None:
    """The star import Python runs last wins: a module `__getattr__` there may serve the name before an
    earlier import's definition counts; the first pass leaves it to the full reading."""
    resolver = _star_resolver(tmp_path, {
        "pkg/__init__.py": "from pkg.b import *\nfrom pkg.a import *\n",
        "pkg/a.py": "__all__ = ['f']\n\ndef __getattr__(name):\n    if name == 'f':\n        return 1\n"
                    "    raise AttributeError(name)\n",
        "pkg/b.py": "def f():\n    pass\n",
    })  # fmt: skip
    fresh = Resolver(ApiIndex(resolver.index.root, ["pkg"], name="pkg"))
    whole = fresh._module_attribute(fresh.index.module("pkg"), "f", stores=False)  # type: ignore[arg-type]
    assert whole is resolve_module._UNDECIDED
    found = resolver.resolve(AttrRef(ModuleRef("pkg"), "f"))
    assert not isinstance(found, FunctionValue)  # not b's `def`: a's `__getattr__` answers first
