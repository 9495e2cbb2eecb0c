"""Values followed across the downstream's own modules, once every file is scanned.

Each file's scan reads its imports of the downstream's own modules (`from app.helpers import get`,
`from . import helpers`, `import app.db as db`) as references rooted at those modules, and keeps the
uses of them as sites (`get().removed()`: `app.helpers.get(...).removed`). Each module's scan also
says what it hands to the others (its `Exports`: what each module-level name holds, what calling each
function gives, what each class's instances hold in their attributes and properties), in the same
terms. Here those references are resolved through the summaries: a use whose value is an upstream
object becomes a use of it, checked as if the value were made in the using file; one whose value may
be upstream but cannot be followed (returns that disagree, a generator, an unknown decorator, a chain
deeper than MAX_DEPTH or a cycle) is counted as `receiver-unknown:<why>`; any other is dropped (no
use of the upstream). The names themselves are checked where they are imported: a use that resolves to
a bare upstream name (a re-export: `from app import Table`) is the importing module's, not repeated.

Flow-insensitive (a summary holds what all of a module's bindings of a name agree on) and bounded.
Nothing here parses: a summary depends only on its file's text (it is cached with the file's scan).
A file's scan keeps its sites rooted at the downstream's own modules, and its summary, aside (`Aside`:
in the scan cache, text decoded only when the linking needs it), and the linking's result is cached
too (`link`): keyed by every summary's digest, the module names (and their namespace aliases) and the
upstream's names, and per file by its scan's key. A warm run of an unchanged tree decodes neither the summaries nor those sites; an
edit that changes what a module hands out relinks every file, one that does not relinks that file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Union

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    Ref,
    StarRef,
    root_module,
)
from apidrift.auditor.core.signature import Signature
from apidrift.auditor.core.sites import (
    FileScan,
    SiteKind,
    UseSite,
    ref_from_data,
    ref_to_data,
    site_from_data,
    site_to_data,
)
from apidrift.auditor.downstream.shared import Forwarding
from apidrift.auditor.files import atomic_write_text

log = logging.getLogger(__name__)

# An entry of a module's summary:
#   ("v", ref): a value (an upstream reference, or one to the downstream's modules);
#   ("f", returned entry or None, is_async): a function, and what calling it gives;
#   ("k", instance attributes, class attributes, base or None, closed, own names, constructor): a class;
#       `closed`: an attribute not among its own names is its base's (or missing), never made at run
#       time; `constructor`: what calling it runs of its own ("inherit": its base's; a `Forwarding`:
#       an `__init__(self, ..., **kwargs)` handing them on to `super().__init__`; "own"; "decorated");
#   ("u", why, refs): a value not followed (`why`), that may be one of `refs`;
#   ("x", data): under the keys MAJORS and GATED (no name of Python's), what `astscan.gates` read: the
#       module's names that give an upstream's major version ({name: root}) and its imports of the
#       downstream's modules under tests that may be of it ([[module, [[from, name, flags], ...]], ...]).
Entry = tuple[Any, ...]
MAJORS = "<majors>"
GATED = "<gated>"
Exports = dict[str, Entry]

MAX_DEPTH = 12  # references resolved through summaries, one inside another, for one use

_Resolved = Union[Ref, tuple[Any, ...], None]  # a Ref, or ("mod" | "fn" | "cls" | "inst" | "unk", ...)


def entry_to_data(entry: Entry) -> list[Any]:
    kind = entry[0]
    if kind == "v":
        return ["v", ref_to_data(entry[1])]
    if kind == "f":
        return ["f", entry_to_data(entry[1]) if entry[1] is not None else None, entry[2]]
    if kind == "k":
        return [
            "k",
            {name: entry_to_data(e) for name, e in entry[1].items()},
            {name: entry_to_data(e) for name, e in entry[2].items()},
            ref_to_data(entry[3]) if entry[3] is not None else None,
            entry[4],
            sorted(entry[5]),  # sorted: a set's order changes from one process to the next
            _constructor_to_data(entry[6]),
        ]
    if kind == "x":
        return ["x", entry[1]]
    return ["u", entry[1], [ref_to_data(r) for r in entry[2]]]


def entry_from_data(data: list[Any]) -> Entry:
    kind = data[0]
    if kind == "v":
        return ("v", ref_from_data(data[1]))
    if kind == "f":
        return ("f", entry_from_data(data[1]) if data[1] is not None else None, bool(data[2]))
    if kind == "k":
        return (
            "k",
            {name: entry_from_data(e) for name, e in data[1].items()},
            {name: entry_from_data(e) for name, e in data[2].items()},
            ref_from_data(data[3]) if data[3] is not None else None,
            bool(data[4]),
            frozenset(data[5]),
            _constructor_from_data(data[6]) if len(data) > 6 else "own",
        )
    if kind == "u":
        return ("u", str(data[1]), tuple(ref_from_data(r) for r in data[2]))
    if kind == "x":
        return ("x", data[1])
    raise ValueError(kind)


def _constructor_to_data(constructor: Any) -> Any:
    if not isinstance(constructor, Forwarding):
        return constructor
    shape = constructor.super_shape
    return {
        "own": constructor.own.as_dict(),
        "kwargs": constructor.kwargs,
        "shape": [shape.positional, list(shape.keywords), shape.star_args, shape.star_kwargs],
        "defaults": list(constructor.defaults),
    }


def _constructor_from_data(data: Any) -> Any:
    if not isinstance(data, dict):
        return str(data)
    shape = data["shape"]
    return Forwarding(
        Signature.from_dict(data["own"]),
        str(data["kwargs"]),
        CallShape(int(shape[0]), tuple(shape[1]), bool(shape[2]), bool(shape[3])),
        tuple(data["defaults"]),
    )


def exports_to_data(exports: Exports) -> dict[str, Any]:
    return {name: entry_to_data(entry) for name, entry in exports.items()}


def exports_from_data(data: dict[str, Any]) -> Exports:
    return {name: entry_from_data(entry) for name, entry in data.items()}


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")


def module_names(relatives: list[str]) -> dict[str, tuple[str, str | None]]:
    """The module each `.py` file is imported as (its folders up to the first without `__init__.py`),
    and the package its relative imports start from. Where two files would be the same module, and
    folders without `__init__.py` (PEP 420 namespace packages) are above them, each is named with as
    many of those folders as make it one file's (`ns/x/utils.py` and `ns/y/utils.py`: `x.utils`,
    `y.utils`); files whose name is still another file's, or is no module name, are left out."""
    packages = _packages(relatives)
    choices: dict[str, list[tuple[str, str | None]]] = {}
    for relative in relatives:
        if not relative.endswith(".py"):
            continue
        parts = relative[:-3].split("/")
        folders = parts[:-1]
        top = _package_top(folders, packages)
        chain = folders[top:]
        if not all(_IDENTIFIER.match(p) for p in (*chain, parts[-1])):
            continue
        if parts[-1] == "__init__" and not chain:
            continue
        options = []
        for start in range(top, -1, -1):
            prefix = folders[start:top]
            if not all(_IDENTIFIER.match(p) for p in prefix):
                break
            names = (*prefix, *chain) if parts[-1] == "__init__" else (*prefix, *chain, parts[-1])
            package = ".".join(names) if parts[-1] == "__init__" else ".".join((*prefix, *chain)) or None
            options.append((".".join(names), package))
        choices[relative] = options
    found: dict[str, tuple[str, str | None]] = {}
    depth = 0
    pending = dict(choices)
    while pending and depth < 20:
        counts: dict[str, int] = {}
        for relative, options in choices.items():
            name = (
                options[min(depth, len(options) - 1)][0]
                if relative in pending
                else found.get(relative, ("",))[0]
            )
            counts[name] = counts.get(name, 0) + 1
        for relative in list(pending):
            options = pending[relative]
            if depth >= len(options):
                del pending[relative]  # no more folders to tell it from another file's
                continue
            if counts[options[depth][0]] == 1:
                found[relative] = options[depth]
                del pending[relative]
        depth += 1
    return found


