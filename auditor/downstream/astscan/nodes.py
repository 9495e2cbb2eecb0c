"""Small readings of `ast` nodes: dotted names, assignment targets, identifiers, child fields in
the order the collector visits them."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from apidrift.auditor.downstream.astscan.text import Located

_NO_NODES = frozenset({"ctx", "op", "ops", "type_comment", "type_ignores"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type[ast.AST]) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _NO_NODES)
    return fields


def _position(node: Located) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _in_source_order(nodes: list[ast.expr | ast.keyword]) -> list[ast.expr | ast.keyword]:
    return sorted(nodes, key=_position)


def _first_argument(node: ast.Call) -> ast.expr | None:
    """The value of a call's first argument as written (`*a` and `**k` give `a` and `k`)."""
    first: ast.expr | ast.keyword | None = None
    if node.args:
        first = node.args[0]
    if node.keywords and (first is None or _position(node.keywords[0]) < _position(first)):
        first = node.keywords[0]
    if first is None:
        return None
    if isinstance(first, (ast.Starred, ast.keyword)):
        return first.value
    return first


def _dotted(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _identifiers(node: ast.AST) -> Iterator[str]:
    """Every identifier written in `node`: names, attribute names, keyword and parameter names, the
    constants `None`, `True` and `False`, and the names a statement defines, imports or declares."""
    # `kind is ast.X` (cheaper than isinstance on this hot path) does not narrow for mypy: the
    # `type: ignore[attr-defined]`s below are those reads.
    for child in ast.walk(node):
        kind = type(child)
        if kind is ast.Name:
            yield child.id  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            yield child.attr  # type: ignore[attr-defined]
        elif kind is ast.Constant:
            value = child.value  # type: ignore[attr-defined]
            if value is None or value is True or value is False:
                yield str(value)
        elif kind is ast.keyword or kind is ast.arg:
            if child.arg is not None:  # type: ignore[attr-defined]
                yield child.arg  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            yield child.name  # type: ignore[attr-defined]
        elif kind is ast.alias:
            if child.name != "*":  # type: ignore[attr-defined]
                yield from child.name.split(".")  # type: ignore[attr-defined]
            if child.asname is not None:  # type: ignore[attr-defined]
                yield child.asname  # type: ignore[attr-defined]
        elif kind is ast.ImportFrom:
            if child.module:  # type: ignore[attr-defined]
                yield from child.module.split(".")  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            yield from child.names  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler or kind in (ast.MatchAs, ast.MatchStar):
            if child.name is not None:  # type: ignore[attr-defined]
                yield child.name  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping:
            if child.rest is not None:  # type: ignore[attr-defined]
                yield child.rest  # type: ignore[attr-defined]
        elif kind is ast.MatchClass:
            yield from child.kwd_attrs  # type: ignore[attr-defined]


def _is_trivial_base(node: ast.expr) -> bool:
    """`object`, `Generic[T]`, `Protocol`: bases that add nothing to what is inherited."""
    head = node.value if isinstance(node, ast.Subscript) else node
    name = (_dotted(head) or "").rsplit(".", 1)[-1]
    return name in ("object", "Generic", "Protocol")
