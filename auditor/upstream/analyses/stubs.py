"""What the Python source beside a `.pyi` stub defines at run time.

Input: the stub's path. Output: the top-level names of the `.py` beside it, the runtime signature of
each function and method it defines (marked where a decorator may change it), and what each of
its classes binds beyond what the stub declares; the loader marks the stub's members as a typing view
with these.
"""

from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apidrift.auditor.core.signature import Signature
from apidrift.auditor.upstream.analyses.namespace import (
    _body_bound_names,
    _class_patches,
    _getattr_program,
    _instance_attributes,
    _top_level_names,
    _uses_namespace_functions,
)
from apidrift.auditor.upstream.analyses.nodes import _class_statements, _last_name_of, _module_statements
from apidrift.auditor.upstream.analyses.spelled import spelled_signature

MAX_BESIDE_BYTES = 5 * 1024 * 1024  # as api_index.MAX_MODULE_BYTES: a larger source is not read


@functools.lru_cache(maxsize=8)
def _parsed_source(stub: Path) -> ast.Module | None:
    """The `.py` beside a `.pyi`, parsed (once for the analyses below), if there is one and it parses."""
    source = stub.with_suffix(".py")
    try:
        if not source.is_file() or source.is_symlink() or source.stat().st_size > MAX_BESIDE_BYTES:
            return None
        return ast.parse(source.read_bytes())
    except (SyntaxError, ValueError, RecursionError, OSError):
        return None


def _source_text(stub: Path) -> str:
    """The text of the `.py` beside a `.pyi` (bounded as `_parsed_source` reads it), or ""."""
    source = stub.with_suffix(".py")
    try:
        if not source.is_file() or source.is_symlink() or source.stat().st_size > MAX_BESIDE_BYTES:
            return ""
        return source.read_bytes()[:MAX_BESIDE_BYTES].decode("utf-8", "replace")
    except OSError:
        return ""


def _source_names(stub: Path) -> set[str]:
    """The top-level names of the `.py` beside a `.pyi`, if there is one and it parses."""
    tree = _parsed_source(stub)
    return _top_level_names(tree) if tree is not None else set()


def _source_star_imports(stub: Path, dotted: str) -> list[str]:
    """The modules the `.py` beside a `.pyi` star-imports at module level, as absolute paths (numpy 2.0
    `numpy/rec/__init__.py`: `from numpy._core.records import *`, whose `find_duplicate` the stub
    beside it does not list): names the stub leaves out may come from there at run time."""
    tree = _parsed_source(stub)
    if tree is None:
        return []
    package = dotted.split(".") if stub.stem == "__init__" else dotted.split(".")[:-1]
    found = []
    for stmt in _module_statements(tree):
        if not (isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names)):
            continue
        if stmt.level:
            keep = len(package) - (stmt.level - 1)
            if keep <= 0:
                continue
            found.append(".".join(package[:keep] + ([stmt.module] if stmt.module else [])))
        elif stmt.module:
            found.append(stmt.module)
    return found


def _source_getattr(stub: Path) -> tuple[dict[str, Any], str] | None:
    """The module `__getattr__` program of the `.py` beside a `.pyi` (see namespace._getattr_program)
    and that source's text, if it binds one: the stub declares what type checkers see, the source's
    `__getattr__` serves the names the stub leaves out (numpy 1.23's deprecated `np.bool`)."""
    tree = _parsed_source(stub)
    if tree is None:
        return None
    program = _getattr_program(tree)
    if program is None:
        return None
    try:  # read (and size-checked) by _parsed_source a moment ago
        return program, stub.with_suffix(".py").read_bytes()[:MAX_BESIDE_BYTES].decode("utf-8", "replace")
    except OSError:
        return None


_PLAIN_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "overload", "abstractmethod", "final", "override"}
)