def _packages(relatives: list[str]) -> set[str]:
    return {r.rpartition("/")[0] for r in relatives if r == "__init__.py" or r.endswith("/__init__.py")}


def _package_top(folders: list[str], packages: set[str]) -> int:
    """How many of the folders are above the file's regular package (none of them has `__init__.py`)."""
    top = len(folders)
    while top > 0 and "/".join(folders[:top]) in packages:
        top -= 1
    return top


def namespace_aliases(relatives: list[str], modules: dict[str, tuple[str, str | None]]) -> dict[str, str]:
    """The other names a module may be imported by where the folders above its package have no
    `__init__.py` (PEP 420 namespace packages: `src/ns/pkg/a.py`, module `pkg.a`, is `ns.pkg.a` where
    `src` is on the path, `src.ns.pkg.a` where the tree's root is): alias -> the module's name. A name
    two files could have, or that is another file's module, is left out."""
    packages = _packages(relatives)
    primary = {module for module, _ in modules.values()}
    found: dict[str, str] = {}
    seen: dict[str, int] = {}
    for relative, (module, _) in modules.items():
        folders = relative.split("/")[:-1]
        top = _package_top(folders, packages)
        own = len(module.split(".")) - (len(folders) - top) - (0 if relative.endswith("__init__.py") else 1)
        top -= own  # folders a clash already put in its name
        for start in range(top - 1, -1, -1):
            prefix = folders[start:top]
            if not all(_IDENTIFIER.match(p) for p in prefix):
                break
            alias = ".".join((*prefix, module))
            found[alias] = module
            seen[alias] = seen.get(alias, 0) + 1
    return {alias: module for alias, module in found.items() if seen[alias] == 1 and alias not in primary}


