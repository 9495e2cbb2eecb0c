"""Decorators that keep the signature of the function they are given: they hand back the function
itself, a `functools.wraps` wrapper that forwards its arguments unchanged, a nested decorator or a
callable that keeps it (`through`), a `functools.partial` of themselves (a factory), code the
`decorator` package generates from the signature, or a descriptor that hands back `fget(...)`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import griffe

from apidrift.auditor.upstream.analyses.decorators.flow import _star_wrapper
from apidrift.auditor.upstream.analyses.nodes import _last_name, _own_nodes, _resolve_text
from apidrift.auditor.upstream.astwalk import walk

from .flow import _local_assignments, _none_test, _reachable_returns
from .registries import _uncast
from .renaming import _renames_keyword, _renames_popped_keyword, calls_through


def _is_identity(node: ast.FunctionDef | ast.AsyncFunctionDef, position: int = 0) -> bool:
    """A decorator that hands back what it was given: every `return` returns the parameter at `position`
    (the first; after `self` for a `__call__`), which the body never rebinds (registration decorators
    such as `def register(cls): REGISTRY.add(cls); return cls`)."""
    if isinstance(node, ast.AsyncFunctionDef) or len(node.args.args) <= position:
        return False
    first = node.args.args[position].arg
    returns = []
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Return):
            returns.append(inner)
        elif (
            isinstance(inner, ast.Name) and inner.id == first and not isinstance(inner.ctx, ast.Load)
        ) or isinstance(inner, (ast.Yield, ast.YieldFrom)):
            return False
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == first for r in returns)


def _is_forwarding_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def deco(f): @functools.wraps(f) def w(*a, **k): ...; return f(*a, **k) ...; return w`:
    the wrapper hands every argument to the function unchanged, so a call binds as the function's own."""
    if not node.args.args:
        return False
    first = node.args.args[0].arg
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    returned = [
        r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)
    ]
    if len(returned) != 1 or returned[0] not in inner:
        return False
    wrapper = inner[returned[0]]
    names = _star_wrapper(wrapper, first)
    if names is None:
        return False
    star, double = names
    return any(
        isinstance(call, ast.Call) and calls_through(call, first, star, double) for call in walk(wrapper)
    )


def _keeping(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    position: int,
    func: griffe.Function,
    outer: frozenset[str] = frozenset(),
    depth: int = 0,
) -> tuple[bool, str | None, bool, str | None]:
    """As a decorator given the function at parameter `position`: (keeps its signature for binding,
    `through`, self-partial, effect). Every reachable `return` (with the function given: a branch
    `if func is None:` is not taken) must give the function itself, a `@wraps(f)` wrapper that hands
    `*args, **kwargs` to it unchanged, a call handing the function as the first argument to a nested
    decorator or a callable that keeps it (`through`: `mod.deco` or `mod.Cls:method` for a method of
    a local instance, checked when the callee is resolved), or code generated from the function's own
    signature (`Maker.create(f, "... %(shortsignature)s ...")`, the `decorator` package's template
    contract). `self-partial`: a reachable return gives `functools.partial(<this function>, ...)`.
    `effect` is "positional-by-name" for a wrapper that names positional arguments after the
    function's own parameters (`kwargs.update(zip(signature(f).parameters, args)); f(**kwargs)`)."""
    failed: tuple[bool, str | None, bool, str | None] = (False, None, False, None)
    args = node.args.posonlyargs + node.args.args
    if isinstance(node, ast.AsyncFunctionDef) or len(args) <= position or depth > 2:
        return failed
    param = args[position].arg
    params = {
        a.arg for a in args + node.args.kwonlyargs
    } | outer  # an enclosing function's names are no imports
    own = _own_nodes(node)
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assigned = _local_assignments(node)
    for stmt in own:
        if isinstance(stmt, (ast.Yield, ast.YieldFrom)):
            return failed
        if isinstance(stmt, ast.Name) and stmt.id == param and not isinstance(stmt.ctx, ast.Load):
            return failed
    returns = _reachable_returns(node.body, param)
    if not returns:
        return failed
    throughs: set[str] = set()
    effects: set[str | None] = set()
    self_partial = False
    kept = 0
    reading = _Returns(node, func, param, params, outer, assigned, inner, depth)
    for ret in returns:
        found = reading.kept(ret)
        if found is None:
            return failed
        if isinstance(found, str):  # _SELF_PARTIAL
            self_partial = True
            continue
        through, effect = found
        if through is not None:
            throughs.add(through)
        effects.add(effect)
        kept += 1
    if len(throughs) > 1 or len(effects) > 1 or not kept or (throughs and effects != {None}):
        return False, None, self_partial, None
    return True, (throughs.pop() if throughs else None), self_partial, effects.pop()


