"""Scan one downstream file with the standard library's `ast`: every import, attribute use and call that reaches an upstream.

Input: a file's text and the upstream's top-level import names. Output: a `FileScan` value holding
`UseSite`s, each with a version-independent `Ref` (see `refs`), the call's shape and exact positions.
Local data flow is followed where it is unambiguous: imports and aliases, `x = Cls(...)`,
`self.x = ...` in any method, annotations of parameters and variables, and return annotations.
A name bound more than one way in a scope is read, at each use, through the bindings that reach it
(straight-line code and `if`/`else` joins exactly; a loop, `try` or `with` through every binding
made before or in it); a use reached by bindings that disagree is not followed (no guessing).

CPython's own parser builds the tree (no concrete syntax tree: this scan only reads); for a file this
Python's parser refuses, the caller passes LibCST's tree converted to CPython's (`cst_to_ast`). Its columns
count UTF-8 bytes; every position here is converted to characters (as SARIF and editors count). The
few positions `ast` does not record (the module of `from m import x`, an imported name, a function's
name) are found in the text right after the node's start. The file is visited in source order, as
written, so that every choice that depends on what came before (version flags, evaluation order) is
the one a reader would make.

Memory stays bounded on large files: a large file is parsed in pieces that end where a top-level
statement ends (each piece's tree is dropped once visited), and what is kept for the evaluation at
the end is a compact form of each expression, not the tree.

The scanner's parts, in the order a file goes through them:

- `pieces`: the file's tree, parsed whole or in pieces (`CHUNK_CHARS`);
- `collector`: one visit in source order, recording scopes and bindings (`values`), which code is
  guarded (`guards`), keyword forwarding through `__init__` (`forwarding`) and candidate use sites;
- `evaluator`: what an expression's value is, once the whole file is read;
- `sites`: each candidate turned into a `UseSite`; `overrides`: the methods a subclass overrides;
- `text` (positions in characters), `nodes` (small readings of `ast` nodes), `signatures`,
  `names` (what a file binds, for star imports); `downstream.shared` holds what needs no parser.
"""

from __future__ import annotations

import ast
import gc
import sys
from typing import Any

from apidrift.auditor.core.sites import FileScan, UseSite
from apidrift.auditor.downstream.astscan.collector import TooDeep, _Collector
from apidrift.auditor.downstream.astscan.evaluator import _Evaluator
from apidrift.auditor.downstream.astscan.exports import module_exports
from apidrift.auditor.downstream.astscan.gates import Test, gated_imports, version_majors
from apidrift.auditor.downstream.astscan.hooks import hook_sites
from apidrift.auditor.downstream.astscan.names import _MAY_IMPORT_STAR, _add_bound_names
from apidrift.auditor.downstream.astscan.overrides import _override_sites
from apidrift.auditor.downstream.astscan.pieces import _parse
from apidrift.auditor.downstream.astscan.sites import _site
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import _ClassScope, _DownFunction, _Scope
from apidrift.auditor.downstream.linking import GATED, MAJORS

# Python frames the visitor may use: a file within pysource.MAX_NESTING needs at most two per level.
_RECURSION_LIMIT = 8_000
# Files larger than this (characters) are parsed in pieces of about this size: CPython's parser holds
# the whole tree twice while it builds it (about 450 bytes a node: 900 MiB for 180,000 calls).
CHUNK_CHARS = 128 * 1024