def module_set(modules: dict[str, tuple[str, str | None]], aliases: dict[str, str]) -> frozenset[str]:
    """Every name the downstream's modules are known by: their own and their namespace aliases."""
    return frozenset(m for m, _ in modules.values()) | frozenset(aliases)


class Linker:
    """Resolves references to the downstream's own modules through their summaries."""

    def __init__(
        self,
        summaries: Mapping[str, Exports],
        modules: set[str] | frozenset[str],
        upstream_names: frozenset[str],
    ) -> None:
        self.summaries = summaries
        self.modules = modules
        self.packages = {m.rsplit(".", 1)[0] for m in modules if "." in m}
        self.upstream_names = upstream_names
        self._active: set[int] = set()
        self._memo: dict[int, _Resolved] = {}
        self._limited = False
        self.fallback_root = min(upstream_names) if upstream_names else ""

    # -- references ---------------------------------------------------------------------------------

    def resolve(self, ref: Ref, depth: int = 0) -> _Resolved:
        if depth > MAX_DEPTH:
            self._limited = True
            return ("unk", "cross-module-depth", self.fallback_root)
        if isinstance(ref, ModuleRef):
            if ref.path.split(".")[0] in self.upstream_names:
                return ref
            if ref.path in self.modules or ref.path in self.packages:
                return ("mod", ref.path)
            return None
        if isinstance(ref, AttrRef):
            return self.attribute(self.resolve(ref.base, depth), ref.name, depth)
        if isinstance(ref, CallRef):
            return self.call(self.resolve(ref.func, depth), depth)
        if isinstance(ref, InstanceRef):
            cls = self.resolve(ref.cls, depth)
            if isinstance(cls, tuple):
                if cls[0] == "cls":
                    return ("inst", cls[1], cls[2])
                return cls if cls[0] == "unk" else None
            return InstanceRef(cls) if cls is not None and not isinstance(cls, OpaqueRef) else cls
        if isinstance(ref, ItemRef):
            if ref.via == "await" and isinstance(ref.base, CallRef):
                func = self.resolve(ref.base.func, depth)
                if isinstance(func, tuple) and func[0] == "fn":
                    entry = func[2]
                    return self.value(entry[1], func[1], depth + 1) if entry[2] and entry[1] else None
            base = self.resolve(ref.base, depth)
            if isinstance(base, tuple):
                return base if base[0] == "unk" else None
            if base is None or isinstance(base, OpaqueRef):
                return base
            return ItemRef(base, ref.via)
        if isinstance(ref, (OpaqueRef, StarRef)):
            return ref if root_module(ref) in self.upstream_names else None
        return None

    def call(self, func: _Resolved, depth: int) -> _Resolved:
        if func is None or isinstance(func, OpaqueRef):
            return func
        if not isinstance(func, tuple):
            return CallRef(func)
        kind = func[0]
        if kind == "fn":
            entry = func[2]
            if entry[2] or entry[1] is None:  # a coroutine, or nothing the summary follows
                return None
            return self.value(entry[1], func[1], depth + 1)
        if kind == "cls":
            return ("inst", func[1], func[2])
        return func if kind == "unk" else None

    def attribute(self, base: _Resolved, name: str, depth: int) -> _Resolved:
        if base is None or isinstance(base, OpaqueRef):
            return base
        if not isinstance(base, tuple):
            return AttrRef(base, name)
        kind = base[0]
        if kind == "mod":
            path = base[1]
            summary = self.summaries.get(path)
            entry = summary.get(name) if summary else None
            inner = f"{path}.{name}"
            submodule = inner in self.modules or inner in self.packages
            # `from pkg import sub` in pkg's own `__init__` binds the submodule (not itself)
            if entry is not None and not (
                submodule and entry[0] == "v" and entry[1] == AttrRef(ModuleRef(path), name)
            ):
                return self.value(entry, path, depth + 1)
            return ("mod", inner) if submodule else None
        if kind in ("inst", "cls"):
            return self._member(base[1], base[2], name, depth, instance=kind == "inst")
        return base if kind == "unk" else None

    def _member(self, module: str, cls: Entry, name: str, depth: int, *, instance: bool) -> _Resolved:
        for _ in range(20):  # through the classes' bases in the downstream's modules
            _, attributes, members, base, closed, own = cls[:6]
            table = attributes if instance else members
            if name in table:
                return self.value(table[name], module, depth + 1)
            if name in own or not closed or base is None:
                return None  # its own value, not followed; or an attribute the analysis cannot see
            parent = self.resolve(base, depth + 1)
            if isinstance(parent, tuple):
                if parent[0] != "cls":
                    return parent if parent[0] == "unk" else None
                module, cls = parent[1], parent[2]
                continue
            if parent is None or isinstance(parent, OpaqueRef):
                return parent
            return AttrRef(InstanceRef(parent) if instance else parent, name)
        return None

    def constructor(self, cls: Entry) -> tuple[Ref, Forwarding | None] | _Resolved:
        """What calling a downstream class runs of the upstream (the downstream's `inherited_constructor`,
        across modules): (the upstream class whose constructor runs, the forwarding `__init__` on the
        way or None) where no class on the way defines one of its own, except one `__init__(self, ...,
        **kwargs)` handing them on to `super().__init__`; ("unk", why, root) where the way reaches the
        upstream through a class not followed (a decorated one); None where a class defines its own
        constructor or the way never reaches the upstream."""
        forwarding: Forwarding | None = None
        why: str | None = None
        for _ in range(20):
            constructor = cls[6]
            if constructor == "decorated":
                why = why or "decorated"
            elif isinstance(constructor, Forwarding):
                if forwarding is not None:
                    return None  # forwarding through forwarding: not followed (as in one file)
                forwarding = constructor
            elif constructor != "inherit":
                return None  # its own constructor: the upstream's is not what this call runs
            if cls[3] is None:
                return None
            parent = self.resolve(cls[3], 1)
            if isinstance(parent, tuple):
                if parent[0] == "cls":
                    cls = parent[2]
                    continue
                return parent if parent[0] == "unk" else None
            if parent is None or isinstance(parent, OpaqueRef):
                return None
            if root_module(parent) not in self.upstream_names:
                return None
            if why is not None:
                return ("unk", why, root_module(parent))
            return parent, forwarding
        return None

    def value(self, entry: Entry, module: str, depth: int) -> _Resolved:
        kind = entry[0]
        if kind == "f":
            return ("fn", module, entry)
        if kind == "k":
            return ("cls", module, entry)
        key = id(entry)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            self._limited = True
            return ("unk", "cross-module-cycle", self.fallback_root)
        self._active.add(key)
        limited, self._limited = self._limited, False
        try:
            if kind == "v":
                found = self.resolve(entry[1], depth)
            else:  # "u": counted where one of its values is an upstream object
                found = None
                for ref in entry[2]:
                    value = self.resolve(ref, depth)
                    root = self._root(value)
                    if root is not None:
                        found = ("unk", entry[1], root)
                        break
        finally:
            self._active.discard(key)
            if not self._limited:
                self._memo[key] = found
            self._limited = self._limited or limited
        return found

    def _construction(self, site: UseSite, cls: Entry) -> UseSite | None:
        found = self.constructor(cls)
        if found is None:
            return None
        if isinstance(found, tuple) and len(found) == 2:
            upstream, forwarding = found
            assert isinstance(upstream, (AttrRef, ModuleRef))
            return _constructed(site, upstream, forwarding)
        assert isinstance(found, tuple)
        return replace(site, ref=OpaqueRef(found[1], found[2]))

    def _root(self, value: _Resolved) -> str | None:
        """The upstream module a resolved value comes from, if it may be an upstream object."""
        if isinstance(value, tuple):
            return value[2] if value[0] == "unk" else None
        if value is None:
            return None
        root = root_module(value)
        return root if root in self.upstream_names else None

    # -- what is followed ---------------------------------------------------------------------------

    def constructing_names(self) -> frozenset[str]:
        """The names the downstream's modules bind to one of its classes whose call runs an upstream
        constructor, or whose constructor is not followed but may (`constructor`): `Client` for `class
        Client(up.Base): pass` and for `from .a import Client` in a package's `__init__`."""
        found: set[str] = set()
        for module, summary in self.summaries.items():
            for name, entry in summary.items():
                if entry[0] in ("x", "f", "u"):
                    continue
                resolved = self.value(entry, module, 0)
                if isinstance(resolved, tuple) and resolved[0] == "cls" and self.constructor(resolved[2]):
                    found.add(name)
        return frozenset(found)

    def reaching_names(self, module: str) -> list[str]:
        """The module's names whose entry holds (or gives, or whose instances hold) an upstream value."""
        summary = self.summaries.get(module)
        return [
            name
            for name, entry in (summary or {}).items()
            if entry[0] != "x" and self._entry_reaches(entry, module, 0)
        ]

    def _entry_reaches(self, entry: Entry | None, module: str, depth: int) -> bool:
        if entry is None or depth > 4:
            return False
        kind = entry[0]
        if kind == "f":
            return self._entry_reaches(entry[1], module, depth + 1)
        if kind == "k":
            if entry[3] is not None and self._root(self.resolve(entry[3])) is not None:
                return True
            return any(
                self._entry_reaches(e, module, depth + 1) for e in (*entry[1].values(), *entry[2].values())
            )
        resolved = self.value(entry, module, depth)
        if isinstance(resolved, tuple) and resolved[0] in ("fn", "cls", "mod"):
            if resolved[0] == "mod":
                return False
            return self._entry_reaches(resolved[2], resolved[1], depth + 1)
        return self._root(resolved) is not None

    def site(self, site: UseSite) -> UseSite | None:
        """The site with its reference resolved; None where it is no use of the upstream."""
        ref = site.ref
        if site.kind is SiteKind.STORE:
            assert isinstance(ref, AttrRef)
            base = self.resolve(ref.base)
            if isinstance(base, OpaqueRef):
                return replace(site, ref=AttrRef(base, ref.name)) if base.alternatives else None
            resolved: _Resolved = (
                AttrRef(base, ref.name) if base is not None and not isinstance(base, tuple) else None
            )
        else:
            if site.kind is SiteKind.CALL:
                called = self.resolve(ref)
                if isinstance(called, tuple) and called[0] == "cls":
                    return self._construction(site, called[2])
            if isinstance(ref, AttrRef) and _names_a_module(self.resolve(ref.base)):
                # `helpers.made`, `from app.helpers import made`: reading a name of a downstream module
                # runs none of the upstream; its value was made, and checked, where it is bound
                # (`made = gone.Made()` in a `try` whose `except ImportError` binds None)
                return None
            resolved = self.resolve(ref)
        if isinstance(resolved, tuple):
            root = resolved[2] if resolved[0] == "unk" else None
            return replace(site, ref=OpaqueRef(resolved[1], root)) if root else None
        if resolved is None or root_module(resolved) not in self.upstream_names:
            return None
        if _bare_name(resolved):
            return None  # a name the module that imports it checks (a re-export): not repeated here
        return replace(site, ref=resolved)


