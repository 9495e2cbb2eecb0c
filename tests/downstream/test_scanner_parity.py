"""One scanner: a file CPython's parser refuses is parsed by LibCST and its tree converted to CPython's
(`auditor/downstream/cst_to_ast.py`), then scanned by `astscan` like every other file. The oracle: on
every text both parsers read, the converted tree is CPython's own, node for node and position for
position (`ast.dump(..., include_attributes=True)` equal), so the scan cannot tell the two apart.

The texts: every Python file of every case file (downstream and upstream, `tests/cases` and
`tests/fix_cases`), tricky snippets, this repository's own code and the sources of two installed
packages (click, requests): about 2.3 MB in all. For the grammar this Python cannot parse (PEP 695,
PEP 701, PEP 696), the converted positions are checked against what CPython 3.12 and 3.13 report.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import click
import libcst
import pytest
import requests
from casefiles import parse_case, trees_agree

from apidrift.auditor.core.refs import StarRef
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.downstream import astscan
from apidrift.auditor.downstream.cst_to_ast import Unfaithful, convert, parse
from apidrift.auditor.downstream.walk import _scan_text

ROOT = Path(__file__).parents[2]
CASES = sorted((Path(__file__).parents[1] / "cases").glob("*.case")) + sorted(
    (Path(__file__).parents[1] / "fix_cases").glob("*.case")
)
KINDS = ("old", "new", "downstream", "fixed", "safe")

# Both parsers read these the same way, and they exercise what is hard to get right from `ast`:
# columns after non-ASCII text, positions `ast` does not record, source order, LibCST's quirks.
TRICKY = {
    "unicode.py": "import up\nx = 'héllo'; up.f(ä=1, b='ü')\n  # ü\ny = ('日本', up.g(1)); up.h.i\n",
    "imports.py": "from  up . sub import (a as b,\n    c)\nimport up.x as y, up\nfrom up import *\nfrom . import up\n",
    "order.py": "import up\nup.f(a, k=up.g(), *up.h(), **up.i())\n{up.a: up.b, **up.c}\nx = up.a if up.b else up.c\n",
    "defs.py": (
        "import up\nclass C(up.Base, **up.kw):\n    @up.deco(up.x)\n    def method(self, a: (int) = (1), *, b=up.d,\n"
        "               c=up.e(\n                   2)) -> up.R:\n        return up.f()\n"
        "    async def other(self, x='''\n  keep\n    this'''):\n        pass\n"
    ),
    "flags.py": (
        "import up\nHAS_X = hasattr(up, 'x')\nif HAS_X:\n    up.x()\nelse:\n    up.y()\n"
        "try:\n    up.z()\nexcept* ValueError as e:\n    up.w()\n"
        "with suppress(*errors):\n    up.v()\nf = lambda a=up.q: up.r(a)\n[up.s(i) for i in up.t if up.u(i)]\n"
    ),
    "cr.py": "import up\r\nup.f(1)\rup.g(2)\nx = up.h(\r\n  3)\n",
    "tabs.py": "import up\nif True:\n\tup.f(\t1)\n",
    # Wrapper classes: what counts as the one unconditional call that receives `**kw`, and what does not.
    "wrappers.py": (
        "import up\nclass W:\n    def __init__(self, x, **kw):\n        '''doc'''\n        self.c = up.C(1, k=x, **kw)\n"
        "W(1, a=1)\nW(x=2)\nclass O:\n    def __init__(self, **kw): self.c = up.C(**kw)\nO(a=1)\n"
        "class I:\n    def __init__(self, **kw):\n        if kw:\n            self.c = up.C(**kw)\nI(a=1)\n"
        "class R:\n    def __init__(self, **kw):\n        self.up = 3\n        self.c = up.C(**kw)\nR(a=1)\n"
        "class L:\n    def __init__(self, **kw):\n        f = lambda: 1\n        self.c = up.C(**kw)\nL(a=1)\n"
        "class T:\n    def __init__(self, **kw):\n        print(kw)\n        self.c = up.C(**kw)\nT(a=1)\n"
        "class M(metaclass=Meta):\n    def __init__(self, **kw):\n        self.c = up.C(**kw)\nM(a=1)\n"
        "class S(up.Base):\n    def __init__(self, x, **kw):\n        super().__init__(x, **kw)\nS(1)\nS(1, y=2)\n"
    ),
    "type_checking.py": (
        "import up\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    B = up.Client\nelse:\n    B = W\nB(1)\n"
        "if TYPE_CHECKING:\n    A = up.Client\nA(2)\n"
        "def f():\n    if typing.TYPE_CHECKING:\n        C = up.D\n    C = up.E\n    C()\n"
    ),
    "fallbacks.py": (
        "try:\n    from up import f\nexcept ImportError:\n    f = None\n    a.b = False\nif f is not None:\n    f()\n"
        "if b:\n    up.x()\ntry:\n    import up\nexcept* ImportError:\n    g = None\nif g:\n    up.z()\n"
    ),
    "stars.py": (
        "from up import *\nfrom up.sub import \\\n  *\nfoo()\nx = bar.baz\nprint(len(q))\n_p()\nclass C(Base):\n    pass\nC()\n"
        "def g(a):\n    a(); h()\nfor k in y: pass\nk()\n[m for m in z]\nm()\n"
    ),
    "stars_unfollowed.py": "from up import *\nif x:\n    from up.o import *\nfoo()\nup_thing = globals()\n",
}


# What the conversion must place exactly as CPython does (each line one of CPython's rules).
SHAPES = {
    "parentheses.py": "x = (a)\n(b).c((d))\n((1, 2))\n(e for e in f)\ng(h for h in i)\ng((j for j in k), 1)\n((yield))\n",
    "boolops.py": "a or b or c\n(a or b) or c\na and b or c and d\nnot a and (b or c)\na < b <= c != d\n",
    "strings.py": (
        "'a' 'b'\nu'c' 'd'\nb'e' b'f'\nf'g{h!r:>{i}}' 'j' f'{k=}'\nf'''\n{l}\n'''\nf'{{m}}' r'\\n' f'{n:{o}.{p}}'\n"
        "f'{q = !s:^4}' '\\N{BULLET}' f'\\t{r}'\nf'{s:>10}' f'{t:{u}}' 'v'\nf'{a, b}' f'{ c, d !r}' f'é{ (e, f) }'\n"
    ),
    "definitions.py": (
        "@d\n@e.f(1)\nclass A(B, metaclass=M):\n    x: int = 1\n    @property\n"
        "    async def g(self, /, a, b=1, *c, d, e=2, **f) -> R:\n"
        "        async for h in i: await j\n        async with k as (l, m), n: pass\n"
        "        return [o async for o in p if q]\n"
        "lambda: 0\nlambda a, *, b=1, **c: a\ndef r(*, s): ...\n"
    ),
    "statements.py": (
        "import a.b as c, d\nfrom .. import (e as f,\n  g)\nfrom . import *\nglobal h; nonlocal i\n"
        "del j, (k), l[0], m.n\no += 1; p: q\nr.s: t = 1\nt = u = v, *w\nassert x, 'y'\nraise z from None\n"
        "try:\n  pass\nexcept (A, B) as e:\n  pass\nelse:\n  pass\nfinally:\n  pass  # end\n"
        "while a:\n  break\nelse:\n  continue\nif a: pass\nelif b: pass\nelse:\n  if c: pass\n"
        "with (a as b, c):\n  pass\nwith (d, e): pass\nfor (f, g) in h: pass\n"
        "try:\n  pass\nexcept* E:\n  pass\nif a:\n  b;\nwhile c: d; e ;\n"
    ),
    "expressions.py": (
        "a[1], a[1:2], a[::3], a[1, 2:3], a[1,], a[*b], a[()]\n{1: 2, **c}, {3, *d}, [*e], {f: g for f in h}\n"
        "(i := 1), -j ** -k, ~l @ m // n % o << p >> q & r ^ s | t\nu if v else w\nx is not y not in z\n"
        "..., True, None, 0x_1F, 1_000.5e3, 2j\n*aa, bb = cc\n"
    ),
    "match.py": (
        "match a:\n  case 1 | -2 | 3 + 4j | 'x' | b.c: pass\n  case [d, *e, (f)] | (g, *_): pass\n"
        "  case {1: h, **i} | C(j, k=l) | None | True: pass\n  case (m as n) if n: pass\n  case _:\n    pass\n"
    ),
    "unicode_names.py": "\ufb01le = 1\n\u00b5.\uff58(\uff4b=1)\nclass \uff23: pass\n",
    "whitespace.py": "x = [\n  1,  # one\n  2,\n]\ny = 1 + \\\n  2\n\x0cz = 3\nif x:\n\tpass\n",
}


def _texts_of_case(case: Path) -> list[tuple[str, str]]:
    sections = parse_case(case, KINDS)
    return [
        (f"{kind} {path}", text)
        for kind, files in sections.items()
        for path, text in files.items()
        if path.endswith((".py", ".pyi"))
    ]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_case_files_convert_to_cpythons_tree(case: Path) -> None:
    texts = _texts_of_case(case)
    assert texts, case
    for name, text in texts:
        try:
            ast.parse(text)
        except SyntaxError:
            assert not name.startswith(("old", "new")), name  # an upstream is valid code
            continue
        assert trees_agree(text) is None, f"{name}: {trees_agree(text)}"


@pytest.mark.parametrize("name", sorted({**TRICKY, **SHAPES}))
def test_tricky_sources_convert_to_cpythons_tree(name: str) -> None:
    text = {**TRICKY, **SHAPES}[name]
    ast.parse(text)  # each is valid code: the comparison below is not vacuous
    assert trees_agree(text) is None, trees_agree(text)
    names = frozenset({"up"})
    # and so the scan is the same, site for site
    assert astscan.scan_source(name, text, names, tree=parse(text)) == astscan.scan_source(name, text, names)


def _python_files(*roots: Path) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        for folder, folders, names in os.walk(root):
            folders[:] = sorted(f for f in folders if f not in {".venv", "__pycache__", ".git"})
            files.extend(Path(folder) / name for name in sorted(names) if name.endswith(".py"))
    return files


CORPUS = {
    "this repository's code": lambda: _python_files(ROOT / "auditor", ROOT / "rules", ROOT / "reports"),
    "click": lambda: _python_files(Path(click.__file__).parent),
    "requests": lambda: _python_files(Path(requests.__file__).parent),
}


@pytest.mark.parametrize("corpus", sorted(CORPUS))
def test_real_sources_convert_to_cpythons_tree(corpus: str) -> None:
    """Real files, whole: every statement and expression node type of everyday code, at scale."""
    files = CORPUS[corpus]()
    assert len(files) >= 15
    differ = []
    for path in files:
        problem = trees_agree(path.read_text(encoding="utf-8"))
        if problem is not None:
            differ.append(f"{path}: {problem}")
    assert not differ, "\n".join(differ[:5])


# --- newer grammar: what CPython 3.12 and 3.13 report ------------------------------------------

NEWER = {
    # CPython 3.12.1's ast.parse: (node, text, lineno, col_offset, end_lineno, end_col_offset) of every
    # statement, call and attribute; except the TypeVar bound `up.Base` at (3, 13, 3, 20), which has
    # no place in this `ast` (a bound is evaluated lazily: no use at definition time), and the `type`
    # statement, which 3.12 reports as a TypeAlias at the same place.
    "pep695.py": (
        "import up\n\nclass Box[T: up.Base, *Ts, **P](up.Mixin):\n    def get[S](self, item: S) -> up.Item[S]:\n"
        "        self.conn = up.connect()\n        return self.conn.fetch(item)\n\n"
        "type Pair[K] = tuple[K, up.Value]\n"
        'label = f"{up.name(f"{\'\u00e9\'}")!r:>{up.width()}} {"x"}"\n'
        'note = f"{\n    up.first()  # a comment inside the braces\n} and {up.second()}"\n',
        [
            ("Import", "Import", 1, 0, 1, 9),
            ("ClassDef", "ClassDef", 3, 0, 6, 36),
            ("Attribute", "up.Mixin", 3, 32, 3, 40),
            ("FunctionDef", "FunctionDef", 4, 4, 6, 36),
            ("Attribute", "up.Item", 4, 33, 4, 40),
            ("Attribute", "self.conn", 5, 8, 5, 17),
            ("Assign", "Assign", 5, 8, 5, 32),
            ("Attribute", "up.connect", 5, 20, 5, 30),
            ("Call", "up.connect", 5, 20, 5, 32),
            ("Return", "Return", 6, 8, 6, 36),
            ("Attribute", "self.conn", 6, 15, 6, 24),
            ("Attribute", "self.conn.fetch", 6, 15, 6, 30),
            ("Call", "self.conn.fetch", 6, 15, 6, 36),
            ("Assign", "Assign", 8, 0, 8, 33),
            ("Attribute", "up.Value", 8, 24, 8, 32),
            ("Assign", "Assign", 9, 0, 9, 53),
            ("Attribute", "up.name", 9, 11, 9, 18),
            ("Call", "up.name", 9, 11, 9, 29),
            ("Attribute", "up.width", 9, 34, 9, 42),
            ("Call", "up.width", 9, 34, 9, 44),
            ("Assign", "Assign", 10, 0, 12, 20),
            ("Attribute", "up.first", 11, 4, 11, 12),
            ("Call", "up.first", 11, 4, 11, 14),
            ("Attribute", "up.second", 12, 7, 12, 16),
            ("Call", "up.second", 12, 7, 12, 18),
        ],
    ),
    # CPython 3.12.1: whitespace LibCST leaves out when it prints its tree (after an f-string's
    # conversion, before an `except` clause's colon) is counted back.
    "whitespace.py": (
        'import up\nx = f"{up.a!r  }" + up.b(f"{up.c!s   :>4}")  ;  up.d()\ntry:\n    pass\n'
        "except (up.E) :\n    up.f( 1 )\n",
        [
            ("Import", "Import", 1, 0, 1, 9),
            ("Assign", "Assign", 2, 0, 2, 43),
            ("Attribute", "up.a", 2, 7, 2, 11),
            ("Attribute", "up.b", 2, 20, 2, 24),
            ("Call", "up.b", 2, 20, 2, 43),
            ("Attribute", "up.c", 2, 28, 2, 32),
            ("Attribute", "up.d", 2, 48, 2, 52),
            ("Expr", "Expr", 2, 48, 2, 54),
            ("Call", "up.d", 2, 48, 2, 54),
            ("Try", "Try", 3, 0, 6, 13),
            ("Pass", "Pass", 4, 4, 4, 8),
            ("Attribute", "up.E", 5, 8, 5, 12),
            ("Attribute", "up.f", 6, 4, 6, 8),
            ("Expr", "Expr", 6, 4, 6, 13),
            ("Call", "up.f", 6, 4, 6, 13),
        ],
    ),
    # CPython 3.13.0: the same, without the default `up.Default` at (2, 13, 2, 23) (PEP 696; lazy too).
    "pep696.py": (
        "import up\ndef make[T = up.Default](x: T = up.DEFAULT) -> T: return up.wrap(x)\n",
        [
            ("Import", "Import", 1, 0, 1, 9),
            ("FunctionDef", "FunctionDef", 2, 0, 2, 67),
            ("Attribute", "up.DEFAULT", 2, 32, 2, 42),
            ("Return", "Return", 2, 50, 2, 67),
            ("Attribute", "up.wrap", 2, 57, 2, 64),
            ("Call", "up.wrap", 2, 57, 2, 67),
        ],
    ),
}


def _positions(tree: ast.AST) -> list[tuple[str, str, int, int, int | None, int | None]]:
    rows = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Call, ast.Attribute)):
            text = ast.unparse(node.func if isinstance(node, ast.Call) else node)
        elif isinstance(node, ast.stmt):
            text = type(node).__name__
        else:
            continue
        rows.append(
            (type(node).__name__, text, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        )
    return sorted(rows, key=lambda row: row[2:])


@pytest.mark.parametrize("name", sorted(NEWER))
def test_newer_grammar_is_placed_as_cpython_places_it(name: str) -> None:
    text, expected = NEWER[name]
    with pytest.raises(SyntaxError):
        ast.parse(text)  # this Python's parser refuses it: the conversion is the only reading
    assert _positions(parse(text)) == expected
    scan = _scan_text(name, text, frozenset({"up"}))
    assert not isinstance(scan, str), scan
    # every attribute of `up` is a site, where CPython places it (site columns count characters)
    lines = text.splitlines()
    sites = {(s.span.line, s.span.column - 1) for s in scan.sites if s.kind is not SiteKind.IMPORT}
    for kind, code, line, column, _, _ in expected:
        if kind == "Attribute" and code.startswith("up."):
            characters = len(lines[line - 1].encode()[:column].decode())
            assert (line, characters) in sites, (code, line)


def test_newer_grammar_gets_the_value_model() -> None:
    """A value followed through a PEP 695 function as in older code (the case file
    newer_grammar_downstream_gets_the_value_model.case runs the whole audit)."""
    text = "import up\ndef f[T](x: T):\n    c = up.make()\n    c.gone()\n    for r in up.rows(): r.m()\n"
    scan = _scan_text("v.py", text, frozenset({"up"}))
    assert not isinstance(scan, str), scan
    assert [(s.span.line, s.ref.render()) for s in scan.sites if s.kind is SiteKind.CALL] == [
        (3, "up.make"),
        (4, "up.make(...).gone"),
        (5, "up.rows"),
        (5, "<an element of up.rows(...)>.m"),
    ]


def test_what_libcst_cannot_give_back_is_not_read() -> None:
    """Positions come from LibCST printing its tree: where the print differs from the text by more than
    whitespace it leaves out, they would be wrong, so the file is an outcome, not a scan."""
    with pytest.raises(Unfaithful):
        convert(libcst.parse_module("import up\nup.a()\n"), "import up\nup.ab()\n")


def test_syntax_errors_are_located_by_libcst() -> None:
    outcome = _scan_text("bad.py", "import up\ndef f(:\n    up.g()\n", frozenset({"up"}))
    assert outcome == "syntax error: Syntax Error @ 3:1."
    # LibCST reads it, CPython does not (an unknown \\N{} name): the conversion says so
    outcome = _scan_text("escape.py", "import up\nx = '\\N{NO SUCH NAME}'\n", frozenset({"up"}))
    assert str(outcome).startswith("syntax error: (unicode error)"), outcome


def test_ported_features_are_found() -> None:
    """The features of the scan show up at all (the tree comparisons hold whatever the scan finds)."""

    def sites(name: str) -> list:  # type: ignore[type-arg]
        return list(astscan.scan_source(name, TRICKY[name], frozenset({"up"})).sites)

    wrapped = [s for s in sites("wrappers.py") if s.kind is SiteKind.CALL and s.through_init]
    assert [(s.span.line, s.ref.render(), s.forwarded) for s in wrapped] == [
        (6, "up.C", ("a",)),
        (7, "up.C", ()),
        (38, "up.Base", ()),
        (39, "up.Base", ("y",)),
    ]
    assert [s.span.line for s in sites("type_checking.py") if s.kind is SiteKind.CALL] == [
        10,
        15,
    ]  # `B` and `C` are what runs
    assert [(s.span.line, s.guarded) for s in sites("fallbacks.py") if s.kind is SiteKind.CALL] == [
        (7, True),
        (9, True),
        (15, False),
    ]
    stars = [
        s
        for s in sites("stars.py")
        if isinstance(s.ref, StarRef) or isinstance(getattr(s.ref, "base", None), StarRef)
    ]
    assert [(s.span.line, s.ref.render()) for s in stars] == [
        (4, "foo"),
        (5, "bar.baz"),
        (12, "h"),
        (14, "<an element of y>"),  # `for k in y: ...` then `k()`: a value site of the star-imported `y`
    ]
    assert stars[0].ref == StarRef(("up", "up.sub"), "foo")
    assert not [s for s in sites("stars_unfollowed.py") if s.kind is SiteKind.CALL]


def test_star_import_names_over_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file parsed in pieces: a name bound in a later piece (out of the scope chain: a parameter of
    another function) still counts as bound, so it is not taken for one a star import binds."""
    text = (
        "from up import *\n"
        + "".join(f"def f{i}():\n    return foo() + name{i}()\n" for i in range(40))
        + "def g(name3):\n    pass\n"
    )
    whole = astscan.scan_source("p.py", text, frozenset({"up"})).sites
    monkeypatch.setattr(astscan, "CHUNK_CHARS", 64)
    pieces = astscan.scan_source("p.py", text, frozenset({"up"})).sites
    assert pieces == whole
    assert astscan.scan_source("p.py", text, frozenset({"up"}), tree=parse(text)).sites == whole
    names = [s.ref.name for s in pieces if isinstance(s.ref, StarRef)]
    assert "name3" not in names and "name4" in names and names.count("foo") == 40


def test_columns_count_characters_not_bytes() -> None:
    text = "import up\nx = 'ééé'; up.f(k=1)\n"
    site = astscan.scan_source("u.py", text, frozenset({"up"})).sites[1]
    line = text.splitlines()[1]
    assert site.span.column - 1 == line.index("up.f")  # `ast` says 17 (bytes); the character column is 14
    assert site.keyword_spans[0][1].column - 1 == line.index("k=1")
