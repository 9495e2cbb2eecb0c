"""Version-independent references from downstream code into an upstream: what a use site names.

The scanner builds these from syntax alone; `resolve` evaluates them against one `ApiIndex`, so that
the same site can be resolved against the old and the new upstream version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class ModuleRef:
    """A module by its dotted path: `import a.b` binds `a` to ModuleRef("a")."""

    path: str

    def render(self) -> str:
        return self.path


@dataclass(frozen=True)
class AttrRef:
    """`base.name`; `from a.b import c` is AttrRef(ModuleRef("a.b"), "c")."""

    base: Ref
    name: str

    def render(self) -> str:
        return f"{self.base.render()}.{self.name}"


@dataclass(frozen=True)
class CallRef:
    """The value a call returns: `Cls(...)` gives an instance of Cls."""

    func: Ref

    def render(self) -> str:
        return f"{self.func.render()}(...)"


@dataclass(frozen=True)
class InstanceRef:
    """An instance of the class `cls` names, known from an annotation (a subclass instance is possible)."""

    cls: Ref

    def render(self) -> str:
        return f"<{self.cls.render()} instance>"


@dataclass(frozen=True)
class StarRef:
    """A name the module binds nowhere but may get from its top-level star imports of upstream modules
    (`from pkg.mod import *`), in import order: the last one that exports it wins."""

    modules: tuple[str, ...]
    name: str

    def render(self) -> str:
        return self.name


@dataclass(frozen=True)
class ItemRef:
    """A value taken out of another by a protocol: an element of `base` by subscription
    (`via="item"`: `rows[0]`), by iteration (`"iter"`: `for r in rows`, `next(iter(rows))`), by
    `next()` (`"next"`), what `with base as x` binds (`"enter"`), the element at a place of an
    unpacking (`"unpack:1"`: `b` in `a, b = base`), what `await base` gives (`"await"`), or an
    argument the callable `base` calls a function handed to it with (`"handed:N"`, N its place: `ctx` in
    `def f(ctx)` handed to `click.pass_context` is "handed:0"; then the slot it was handed at, see the
    scanner's _DownFunction.handed)."""

    base: Ref
    via: str

    def render(self) -> str:
        if self.via.startswith("unpack:"):
            return f"<element {int(self.via[7:]) + 1} of {self.base.render()}>"
        if self.via.startswith("handed:"):
            place = int(_HANDED.match(self.via).group(1))  # type: ignore[union-attr]  # made by the scanner
            return f"<argument {place + 1} given by {self.base.render()}>"
        return f"<{_VIA_WORDS.get(self.via, self.via)} {self.base.render()}>"


_VIA_WORDS = {
    "item": "an item of",
    "iter": "an element of",
    "next": "the next of",
    "enter": "what `with` binds of",
}
_HANDED = re.compile(r"handed:(\d+)")


@dataclass(frozen=True)
class OpaqueRef:
    """A value that may be an upstream object, but which one the analysis cannot say: a name bound to
    different values (`o = up.A()` and `o = o.to_b()`), a `Union[...]` annotation of upstream classes.
    Uses of it are sites that are counted as not checkable (`receiver-unknown:<why>`), never errors."""

    why: str
    root: str  # the upstream module one of its values comes from
    # For a name bound to a few upstream values (`ctx = old_ctx`, then `ctx = old_ctx.parent`): each of
    # them, read only where every one of them answers alike (a store, see SiteKind.STORE).
    alternatives: tuple[Ref, ...] = ()

    def render(self) -> str:
        return "<a value the analysis cannot follow>"


Ref = Union[ModuleRef, AttrRef, CallRef, InstanceRef, StarRef, ItemRef, OpaqueRef]


def root_module(ref: Ref) -> str:
    """The top-level module a reference starts from."""
    while not isinstance(ref, ModuleRef):
        if isinstance(ref, StarRef):
            return ref.modules[-1].split(".")[0]
        if isinstance(ref, OpaqueRef):
            return ref.root
        ref = (
            ref.base
            if isinstance(ref, (AttrRef, ItemRef))
            else ref.func
            if isinstance(ref, CallRef)
            else ref.cls
        )
    return ref.path.split(".")[0]