def _constructed(site: UseSite, upstream: Ref, forwarding: Forwarding | None) -> UseSite | None:
    """A call of a downstream subclass as the call of the upstream constructor it runs (as a file's own
    scan reads `Sub(...)` of a class it defines)."""
    if forwarding is None:
        return replace(site, ref=upstream, subclass=True)
    assert site.shape is not None
    handed_on = forwarding.shape_for(site.shape)
    if handed_on is None:
        return None  # the call fails (or may) on the downstream's own signature: not the upstream's
    shape, forwarded = handed_on
    return replace(
        site,
        ref=upstream,
        shape=shape,
        forwarded=forwarded,
        through_init=True,
        subclass=True,
        keyword_spans=tuple((k, s) for k, s in site.keyword_spans if k in forwarded),
    )


def _names_a_module(resolved: _Resolved) -> bool:
    return isinstance(resolved, tuple) and resolved[0] == "mod"


def _bare_name(ref: Ref) -> bool:
    while isinstance(ref, AttrRef):
        ref = ref.base
    return isinstance(ref, ModuleRef)


# The place of a site kept aside: how many of the file's other sites come before it
_Placed = list[tuple[int, UseSite]]


class Aside:
    """What one file's scan keeps aside for the linking: its sites rooted at the downstream's own modules
    (each with its place among the others, see `set_aside`) and its module's summary (`exports_text`: JSON,
    "null" for none). A scan read from the cache holds them as text, decoded only when the linking needs
    them; a text that does not decode is read again from the file (`reload`)."""

    def __init__(
        self,
        key: str,
        exports_text: str,
        *,
        sites_text: str = "[]",
        sites: _Placed | None = None,
        exports: Exports | None = None,
        reload: Callable[[], Aside | None] | None = None,
    ) -> None:
        self.key = key  # the scan's cache key (the file's content, path and what it knows of the others)
        self.exports_text = exports_text
        self.digest = hashlib.sha256(exports_text.encode("utf-8")).hexdigest()
        self._sites_text = sites_text
        self._sites = sites
        self._exports = exports
        self._reload = reload

    @property
    def has_sites(self) -> bool:
        return bool(self._sites) if self._sites is not None else self._sites_text != "[]"

    @property
    def has_exports(self) -> bool:
        return self.exports_text != "null"

    def sites(self) -> _Placed:
        if self._sites is None:
            try:
                self._sites = [(int(p), site_from_data(d)) for p, d in json.loads(self._sites_text)]
            except Exception as error:  # a corrupted cache entry: the file is scanned again
                self._sites = self._reloaded(error).sites()
        return self._sites

    def exports(self) -> Exports | None:
        if self._exports is None and self.has_exports:
            try:
                self._exports = exports_from_data(json.loads(self.exports_text))
            except Exception as error:
                self._exports = self._reloaded(error).exports()
        return self._exports

    def _reloaded(self, error: Exception) -> Aside:
        log.debug("ignoring a bad scan cache entry %s: %s", self.key, error)
        fresh = self._reload() if self._reload is not None else None
        return fresh if fresh is not None else Aside(self.key, "null", sites=[])

    def __getstate__(self) -> dict[str, Any]:  # a pool's worker sends it back: never its reload
        return {**self.__dict__, "_reload": None}


