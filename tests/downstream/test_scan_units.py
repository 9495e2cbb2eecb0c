"""Unit tests of the downstream scanner's parts (auditor/downstream/astscan/): a small source string
in, one function's result out; shapes of whole files are also scanned the way a file CPython's parser
refuses is (LibCST's tree converted by cst_to_ast). tests/downstream/test_scanner_parity.py compares the trees
on whole files; these point at the part that broke."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.refs import AttrRef, CallRef, InstanceRef, ModuleRef, OpaqueRef, StarRef
from apidrift.auditor.core.sites import FileScan, SiteKind, Span
from apidrift.auditor.downstream import astscan
from apidrift.auditor.downstream.astscan.collector import TooDeep, _Collector
from apidrift.auditor.downstream.astscan.evaluator import _Evaluator
from apidrift.auditor.downstream.astscan.guards import (
    _catches_import_error,
    _handler_guards,
    _is_guard_test,
    _is_type_checking,
    _suppresses,
)
from apidrift.auditor.downstream.astscan.nodes import _dotted, _first_argument, _target_names
from apidrift.auditor.downstream.astscan.pieces import _parse
from apidrift.auditor.downstream.astscan.sites import _shape
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import _NONE, _SUPER, _compact
from apidrift.auditor.downstream.cst_to_ast import parse
from apidrift.auditor.downstream.shared import VERSIONISH, code_at, is_builtin
from apidrift.auditor.pysource import MAX_NESTING

UP = frozenset({"up"})
SCANNERS: dict[str, Callable[[str, str, frozenset[str]], FileScan]] = {
    "ast": astscan.scan_source,
    "libcst": lambda path, text, names: astscan.scan_source(path, text, names, tree=parse(text)),
}


def value_of(source: str, name: str) -> object:
    """What the evaluator makes of a module-level name, once the collector has read `source`."""
    text = _Text(source)
    collector = _Collector(UP, text)
    collector.visit_all(ast.parse(source).body)
    return _Evaluator(text).name(name, collector.module_scope)


def expression(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body


def handler(code: str) -> ast.ExceptHandler:
    tree = ast.parse(f"try:\n    pass\n{code}\n    pass\n")
    statement = tree.body[0]
    assert isinstance(statement, ast.Try)
    return statement.handlers[0]


def call_shape(code: str) -> tuple[CallShape, tuple[tuple[str, Span], ...]]:
    node = expression(code)
    assert isinstance(node, ast.Call)
    return _shape(node, _Text(code), {})


# -- the evaluator: what a name's value is --------------------------------------------------------


def test_import_aliasing() -> None:
    assert value_of("import up.sub as s\nx = s.f\n", "x") == AttrRef(ModuleRef("up.sub"), "f")
    assert value_of("import up.sub\nx = up.sub.f\n", "x") == AttrRef(AttrRef(ModuleRef("up"), "sub"), "f")
    assert value_of("from up.sub import f as g\n", "g") == AttrRef(ModuleRef("up.sub"), "f")
    assert value_of("from up import f\nh = f\n", "h") == AttrRef(ModuleRef("up"), "f")
    assert value_of("from .up import f\n", "f") is None  # relative: not the upstream


def test_attribute_chains_and_calls() -> None:
    chain = AttrRef(AttrRef(AttrRef(ModuleRef("up"), "a"), "b"), "C")
    assert value_of("import up\nc = up.a.b.C()\n", "c") == CallRef(chain)
    assert value_of("import up\nc = up.a.b.C().run\n", "c") == AttrRef(CallRef(chain), "run")
    assert value_of("import up\nc: up.a.b.C\n", "c") == InstanceRef(chain)  # known by annotation
    assert value_of("import up\nc: 'up.a.b.C | None'\n", "c") == InstanceRef(chain)


def test_a_name_bound_two_ways_is_not_followed() -> None:
    # bound to two upstream objects: one of them, which unknown (counted as not checkable where used);
    # each is kept for a store, which fails where it fails on every one
    up = ModuleRef("up")
    assert value_of("import up\nx = up.f\nx = up.g\n", "x") == OpaqueRef(
        "bindings-disagree", "up", (AttrRef(up, "f"), AttrRef(up, "g"))
    )
    assert value_of("import up\nx = up.f\nx = local()\n", "x") == OpaqueRef("bindings-disagree", "up")
    assert value_of("x = local()\nx = other()\n", "x") is None  # nothing of the upstream's
    assert value_of("import up\nx = up.f\nx = up.f\n", "x") == AttrRef(ModuleRef("up"), "f")  # agree
    assert value_of("import up\nx = None\nx = up.C()\n", "x") == CallRef(AttrRef(ModuleRef("up"), "C"))
    # `x = x.parent` reads the x that reaches it (up.f): no cycle, two values
    assert value_of("import up\nx = up.f\nx = x.parent\n", "x") == OpaqueRef(
        "bindings-disagree", "up", (AttrRef(up, "f"), AttrRef(AttrRef(up, "f"), "parent"))
    )


def test_a_try_except_import_error_fallback() -> None:
    source = "try:\n    from up import fast\nexcept ImportError:\n    fast = None\n"
    assert value_of(source, "fast") == AttrRef(ModuleRef("up"), "fast")  # the `None` fallback is skipped
    source = "try:\n    from up import fast\nexcept ImportError:\n    from up.slow import fast\n"
    # two imports, either may run: an upstream object, which one unknown (its uses: not checkable)
    assert value_of(source, "fast") == OpaqueRef(
        "bindings-disagree", "up", (AttrRef(ModuleRef("up"), "fast"), AttrRef(ModuleRef("up.slow"), "fast"))
    )


def test_a_downstream_class_and_its_upstream_base() -> None:
    source = "import up\nclass Mine(up.Base):\n    pass\nm = Mine()\nx = m.run\n"
    assert value_of(source, "x") == AttrRef(InstanceRef(AttrRef(ModuleRef("up"), "Base")), "run")


def test_a_name_only_a_star_import_binds() -> None:
    assert value_of("from up import *\nx = thing\n", "x") == StarRef(("up",), "thing")
    assert value_of("from up import *\nx = len\n", "x") is None  # a builtin
    assert value_of("from up import *\nexec('y = 1')\nx = thing\n", "x") is None  # names made by code


# -- the compact form the collector keeps ----------------------------------------------------------


def test_compact_expressions() -> None:
    assert _compact(expression("a.b.c(d)")) == ("c", ("a", ("a", ("n", "a"), "b"), "c"))
    assert _compact(expression("super()")) == _SUPER
    assert _compact(expression("None")) == _NONE
    assert _compact(expression("(x := up.f)")) == ("a", ("n", "up"), "f")
    assert _compact(expression("a[0]")) == ("i", ("n", "a"), "item")
    assert _compact(expression("a[1:]")) is None  # a slice is a container again, not an element
    assert _compact(expression("next(iter(a.b))")) == ("i", ("a", ("n", "a"), "b"), "iter")
    assert _compact(expression("next(a, None)")) == ("i", ("n", "a"), "next")
    assert _compact(expression("f()[0]")) == ("i", ("c", ("n", "f")), "item")
    assert _compact(expression("(1, 2)[0]")) is None


def test_node_readings() -> None:
    assert _dotted(expression("a.b.c")) == "a.b.c"
    assert _dotted(expression("a().b")) is None
    assert _target_names(expression("(a, [b, *c])")) == ["a", "b", "c"]
    call = expression("f(k=1, *rest)")
    assert isinstance(call, ast.Call)
    first = _first_argument(call)
    assert isinstance(first, ast.Constant) and first.value == 1  # the keyword is written first


# -- a call's arguments ------------------------------------------------------------------------------


def test_call_shape_positional_and_keyword() -> None:
    shape, spans = call_shape("f(1, 2, key=3)")
    assert shape == CallShape(2, ("key",), False, False, "lll", ("1", "2", "3"))
    assert spans == (("key", Span(1, 9, 1, 14)),)


def test_call_shape_records_plain_constants_as_repr_spells_them() -> None:
    # what shows an argument equal to a default: the value as `repr` writes it (`-0` is `0`, `""` is
    # `''`), "" for anything that is not a plain immutable constant (a display, a name, `-True`, `...`)
    shape, _ = call_shape('f(None, -0, "", b"x", 1.5, -2.0, True, [], x, -True, ..., k=0.0, j={})')
    assert shape.literals == ("None", "0", "''", "b'x'", "1.5", "-2.0", "True", "", "", "", "", "0.0", "")
    long, _ = call_shape("f('" + "a" * 200 + "')")
    assert long.literals == ()  # longer than recorded: nothing to compare
    assert call_shape("f(x, k=y)")[0].literals == ()


def test_call_shape_says_which_arguments_are_literals() -> None:
    # "n" the literal None, "l" another literal (made at the call: never a pre-existing object unless a
    # constant), "?" anything else; positional arguments first, then keywords, in call order.
    shape, _ = call_shape("f(None, x, -1, [a], k=None, j=g(), s=f'{a}', t=(1, 2), u=lambda: 0)")
    assert shape.values == "n?lln?lll"


@pytest.mark.parametrize("scanner", SCANNERS)
def test_both_scanners_say_the_same_of_arguments(scanner: str) -> None:
    code = "import up as u\nu.f(None, x, -1, [a], k=None, j=g(), s=f'{a}', t=(1, 2), u=lambda: 0, v=True)\n"
    call = next(site for site in SCANNERS[scanner]("m.py", code, UP).sites if site.kind is SiteKind.CALL)
    assert call.shape is not None and call.shape.values == "n?lln?llll"


def test_call_shape_star_args_and_kwargs() -> None:
    shape, spans = call_shape("f(a, *rest, k=1, **extra)")
    assert shape == CallShape(1, ("k",), True, True, "?l", ("", "1"))
    assert [keyword for keyword, _ in spans] == ["k"]
    assert call_shape("f()")[0] == CallShape(0, (), False, False)


@pytest.mark.parametrize("scanner", SCANNERS)
def test_a_call_site_carries_its_shape(scanner: str) -> None:
    found = SCANNERS[scanner]("m.py", "import up as u\nu.f(1, *a, k=2, **kw)\n", UP)
    call = next(site for site in found.sites if site.kind is SiteKind.CALL)
    assert call.ref == AttrRef(ModuleRef("up"), "f")
    assert call.shape == CallShape(1, ("k",), True, True, "ll", ("1", "2"))
    assert call.code == "u.f(1, *a, k=2, **kw)" and call.span == Span(2, 1, 2, 22)
    assert call.keyword_spans == (("k", Span(2, 12, 2, 15)),)


# -- guards ------------------------------------------------------------------------------------------


def test_handlers_that_catch_an_import_error() -> None:
    assert _catches_import_error(handler("except ImportError:"))
    assert _catches_import_error(handler("except (OSError, ModuleNotFoundError):"))
    assert _catches_import_error(handler("except:"))
    assert not _catches_import_error(handler("except AttributeError:"))
    assert _handler_guards(handler("except AttributeError:"))  # still guards what it covers
    assert not _handler_guards(handler("except ValueError:"))


def test_guarding_tests() -> None:
    def guards(code: str) -> bool:
        return _is_guard_test(expression(code), _Text(code))

    assert guards("hasattr(up, 'x')") and guards("callable(getattr(up, 'x', None))")
    assert guards("sys.version_info >= (3, 8)") and guards("not HAS_FOO") and guards("PY38 or x")
    assert guards("TYPE_CHECKING") and _is_type_checking(expression("typing.TYPE_CHECKING"))
    assert not guards("x > 1") and not _is_type_checking(expression("TYPE_CHECKING or x"))


def test_suppress_guards_like_a_handler() -> None:
    def with_statement(code: str) -> ast.With:
        statement = ast.parse(f"{code}\n    pass\n").body[0]
        assert isinstance(statement, ast.With)
        return statement

    assert _suppresses(with_statement("with contextlib.suppress(ImportError):"))
    assert not _suppresses(with_statement("with suppress(KeyError):"))
    assert not _suppresses(with_statement("with open(p):"))


@pytest.mark.parametrize("scanner", SCANNERS)
def test_an_import_and_its_uses_under_an_import_error_fallback_are_guarded(scanner: str) -> None:
    source = (
        "try:\n    from up import fast\nexcept ImportError:\n    fast = None\n"
        "if fast is not None:\n    fast(1)\nup_thing = 1\n"
    )
    found = SCANNERS[scanner]("m.py", source, UP)
    kinds = [(site.kind, site.span.line, site.guarded, site.caught) for site in found.sites]
    caught = frozenset({"ImportError"})
    assert kinds == [
        (SiteKind.IMPORT, 2, False, caught),  # the module: handled where it raises an ImportError
        (SiteKind.IMPORT, 2, False, caught),  # the name
        (SiteKind.CALL, 6, True, frozenset()),  # a test of the fallback's name guards what it holds
    ]


# -- shared parts and the parse in pieces --------------------------------------------------------------


def test_shared_words() -> None:
    assert VERSIONISH.search("PYDANTIC_V2") and VERSIONISH.search("sqla_14") and not VERSIONISH.search("x")
    assert all(VERSIONISH.search(f) for f in ("NUMPY_LT_2_0", "SCIPY_GE_1_11", "_TORCH_GTE_2", "np_lt_v2"))
    assert not any(VERSIONISH.search(f) for f in ("get_item", "is_lt", "delta_t", "filter_ge", "ALT_2"))
    assert all(VERSIONISH.search(f) for f in ("CLICK_MAJOR", "_get_click_major()", "np_major"))
    assert not any(VERSIONISH.search(f) for f in ("major", "majority", "major_axis", "is_majority"))
    assert is_builtin("len") and is_builtin("unicode") and is_builtin("_private") and not is_builtin("thing")
    assert code_at(("x = up.f(1)",), Span(1, 5, 1, 12)) == "up.f(1)"
    assert code_at(("x",), Span(3, 1, 3, 2)) == ""


def test_a_large_file_parses_in_pieces_with_the_file_s_line_numbers() -> None:
    source = "".join(f"x{i} = {i}\n" for i in range(40))
    pieces = list(_parse(source, 64))
    assert len(pieces) > 1
    statements = [s for piece in pieces for s in piece.body]
    assert [s.lineno for s in statements] == list(range(1, 41))


def test_nesting_deeper_than_libcst_would_is_refused() -> None:
    operands = " or ".join(f"a{i}" for i in range(MAX_NESTING))  # LibCST nests one level per operand
    with pytest.raises(TooDeep):
        astscan.scan_source("deep.py", f"x = {operands}\n", UP)


def test_literal_all_of_a_cython_source() -> None:
    from apidrift.auditor.upstream.api_index import literal_all

    assert literal_all(
        "cimport numpy\n__all__ = ['qr_delete',\n    'qr_update']\n\ncpdef qr_delete(Q): pass\n"
    ) == (
        "qr_delete",
        "qr_update",
    )
    assert literal_all("__all__ = ('a',)\n") == ("a",)
    assert literal_all("__all__ = ['a']\n__all__ += ['b']\n") is None  # changed later: not known
    assert literal_all("__all__ = ['a'] + other\n") is None
    assert literal_all("__all__ = ['a']  # public\n") == ("a",)
    assert literal_all("__all__ = [name for name in dir()]\n") is None
    assert literal_all("    __all__ = ['a']\n") is None  # not at module level
    assert literal_all("__all__ = ['a', {{name}}]\n") is None  # a template's placeholder
    assert literal_all("def f(): pass\n") is None


def test_module_names_of_namespace_packages_and_clashing_files() -> None:
    """A file's module name: its folders up to the first without `__init__.py`; two files that would be
    the same module are told apart by the folders without `__init__.py` above them (PEP 420), and each
    module may also be imported through those folders (`ns.pkg.a` where `src` is on the path)."""
    from apidrift.auditor.downstream.linking import module_names, namespace_aliases

    relatives = [
        "src/ns/pkg/__init__.py",
        "src/ns/pkg/a.py",
        "src/ns/tools.py",
        "ns2/x/utils.py",
        "ns2/y/utils.py",
        "app/__init__.py",
        "app/sub/q.py",
        "bad-name/k.py",
        "one/same.py",
        "two/same/__init__.py",
    ]
    modules = module_names(relatives)
    assert modules["src/ns/pkg/a.py"] == ("pkg.a", "pkg")
    assert modules["src/ns/tools.py"] == ("tools", None)
    assert modules["ns2/x/utils.py"] == ("x.utils", "x")  # `utils` twice: the next folder up tells them apart
    assert modules["ns2/y/utils.py"] == ("y.utils", "y")
    assert modules["app/sub/q.py"] == ("q", None)  # `app/sub` has no `__init__.py`: not `app.sub.q`
    assert modules["bad-name/k.py"] == ("k", None)
    assert modules["one/same.py"] == ("one.same", "one")
    assert modules["two/same/__init__.py"] == ("two.same", "two.same")
    aliases = namespace_aliases(relatives, modules)
    assert aliases["ns.pkg.a"] == "pkg.a" and aliases["src.ns.pkg.a"] == "pkg.a"
    assert aliases["ns.pkg"] == "pkg" and aliases["ns.tools"] == "tools"
    assert aliases["ns2.x.utils"] == "x.utils"
    assert "x.utils" not in aliases  # a module's own name is no alias
    assert not any(alias.startswith("bad-name") for alias in aliases)
