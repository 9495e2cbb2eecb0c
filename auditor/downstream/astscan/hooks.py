"""Module-level functions a plugin host may take as hook implementations by their name.

pytest takes every function of a plugin module whose name starts with `pytest_` as a hook
implementation (marked `@pytest.hookimpl(...)` or not) and validates it against its hook
specifications when the plugin is registered. The scanner records one site per such function at the
top level of the file (also inside a top-level `if`/`try`), named by an upstream import name
(`pytest_...` where `pytest` is the upstream's). Whether the file is a plugin at all is decided later:
a `conftest.py` always is; another module only where the downstream's entry points name it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.sites import SiteKind, UseSite
from apidrift.auditor.downstream.astscan.nodes import _dotted
from apidrift.auditor.downstream.astscan.signatures import _signature_of
from apidrift.auditor.downstream.astscan.text import _name_span, _Text


def hook_sites(
    body: list[ast.stmt], text: _Text, upstream_names: frozenset[str], path: str
) -> Iterator[UseSite]:
    prefixes = {f"{n}_": n for n in upstream_names if n.isidentifier() and not n.startswith("_")}
    if not prefixes:
        return
    place = "conftest" if path.replace("\\", "/").rsplit("/", 1)[-1] == "conftest.py" else "module"
    roots = frozenset(prefixes.values())
    for node, conditions in _top_level_defs(body, (), roots, _version_names(body, roots)):
        root = next((r for p, r in prefixes.items() if node.name.startswith(p)), None)
        if root is None or node.name == f"{root}_plugins":
            continue
        flags = "".join(f"+{c}" for c in conditions)
        hook = node.name
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            name = _dotted(call.func if call is not None else decorator) or ""
            if call is None and name.endswith(_LEGACY_MARKS):
                continue  # `@pytest.mark.tryfirst`: the mark is stored on the function, which is kept
            if name.rsplit(".", 1)[-1] != "hookimpl":
                flags += "+decorated"
                break
            for keyword in call.keywords if call is not None else ():
                literal = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
                if keyword.arg == "optionalhook" and literal is not False:
                    flags += "+optional"
                elif keyword.arg == "specname":  # the hook it implements is named there
                    if isinstance(literal, str):
                        hook = literal
                    else:
                        flags += "+decorated"
        yield UseSite(
            SiteKind.HOOK,
            AttrRef(ModuleRef(root), hook),
            _name_span(node, text),
            f"def {node.name}(...)",
            signature=_signature_of(node.args, "", text),
            hook=place + flags,
        )


_LEGACY_MARKS = ("mark.tryfirst", "mark.trylast")


def _top_level_defs(
    body: list[ast.stmt], conditions: tuple[str, ...], roots: frozenset[str], versions: frozenset[str]
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, tuple[str, ...]]]:
    """The functions defined at the top level, each with the conditions under which its `def` runs:
    "since:V" / "before:V" for a branch of a test of the upstream's version (`if PYTEST_VERSION_INFO <
    (7,):`, a name of `versions` or the upstream's own `version_tuple` compared with a literal tuple of
    integers), "conditional" for a branch of any other test."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt, conditions
        elif isinstance(stmt, ast.If):
            test = _version_test(stmt.test, roots, versions)
            negated = {"since": "before", "before": "since"}
            if test is None:
                yield from _top_level_defs(stmt.body, (*conditions, "conditional"), roots, versions)
                yield from _top_level_defs(stmt.orelse, (*conditions, "conditional"), roots, versions)
            else:
                kind, version = test
                yield from _top_level_defs(stmt.body, (*conditions, f"{kind}:{version}"), roots, versions)
                yield from _top_level_defs(
                    stmt.orelse, (*conditions, f"{negated[kind]}:{version}"), roots, versions
                )
        elif isinstance(stmt, ast.Try):
            yield from _top_level_defs(
                [*stmt.body, *stmt.orelse, *stmt.finalbody], conditions, roots, versions
            )


def _version_names(body: list[ast.stmt], roots: frozenset[str]) -> frozenset[str]:
    """The module-level names bound, once, to the upstream's version or to a value made from such a
    name alone: `PYTEST_VERSION = pytest.__version__`, then `PYTEST_VERSION_INFO = tuple(int(p) for p
    in PYTEST_VERSION.split(".")[:3])`."""
    sources = {f"{root}.{attr}" for root in roots for attr in ("__version__", "version_tuple")}
    bound: dict[str, list[ast.expr]] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(stmt.value)
    found: set[str] = set()
    for _ in range(4):  # a name made from a name made from the version, a few steps deep
        for name, values in bound.items():
            if name in found or len(values) != 1:
                continue
            named = {_dotted(n) for n in ast.walk(values[0]) if isinstance(n, (ast.Name, ast.Attribute))}
            if named & sources or named & found:
                found.add(name)
    return frozenset(found)


def _version_test(test: ast.expr, roots: frozenset[str], versions: frozenset[str]) -> tuple[str, str] | None:
    """`NAME < (7,)` -> ("before", "7"), `NAME >= (8, 1)` -> ("since", "8.1"), where NAME is one of
    `versions` (bound from the upstream's `__version__`) or the upstream's `version_tuple`; None for any
    other test (`sys.version_info` is Python's)."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Tuple)
    ):
        return None
    name = _dotted(test.left) or ""
    parts = test.comparators[0].elts
    if (
        not (name in versions or name in {f"{root}.version_tuple" for root in roots})
        or not parts
        or len(parts) > 4
    ):
        return None
    if not all(isinstance(p, ast.Constant) and type(p.value) is int for p in parts):
        return None
    version = ".".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
    op = test.ops[0]
    if isinstance(op, ast.Lt):
        return ("before", version)
    if isinstance(op, ast.GtE):
        return ("since", version)
    return None