def set_aside(scan: FileScan, upstream_names: frozenset[str], key: str, exports_text: str) -> FileScan:
    """The scan with its sites rooted at the downstream's own modules kept aside (the scanner keeps a
    site only where its root is an upstream name or one of the downstream's top-level modules)."""
    main: list[UseSite] = []
    aside: _Placed = []
    for site in scan.sites:
        if root_module(site.ref) in upstream_names:
            main.append(site)
        else:
            aside.append((len(main), site))
    return replace(
        scan,
        sites=tuple(main),
        exports=None,
        aside=Aside(key, exports_text, sites=aside, exports=scan.exports),
    )


def aside_text(scan: FileScan) -> str:
    """The JSON of a scan's sites kept aside (as `Aside` reads it back)."""
    aside = scan.aside
    placed = aside.sites() if aside is not None else []
    return "[" + ",".join(f"[{p},{json.dumps(site_to_data(s))}]" for p, s in placed) + "]"


def _merged(main: tuple[UseSite, ...], placed: _Placed) -> tuple[UseSite, ...]:
    """The file's sites in the order the scanner gave them: those kept aside back at their places."""
    if not placed:
        return main
    out: list[UseSite] = []
    done = 0
    for place, site in placed:
        if place > done:
            out.extend(main[done:place])
            done = place
        out.append(site)
    out.extend(main[done:])
    return tuple(out)


