"""Modules a module registers under other names in `sys.modules`, read from its source.

    import dep
    sys.modules["pkg.packages.dep"] = dep                  # requests 2.x, urllib3's old home

    for package in ("urllib3", "idna"):                    # requests/packages.py
        locals()[package] = __import__(package)
        for mod in list(sys.modules):
            if mod == package or mod.startswith(f"{package}."):
                sys.modules[f"requests.packages.{mod}"] = sys.modules[mod]

Input: a module's AST. Output: [alias, target] pairs: `import pkg.packages.dep.util` is `import
dep.util` (each of dep's modules under the prefix, for the loop; the one module, for a single store).
Only a store keyed by a string literal with an imported module as value, or one keyed by a literal
prefix and the loop variable over `sys.modules` inside a loop over literal package names, is read.
"""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.guards import _dotted
from apidrift.auditor.upstream.astwalk import walk_once

MAX_ALIASES = 50


def module_aliases(module: ast.Module) -> list[list[str]]:
    imported: dict[str, str] = {}  # a top-level name -> the module an `import` binds it to
    for stmt in module.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname is not None:
                    imported[alias.asname] = alias.name
                else:
                    imported[alias.name.split(".")[0]] = alias.name.split(".")[0]
    found: list[list[str]] = []
    for node in walk_once(module):
        if len(found) >= MAX_ALIASES:
            break
        if isinstance(node, ast.Assign):
            for target in node.targets:
                key = _sys_modules_key(target)
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and isinstance(node.value, ast.Name)
                ):
                    if node.value.id in imported:
                        found.append([key.value, imported[node.value.id]])
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            packages = _literal_strings(node.iter)
            if packages and _stores_under_prefix(node.body) is not None:
                prefix = _stores_under_prefix(node.body)
                found += [[f"{prefix}{package}", package] for package in packages]
    return [pair for pair in found if pair[0] != pair[1] and "." in pair[0]]


def _sys_modules_key(target: ast.expr) -> ast.expr | None:
    if isinstance(target, ast.Subscript) and _dotted(target.value) == "sys.modules":
        return target.slice
    return None


def _literal_strings(node: ast.expr) -> list[str] | None:
    if not isinstance(node, (ast.Tuple, ast.List)) or not node.elts:
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if len(values) != len(node.elts) or not all(v.isidentifier() for v in values):
        return None
    return values


def _stores_under_prefix(body: list[ast.stmt]) -> str | None:
    """The literal prefix of a `sys.modules[f"prefix.{mod}"] = sys.modules[mod]` store in a loop over
    `sys.modules` nested in the body."""
    for stmt in body:
        for loop in ast.walk(stmt):
            if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)):
                continue
            if "sys.modules" not in ast.unparse(loop.iter):
                continue
            variable = loop.target.id
            for node in ast.walk(loop):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                key = _sys_modules_key(node.targets[0])
                value = _sys_modules_key(node.value)
                if not (isinstance(value, ast.Name) and value.id == variable):
                    continue
                prefix = _prefix_of(key, variable)
                if prefix is not None:
                    return prefix
    return None


def _prefix_of(key: ast.expr | None, variable: str) -> str | None:
    """`f"pkg.packages.{mod}"` or `"pkg.packages." + mod`: "pkg.packages."."""
    if isinstance(key, ast.JoinedStr) and len(key.values) == 2:
        head, tail = key.values
        if (
            isinstance(head, ast.Constant)
            and isinstance(tail, ast.FormattedValue)
            and isinstance(tail.value, ast.Name)
            and tail.value.id == variable
        ):
            text = str(head.value)
            return text if text.endswith(".") else None
    if isinstance(key, ast.BinOp) and isinstance(key.op, ast.Add):
        if (
            isinstance(key.left, ast.Constant)
            and isinstance(key.left.value, str)
            and isinstance(key.right, ast.Name)
            and key.right.id == variable
        ):
            return key.left.value if key.left.value.endswith(".") else None
    return None
