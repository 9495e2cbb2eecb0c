"""Modules whose import fails, read from their top level.

    try:                                            # dask/dataframe/__init__.py
        import pandas
    except ImportError as e:
        raise ImportError('... python -m pip install "dask[dataframe]" --upgrade') from e

    raise ImportError("pkg.legacy was removed in 2.0; use pkg.modern")   # unconditional

Input: a module's AST and its dotted path. Output: {"imports": top-level names of the modules the
`try` imports from other distributions (empty for an unconditional raise), "exception", "message",
"line"} for the first top-level `try` whose body only imports (or binds) and whose handler catching
ImportError reaches a `raise` (bare or not) unconditionally, or for a `raise` written at the top level
itself; None otherwise. And `own_imports`: the modules of its own package the module imports
unconditionally at top level (`from pkg._impl.dataframe import X`), through which another module's
failure is its own.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from apidrift.auditor.upstream.analyses.guards import _completes_or_raises, _dotted
from apidrift.auditor.upstream.analyses.raises import _text

# Where a top-level statement these facts read (an import, a `try`, a `raise`) may begin: a line at
# indentation 0 (form feeds reset the column; a BOM may open the file), or after a `;` (a simple statement
# only). Matches inside strings too: the pattern finds a superset of those statements.
_FACT_STATEMENT = re.compile(
    rb"(?m)^(?:\xef\xbb\xbf)?(?:[ \t]*\f)*(?:from|import|try|raise)\b"
    rb"|;(?:[ \t\f]|\\\r?\n)*(?:from|import|raise)\b"
)
# A line at indentation 0 that can only begin a statement (or lie inside a string): a cut there leaves
# whole top-level statements before it, or an unterminated string that does not parse.
_DEFINITION = re.compile(rb"(?m)^(?:def|class|async)\b|^@")
_LONE_CR = re.compile(rb"\r(?!\n)")

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
MAX_OWN_IMPORTS = 50


def facts_prefix(data: bytes) -> bytes:
    """The source up to the first `def`, `class` or decorator at indentation 0 after the last place a
    top-level import, `try` or `raise` may begin: where it parses, its top-level statements are the
    file's own up to that point, and the file has none of those kinds after it, so `import_failure` and
    `own_imports` read the same from it as from the whole file, at a fraction of the parse (vLLM 0.16:
    1.5 of 17 MB). Where the cut falls inside a string it does not parse: read the whole file then."""
    if _LONE_CR.search(data):
        return data  # lines ended by a bare carriage return: `^` does not see them
    end = -1
    for found in _FACT_STATEMENT.finditer(data):
        end = found.end()
    if end < 0:
        return b""
    cut = _DEFINITION.search(data, end)
    return data if cut is None else data[: cut.start()]


def import_failure(module: ast.Module, dotted: str, is_package: bool) -> dict[str, Any] | None:
    top = dotted.split(".")[0]
    for stmt in module.body:
        if isinstance(stmt, ast.Raise):
            raised = _raise(stmt)
            if raised is not None:
                return {"imports": [], **raised, "line": stmt.lineno}
            return None
        if isinstance(stmt, ast.Try) and not stmt.finalbody and not stmt.orelse:
            imports = _tried_imports(stmt.body, top, dotted, is_package)
            if not imports:
                continue
            for handler in stmt.handlers:
                if not _catches_import_error(handler):
                    continue
                raised = _handler_raise(handler)
                if raised is not None:
                    return {"imports": imports, **raised, "line": handler.lineno}
                break  # the first handler that catches it swallows it
    return None


def own_imports(module: ast.Module, dotted: str, is_package: bool) -> list[str]:
    """Modules of the same top-level package imported unconditionally at top level (each `from M
    import n` gives M and M.n: n may be a submodule)."""
    top = dotted.split(".")[0]
    found: list[str] = []
    for stmt in module.body:
        if isinstance(stmt, ast.Import):
            found += [a.name for a in stmt.names if a.name.split(".")[0] == top]
        elif isinstance(stmt, ast.ImportFrom):
            base = _absolute(stmt, dotted, is_package)
            if base is None or base.split(".")[0] != top:
                continue
            found.append(base)
            found += [f"{base}.{a.name}" for a in stmt.names if a.name != "*"]
        if len(found) >= MAX_OWN_IMPORTS:
            break
    return [m for m in dict.fromkeys(found) if m != dotted]


def _absolute(stmt: ast.ImportFrom, dotted: str, is_package: bool) -> str | None:
    if not stmt.level:
        return stmt.module
    parts = dotted.split(".")
    if not is_package:
        parts = parts[:-1]
    if stmt.level - 1 > len(parts) - 1:
        return None
    parts = parts[: len(parts) - (stmt.level - 1)]
    return ".".join([*parts, stmt.module] if stmt.module else parts)


def _tried_imports(body: list[ast.stmt], top: str, dotted: str, is_package: bool) -> list[str]:
    """The top-level names of other distributions' modules a `try` body imports, when it does
    nothing but import and bind; else []."""
    names: list[str] = []
    for stmt in body:
        if isinstance(stmt, ast.Import):
            names += [a.name.split(".")[0] for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            base = _absolute(stmt, dotted, is_package)
            if base is None:
                return []
            names.append(base.split(".")[0])
        elif not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Pass, ast.Expr)):
            return []
    return [n for n in dict.fromkeys(names) if n != top and n != "__future__"]


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_dotted(k) in _IMPORT_ERRORS for k in kinds)


def _handler_raise(handler: ast.ExceptHandler) -> dict[str, Any] | None:
    local: dict[str, str] = {}
    for stmt in handler.body:
        if isinstance(stmt, ast.Raise):
            if stmt.exc is None:
                return {"exception": "ImportError", "message": None}  # re-raises what it caught
            return _raise(stmt, local)
        if not _completes_or_raises(stmt):
            return None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            text = _loose_text(stmt.value, local)
            if text is not None:
                local[stmt.targets[0].id] = text
            else:
                local.pop(stmt.targets[0].id, None)
    return None


def _loose_text(node: ast.expr, local: dict[str, str]) -> str | None:
    """A message's text: literals, names bound to one, `+` and f-strings, any other part as `…`."""
    if isinstance(node, ast.Name) and node.id in local:
        return local[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _loose_text(node.left, local), _loose_text(node.right, local)
        if left is None and right is None:
            return None
        return (left if left is not None else "\u2026") + (right if right is not None else "\u2026")
    text = _text(node, {}, None, set())
    return text[0] if text is not None else None


def _raise(stmt: ast.Raise, local: dict[str, str] | None = None) -> dict[str, Any] | None:
    exc = stmt.exc
    if exc is None:
        return None
    message = None
    if isinstance(exc, ast.Call):
        if exc.args and not isinstance(exc.args[0], ast.Starred):
            message = _loose_text(exc.args[0], local or {})
        exc = exc.func
    exception = _dotted(exc)
    if exception is None:
        return None
    return {"exception": exception, "message": message}