def unlinked(scan: FileScan) -> FileScan:
    """The scan with its sites kept aside back among the others, unresolved (nothing to link)."""
    aside = scan.aside
    if aside is None:
        return scan
    return replace(scan, sites=_merged(scan.sites, aside.sites() if aside.has_sites else []), aside=None)


def _state_key(
    what: str,
    scans: list[FileScan],
    modules: dict[str, tuple[str, str | None]],
    aliases: dict[str, str],
    upstream_names: frozenset[str],
    salt: str,
) -> str:
    """What a linking's result depends on besides the files' own sites: every summary (by digest),
    the downstream's module names (their namespace aliases too) and the upstream's names."""
    digest = hashlib.sha256(f"{what}\0{salt}\0{','.join(sorted(upstream_names))}\0".encode())
    digest.update("\0".join(sorted(module for module, _ in modules.values())).encode("utf-8", "replace"))
    digest.update("\0".join(sorted(f"{a}={m}" for a, m in aliases.items())).encode("utf-8", "replace"))
    summaries = sorted(
        (modules[scan.path][0], scan.aside.digest)
        for scan in scans
        if scan.path in modules and scan.aside is not None and scan.aside.has_exports
    )
    for module, summary in summaries:
        digest.update(f"\0{module}={summary}".encode("utf-8", "replace"))
    return digest.hexdigest()


