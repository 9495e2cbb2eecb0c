"""Every name a file binds: outside that set (and the builtins), a name can only come from a star import."""

from __future__ import annotations

import ast


def _bound_names(source: str) -> frozenset[str]:
    """Every name a file binds anywhere, in any way (assignments, parameters of defs and lambdas,
    comprehension and match targets, imports, handlers, `global`): a name outside this set, and no
    builtin, can only come from a star import."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset({"*"})
    names: set[str] = {"*"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
            names.add(node.name)  # type: ignore[attr-defined]  # ast.TypeVar and kin are 3.12's; mypy reads 3.10's ast
    return frozenset(names)
