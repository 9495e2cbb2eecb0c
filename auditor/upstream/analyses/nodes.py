"""The AST walks the upstream analyses share, and the lookup of a name written in a griffe scope.

Input: nodes of a module griffe already parsed (or the griffe object a name is written in). Output: the
statements of a block, the nodes of a function's own body (cached per loaded module in `_OWN_NODES`,
which the loader clears after each module), the last name of a dotted expression, a canonical path.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import griffe

from apidrift.auditor.upstream.astwalk import children


def _resolve_text(scope: griffe.Object, dotted: str) -> str:
    """Resolve a dotted name written in `scope`'s module through that module's imports."""
    # lazy: griffe is loaded only where a module is parsed; a warm run reads these walks' callers from the cache
    import griffe

    first, _, rest = dotted.partition(".")
    module = scope.module
    member = module.members.get(first)
    if isinstance(member, griffe.Alias):
        base = member.target_path
    elif member is not None:
        base = f"{module.path}.{first}"
    elif hasattr(builtins, first):
        base = f"builtins.{first}"
    else:
        return f"?{dotted}"
    return f"{base}.{rest}" if rest else base


def _class_statements(node: ast.ClassDef) -> Iterator[ast.stmt]:
    """Statements of a class body, inside if/try/with/for/while too, but not inside defs or classes."""
    return _block_statements(node.body)


def _last_name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    return _last_name(node)


# per loaded module: several analyses walk one body. Each entry keeps its function, so that an id a
# freed node's successor reuses (an analysis run outside a load, which clears the table) never answers.
_OWN_NODES: dict[int, tuple[ast.AST, tuple[ast.AST, ...]]] = {}


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.AST, ...]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    cached = _OWN_NODES.get(id(function))
    if cached is not None and cached[0] is function:
        return cached[1]
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(children(node))
    result = tuple(found)
    _OWN_NODES[id(function)] = (function, result)
    return result


def _all_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """A function's nodes, those of the functions nested in it included (each walked once, cached)."""
    for node in _own_nodes(function):
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _all_nodes(node)
        elif isinstance(node, ast.Lambda):
            yield from ast.walk(node.body)


def _module_statements(module: ast.Module) -> Iterator[ast.stmt]:
    """Statements at module level, inside if/try/with/for/while too, but not inside defs or classes."""
    return _block_statements(module.body)


def _block_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of the blocks nested in them, not inside defs or classes."""
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