def _read_state(cache_dir: Path | None, key: str) -> dict[str, Any]:
    if cache_dir is None:
        return {}
    try:
        stored = json.loads((cache_dir / "link" / f"{key}.json").read_text(encoding="utf-8"))
        return stored if isinstance(stored, dict) else {}
    except FileNotFoundError:
        return {}
    except Exception as error:  # torn or corrupted: computed again
        log.debug("ignoring a bad linking cache entry %s: %s", key, error)
        return {}


def _write_state(cache_dir: Path | None, key: str, state: dict[str, Any]) -> None:
    if cache_dir is None:
        return
    try:
        atomic_write_text(cache_dir / "link" / f"{key}.json", json.dumps(state))
    except OSError:
        pass  # a read-only cache must not stop the audit


def link(
    scans: list[FileScan],
    modules: dict[str, tuple[str, str | None]],
    upstream_names: frozenset[str],
    local_names: frozenset[str],
    cache_dir: Path | None = None,
    salt: str = "",
) -> list[FileScan]:
    """The scans with every use of a value from the downstream's own modules resolved (see the module's
    docstring): uses of upstream values kept, the rest dropped. With a `cache_dir`, the result of each
    file is kept for the next run with the same summaries (`salt`: the scanner's version)."""
    aliases = namespace_aliases(list(modules), modules)
    key = _state_key("link", scans, modules, aliases, upstream_names, salt)
    stored = _read_state(cache_dir, key)
    state: dict[str, Any] = {}
    linker: Linker | None = None
    out = []
    for scan in scans:
        aside = scan.aside
        if aside is None or not aside.has_sites:
            out.append(unlinked(scan))
            continue
        kept = stored.get(aside.key)
        if isinstance(kept, list):
            try:
                placed = [(int(p), site_from_data(d)) for p, d in kept]
            except Exception as error:
                log.debug("ignoring a bad linking cache entry %s: %s", key, error)
                kept = None
        if not isinstance(kept, list):
            if linker is None:
                linker = Linker(
                    summaries_of(scans, modules, aliases), module_set(modules, aliases), upstream_names
                )
            placed = []
            for place, site in aside.sites():
                if root_module(site.ref) in local_names:
                    linked = linker.site(site)
                    if linked is None:
                        continue
                    site = linked
                placed.append((place, site))
            kept = [[p, site_to_data(s)] for p, s in placed]
        state[aside.key] = kept
        out.append(replace(scan, sites=_merged(scan.sites, placed), aside=None))
    if linker is not None or state.keys() != stored.keys():
        _write_state(cache_dir, key, state)
    return out


def reaching_modules(
    scans: list[FileScan],
    modules: dict[str, tuple[str, str | None]],
    upstream_names: frozenset[str],
    cache_dir: Path | None = None,
    salt: str = "",
    done: frozenset[str] = frozenset(),
) -> dict[str, list[str]]:
    """For each module among the scans' summaries (by each of its names) but those `done`, its names whose
    values reach the upstream (`Linker.reaching_names`); with a `cache_dir`, kept for the next run with
    the same summaries."""
    aliases = namespace_aliases(list(modules), modules)
    done_names = "\0".join(sorted(done))
    key = _state_key("reaching", scans, modules, aliases, upstream_names, f"{salt}\0{done_names}")
    stored = _read_state(cache_dir, key).get("reaching")
    if isinstance(stored, dict) and all(isinstance(v, list) for v in stored.values()):
        return {str(m): [str(n) for n in names] for m, names in stored.items()}
    linker = Linker(summaries_of(scans, modules, aliases), module_set(modules, aliases), upstream_names)
    found = {m: linker.reaching_names(m) for m in linker.summaries if m not in done}
    _write_state(cache_dir, key, {"reaching": found})
    return found


