"""What the Python source beside a `.pyi` stub defines at run time.

Input: the stub's path. Output: the top-level names of the `.py` beside it, and the runtime signature of
each plain function and method it defines (None where a decorator may change it); the loader marks the
stub's members as a typing view with these.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from apidrift.auditor.upstream.analyses.namespace import _top_level_names
from apidrift.auditor.upstream.analyses.nodes import _last_name_of, _module_statements
from apidrift.auditor.upstream.signature import Parameter, ParamKind, Signature


def _source_names(stub: Path) -> set[str]:
    """The top-level names of the `.py` beside a `.pyi`, if there is one and it parses."""
    source = stub.with_suffix(".py")
    if not source.is_file():
        return set()
    try:
        return _top_level_names(ast.parse(source.read_bytes()))
    except (SyntaxError, ValueError, RecursionError, OSError):
        return set()


_PLAIN_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "overload", "abstractmethod", "final", "override"}
)


def _source_definitions(stub: Path) -> dict[str, Any]:
    """What the `.py` beside a `.pyi` defines in Python at top level: each function's signature (None when
    a decorator may change it), each class's methods' signatures the same way, in a dict by name."""
    source = stub.with_suffix(".py")
    if not source.is_file():
        return {}
    try:
        tree = ast.parse(source.read_bytes())
    except (SyntaxError, ValueError, RecursionError, OSError):
        return {}
    found: dict[str, Any] = {}
    for stmt in _module_statements(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[stmt.name] = None if stmt.name in found else _ast_signature(stmt)  # defined twice: unknown
        elif isinstance(stmt, ast.ClassDef):
            methods: dict[str, Signature | None] = {}
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[inner.name] = None if inner.name in methods else _ast_signature(inner)
            found[stmt.name] = None if stmt.name in found else methods
    return found


def _ast_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature | None:
    """The signature a plain `def` has at run time; None when a decorator may change it."""
    if any(_last_name_of(d) not in _PLAIN_DECORATORS for d in node.decorator_list):
        return None
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = []
    for index, arg in enumerate(positional):
        kind = ParamKind.POSITIONAL_ONLY if index < len(args.posonlyargs) else ParamKind.POSITIONAL_OR_KEYWORD
        default = args.defaults[index - first_default] if index >= first_default else None
        params.append(
            Parameter(
                arg.arg, kind, default is not None, ast.unparse(default) if default is not None else None
            )
        )
    if args.vararg is not None:
        params.append(Parameter(args.vararg.arg, ParamKind.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(
            Parameter(
                arg.arg,
                ParamKind.KEYWORD_ONLY,
                default is not None,
                ast.unparse(default) if default is not None else None,
            )
        )
    if args.kwarg is not None:
        params.append(Parameter(args.kwarg.arg, ParamKind.VAR_KEYWORD))
    return Signature(tuple(params))