def _source_definitions(stub: Path) -> dict[str, Any]:
    """What the `.py` beside a `.pyi` defines in Python at top level: each function's signature (a
    `Decorated` one when a decorator may change it), each class's methods' signatures the same way, in a
    dict by name; None for a name defined twice."""
    tree = _parsed_source(stub)
    if tree is None:
        return {}
    found: dict[str, Any] = {}
    for stmt in _module_statements(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[stmt.name] = None if stmt.name in found else _ast_signature(stmt)  # defined twice: unknown
        elif isinstance(stmt, ast.ClassDef):
            methods: dict[str, Signature | Decorated | None] = {}
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[inner.name] = None if inner.name in methods else _ast_signature(inner)
            found[stmt.name] = None if stmt.name in found else methods
    return found


@dataclass(frozen=True)
class Decorated:
    """The signature a `def` spells under a decorator that may change it: evidence of what the source
    accepts, not of what the decorated callable binds."""

    signature: Signature


def _ast_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature | Decorated:
    """The signature a plain `def` has at run time; `Decorated` when a decorator may change it."""
    signature = spelled_signature(node)
    if any(_last_name_of(d) not in _PLAIN_DECORATORS for d in node.decorator_list):
        return Decorated(signature)
    return signature


def _source_classes(stub: Path, dotted: str) -> dict[str, dict[str, Any]]:
    """What each top-level class of the `.py` beside a `.pyi` binds at run time that the stub may leave
    out: the names its body binds, the attributes its methods set on `self`, and those the module's code
    binds on it; whether its namespace is open (setattr, `__dict__` games); and its decorators as
    (canonical path, called), named through the `.py`'s own imports. A stub omits what it pleases
    (deprecated methods, aliases a class decorator adds): only the source says what the class holds."""
    tree = _parsed_source(stub)
    if tree is None:
        return {}
    package = dotted if stub.stem == "__init__" else dotted.rpartition(".")[0]
    names = _import_map(tree, dotted, package)
    patches = _class_patches(tree)
    found: dict[str, dict[str, Any]] = {}
    for stmt in _module_statements(tree):
        if not isinstance(stmt, ast.ClassDef):
            continue
        if stmt.name in found:
            found[stmt.name] = {
                "names": set(),
                "open": True,
                "decorators": [],
                "methods": {},
            }  # defined twice
            continue
        instance, dynamic = _instance_attributes(stmt)
        patch = patches.get(stmt.name, {})
        found[stmt.name] = {
            "methods": _plain_methods(stmt),
            "names": _body_bound_names(list(_class_statements(stmt)))
            | instance
            | set(patch.get("names", ())),
            "open": dynamic
            or bool(patch.get("open"))
            or _uses_namespace_functions(list(_class_statements(stmt))),
            "decorators": [_decorator_path(d, names) for d in stmt.decorator_list],
        }
    return found


_METHOD_KINDS = {
    "staticmethod": "builtins.staticmethod",
    "classmethod": "builtins.classmethod",
    "abstractmethod": "abc.abstractmethod",
}


def _plain_methods(node: ast.ClassDef) -> dict[str, tuple[Signature, tuple[str, ...]]]:
    """The methods a class body defines once, directly, with no decorator but staticmethod, classmethod
    or abstractmethod, and binds no other way: each one's signature as CPython binds it and its
    decorators' canonical paths."""
    statements = list(_class_statements(node))
    defs = [s for s in statements if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    counts: dict[str, int] = {}
    for definition in defs:
        counts[definition.name] = counts.get(definition.name, 0) + 1
    others = _body_bound_names(
        [s for s in statements if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    )
    found: dict[str, tuple[Signature, tuple[str, ...]]] = {}
    for stmt in node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if counts.get(stmt.name) != 1 or stmt.name in others:
            continue
        kinds = [d.id if isinstance(d, ast.Name) else None for d in stmt.decorator_list]
        if not all(k in _METHOD_KINDS for k in kinds) or len(set(kinds)) != len(kinds):
            continue
        found[stmt.name] = (spelled_signature(stmt), tuple(_METHOD_KINDS[k] for k in kinds if k))
    return found


def _import_map(tree: ast.Module, dotted: str, package: str) -> dict[str, str]:
    """Each top-level name of a module -> the canonical path it stands for (imports followed one step)."""
    names: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - (stmt.level - 1)]) if stmt.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in stmt.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{base}.{alias.name}"
    for name in _top_level_names(tree):
        names.setdefault(name, f"{dotted}.{name}")
    return names


def _decorator_path(node: ast.expr, names: dict[str, str]) -> tuple[str, bool]:
    called = isinstance(node, ast.Call)
    target = node.func if isinstance(node, ast.Call) else node
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if not isinstance(target, ast.Name):
        return f"?{ast.unparse(node)}", called
    base = names.get(target.id)
    if base is None:
        return (f"builtins.{target.id}" if hasattr(builtins, target.id) else f"?{target.id}"), called
    return ".".join([base, *reversed(parts)]), called