def constructing_names(
    scans: list[FileScan],
    modules: dict[str, tuple[str, str | None]],
    upstream_names: frozenset[str],
    cache_dir: Path | None = None,
    salt: str = "",
) -> frozenset[str]:
    """`Linker.constructing_names` of the scans' summaries; with a `cache_dir`, kept for the next run with
    the same summaries (a warm run of an unchanged tree decodes none of them)."""
    aliases = namespace_aliases(list(modules), modules)
    key = _state_key("constructing", scans, modules, aliases, upstream_names, salt)
    stored = _read_state(cache_dir, key).get("constructing")
    if isinstance(stored, list):
        return frozenset(str(name) for name in stored)
    linker = Linker(summaries_of(scans, modules, aliases), module_set(modules, aliases), upstream_names)
    found = linker.constructing_names()
    _write_state(cache_dir, key, {"constructing": sorted(found)})
    return found


def version_gates(
    scans: list[FileScan], modules: dict[str, tuple[str, str | None]], upstream_names: frozenset[str]
) -> dict[str, tuple[str, int]]:
    """The private modules of the downstream (a part of the name starts with `_`) whose every import
    the scans read is made under a test of the upstream's major version (`astscan.gates`), the same
    test each time: module -> (the flags under which it is imported, "+before:8"; how many imports).
    Whether these are all of its imports (a file not scanned, `importlib.import_module("...")`) is
    the caller's to check, by the mentions of its name. Only the summaries that hold such imports (and
    those of the modules whose helpers they call) are decoded."""
    aliases = namespace_aliases(list(modules), modules)
    summaries = summaries_of(scans, modules, aliases)
    every = {m for m, _ in modules.values()}
    marker = json.dumps(GATED)
    found: dict[str, list[str]] = {}
    for scan in scans:
        own = modules.get(scan.path)
        if own is None:
            continue
        if scan.aside is not None:
            if marker not in scan.aside.exports_text:
                continue
            exports = scan.aside.exports()
        else:
            exports = scan.exports
        entry = (exports or {}).get(GATED)
        if entry is None:
            continue
        for target, tests in entry[1]:
            target = aliases.get(target, target)
            if target not in every:
                continue
            flags = ""
            for origin, name, test_flags in tests:
                majors = summaries.get(origin or own[0], {}).get(MAJORS)
                if majors is not None and majors[1].get(name) in upstream_names:
                    flags += test_flags
            found.setdefault(target, []).append(flags)
    return {
        module: (flags[0], len(flags))
        for module, flags in found.items()
        if flags[0] and len(set(flags)) == 1 and any(p.startswith("_") for p in module.split("."))
    }
    return found


class _Summaries(Mapping[str, Exports]):
    """The summaries of the scans' modules, each decoded when the linking first reads it (a file
    relinked alone reads a few)."""

    def __init__(
        self, scans: list[FileScan], modules: dict[str, tuple[str, str | None]], aliases: dict[str, str]
    ) -> None:
        self._held: dict[str, FileScan] = {}
        self._decoded: dict[str, Exports] = {}
        for scan in scans:
            module = modules.get(scan.path)
            if module is None:
                continue
            if scan.aside is not None:
                if scan.aside.has_exports:
                    self._held[module[0]] = scan
            elif scan.exports:
                self._held[module[0]] = scan
        for alias, module_name in aliases.items():  # a namespace package's module under its other names
            if module_name in self._held:
                self._held[alias] = self._held[module_name]

    def __getitem__(self, module: str) -> Exports:
        found = self._decoded.get(module)
        if found is None:
            scan = self._held[module]
            exports = scan.aside.exports() if scan.aside is not None else scan.exports
            if not exports:  # a summary that did not decode, read again from the file: empty
                raise KeyError(module)
            found = self._decoded[module] = exports
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


def summaries_of(
    scans: list[FileScan], modules: dict[str, tuple[str, str | None]], aliases: dict[str, str] | None = None
) -> Mapping[str, Exports]:
    """Each module's summary (`aliases`: a module's other names, `namespace_aliases`, keyed too)."""
    return _Summaries(scans, modules, aliases or {})
