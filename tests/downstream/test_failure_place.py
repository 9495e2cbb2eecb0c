"""A use written over several lines is placed where CPython fails on it (`UseSite.place`), with CPython
itself as the oracle: each snippet runs against a small stand-in for the upstream object and the
traceback's line (and, from 3.11, the failing instruction's column) must be the site's place, with
both scanners (CPython's `ast` and LibCST's tree converted)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from apidrift.auditor.core.refs import AttrRef
from apidrift.auditor.core.sites import FileScan, SiteKind, Span, site_from_data, site_to_data
from apidrift.auditor.downstream import astscan
from apidrift.auditor.downstream.cst_to_ast import parse

UP = frozenset({"up"})
SCANNERS: dict[str, Callable[[str, str, frozenset[str]], FileScan]] = {
    "ast": astscan.scan_source,
    "libcst": lambda path, text, names: astscan.scan_source(path, text, names, tree=parse(text)),
}


class _Upstream:
    """What `up` is when the snippet runs: `make` returns another one, `m` takes no argument, `f`
    one, `ro` is a property without a setter; any other name is missing."""

    def make(self, *args: object, **kwargs: object) -> _Upstream:
        return _Upstream()

    def m(self) -> _Upstream:
        return self

    def f(self, a: object) -> object:
        return a

    @property
    def ro(self) -> int:
        return 1


# (the snippet, the name whose use fails)
SHAPES = [
    # flask-jwt-extended 3.25.0's `jwt.encode(...,\n json_encoder=...).decode('utf-8')` shape
    ("token = up.make(1, 2,\n                 k=3).bad('utf-8')\n", "bad"),
    ("x = up.make(\n    1,\n).bad\n", "bad"),
    ("x = (up\n     .bad)\n", "bad"),
    ("x = (up.make()\n     .m(1))\n", "m"),  # TypeError of a method call: at the method's name
    ("(up.make()\n    .make()\n    .bad())\n", "bad"),
    ("x = up.f(\n    1,\n    b=1)\n", "f"),  # TypeError of a call: where it starts, not at the keyword
    ("x = up.m(\n    1)\n", "m"),  # a method call whose name is on its first line
    ("x = (\n    up.m)(1)\n", "m"),  # the call starts on the line before the method's name
    ("(up\n    .ro) = 1\n", "ro"),  # a store
    ("up.make(\n    2).ro = 1\n", "ro"),
    ("x = up.bad\n", "bad"),
]


def _cpython_place(source: str) -> tuple[int, int | None]:
    """The line, and the 1-based column from 3.11 on, of the snippet's failure under this CPython."""
    code = compile(source, "<snippet>", "exec")
    try:
        exec(code, {"up": _Upstream()})  # noqa: S102  (the test's own snippet, never analysed code)
    except (AttributeError, TypeError) as error:
        frame = error.__traceback__
        while frame is not None and frame.tb_frame.f_code.co_filename != "<snippet>":
            frame = frame.tb_next
        assert frame is not None
        column = None
        if sys.version_info >= (3, 11):
            positions = list(frame.tb_frame.f_code.co_positions())[frame.tb_lasti // 2]
            assert positions[0] == frame.tb_lineno and positions[2] is not None
            column = positions[2] + 1
        return frame.tb_lineno, column
    raise AssertionError(f"{source!r} did not fail")


@pytest.mark.parametrize("scanner", SCANNERS)
@pytest.mark.parametrize(("source", "name"), SHAPES)
def test_a_use_is_placed_where_cpython_fails(scanner: str, source: str, name: str) -> None:
    line, column = _cpython_place(source)
    found = SCANNERS[scanner]("m.py", "import up\n" + source, UP)
    sites = [
        site
        for site in found.sites
        if site.kind in (SiteKind.ATTRIBUTE, SiteKind.CALL, SiteKind.STORE)
        and isinstance(site.ref, AttrRef)
        and site.ref.name == name
    ]
    assert sites, found.sites
    for site in sites:
        assert site.place.line - 1 == line, (site, line)
        if column is not None:
            assert site.place.column == column, (site, column)
        # the use as written is kept for the snippet and for `fix`
        assert site.span.line - 1 == min(n for n, text in enumerate(source.splitlines(), 1) if text.strip())
        assert site_from_data(site_to_data(site)) == site


def test_the_place_ends_where_the_use_ends() -> None:
    found = astscan.scan_source("m.py", "import up\nx = (up.make()\n     .m(1,\n        2))\n", UP)
    call = next(s for s in found.sites if s.kind is SiteKind.CALL and s.ref == AttrRef(s.ref.base, "m"))
    assert call.span == Span(2, 6, 4, 11)  # the call as written, from `up`
    assert call.at == Span(3, 7, 4, 11)  # from the method's name to the call's end