_SELF_PARTIAL = "self-partial"  # a return giving `functools.partial(<this function>, ...)`


@dataclass
class _Returns:
    """What one reachable `return` of a decorator gives (see `_keeping`)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    func: griffe.Function
    param: str
    params: set[str]
    outer: frozenset[str]
    assigned: dict[str, list[ast.expr]]
    inner: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    depth: int

    def kept(self, ret: ast.Return) -> tuple[str | None, str | None] | str | None:
        """(through, effect) where the return keeps the signature, `_SELF_PARTIAL`, or None."""
        param, assigned, inner = self.param, self.assigned, self.inner
        value = ret.value
        if isinstance(value, ast.Name) and value.id != param and len(assigned.get(value.id, ())) == 1:
            value = assigned[value.id][0]  # `fun = Maker.create(func, ...); return fun`
        if isinstance(value, ast.Name) and value.id == param:
            return None, None
        if isinstance(value, ast.Name) and value.id in inner and value.id not in assigned:
            return self.wrapper_effect(inner[value.id])
        uncast = _uncast(value)
        if (
            uncast is not value
            and isinstance(uncast, ast.Name)
            and uncast.id in inner
            and uncast.id not in assigned
        ):
            # `return cast(F, wrapper)` (typing's cast: the wrapper itself at run time), pandas `deprecate_kwarg`
            return self.wrapper_effect(inner[uncast.id])
        if not isinstance(value, ast.Call):
            return None
        if self.is_self_partial(value):
            return _SELF_PARTIAL
        if not value.args or not isinstance(value.args[0], ast.Name) or value.args[0].id != param:
            return None
        return self.handed_to(value)

    def wrapper_effect(
        self, wrapper: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[None, str | None] | None:
        """A nested wrapper returned: (no `through`, its effect on binding), or None where it does not
        keep the signature."""
        popped = _renames_popped_keyword(wrapper, self.param, self.params, self.assigned)
        if popped is not None:  # before `_forwards_to`, which reads the popped keyword as handed on
            return None, popped
        if _forwards_to(wrapper, self.param):
            return None, None
        if _binds_by_name(wrapper, self.param, self.assigned):
            return None, "positional-by-name"
        renamed = _renames_keyword(wrapper, self.param, self.params - self.outer, self.assigned)
        return (None, renamed) if renamed is not None else None

    def is_self_partial(self, value: ast.Call) -> bool:
        func = self.func
        return bool(
            _last_name(value.func) == "partial"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == self.node.name
            and not (func.parent is not None and func.parent.is_class)
        )

    def handed_to(self, value: ast.Call) -> tuple[str | None, str | None] | None:
        """A call handed the function as its first argument: a nested decorator, the `decorator`
        package's template, or a callable that keeps it (`through`)."""
        callee, inner, assigned = value.func, self.inner, self.assigned
        if (
            len(value.args) == 1
            and not value.keywords
            and isinstance(callee, ast.Name)
            and callee.id in inner
            and callee.id not in assigned
        ):
            # `if func is not None: return _inner(func)`: the nested decorator decides
            enclosing = self.params | set(assigned) | set(inner)
            keeps, through, partial_, effect = _keeping(
                inner[callee.id], 0, self.func, frozenset(enclosing), self.depth + 1
            )
            if not keeps or partial_:
                return None
            return through or None, effect
        if (
            isinstance(callee, ast.Attribute)
            and callee.attr == "create"
            and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and "%(shortsignature)s" in a.value
                for a in value.args[1:2]
            )
        ):
            return None, None
        through = _through_path(callee, self.params, assigned, inner, self.func)
        return None if through is None else (through, None)


