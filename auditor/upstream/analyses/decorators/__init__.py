"""What a decorator provably does to the signature of the function it is given.

Input: a function's AST node and its griffe object (for names resolved through its module's imports).
Output: whether, as a decorator or as a decorator factory, it hands back the function itself or a
wrapper that binds as the function's own signature (identity), the callable it hands the function to
(`through`, checked when that callee is resolved), an effect on binding ("positional-by-name"), and
whether its typing (`def d(f: F) -> F` with a TypeVar F) promises that the signature is kept.

The readers, by decorator family: `wrappers` (decorators that hand back the function itself or a
`functools.wraps` wrapper forwarding its arguments, factories and `functools.partial` of themselves,
the `decorator` package, property-like descriptors), `renaming` (wrappers that rename a keyword on
the way), `shims` (wrappers that warn when given positional arguments: deprecation shims),
`typevars` (a TypeVar-typed signature promising the signature is kept), `registries` (decorators
that register what they decorate, re-apply it, or set attributes on it); `flow` holds what they
share (the returns reachable in a body, its local assignments). `_decorator_facts` joins them.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

from apidrift.auditor.upstream.analyses.nodes import _own_nodes

from .flow import _reachable_returns
from .registries import (
    _container_stores,
    _reapplies_registered,
    _registers_self,
    _sets_attributes_of_arguments,
)
from .shims import _shim_warning
from .typevars import _keeps_signature
from .wrappers import (
    _hands_back_fget,
    _is_forwarding_wrapper,
    _is_identity,
    _keeping,
    _returns_identity_decorator,
    _returns_package_decorator,
    _self_partial_arity,
    _stores_fget,
)


def _decorator_facts(
    node: ast.FunctionDef | ast.AsyncFunctionDef, position: int, func: griffe.Function
) -> dict[str, Any]:
    """identity / factory (with their `through` callables and effects) from what every path returns."""
    facts: dict[str, Any] = {}
    filled = _self_partial_arity(node, func)
    if filled is not None:  # `@deco(a, b)` gives partial(deco, a, b): the function comes in after them
        keeps, through, self_partial, effect = _keeping(node, filled, func)
        if keeps and not self_partial:
            facts.update(factory=True, factory_through=through, factory_effect=effect)
            facts.update(factory_warning=_shim_warning(node, filled))
        return facts
    keeps, through, self_partial, effect = _keeping(node, position, func)
    if keeps and not self_partial:
        facts.update(identity=True, through=through, effect=effect, warning=_shim_warning(node, position))
    # `@deco(...)`: what comes back without the function (`def deco(func=None, *, v=...)` returns the
    # nested decorator when `func is None`; a plain factory returns it always)
    args = node.args.posonlyargs + node.args.args
    param = args[position].arg if len(args) > position else None
    given_none = param is not None and len(args) - position <= len(node.args.defaults)
    returns = (
        _reachable_returns(node.body, param, True)
        if given_none and param
        else [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    )
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if len(returns) == 1 and isinstance(returns[0].value, ast.Name) and returns[0].value.id in inner:
        enclosing = {
            n.id for n in _own_nodes(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        enclosing |= {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs} | set(
            inner
        )
        keeps, through, self_partial, effect = _keeping(
            inner[returns[0].value.id], 0, func, frozenset(enclosing)
        )
        if keeps and effect is not None and effect.startswith("rename-keyword:"):
            # the names it reads must be the factory's own parameters, never rebound in its body: the
            # decorator's arguments at each use are then what the wrapper sees
            own = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
            stored = {
                n.id for n in _own_nodes(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
            }
            named = [p.removeprefix("none=") for p in effect.split(":")[1:] if p != "drops-none"]
            keeps = all(name in own and name not in stored for name in named)
        if keeps and not self_partial:
            facts.update(factory=True, factory_through=through, factory_effect=effect)
            facts.update(factory_warning=_shim_warning(inner[returns[0].value.id], 0, node))
    return facts


__all__ = [
    "_container_stores",
    "_decorator_facts",
    "_hands_back_fget",
    "_is_forwarding_wrapper",
    "_is_identity",
    "_keeps_signature",
    "_reapplies_registered",
    "_registers_self",
    "_returns_identity_decorator",
    "_returns_package_decorator",
    "_sets_attributes_of_arguments",
    "_stores_fget",
]
