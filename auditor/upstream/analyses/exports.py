"""Whether a module's `__all__` is a literal list of names or is computed by code.

Input: a module's AST. Output: True when `__all__` is built by a comprehension, a call, a concatenation
of non-literals or a function that appends to it; the loader then reads no export list from griffe.
"""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.nodes import _module_statements, _own_nodes


def _computes_all(module: ast.Module) -> bool:
    """Whether `__all__` is built by code (a comprehension, a call, a concatenation of non-literals)."""
    for stmt in _module_statements(module):
        if isinstance(stmt, ast.Expr):
            stmt = stmt.value  # type: ignore[assignment]  # `__all__.extend(...)`
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute):
            owner = stmt.func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id == "__all__"
                and stmt.func.attr in ("extend", "append", "insert")
            ) and not all(_is_literal_strings(a) for a in stmt.args):
                return True
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and value is not None:
            if not _is_literal_strings(value):
                return True
    # a module-level function that adds to the module's `__all__` when called (numpy 1.14
    # `core/numeric.py`: `def extend_all(module): ... __all__.append(a)`, then `extend_all(arrayprint)`)
    for function in module.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = any(
                isinstance(n, ast.Name) and n.id == "__all__" and isinstance(n.ctx, ast.Store)
                for n in _own_nodes(function)
            ) and not any(isinstance(n, ast.Global) and "__all__" in n.names for n in _own_nodes(function))
            for node in _own_nodes(function):
                if local:
                    break
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "__all__"
                    and node.func.attr in ("extend", "append", "insert", "__iadd__")
                ) or (
                    isinstance(node, ast.AugAssign)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == "__all__"
                ):
                    return True
    return False


def _is_literal_strings(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal_strings(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_literal_strings(node.left) and _is_literal_strings(node.right)
    return False
