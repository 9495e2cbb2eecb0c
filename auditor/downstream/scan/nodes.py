"""Small readings of LibCST nodes: dotted names, assignment targets, the names and calls inside a
node, positions as `Span`s."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import CodeRange

from apidrift.auditor.core.sites import Span

_BLOCKS = tuple(
    getattr(cst, n)
    for n in ("If", "Try", "TryStar", "With", "For", "While", "FunctionDef", "ClassDef", "Match")
    if hasattr(cst, n)
)


def _span(position: CodeRange) -> Span:
    return Span(position.start.line, position.start.column + 1, position.end.line, position.end.column + 1)


def _dotted(node: cst.CSTNode | None) -> str | None:
    """`a.b.c` for a name or a chain of attributes of one; None for any other node."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _name_of(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _decorator_name(decorator: cst.Decorator) -> str | None:
    return _dotted(decorator.decorator)


def _is_trivial_base(node: cst.BaseExpression) -> bool:
    """`object`, `Generic[T]`, `Protocol`: bases that add nothing to what is inherited."""
    head = node.value if isinstance(node, cst.Subscript) else node
    name = (_dotted(head) or "").rsplit(".", 1)[-1]
    return name in ("object", "Generic", "Protocol")


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(_Names())
    return found


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

    node.visit(_Calls())
    return found
