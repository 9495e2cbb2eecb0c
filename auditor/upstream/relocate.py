"""Where did a missing name go? Search the new upstream version for an object of the same name and kind.

Input: a certain miss (`Missing`) and what the name was in the old version. Output: the dotted paths
it can be imported from now, public ones (no private part) first, then the shortest. A text search
narrows the modules to load; the resolver confirms each candidate, so a hint never rests on a regular
expression alone.
"""

from __future__ import annotations

import ast
import copy
import json
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.safe_read import read_bounded
from apidrift.auditor.upstream.api_index import MAX_MODULE_BYTES, ApiIndex, walk_modules
from apidrift.auditor.upstream.resolve import (
    ClassValue,
    FunctionValue,
    ModuleValue,
    Resolution,
    Resolver,
    value_path,
)

SKIPPED_PARTS = frozenset({"tests", "test", "testing", "_vendor", "vendor", "examples", "benchmarks"})
MAX_FILES = 20_000  # modules indexed; a larger upstream gets hints from the first ones only
log = logging.getLogger(__name__)
MAX_DEPTH = 64  # folder levels below an import name (as archives are extracted: deeper is no real package)
MAX_FILE_BYTES = MAX_MODULE_BYTES  # larger modules are not parsed, so nothing could be confirmed in them
MAX_INDEX_BYTES = 256 * 1024 * 1024  # read in all, for the name index; the rest of the files are not indexed
_DEFINITION = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*[:=]", re.M)
# A module-level `from X import a, b as c` (one line, or parenthesized over several): a re-export.
_FROM_IMPORT = re.compile(r"^from\s+[\w.]+\s+import\s+(?:\(([^)]*)\)|([^\n(\\]+)$)", re.M)


@dataclass(frozen=True)
class _Found:
    path: str  # where the name was found
    typing_view: bool  # declared by a stub only