def scan_source(
    path: str,
    source: str,
    upstream_names: frozenset[str],
    aliases: tuple[tuple[str, str], ...] = (),
    tree: ast.Module | None = None,
    local: tuple[Any, ...] = (frozenset(), None, None),
) -> FileScan:
    """Find the use sites of one file. Raises SyntaxError (or ValueError for null bytes) on a file
    CPython cannot parse, TooDeep on one nested deeper than MAX_NESTING.

    `tree`: the file's tree when it was built another way (`cst_to_ast`, for the files this
    Python's parser refuses); it must be the tree CPython builds for `source`, positions included.
    `local`: the top-level names of the downstream's own modules, the module this file is and the
    package its relative imports start from: uses of those modules' values are kept as sites for
    `downstream.linking`, and the scan says what this module hands to the others (`FileScan.exports`);
    then the names of other modules' classes whose calls are kept too (their upstream constructor)."""
    local_names, module_name, package = local[:3]
    classes: frozenset[str] = local[3] if len(local) > 3 else frozenset()
    text = _Text(source)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    collecting = gc.isenabled()
    gc.disable()  # the scan allocates many small objects and frees none until it returns: no cycle hunts meanwhile
    try:
        collector = _Collector(upstream_names, text, aliases, (local_names, package))
        reaching = upstream_names | local_names
        bound: set[str] | None = set() if _MAY_IMPORT_STAR.search(source) else None
        hooks: list[UseSite] = []
        majors: dict[str, str] = {}
        gated: list[tuple[str, tuple[Test, ...]]] = []
        for module in _parse(source, CHUNK_CHARS) if tree is None else iter((tree,)):
            hooks.extend(hook_sites(module.body, text, upstream_names, path))
            if module_name is not None and local_names:
                majors.update(version_majors(module.body, upstream_names))
                gated.extend(gated_imports(module.body, package, local_names))
            collector.visit_all(module.body)
            if bound is not None:
                _add_bound_names(module, bound)
            collector.stored.clear()  # ids of this piece's nodes: free to be reused once it is dropped
            collector.used.clear()
            del module
        stars = collector.module_scope.star_modules
        evaluator = _Evaluator(
            text,
            frozenset(bound) if bound is not None and stars and None not in stars else frozenset(),
            collector.attribute_stores,
            frozenset(collector.escaping),
        )
        evaluator.upstream_names = upstream_names
        evaluator.calls = collector.calls
        evaluator.skipped_calls = collector.skipped_calls
        evaluator.overflowing = collector.overflowing
        evaluator.value_names = collector.value_names
        evaluator.value_attributes = collector.value_attributes
        evaluator.classes = collector.classes
        evaluator.method_names = collector.method_names
        evaluator.computed_class_call = collector.computed_class_call
        for callee, name, scope, slot in collector.handed:
            function = _function_named(name, scope)
            if function is not None and len(function.handed) < 8:
                function.handed.append((callee, scope, slot))
        collector.handed = []
        lines = tuple(source.splitlines())
        sites: list[UseSite] = []
        candidates = collector.candidates
        collector.candidates = []
        for index, candidate in enumerate(candidates):
            candidates[index] = None  # type: ignore[call-overload]  # freed as they become sites
            evaluator.reach = candidate.reach
            if candidate.kind == "class":
                assert isinstance(candidate.scope, _ClassScope)
                sites.extend(_override_sites(candidate.scope, evaluator, text, upstream_names))
                continue
            site = _site(candidate, evaluator, upstream_names, lines, reaching, classes)
            if site is not None:
                sites.append(site)
        exports = None
        if module_name is not None and local_names:
            evaluator.reach = None
            exports = module_exports(
                evaluator,
                module_name,
                reaching,
                collector.module_scope,
                collector.classes,
                collector.decorated,
            )
            exports = dict(exports)
            if majors:
                exports[MAJORS] = ("x", majors)
            if gated:
                exports[GATED] = ("x", [[target, [list(t) for t in tests]] for target, tests in gated])
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
    return FileScan(path, tuple(sites + hooks), lines, exports=exports or None)


def _function_named(name: str, scope: _Scope) -> _DownFunction | None:
    """The downstream function a name is bound to where it is seen, when its every binding is that
    `def` (read without evaluating anything: an evaluation here would be kept before the functions
    know what they are handed to)."""
    current: _Scope | None = scope
    while current is not None:
        bindings = current.bindings.get(name)
        if bindings:
            values = {id(b.value): b.value for b in bindings}
            value = next(iter(values.values()))
            return value if len(values) == 1 and isinstance(value, _DownFunction) else None
        current = current.parent
    return None


__all__ = ["CHUNK_CHARS", "TooDeep", "scan_source"]
