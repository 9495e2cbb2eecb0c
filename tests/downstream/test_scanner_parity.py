"""The two downstream scanners side by side: CPython's `ast` (`astscan`, what the audit runs) and the
LibCST one it replaced (`scan`, kept for files CPython cannot parse and for this comparison).

Every downstream file of every case file, the real-world tier's downstreams and the flagship must
give identical use sites wherever the LibCST scanner finds one: the same references, kinds, spans (in
characters), code, call shapes, keyword spans, guards, override signatures and forwarded keywords, in
the same order. The LibCST scanner reads names only; the sites `astscan` finds through values
(elements of containers, what `with` binds, values returned by the downstream's own functions and
properties) are its own, at spans where the LibCST scanner has no site.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from casefiles import name_sites_agree, parse_case

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.refs import StarRef
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.downstream import astscan, scan
from apidrift.auditor.pysource import decode_source
from apidrift.auditor.sources.locate import locate

CASES = sorted((Path(__file__).parents[1] / "cases").glob("*.case"))

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


def _compare(path: str, text: str, names: frozenset[str]) -> None:
    old = scan.scan_source(path, text, names)
    new = astscan.scan_source(path, text, names)
    assert new.lines == old.lines
    # Every site the LibCST scanner finds, identical and in the same order; the rest are value sites.
    assert name_sites_agree(old, new) is None, f"{path}: {name_sites_agree(old, new)}"


def test_value_sites_are_astscan_s_own() -> None:
    """What only the value model finds: the LibCST scanner (names only) has no site there."""
    text = "import up\nrows = up.fetch()\nrows[0].m()\nfor r in rows:\n    r.n(1)\nwith up.open() as f:\n    f.read()\n"
    names = frozenset({"up"})
    value_sites = [
        (s.span.line, s.ref.render())
        for s in astscan.scan_source("v.py", text, names).sites
        if (s.kind, s.span) not in {(o.kind, o.span) for o in scan.scan_source("v.py", text, names).sites}
    ]
    assert value_sites == [
        (3, "<an item of up.fetch(...)>.m"),
        (5, "<an element of up.fetch(...)>.n"),
        (7, "<what `with` binds of up.open(...)>.read"),
    ]


def _upstream_names(sections: dict[str, dict[str, str]]) -> frozenset[str]:
    names = {
        path.split("/")[0].removesuffix(".py").removesuffix(".pyi")
        for kind in ("old", "new")
        for path in sections[kind]
    }
    return frozenset(names) or frozenset({"pkg"})


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_case_files_give_identical_sites(case: Path) -> None:
    sections = parse_case(case)
    assert sections["downstream"], case
    names = _upstream_names(sections)
    for path, text in sections["downstream"].items():
        _compare(path, text, names)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_sources_give_identical_sites(name: str) -> None:
    _compare(name, TRICKY[name], frozenset({"up"}))
    assert astscan.scan_source(name, TRICKY[name], frozenset({"up"})).sites  # each finds something


def test_ported_features_are_found() -> None:
    """The features both scanners must share show up at all (parity alone would hold if both lost one)."""

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
    assert (
        name_sites_agree(
            scan.scan_source("p.py", text, frozenset({"up"})),
            astscan.scan_source("p.py", text, frozenset({"up"})),
        )
        is None
    )
    names = [s.ref.name for s in pieces if isinstance(s.ref, StarRef)]
    assert "name3" not in names and "name4" in names and names.count("foo") == 40


def test_columns_count_characters_not_bytes() -> None:
    text = "import up\nx = 'ééé'; up.f(k=1)\n"
    site = astscan.scan_source("u.py", text, frozenset({"up"})).sites[1]
    line = text.splitlines()[1]
    assert site.span.column - 1 == line.index("up.f")  # `ast` says 17 (bytes); the character column is 14
    assert site.keyword_spans[0][1].column - 1 == line.index("k=1")


# --- the real-world tier and the flagship -------------------------------------------------------

REAL = [
    ("pytest==8.3.4", "pluggy"),
    ("fastapi==0.115.6", "starlette"),
    ("celery==5.4.0", "kombu"),
    ("typer==0.15.1", "click"),
    ("alembic==1.14.0", "sqlalchemy"),
    ("transformers==4.46.0", "huggingface_hub"),
    ("speculators==0.3.0", "vllm"),  # the flagship
]


@pytest.mark.network
@pytest.mark.parametrize(("downstream", "upstream"), REAL, ids=[d for d, _ in REAL])
def test_real_downstreams_give_identical_sites(downstream: str, upstream: str, index_cache: Path) -> None:
    """Seconds for most, about a minute for transformers (LibCST's share): kept while both scanners exist."""
    tree = locate(downstream, role="downstream", cache=Cache(index_cache))
    names = frozenset({upstream})
    compared = 0
    for folder, _, files in os.walk(tree.root):
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            path = Path(folder) / file
            text = decode_source(path.read_bytes())
            if upstream not in text:
                continue
            _compare(str(path.relative_to(tree.root)), text, names)
            compared += 1
    assert compared >= 3