class Relocator:
    """Indexes the upstream's top-level definitions once (each file read once, bounded), then answers by name."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._files: list[tuple[str, Path]] | None = None
        self._defined: dict[str, list[str]] | None = None
        self.find = lru_cache(maxsize=None)(self._find)

    def _modules(self) -> list[tuple[str, Path]]:
        """(dotted name, file) of every module under the import names: regular files only, links kept in the tree."""
        if self._files is None:
            index = self.resolver.index
            files: list[tuple[str, Path]] = []
            for name in sorted(index.import_names):
                if name in SKIPPED_PARTS or not name.isidentifier():
                    continue
                files.extend(_walk(index.root, index.root / name, (name,), MAX_FILES - len(files)))
                for suffix in (".pyi", ".py"):  # a top-level module that is one file (`six.py`, `imp.pyi`)
                    single = index.root / f"{name}{suffix}"
                    if single.is_file() and not single.is_symlink():
                        files.append((name, single))
                        break
            self._files = files
        return self._files

    def _definitions(self) -> dict[str, list[str]]:
        """Name -> modules whose text defines it at the start of a line (a candidate for the resolver to
        confirm); for a release tree kept in the cache, kept beside its models (read once, not each run)."""
        if self._defined is None:
            cached = self.resolver.index.tree_cache("definitions", "definitions")
            if cached is not None:
                try:
                    stored = json.loads(cached.read_text(encoding="utf-8"))
                    if isinstance(stored, dict) and all(isinstance(v, list) for v in stored.values()):
                        self._defined = stored
                        return stored
                except (OSError, ValueError):
                    pass  # absent or torn: read the tree again
            self._defined = self._read_definitions()
            if cached is not None:
                try:
                    atomic_write_text(cached, json.dumps(self._defined))
                except (OSError, ValueError) as error:
                    log.debug("cannot write the definitions index: %s", error)
        return self._defined

    def _read_definitions(self) -> dict[str, list[str]]:
        """Name -> modules whose text defines it, read from the tree (at most MAX_INDEX_BYTES)."""
        defined: dict[str, list[str]] = {}
        budget = MAX_INDEX_BYTES
        root = self.resolver.index.root
        for dotted, path in self._modules():
            try:
                data = read_bounded(path, min(MAX_FILE_BYTES, budget), within=root)
                text = decode_source(data)
            except (OSError, SourceDecodeError):
                continue
            budget -= len(data)
            names = [match.group(1) or match.group(2) for match in _DEFINITION.finditer(text)]
            for match in _FROM_IMPORT.finditer(text):
                names += _imported_names(match.group(1) or match.group(2) or "")
            for name in names:
                modules = defined.setdefault(name, [])
                if dotted not in modules[-2:]:
                    modules.append(dotted)
            if budget <= 0:
                break
        return defined

    def _find(self, name: str, kind: str | None, missing_from: str) -> tuple[str, ...]:
        """Import paths of objects called `name` (of `kind`: "class", "function", "module" or None)."""
        found: dict[str, _Found] = {}
        if kind == "module":
            for dotted, _path in self._modules():
                if dotted != missing_from and dotted.rsplit(".", 1)[-1] == name:
                    found[dotted] = _Found(dotted, False)
        for dotted in self._definitions().get(name, ()):
            if dotted == missing_from or dotted in found:
                continue
            value = self.resolver.resolve(AttrRef(ModuleRef(dotted), name))
            if _kind(value) is None or (kind is not None and _kind(value) != kind):
                continue
            canonical = value_path(value)  # type: ignore[arg-type]  # a kind means a class or function value
            info = getattr(value, "info", None)
            found.setdefault(canonical, _Found(f"{dotted}.{name}", bool(getattr(info, "typing_view", False))))
            if _rank(f"{dotted}.{name}") < _rank(found[canonical].path):
                found[canonical] = _Found(f"{dotted}.{name}", found[canonical].typing_view)
        # A private module's stub may still declare what its compiled code no longer has (MarkupSafe
        # 2.1.0 `_speedups.pyi` keeps `soft_unicode`): for a public name, a private home only a stub
        # declares is no evidence of where it moved.
        public_only = not _private(missing_from)
        return tuple(
            sorted(
                {
                    min(self._most_public(canonical, name), value.path, key=_rank)
                    for canonical, value in found.items()
                    if not (public_only and value.typing_view and _private(canonical.rpartition(".")[0]))
                },
                key=_rank,
            )
        )

    def _most_public(self, canonical: str, name: str) -> str:
        """The shortest package path that re-exports the same object (`pkg.X` over `pkg._impl.mod.X`)."""
        parts = canonical.split(".")[:-1]
        for size in range(1, len(parts) + 1):
            prefix = ".".join(parts[:size])
            value = self.resolver.resolve(AttrRef(ModuleRef(prefix), name))
            if _kind(value) is not None and value_path(value) == canonical:  # type: ignore[arg-type]  # a kind means a value
                return f"{prefix}.{name}"
        return canonical


def _rank(path: str) -> tuple[bool, int, str]:
    """Public paths first, then the shorter (`pkg.b.f`, a re-export, over `pkg._impl.b.f`; `griffe.f`
    over `_griffe.loader.f`: a private top package is private here too)."""
    module = path.rpartition(".")[0]
    top = module.split(".")[0]
    return (_private(module) or (top.startswith("_") and not top.startswith("__")), path.count("."), path)


def _imported_names(text: str) -> list[str]:
    """The names a `from X import ...` list binds: `a, b as c` -> a, c."""
    names = []
    for item in text.replace("\n", " ").split(","):
        words = item.split("#")[0].split()
        if len(words) == 1 and words[0].isidentifier():
            names.append(words[0])
        elif len(words) == 3 and words[1] == "as" and words[2].isidentifier():
            names.append(words[2])
    return names


def _private(dotted: str) -> bool:
    """Whether a dotted module path goes through a private part (`pkg._impl`), the top package aside."""
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split(".")[1:])


def _kind(value: Resolution) -> str | None:
    if isinstance(value, ClassValue):
        return "class"
    if isinstance(value, FunctionValue):
        return "function"
    if isinstance(value, ModuleValue):
        return "module"
    return None


def kind_of(value: Resolution | None) -> str | None:
    return _kind(value) if value is not None else None


def _walk(root: Path, top: Path, prefix: tuple[str, ...], limit: int) -> list[tuple[str, Path]]:
    return walk_modules(root, top, prefix, limit, skipped=SKIPPED_PARTS, max_depth=MAX_DEPTH)


MAX_DEFINITION_NODES = 200_000  # AST nodes compared per definition; a larger one is not compared


def same_definition(
    old_resolver: Resolver, before: Resolution | None, new_resolver: Resolver, path: str
) -> str | None:
    """Evidence that `path` in the new version binds the definition `before` was in the old one: the
    same canonical object re-exported, or a definition whose code is the same (compared as CPython
    parses it, docstrings aside); None when that is not shown (the definition changed, or either
    side has no Python source to compare)."""
    if before is None or _kind(before) not in ("class", "function"):
        return None
    module, _, name = path.rpartition(".")
    after = new_resolver.resolve(AttrRef(ModuleRef(module), name))
    if _kind(after) != _kind(before):
        return None
    old_path = value_path(before)  # type: ignore[arg-type]  # a kind means a class or function value
    new_path = value_path(after)  # type: ignore[arg-type]
    old_code = _definition_code(
        old_resolver, old_path, getattr(getattr(before, "info", None), "lineno", None)
    )
    new_code = _definition_code(new_resolver, new_path, getattr(getattr(after, "info", None), "lineno", None))
    if old_code is None or old_code != new_code:
        return None
    if old_path == new_path:
        return f"`{path}` re-exports `{new_path}`, the definition the old version had (same code)"
    where = f"`{path}`" if path == new_path else f"`{path}` (`{new_path}`)"
    return f"{where} has the code the old `{old_path}` had (compared as parsed, docstrings aside)"


@lru_cache(maxsize=32)
def _module_tree(index: ApiIndex, module: str) -> ast.Module | None:
    """A module's Python source as CPython parses it (the last few, for moves out of one module)."""
    found = index.source(module)
    if found is None:
        return None
    try:
        return ast.parse(found[0])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _definition_code(resolver: Resolver, canonical: str, lineno: int | None) -> str | None:
    """The top-level `def`/`class` `canonical` names, with its decorators, as an AST dump without
    docstrings or positions; None when its module has no Python source or it is not found there."""
    module, _, name = canonical.rpartition(".")
    tree = _module_tree(resolver.index, module) if module else None
    if tree is None:
        return None
    nodes = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name
    ]
    if lineno is not None:
        nodes = [
            n for n in nodes if n.lineno == lineno or any(d.lineno == lineno for d in n.decorator_list)
        ] or nodes
    if len(nodes) != 1:
        return None
    node = nodes[0]
    if sum(1 for _ in ast.walk(node)) > MAX_DEFINITION_NODES:
        return None
    try:
        node = copy.deepcopy(node)  # the cached tree stays as parsed
    except RecursionError:
        return None
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if (
            isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            inner.body = body[1:] or [ast.Pass()]
    try:
        return ast.dump(node, include_attributes=False)
    except RecursionError:
        return None
