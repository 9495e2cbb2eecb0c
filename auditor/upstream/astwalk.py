"""Walks of a tree for the analyses of a loaded upstream module, cheaper than `ast.walk`.

Input: a node of a loaded upstream module's tree (never changed once parsed). Output: the nodes
`ast.walk(node)` gives, in its order (breadth first, each node's children in field order), as a list.
`walk` reads each node's fields directly instead of through `ast.iter_child_nodes`' generators (about
half the cost); `walk_once` keeps the result on the node itself, so that the module-level analyses
(class patches, static truths, ...) pay for one walk of a module instead of one each.
"""

from __future__ import annotations

import ast

_KEY = "_apidrift_walk"
_AST = ast.AST


def walk(node: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(node))`, same nodes, same order."""
    found: list[ast.AST] = [node]
    append = found.append
    i = 0
    while i < len(found):
        current = found[i]
        i += 1
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, _AST):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
    return found


def children(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, same nodes, same order."""
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _AST):
                    found.append(item)
    return found


def walk_once(node: ast.AST) -> list[ast.AST]:
    """`walk(node)`, computed once per node (the caller must not change the list)."""
    cached = node.__dict__.get(_KEY)
    if cached is None:
        cached = node.__dict__[_KEY] = walk(node)
    return cached