def _binds_by_name(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str, enclosing: dict[str, list[ast.expr]]
) -> bool:
    """`sig = signature(f)` in the decorator, then `@wraps(f) def w(*args, **kwargs): ...;
    kwargs.update(zip(sig.parameters, args)); return f(**kwargs)` (or `f(*args, **kwargs)` untouched):
    each positional argument is passed by the name of `f`'s parameter at its place, so keyword-only
    parameters take positional arguments too and extra ones are dropped (zip stops at the shorter)."""
    names = _star_wrapper(wrapper, param)
    if names is None:
        return False
    star, double = names
    signatures = {
        name
        for name, values in enclosing.items()
        if len(values) == 1
        and isinstance(values[0], ast.Call)
        and _last_name(values[0].func) == "signature"
        and len(values[0].args) == 1
        and isinstance(values[0].args[0], ast.Name)
        and values[0].args[0].id == param
    }

    updated = False
    for inner in walk(wrapper):
        if (
            isinstance(inner, ast.Name)
            and inner.id in (star, double, param)
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id in (star, double)
        ):
            if inner.func.attr != "update" or inner.func.value.id != double:
                if inner.func.attr in ("pop", "setdefault", "clear", "popitem", "__setitem__", "__delitem__"):
                    return False
                continue
            if (
                len(inner.args) != 1
                or inner.keywords
                or not _names_positionals(inner.args[0], signatures, star)
            ):
                return False
            updated = True
        if (
            isinstance(inner, (ast.Subscript,))
            and isinstance(inner.value, ast.Name)
            and inner.value.id == double
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
    calls = [
        c
        for c in walk(wrapper)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == param
    ]

    return updated and bool(calls) and all(_spreads(c, star, double) for c in calls)


def _names_positionals(arg: ast.expr, signatures: set[str], star: str) -> bool:
    """`zip(sig.parameters, args)`, or `{k: a for k, a in zip(sig.parameters, args)}`, for a `sig` in
    `signatures` and `args` the wrapper's `*args`."""
    if isinstance(arg, ast.DictComp) and len(arg.generators) == 1:
        gen = arg.generators[0]
        if not (isinstance(gen.target, ast.Tuple) and len(gen.target.elts) == 2 and not gen.ifs):
            return False
        k, a = gen.target.elts
        if not (
            isinstance(arg.key, ast.Name)
            and isinstance(k, ast.Name)
            and arg.key.id == k.id
            and isinstance(arg.value, ast.Name)
            and isinstance(a, ast.Name)
            and arg.value.id == a.id
        ):
            return False
        arg = gen.iter
    return (
        isinstance(arg, ast.Call)
        and _last_name(arg.func) == "zip"
        and len(arg.args) == 2
        and not arg.keywords
        and isinstance(arg.args[0], ast.Attribute)
        and arg.args[0].attr == "parameters"
        and isinstance(arg.args[0].value, ast.Name)
        and arg.args[0].value.id in signatures
        and isinstance(arg.args[1], ast.Name)
        and arg.args[1].id == star
    )


def _spreads(call: ast.Call, star: str, double: str) -> bool:
    """`f(**kwargs)` (after the positional arguments were named) or `f(*args, **kwargs)`."""
    spread = (
        len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == double
    )
    if not spread:
        return False
    if not call.args:
        return True  # f(**kwargs), after the positional arguments were named
    return (
        len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == star
    )


def _through_path(
    callee: ast.expr,
    params: set[str],
    assigned: dict[str, list[ast.expr]],
    inner: dict[str, Any],
    func: griffe.Function,
) -> str | None:
    """The canonical path of the callable a decorator hands the function to: a module-level name or
    dotted import (`mod.deco`), or `mod.Cls:method` for `lock = Cls(...); return lock.method(f)`."""
    if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name):
        local = callee.value.id
        values = assigned.get(local, ())
        if (
            len(values) == 1
            and isinstance(values[0], ast.Call)
            and isinstance(values[0].func, (ast.Name, ast.Attribute))
        ):
            built = ast.unparse(values[0].func)
            if (
                built.split(".")[0] in params
                or built.split(".")[0] in assigned
                or built.split(".")[0] in inner
            ):
                return None
            resolved = _resolve_text(func, built)
            return None if resolved.startswith("?") else f"{resolved}:{callee.attr}"
    if not isinstance(callee, (ast.Name, ast.Attribute)):
        return None
    text = ast.unparse(callee)
    head = text.split(".")[0]
    if head in params or head in assigned or head in inner or head in ("self", "cls"):
        return None
    resolved = _resolve_text(func, text)
    return None if resolved.startswith("?") else resolved


