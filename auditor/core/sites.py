"""Use sites: what the scanner found in one downstream file, as plain values that serialize themselves.

Kept apart from the scanners so that rules, reports and the scan cache never import a parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.notebook_map import NotebookMap
from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    Ref,
    StarRef,
)
from apidrift.auditor.core.signature import Signature

# One empty set for every site no handler guards: `frozenset()` is a new 216-byte object each call.
NOTHING_CAUGHT: frozenset[str] = frozenset()


class SiteKind(str, Enum):
    IMPORT = "import"
    ATTRIBUTE = "attribute"
    CALL = "call"
    OVERRIDE = "override"  # a method overriding an upstream one: the upstream calls it
    # `x.name = value` where `x` is an upstream object: CPython runs the class's `__set__` (a property
    # without a setter raises) or needs a `__dict__` or a slot for the name. Only the store rule reads it.
    STORE = "store"
    # A module-level function a plugin host may take as a hook implementation by its name
    # (`def pytest_cmdline_preparse(config, args)`): checked against the upstream's hook specifications.
    HOOK = "hook"


@dataclass(frozen=True, slots=True)
class Span:
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Introspected:
    """A test the code makes of the upstream before a use, and on which side of it the use is:
    `hasattr(ref, name)` ("attribute"), `name in inspect.signature(ref).parameters` or `.get(name)`
    ("parameter"), `name in inspect.getfullargspec(ref).args` ("positional") or `.kwonlyargs`
    ("keyword-only"), `name in ref.__code__.co_varnames` ("varname"); or a call of `ref` in the
    `except TypeError:` handler of a `try` whose body calls `ref` too ("type-error", `name` empty): it
    runs only where that call raised TypeError, which a version rejecting it does (never evaluated:
    such a call is guarded). `holds`: the use runs where the test is true (False: where it is false)."""

    kind: str
    ref: Ref
    name: str
    holds: bool


@dataclass(frozen=True, slots=True)
class UseSite:
    kind: SiteKind
    ref: Ref  # what is imported or accessed; for calls, the callee
    span: Span
    code: str  # the use as written, first line only
    shape: CallShape | None = None
    keyword_spans: tuple[tuple[str, Span], ...] = ()  # call keywords and where each is written
    guarded: bool = False  # inside try/except ImportError etc., `if TYPE_CHECKING`, or a hasattr check
    # The builtin exception classes that `try` statements (or `contextlib.suppress`) around the use
    # catch, where every handler names only builtin classes: the use is handled where its failure
    # raises one of them (`except ModuleNotFoundError:` lets a missing name's ImportError through).
    caught: frozenset[str] = NOTHING_CAUGHT
    # The use is a bare name that only imports in the body of a `try` around it bind, and that `try`
    # catches ImportError (`try: from up import f; B = f(...)`): where the name is missing, the import
    # raised first and was handled, so this use never runs (its existence is the import's to check).
    import_caught: bool = False
    # With `import_caught`, the attribute names the use writes after that name (`f.a.b`: 2; 0 for the bare
    # name): only a missing name within what the import binds (`up.mod.f`, or `up.mod` itself) raised
    # at the import first; a missing `a` of an imported `f` raises here.
    import_attrs: int = 0
    signature: Signature | None = None  # for override sites: the downstream method's own signature
    # For a downstream subclass's `__init__(..., **kwargs)` that hands them on to the upstream's: the
    # keywords of this call that reach the upstream (only their problems are this site's).
    forwarded: tuple[str, ...] = ()
    # The call goes through such an `__init__` (even when it hands on no keyword): its shape is the
    # upstream call that `__init__` makes, so only what the call itself can change is its problem.
    through_init: bool = False
    # The call builds an instance of a downstream subclass of the callee's class (whose methods the
    # upstream's `self.m` and `getattr(self, ...)` may find): the instance's class is not the callee's.
    subclass: bool = False
    # How the code uses what the site gives (the `ast` scanner only): "value" where an operator, an
    # ordering, `in`, a conversion, a subscript or an iteration needs a value of a kind (a bound method
    # there raises TypeError), "format" in an f-string;
    # for calls, "await" when awaited and "discard" when the result is dropped (a statement of its own).
    use: str = ""
    # The introspection tests around the use (`if "x" in inspect.signature(f).parameters:`), read
    # against each version when the site is checked: the use is guarded where one of them does not
    # certainly let it run (see check/introspection.py). The `ast` scanner's only.
    tests: tuple[Introspected, ...] = ()
    # For a hook site: where the function is, "conftest" (a `conftest.py`: always a plugin) or "module"
    # (a plugin only where an entry point names the module), with "+optional" for
    # `@hookimpl(optionalhook=True)` and "+decorated" for a function under another decorator.
    hook: str = ""
    # For a use in the body of a property getter of a downstream class: the upstream classes among its
    # bases (and its downstream bases'). Where one's MRO defines `__getattr__`, an AttributeError the use
    # raises makes CPython's attribute lookup ask that `__getattr__` for the property: no certain failure.
    getattr_bases: tuple[Ref, ...] = ()
    # Where CPython places the use's failure, when not where `span` starts (None): the attribute's name
    # for an attribute or a method call whose name is written on a later line than the use starts
    # (`f(\n  x,\n).decode()` fails on `.decode`'s line). Findings are reported here; `span` stays
    # the use as written (for the snippet, and for `fix`, which finds the node by it).
    at: Span | None = None

    # For a use in a module of the downstream that its other modules import only under a test of the
    # upstream's major version: the flags under which it is imported ("+before:8"); set when the scans
    # are linked (never cached). Where the audited version fails them, the module never runs.
    runs_if: str = ""

    @property
    def place(self) -> Span:
        """Where the use fails under CPython: its findings' location."""
        return self.at or self.span