def _forwards_to(wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """`@wraps(param) def w(*a, **k): ... return param(*a, **k)`: binds as `param`'s own signature."""
    names = _star_wrapper(wrapper, param)
    if names is None:
        return False
    star, double = names
    calls = [
        c
        for c in walk(wrapper)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == param
    ]
    # Every call of the function forwards the arguments as received; `*a` and `**k` are never rebound.
    for inner in walk(wrapper):
        if (
            isinstance(inner, ast.Name)
            and inner.id in (star, double, param)
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id in (star, double)
            and inner.func.attr in ("update", "pop", "setdefault", "clear", "popitem")
        ):
            return False
    return bool(calls) and all(
        len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == star
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == double
        for call in calls
    )


def _self_partial_arity(node: ast.FunctionDef | ast.AsyncFunctionDef, func: griffe.Function) -> int | None:
    """`def deco(a, b, func=None): ... return functools.partial(deco, a, b)`: how many positional
    arguments every such partial fills (the decorated function is the next parameter), if the same."""
    if func.parent is not None and func.parent.is_class:
        return None
    values = [r.value for r in _own_nodes(node) if isinstance(r, ast.Return) and r.value is not None]
    values += [s.value for s in _own_nodes(node) if isinstance(s, ast.Assign)]
    arities = {
        len(v.args) - 1
        for v in values
        if isinstance(v, ast.Call)
        and _last_name(v.func) == "partial"
        and v.args
        and isinstance(v.args[0], ast.Name)
        and v.args[0].id == node.name
        and not any(isinstance(a, ast.Starred) for a in v.args)
    }
    args = node.args.posonlyargs + node.args.args
    if len(arities) != 1:
        return None
    filled = arities.pop()
    if filled >= len(args):
        return None
    # a keyword of the partial must not fill the function's own parameter (`**kwargs` holds the rest)
    for v in values:
        if isinstance(v, ast.Call) and _last_name(v.func) == "partial":
            if any(k.arg == args[filled].arg for k in v.keywords):
                return None
            if any(
                k.arg is None
                and not (
                    node.args.kwarg and isinstance(k.value, ast.Name) and k.value.id == node.args.kwarg.arg
                )
                for k in v.keywords
            ):
                return None
    # the function's parameter is optional (`func=None`): absent, the partial is what comes back
    return filled if len(args) - filled <= len(node.args.defaults) else None


def _returns_identity_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def derived_from(original): def wrapper(method): ...; return method; return wrapper` (or `return
    lambda fn: fn`): calling it gives a decorator that hands back what it is given."""
    inner = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    returned = [
        r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)
    ]
    returns_all = [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    if len(returns_all) == 1 and isinstance(lam := returns_all[0].value, ast.Lambda):
        # `return lambda fn: fn`
        args = lam.args
        return (
            not args.posonlyargs
            and len(args.args) == 1
            and not (args.vararg or args.kwonlyargs or args.kwarg)
            and isinstance(lam.body, ast.Name)
            and lam.body.id == args.args[0].arg
        )
    return (
        len(returned) == 1 == len(returns_all)
        and returned[0] in inner
        and (_is_identity(inner[returned[0]]) or _is_forwarding_wrapper(inner[returned[0]]))
    )


def _returns_package_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef, func: griffe.Function) -> bool:
    """A factory whose one `return` gives a caller built by the `decorator` package (`@decorator def
    caller(func, *args, **kw)`): the package's contract is that the decorated function keeps its signature."""
    inner = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    returns = [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name) or returns[0].value.id not in inner:
        return False
    builders = (
        ast.unparse(d)
        for d in inner[returns[0].value.id].decorator_list
        if isinstance(d, (ast.Name, ast.Attribute))
    )
    return any(_resolve_text(func, b) in ("decorator.decorator", "decorator.decorate") for b in builders)


def _hands_back_fget(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A descriptor `__get__(self, instance, owner)` whose every `return`, for an instance, gives
    `self.fget(...)` (directly, or through a name only ever assigned that, as a memoizing descriptor
    does: `obj.__dict__[name] = result = self.fget(obj); return result`): the attribute read gives the
    getter's result, as `property` does. A return under `if instance is None:` is the read through the
    class; a return in an `except AttributeError:` handler is the path where the getter failed, which a
    plain `property` reports by raising."""
    if isinstance(node, ast.AsyncFunctionDef) or not node.args.args:
        return False
    this = node.args.args[0].arg
    instance = node.args.args[1].arg if len(node.args.args) > 1 else None
    handled: set[int] = set()
    for inner in walk(node):
        if (
            isinstance(inner, ast.ExceptHandler)
            and isinstance(inner.type, ast.Name)
            and inner.type.id == "AttributeError"
        ):
            handled |= {id(n) for stmt in inner.body for n in walk(stmt)}
        if instance is not None and isinstance(inner, ast.If) and _none_test(inner.test, instance) is True:
            handled |= {id(n) for stmt in inner.body for n in walk(stmt)}

    def is_getter_call(value: ast.expr | None) -> bool:
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "fget"
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == this
        )

    returns = []
    assigned: dict[str, list[ast.expr | None]] = {}
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(inner, ast.Return) and id(inner) not in handled:
            returns.append(inner)
        if isinstance(inner, ast.Assign):
            pairs: list[tuple[ast.expr, ast.expr | None]] = [(t, inner.value) for t in inner.targets]
        elif isinstance(inner, (ast.AnnAssign, ast.NamedExpr)):
            pairs = [(inner.target, inner.value)]
        elif isinstance(inner, (ast.AugAssign, ast.For, ast.With)):
            pairs = [(inner.target, None)] if not isinstance(inner, ast.With) else []
        else:
            pairs = []
        for target, value in pairs:
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, []).append(value)
    return bool(returns) and all(
        is_getter_call(r.value)
        or (
            isinstance(r.value, ast.Name)
            and bool(assigned.get(r.value.id))
            and all(is_getter_call(v) for v in assigned[r.value.id])
        )
        for r in returns
    )


def _stores_fget(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`__init__(self, fget, ...)` whose body stores `self.fget = fget` at its top level (so always), and
    assigns `self.fget` nothing else anywhere."""
    params = node.args.args
    if isinstance(node, ast.AsyncFunctionDef) or len(params) < 2:
        return False
    this, first = params[0].arg, params[1].arg

    def stores_param(stmt: ast.AST) -> bool:
        return (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id == first
            and any(_is_self_fget(t, this) for t in stmt.targets)
        )

    stored = any(stores_param(stmt) for stmt in node.body)
    for inner in _own_nodes(node):
        targets = (
            inner.targets
            if isinstance(inner, ast.Assign)
            else [inner.target]
            if isinstance(inner, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        if any(_is_self_fget(t, this) for t in targets) and not stores_param(inner):
            return False
    return stored


def _is_self_fget(target: ast.expr, this: str) -> bool:
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "fget"
        and isinstance(target.value, ast.Name)
        and target.value.id == this
    )