@dataclass(frozen=True)
class FileScan:
    path: str
    sites: tuple[UseSite, ...]
    lines: tuple[str, ...]  # the file's lines, for showing findings
    # For a notebook: its code cells' lines are `lines`, and this says which cell each is in.
    notebook: NotebookMap | None = None
    # What the module hands to the downstream's other modules (`downstream.linking.Exports`), until
    # the scans are linked; None after.
    exports: dict[str, Any] | None = None
    # Until the scans are linked: what the scan keeps aside for the linking, decoded only if the
    # linking needs it (`downstream.linking.Aside`: the sites rooted at the downstream's own modules,
    # the module's summary); None after.
    aside: Any = field(default=None, compare=False)


def ref_to_data(ref: Ref) -> Any:
    if isinstance(ref, ModuleRef):
        return {"module": ref.path}
    if isinstance(ref, AttrRef):
        return {"attr": ref.name, "of": ref_to_data(ref.base)}
    if isinstance(ref, CallRef):
        return {"call": ref_to_data(ref.func)}
    if isinstance(ref, StarRef):
        return {"star": list(ref.modules), "name": ref.name}
    if isinstance(ref, ItemRef):
        return {"item": ref.via, "of": ref_to_data(ref.base)}
    if isinstance(ref, OpaqueRef):
        if ref.alternatives:
            return {
                "opaque": ref.why,
                "root": ref.root,
                "alternatives": [ref_to_data(a) for a in ref.alternatives],
            }
        return {"opaque": ref.why, "root": ref.root}
    return {"instance": ref_to_data(ref.cls)}


def ref_from_data(data: Any) -> Ref:
    if "module" in data:
        return ModuleRef(data["module"])
    if "attr" in data:
        return AttrRef(ref_from_data(data["of"]), data["attr"])
    if "call" in data:
        return CallRef(ref_from_data(data["call"]))
    if "star" in data:
        return StarRef(tuple(data["star"]), data["name"])
    if "item" in data:
        return ItemRef(ref_from_data(data["of"]), data["item"])
    if "opaque" in data:
        return OpaqueRef(
            data["opaque"], data["root"], tuple(ref_from_data(a) for a in data.get("alternatives", ()))
        )
    return InstanceRef(ref_from_data(data["instance"]))


def site_to_data(site: UseSite) -> dict[str, Any]:
    shape = site.shape
    return {
        "kind": site.kind.value,
        "ref": ref_to_data(site.ref),
        "span": list(_span_tuple(site.span)),
        "code": site.code,
        "shape": [
            shape.positional,
            list(shape.keywords),
            shape.star_args,
            shape.star_kwargs,
            shape.values,
            list(shape.literals),
        ]
        if shape
        else None,
        "keywords": [[name, list(_span_tuple(span))] for name, span in site.keyword_spans],
        "guarded": site.guarded,
        **({"caught": sorted(site.caught)} if site.caught else {}),  # absent when none (most sites)
        **({"import_caught": True} if site.import_caught else {}),
        **({"import_attrs": site.import_attrs} if site.import_attrs else {}),
        "signature": site.signature.as_dict() if site.signature else None,
        "forwarded": list(site.forwarded),
        "through_init": site.through_init,
        "subclass": site.subclass,
        **({"use": site.use} if site.use else {}),
        **({"hook": site.hook} if site.hook else {}),
        **({"at": list(_span_tuple(site.at))} if site.at else {}),
        **({"getattr_bases": [ref_to_data(r) for r in site.getattr_bases]} if site.getattr_bases else {}),
        **(
            {"tests": [[t.kind, ref_to_data(t.ref), t.name, t.holds] for t in site.tests]}
            if site.tests
            else {}
        ),
    }


def site_from_data(data: dict[str, Any]) -> UseSite:
    shape = data["shape"]
    return UseSite(
        kind=SiteKind(data["kind"]),
        ref=ref_from_data(data["ref"]),
        span=Span(*data["span"]),
        code=data["code"],
        shape=CallShape(
            shape[0],
            tuple(shape[1]),
            shape[2],
            shape[3],
            shape[4] if len(shape) > 4 else "",
            tuple(shape[5]) if len(shape) > 5 else (),
        )
        if shape
        else None,
        keyword_spans=tuple((name, Span(*span)) for name, span in data["keywords"]),
        guarded=data["guarded"],
        caught=frozenset(data["caught"]) if "caught" in data else NOTHING_CAUGHT,
        import_caught=bool(data.get("import_caught", False)),
        import_attrs=int(data.get("import_attrs", 0)),
        signature=Signature.from_dict(data["signature"]) if data.get("signature") else None,
        forwarded=tuple(data.get("forwarded", ())),
        through_init=bool(data.get("through_init", False)),
        subclass=bool(data.get("subclass", False)),
        use=str(data.get("use", "")),
        hook=str(data.get("hook", "")),
        tests=tuple(Introspected(k, ref_from_data(r), n, bool(h)) for k, r, n, h in data.get("tests", ())),
        getattr_bases=tuple(ref_from_data(r) for r in data.get("getattr_bases", ())),
        at=Span(*data["at"]) if "at" in data else None,
    )


def _span_tuple(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)
