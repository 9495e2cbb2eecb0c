"""What a decorator provably does to the signature of the function it is given.

Input: a function's AST node and its griffe object (for names resolved through its module's imports).
Output: whether, as a decorator or as a decorator factory, it hands back the function itself or a
wrapper that binds as the function's own signature (identity), the callable it hands the function to
(`through`, checked when that callee is resolved), an effect on binding ("positional-by-name"), and
whether its typing (`def d(f: F) -> F` with a TypeVar F) promises that the signature is kept.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

from apidrift.auditor.upstream.analyses.nodes import _last_name, _own_nodes, _resolve_text
from apidrift.auditor.upstream.astwalk import children, walk


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
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == first
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == first
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == star
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == double
        for call in walk(wrapper)
    )


# -- what a decorator provably does to the signature of the function it is given ---------------------


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
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name) and value.id != param and len(assigned.get(value.id, ())) == 1:
            value = assigned[value.id][0]  # `fun = Maker.create(func, ...); return fun`
        if isinstance(value, ast.Name) and value.id == param:
            kept += 1
            effects.add(None)
            continue
        if isinstance(value, ast.Name) and value.id in inner and value.id not in assigned:
            if _forwards_to(inner[value.id], param):
                effects.add(None)
            elif _binds_by_name(inner[value.id], param, assigned):
                effects.add("positional-by-name")
            elif (renamed := _renames_keyword(inner[value.id], param, params - outer, assigned)) is not None:
                effects.add(renamed)
            else:
                return failed
            kept += 1
            continue
        if not isinstance(value, ast.Call):
            return failed
        callee = value.func
        if (
            _last_name(callee) == "partial"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == node.name
            and not (func.parent is not None and func.parent.is_class)
        ):
            self_partial = True
            continue
        if not value.args or not isinstance(value.args[0], ast.Name) or value.args[0].id != param:
            return failed
        if (
            len(value.args) == 1
            and not value.keywords
            and isinstance(callee, ast.Name)
            and callee.id in inner
            and callee.id not in assigned
        ):
            # `if func is not None: return _inner(func)`: the nested decorator decides
            enclosing = params | set(assigned) | set(inner)
            keeps, through, partial_, effect = _keeping(
                inner[callee.id], 0, func, frozenset(enclosing), depth + 1
            )
            if not keeps or partial_:
                return failed
            if through:
                throughs.add(through)
            effects.add(effect)
            kept += 1
            continue
        if (
            isinstance(callee, ast.Attribute)
            and callee.attr == "create"
            and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and "%(shortsignature)s" in a.value
                for a in value.args[1:2]
            )
        ):
            kept += 1
            effects.add(None)
            continue
        through = _through_path(callee, params, assigned, inner, func)
        if through is None:
            return failed
        throughs.add(through)
        effects.add(None)
        kept += 1
    if len(throughs) > 1 or len(effects) > 1 or not kept or (throughs and effects != {None}):
        return False, None, self_partial, None
    return True, (throughs.pop() if throughs else None), self_partial, effects.pop()


def _local_assignments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr]]:
    """Each local name with the values assigned to it (a placeholder for augmented or unpacked ones)."""
    assigned: dict[str, list[ast.expr]] = {}
    for stmt in _own_nodes(node):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        assigned.setdefault(name.id, []).append(
                            stmt.value if target is name else ast.Constant(None)
                        )
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
            assigned.setdefault(stmt.target.id, []).extend([ast.Constant(None), ast.Constant(None)])
        elif isinstance(stmt, (ast.For, ast.With, ast.NamedExpr, ast.comprehension)):
            for name in walk(getattr(stmt, "target", stmt)):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    assigned.setdefault(name.id, []).extend([ast.Constant(None), ast.Constant(None)])
    return assigned


def _none_test(test: ast.expr, param: str) -> bool | None:
    """True for `param is None`, False for `param is not None`, None for any other test."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == param
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if isinstance(test.ops[0], ast.Is):
            return True
        if isinstance(test.ops[0], ast.IsNot):
            return False
    return None


def _reachable_returns(body: list[ast.stmt], param: str, is_none: bool = False) -> list[ast.Return]:
    """The `return`s of a function body that can run when `param is None` is `is_none`: a top-level
    `if param is None:` / `if param is not None:` branch is followed only when it is taken."""
    found: list[ast.Return] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and (test := _none_test(stmt.test, param)) is not None:
            taken = stmt.body if test == is_none else stmt.orelse
            found.extend(_reachable_returns(taken, param, is_none))
            if taken and isinstance(taken[-1], (ast.Return, ast.Raise)):
                return found
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: list[ast.AST] = [stmt]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Return):
                found.append(current)
            if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(children(current))
        if isinstance(stmt, (ast.Return, ast.Raise)):
            break
    return found


def _binds_by_name(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str, enclosing: dict[str, list[ast.expr]]
) -> bool:
    """`sig = signature(f)` in the decorator, then `@wraps(f) def w(*args, **kwargs): ...;
    kwargs.update(zip(sig.parameters, args)); return f(**kwargs)` (or `f(*args, **kwargs)` untouched):
    each positional argument is passed by the name of `f`'s parameter at its place, so keyword-only
    parameters take positional arguments too and extra ones are dropped (zip stops at the shorter)."""
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
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

    def names_positionals(arg: ast.expr) -> bool:
        # zip(sig.parameters, args), or {k: a for k, a in zip(sig.parameters, args)}
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
            if len(inner.args) != 1 or inner.keywords or not names_positionals(inner.args[0]):
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

    def forwards(call: ast.Call) -> bool:
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

    return updated and bool(calls) and all(forwards(c) for c in calls)


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
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
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


def _sets_attributes_of_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`setattr(cls, ...)` or `cls.name = ...` (a name that is not a dunder) on one of the function's
    parameters, here or in a function nested in it (matplotlib `_define_aliases` adds `set_lw`)."""
    cached = node.__dict__.get("_apidrift_sets_attributes")
    if cached is None:  # the loader asks twice per function
        cached = node.__dict__["_apidrift_sets_attributes"] = _read_sets_attributes(node)
    return cached


def _read_sets_attributes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    params = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    params.discard("self")
    if not params:
        return False  # nothing below can match
    for inner in walk(node):
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "setattr"
            and inner.args
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id in params
        ):
            return True
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.ctx, ast.Store)
            and isinstance(inner.value, ast.Name)
            and inner.value.id in params
            and not (inner.attr.startswith("__") and inner.attr.endswith("__"))
        ):
            return True
    return False


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
        if keeps and not self_partial:
            facts.update(factory=True, factory_through=through, factory_effect=effect)
            facts.update(factory_warning=_shim_warning(inner[returns[0].value.id], 0, node))
    return facts


def _returns_identity_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def derived_from(original): def wrapper(method): ...; return method; return wrapper`: calling it
    gives a decorator that hands back what it is given."""
    inner = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    returned = [
        r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)
    ]
    returns_all = [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
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


_TYPEVAR_NAME = re.compile(r"^_?[A-Z][A-Za-z0-9_]{0,9}$")


def _keeps_signature(func: griffe.Function) -> tuple[bool, bool]:
    """(as a decorator, as a decorator factory): typed `def d(f: F) -> F` or `-> Callable[[F], F]` with a
    TypeVar F (or `Type[T]` for class decorators), in the implementation or any of its overloads: the
    contract type checkers rely on that the decorated object keeps its signature."""
    plain = called = False
    is_method = bool(func.parent is not None and func.parent.is_class and "staticmethod" not in func.labels)
    for variant in (func, *(func.overloads or ())):
        params = list(variant.parameters)[1:] if is_method else list(variant.parameters)
        returns = _typevar_form(str(variant.returns) if variant.returns is not None else "")
        first = (
            _typevar_form(str(params[0].annotation)) if params and params[0].annotation is not None else ""
        )
        if first and first == returns and _is_typevar(func, _typevar_name(first)):
            plain = True
        factory = re.fullmatch(r"Callable\[\[(.+)\], (.+)\]", returns)
        if (
            factory
            and factory.group(1) == factory.group(2)
            and _is_typevar(func, _typevar_name(factory.group(1)))
        ):
            called = True
    return plain, called


def _typevar_form(annotation: str) -> str:
    """`Optional[Type[T]]` -> `Type[T]`; `typing.Callable[...]` -> `Callable[...]`; `type[T]` -> `Type[T]`."""
    text = annotation.replace("typing.", "").replace("typing_extensions.", "").replace("type[", "Type[")
    optional = re.fullmatch(r"Optional\[(.+)\]", text) or re.fullmatch(r"(.+) \| None", text)
    return optional.group(1) if optional else text


def _typevar_name(form: str) -> str:
    match = re.fullmatch(r"Type\[(\w+)\]", form)
    return match.group(1) if match else form


def _is_typevar(func: griffe.Function, name: str) -> bool:
    member = func.module.members.get(name)
    if member is None:
        return False
    if isinstance(member, griffe.Alias):
        return member.target_path.rsplit(".", 1)[-1] == name and bool(_TYPEVAR_NAME.match(name))
    value = str(getattr(member, "value", "") or "")
    return value.startswith(("TypeVar(", "typing.TypeVar(", "typing_extensions.TypeVar("))


def _hands_back_fget(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A descriptor `__get__(self, instance, owner)` (of a `property` subclass) whose every `return`
    gives `self.fget(...)`: the attribute read gives the getter's result, as `property` does. A return
    in an `except AttributeError:` handler is the path where the getter failed, which a plain
    `property` reports by raising."""
    if isinstance(node, ast.AsyncFunctionDef) or not node.args.args:
        return False
    this = node.args.args[0].arg
    handled: set[int] = set()
    for handler in walk(node):
        if (
            isinstance(handler, ast.ExceptHandler)
            and isinstance(handler.type, ast.Name)
            and handler.type.id == "AttributeError"
        ):
            handled |= {id(n) for stmt in handler.body for n in walk(stmt)}
    returns = []
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(inner, ast.Return) and id(inner) not in handled:
            returns.append(inner)
    return bool(returns) and all(
        isinstance(r.value, ast.Call)
        and isinstance(r.value.func, ast.Attribute)
        and r.value.func.attr == "fget"
        and isinstance(r.value.func.value, ast.Name)
        and r.value.func.value.id == this
        for r in returns
    )


def _renames_keyword(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    params: set[str],
    enclosing: dict[str, list[ast.expr]],
) -> str | None:
    """`@wraps(f) def w(*args, **kwargs): if old in kwargs: <warn>; kwargs[new] = kwargs.pop(old)`
    then `return f(*args, **kwargs)`, with `old` and `new` parameters of the decorator: the keyword
    `old` is passed as `new` (matplotlib `_api.rename_parameter`). Gives "rename-keyword:OLD:NEW",
    the names of the decorator's parameters holding them, or None."""
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return None
    star, double = args.vararg.arg, args.kwarg.arg
    body = [s for s in wrapper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 2 or not isinstance(body[0], ast.If) or not isinstance(body[1], ast.Return):
        return None
    test, ret = body[0], body[1].value
    if not (
        isinstance(ret, ast.Call)
        and isinstance(ret.func, ast.Name)
        and ret.func.id == param
        and len(ret.args) == 1
        and isinstance(ret.args[0], ast.Starred)
        and isinstance(ret.args[0].value, ast.Name)
        and ret.args[0].value.id == star
        and len(ret.keywords) == 1
        and ret.keywords[0].arg is None
        and isinstance(ret.keywords[0].value, ast.Name)
        and ret.keywords[0].value.id == double
    ):
        return None
    cond = test.test
    if test.orelse or not (
        isinstance(cond, ast.Compare)
        and len(cond.ops) == 1
        and isinstance(cond.ops[0], ast.In)
        and isinstance(cond.left, ast.Name)
        and isinstance(cond.comparators[0], ast.Name)
        and cond.comparators[0].id == double
    ):
        return None
    old = cond.left.id
    renames = []
    for stmt in test.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            names = {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
            if names & {star, double}:
                return None  # the warning call must not touch the arguments
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Subscript)
            and isinstance(stmt.targets[0].value, ast.Name)
            and stmt.targets[0].value.id == double
            and isinstance(stmt.targets[0].slice, ast.Name)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "pop"
            and isinstance(stmt.value.func.value, ast.Name)
            and stmt.value.func.value.id == double
            and len(stmt.value.args) == 1
            and not stmt.value.keywords
            and isinstance(stmt.value.args[0], ast.Name)
            and stmt.value.args[0].id == old
        ):
            renames.append(stmt.targets[0].slice.id)
            continue
        return None
    if len(renames) != 1:
        return None
    new = renames[0]
    if old == new or old not in params or new not in params or old in enclosing or new in enclosing:
        return None
    return f"rename-keyword:{old}:{new}"


# -- when a wrapper warns: a deprecation shim for positional arguments -------------------------------


def _shim_warning(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    position: int,
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    depth: int = 0,
) -> dict[str, str] | None:
    """As a decorator given the function at parameter `position`: when the wrapper every reachable
    `return` gives warns, read from its source. A `*warn*` call (`warnings.warn`, `warn_deprecated`)
    under one condition comparing `len(<*args>)` with the function's positional parameters: their
    count (`len(names)`, a list of the POSITIONAL_OR_KEYWORD names of `signature(f)`: "threshold":
    "positional") or the index of the parameter a decorator argument names (`[*signature(f).parameters]
    .index(name)`: "threshold": "index", "argument": its name, "position": its place among `owner`'s
    parameters, `owner` being the function the decorator's call arguments go to; `.index("c")`:
    "literal": "c"). The wrapper warns
    exactly when more positional arguments than that threshold are given. "warn": the warning call's
    name, "category": the warning class when written."""
    args = node.args.posonlyargs + node.args.args
    if isinstance(node, ast.AsyncFunctionDef) or len(args) <= position or depth > 2:
        return None
    param = args[position].arg
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assigned = _local_assignments(node)
    found: set[tuple[tuple[str, str], ...]] = set()
    for ret in _reachable_returns(node.body, param):
        value = ret.value
        warning: dict[str, str] | None = None
        if isinstance(value, ast.Name) and value.id in inner and value.id not in assigned:
            warning = _wrapper_warning(inner[value.id], param, node, assigned, owner)
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in inner
            and value.func.id not in assigned
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == param
        ):
            warning = _shim_warning(inner[value.func.id], 0, owner or node, depth + 1)
        if warning is None:
            return None
        found.add(tuple(sorted(warning.items())))
    return dict(found.pop()) if len(found) == 1 else None


def _is_warn_call(stmt: ast.stmt) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = _last_name(stmt.value.func)
        if name is not None and "warn" in name.lower():
            return stmt.value
    return None


_NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
}
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
}


def _wrapper_warning(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """The warning of `def wrapper(*args, **kwargs)` (see `_shim_warning`): the first `*warn*` call at
    the top of the body or of an `if` body there, with the one condition it runs under: that `if`'s
    test, or the negation of an earlier `if test: return ...` guard."""
    spec = wrapper.args
    if spec.args or spec.posonlyargs or not spec.vararg:
        return None
    star = spec.vararg.arg
    conditions: list[tuple[ast.expr, bool]] = []  # (test, holds when true)
    call: ast.Call | None = None
    for stmt in wrapper.body:
        if (call := _is_warn_call(stmt)) is not None:
            break
        if isinstance(stmt, ast.If):
            warned = None
            for inner in stmt.body:
                if isinstance(inner, (ast.Return, ast.Raise)):
                    break  # what follows never runs
                if (warned := _is_warn_call(inner)) is not None:
                    break
            if warned is not None:
                if stmt.orelse:
                    return None
                conditions.append((stmt.test, True))
                call = warned
                break
            if stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)) and not stmt.orelse:
                conditions.append((stmt.test, False))
                continue
            return None  # another branch before the warning: it may change what follows
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Try, ast.For, ast.While, ast.With)):
            return None
    if call is None or len(conditions) != 1:
        return None
    test, holds = conditions[0]
    local = _local_assignments(wrapper)
    threshold = _count_condition(test, holds, star, local, param, decorator, assigned, owner)
    if threshold is None:
        return None
    category = next((k.value for k in call.keywords if k.arg == "category"), None)
    if category is None and len(call.args) >= 2:
        category = call.args[1]
    warning = dict(threshold)
    warning["warn"] = _last_name(call.func) or ""
    if isinstance(category, (ast.Name, ast.Attribute)):
        warning["category"] = _last_name(category) or ""
    return warning


def _count_condition(
    test: ast.expr,
    holds: bool,
    star: str,
    local: dict[str, list[ast.expr]],
    param: str,
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """`len(args) > T`, `len(args) - T > 0`, `extra = len(args) - T; if extra <= 0: return ...` and
    the like: the threshold T when the condition holds exactly for `len(args) > T`."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op = type(test.ops[0])
    if op not in _NEGATED:
        return None
    if not holds:
        op = _NEGATED[op]
    thresholds: list[dict[str, str]] = []

    def linear(expr: ast.expr, depth: int = 0) -> tuple[int, int, int] | None:
        # (coefficient of len(args), coefficient of T, constant)
        if depth > 4:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return 0, 0, expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = linear(expr.operand, depth + 1)
            return None if inner is None else (-inner[0], -inner[1], -inner[2])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            left, right = linear(expr.left, depth + 1), linear(expr.right, depth + 1)
            if left is None or right is None:
                return None
            sign = 1 if isinstance(expr.op, ast.Add) else -1
            return left[0] + sign * right[0], left[1] + sign * right[1], left[2] + sign * right[2]
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "len"
            and len(expr.args) == 1
            and not expr.keywords
            and isinstance(expr.args[0], ast.Name)
        ):
            name = expr.args[0].id
            if name == star and name not in local:
                return 1, 0, 0
            if name not in local and _counts_positional(decorator, name, param, assigned):
                thresholds.append({"threshold": "positional"})
                return 0, 1, 0
            return None
        if isinstance(expr, ast.Name):
            if expr.id in local:
                values = local[expr.id]
                return linear(values[0], depth + 1) if len(values) == 1 else None
            index = _parameter_index(decorator, expr.id, param, assigned, owner)
            if index is not None:
                thresholds.append(index)
                return 0, 1, 0
        return None

    left, right = linear(test.left), linear(test.comparators[0])
    if left is None or right is None or len({tuple(sorted(t.items())) for t in thresholds}) != 1:
        return None
    n, t, c = left[0] - right[0], left[1] - right[1], left[2] - right[2]
    if n not in (1, -1) or t != -n:
        return None
    if n == -1:  # -(len(args) - T) - c OP 0  ->  len(args) - T + c FLIP(OP) 0
        op, c = _FLIPPED[op], -c
    # len(args) - T + c OP 0: warns exactly when len(args) > T for `> 0` (c == 0) or `>= 1` (c == -1)
    if (op is ast.Gt and c == 0) or (op is ast.GtE and c == -1):
        return thresholds[0]
    return None


def _signature_names(param: str, assigned: dict[str, list[ast.expr]]) -> set[str]:
    """Local names holding `signature(param)`."""
    return {
        name
        for name, values in assigned.items()
        if len(values) == 1
        and isinstance(values[0], ast.Call)
        and _last_name(values[0].func) == "signature"
        and len(values[0].args) == 1
        and not values[0].keywords
        and isinstance(values[0].args[0], ast.Name)
        and values[0].args[0].id == param
    }


def _is_parameters_of(expr: ast.expr, signatures: set[str], param: str) -> bool:
    """`sig.parameters` with `sig` one of `signatures`, or `signature(param).parameters`."""
    if not (isinstance(expr, ast.Attribute) and expr.attr == "parameters"):
        return False
    value = expr.value
    if isinstance(value, ast.Name):
        return value.id in signatures
    return (
        isinstance(value, ast.Call)
        and _last_name(value.func) == "signature"
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == param
    )


def _kind_test(test: ast.expr, var: str) -> str | None:
    """`var.kind == <...>.KIND` (or `is`): the kind's name."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "kind"
        and isinstance(test.left.value, ast.Name)
        and test.left.value.id == var
    ):
        return _last_name(test.comparators[0])
    return None


def _counts_positional(
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    param: str,
    assigned: dict[str, list[ast.expr]],
) -> bool:
    """`name = []`, filled by one `name.append(...)` in `for ..., p in signature(f).parameters.items():`
    (or `.values()`) under `if p.kind == Parameter.POSITIONAL_OR_KEYWORD:` (an `elif` after tests of
    other kinds), and otherwise only measured: `len(name)` counts f's positional-or-keyword parameters."""
    values = assigned.get(name, [])
    if len(values) != 1 or not (isinstance(values[0], ast.List) and not values[0].elts):
        return False
    signatures = _signature_names(param, assigned)
    parents: dict[int, ast.AST] = {}
    for holder in walk(decorator):
        for child in children(holder):
            parents[id(child)] = holder
    appends = 0
    for use in walk(decorator):
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        parent = parents.get(id(use))
        if isinstance(parent, ast.Call) and _last_name(parent.func) == "len" and parent.args == [use]:
            continue
        call = parents.get(id(parent)) if parent is not None else None
        if not (
            isinstance(parent, ast.Attribute)
            and parent.attr == "append"
            and isinstance(call, ast.Call)
            and call.func is parent
            and len(call.args) == 1
            and not call.keywords
        ):
            return False
        appends += 1
        stmt = parents.get(id(call))
        guard = parents.get(id(stmt)) if stmt is not None else None
        if not (isinstance(stmt, ast.Expr) and isinstance(guard, ast.If) and stmt in guard.body):
            return False
        # climb the elif chain to the loop: earlier tests must be of other kinds (disjoint)
        tests = [guard.test]
        current: ast.AST = guard
        while isinstance(up := parents.get(id(current)), ast.If) and current in up.orelse:
            tests.append(up.test)
            current = up
        loop = parents.get(id(current))
        if not (isinstance(loop, ast.For) and current in loop.body):
            return False
        iterated = loop.iter
        if not (
            isinstance(iterated, ast.Call)
            and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in ("items", "values")
            and not iterated.args
            and _is_parameters_of(iterated.func.value, signatures, param)
        ):
            return False
        target = loop.target
        if iterated.func.attr == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return False
            target = target.elts[1]
        if not isinstance(target, ast.Name):
            return False
        kinds = [_kind_test(t, target.id) for t in tests]
        if kinds[0] != "POSITIONAL_OR_KEYWORD" or any(k is None or k == kinds[0] for k in kinds[1:]):
            return False
    return appends == 1


def _parameter_index(
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    param: str,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """`name = names.index(arg)` with `names = [*signature(f).parameters]` (or `list(...)`) and `arg` a
    parameter of `owner` (the function the decorator's call arguments go to) it never rebinds."""
    values = assigned.get(name, [])
    if len(values) != 1:
        return None
    value = values[0]
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "index"
        and isinstance(value.func.value, ast.Name)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], (ast.Name, ast.Constant))
    ):
        return None
    listed = assigned.get(value.func.value.id, [])
    signatures = _signature_names(param, assigned)
    if len(listed) != 1 or not (
        (
            isinstance(listed[0], ast.List)
            and len(listed[0].elts) == 1
            and isinstance(listed[0].elts[0], ast.Starred)
            and _is_parameters_of(listed[0].elts[0].value, signatures, param)
        )
        or (
            isinstance(listed[0], ast.Call)
            and isinstance(listed[0].func, ast.Name)
            and listed[0].func.id == "list"
            and len(listed[0].args) == 1
            and _is_parameters_of(listed[0].args[0], signatures, param)
        )
    ):
        return None
    if isinstance(value.args[0], ast.Constant):  # `names.index("c")`: the decorator's own choice
        literal = value.args[0].value
        return {"threshold": "index", "literal": literal} if isinstance(literal, str) else None
    arg = value.args[0].id
    owner = owner or decorator
    owner_args = owner.args.posonlyargs + owner.args.args
    position = next((i for i, a in enumerate(owner_args) if a.arg == arg), None)
    keyword = position is None and any(a.arg == arg for a in owner.args.kwonlyargs)
    if position is None and not keyword:
        return None
    comprehended = {
        id(n) for comp in walk(owner) if isinstance(comp, ast.comprehension) for n in walk(comp.target)
    }
    if any(
        isinstance(n, ast.Name)
        and n.id == arg
        and not isinstance(n.ctx, ast.Load)
        and id(n) not in comprehended
        for n in walk(owner)
    ):
        return None
    found = {"threshold": "index", "argument": arg}
    if position is not None:
        found["position"] = str(position)
    return found


# -- decorators that re-apply what decorates another function --------------------------------------


def _expr_text(node: ast.expr) -> str | None:
    """`DECORATORS` or `_api.deprecation.DECORATORS`: a dotted name's text, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_wraps_of(decorator: ast.expr, param: str) -> bool:
    return (
        isinstance(decorator, ast.Call)
        and _last_name(decorator.func) == "wraps"
        and len(decorator.args) == 1
        and isinstance(decorator.args[0], ast.Name)
        and decorator.args[0].id == param
    )


def _registers_self(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """`def deco(since, name, func=None)` whose body binds `decorator = functools.partial(deco, since,
    name)` (its parameters before the function, in order) and stores `REGISTRY[wrapper] = decorator`
    for a nested `@functools.wraps(func) def wrapper`: the wrapper is registered with what re-applies
    the same decorator (matplotlib `_api.rename_parameter`, `make_keyword_only`). The registry's text."""
    args = node.args.posonlyargs + node.args.args
    if len(args) < 2 or not node.args.defaults or node.args.kwonlyargs:
        return None
    before, func = [a.arg for a in args[:-1]], args[-1].arg
    partials = {
        target.id
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance((target := stmt.targets[0]), ast.Name)
        and isinstance(stmt.value, ast.Call)
        and _last_name(stmt.value.func) == "partial"
        and [a.id if isinstance(a, ast.Name) else None for a in stmt.value.args] == [node.name, *before]
        and all(
            k.arg is None
            and node.args.kwarg is not None
            and isinstance(k.value, ast.Name)
            and k.value.id == node.args.kwarg.arg
            for k in stmt.value.keywords
        )
    }
    wrappers = {
        stmt.name
        for stmt in node.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(_is_wraps_of(d, func) for d in stmt.decorator_list)
    }
    registries = {
        text
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance((target := stmt.targets[0]), ast.Subscript)
        and isinstance(target.slice, ast.Name)
        and target.slice.id in wrappers
        and isinstance(stmt.value, ast.Name)
        and stmt.value.id in partials
        and (text := _expr_text(target.value)) is not None
    }
    return registries.pop() if len(registries) == 1 else None


def _reapplies_registered(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """`def copy_deco(method, func=None)` that hands back `func` decorated by what a registry holds for
    `method` and each function down its `__wrapped__` chain, after decorators it calls with `method`
    (matplotlib 3.4+ pyplot `_copy_docstring_and_deprecators`):

        if func is None:
            return functools.partial(copy_deco, method)
        decorators = [docstring.copy(method)]
        while getattr(method, "__wrapped__", None) is not None:
            decorator = REGISTRY.get(method)
            if decorator:
                decorators.append(decorator)
            method = method.__wrapped__
        for decorator in decorators[::-1]:
            func = decorator(func)
        return func

    Calls made for their effect only (`note(func, method)`) may come between. Gives the registry's text
    and the texts of the callables the list starts with, or None for any other shape."""
    args = node.args.posonlyargs + node.args.args
    if len(args) != 2 or len(node.args.defaults) != 1 or node.args.vararg or node.args.kwarg:
        return None
    if node.args.kwonlyargs or not (
        isinstance(node.args.defaults[0], ast.Constant) and node.args.defaults[0].value is None
    ):
        return None
    method, func = args[0].arg, args[1].arg
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) < 5:
        return None
    first, listed, loop, ret = body[0], body[1], body[2], body[-1]
    partial = (
        _uncast(first.body[0].value)
        if isinstance(first, ast.If) and first.body and isinstance(first.body[0], ast.Return)
        else None
    )
    if not (
        isinstance(first, ast.If)
        and not first.orelse
        and _none_test(first.test, func) is True
        and len(first.body) == 1
        and isinstance(partial, ast.Call)
        and _last_name(partial.func) == "partial"
        and not partial.keywords
        and [a.id if isinstance(a, ast.Name) else None for a in partial.args] == [node.name, method]
    ):
        return None
    target = listed.targets[0] if isinstance(listed, ast.Assign) and len(listed.targets) == 1 else None
    if isinstance(listed, ast.AnnAssign) and listed.simple:
        target = listed.target
    value = listed.value if isinstance(listed, (ast.Assign, ast.AnnAssign)) else None
    if not (isinstance(target, ast.Name) and isinstance(value, ast.List)):
        return None
    name = target.id
    initial = []
    for element in value.elts:
        if not (
            isinstance(element, ast.Call)
            and not element.keywords
            and len(element.args) == 1
            and isinstance(element.args[0], ast.Name)
            and element.args[0].id == method
            and (text := _expr_text(element.func)) is not None
        ):
            return None
        initial.append(text)
    registry = _registry_walk(loop, method, name)
    if registry is None:
        return None
    applies = [stmt for stmt in body[3:-1] if isinstance(stmt, ast.For)]
    if len(applies) != 1:
        return None
    apply = applies[0]
    if not (
        not apply.orelse
        and isinstance(apply.target, ast.Name)
        and _reversed_name(apply.iter) == name
        and len(apply.body) == 1
        and isinstance((step := apply.body[0]), ast.Assign)
        and len(step.targets) == 1
        and isinstance(step.targets[0], ast.Name)
        and step.targets[0].id == func
        and isinstance(step.value, ast.Call)
        and isinstance(step.value.func, ast.Name)
        and step.value.func.id == apply.target.id
        and [a.id if isinstance(a, ast.Name) else None for a in step.value.args] == [func]
        and not step.value.keywords
    ):
        return None
    if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name) and ret.value.id == func):
        return None
    for stmt in body[3:-1]:  # besides the loop applying them, only calls for their effect: none rebinds
        if stmt is apply:
            continue
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        if any(isinstance(n, ast.NamedExpr) for n in walk(stmt)):
            return None
    return {"registry": registry, "initial": initial}


def _uncast(node: ast.expr | None) -> ast.expr | None:
    """`cast(T, value)` (typing's, a no-op at run time): value; anything else as it is."""
    if (
        isinstance(node, ast.Call)
        and _last_name(node.func) == "cast"
        and len(node.args) == 2
        and not node.keywords
    ):
        return node.args[1]
    return node


def _reversed_name(node: ast.expr) -> str | None:
    """`L[::-1]` or `reversed(L)`: L."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is None
        and isinstance(node.slice.step, ast.UnaryOp)
        and isinstance(node.slice.step.op, ast.USub)
        and isinstance(node.slice.step.operand, ast.Constant)
        and node.slice.step.operand.value == 1
    ):
        return node.value.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "reversed"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    ):
        return node.args[0].id
    return None


def _registry_walk(loop: ast.stmt, method: str, listed: str) -> str | None:
    """`while getattr(method, "__wrapped__", None) is not None:` (or `while hasattr(method,
    "__wrapped__"):`) holding `d = REGISTRY.get(method)`, `if d: listed.append(d)`, `method =
    method.__wrapped__`: the registry's text."""
    if not isinstance(loop, ast.While) or loop.orelse or len(loop.body) != 3:
        return None
    test = loop.test
    wrapped_test = (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and _getattr_wrapped(test.left, method, with_default=True)
    ) or _getattr_wrapped(test, method, with_default=False)
    if not wrapped_test:
        return None
    get, check, step = loop.body
    if not (
        isinstance(get, ast.Assign)
        and len(get.targets) == 1
        and isinstance(get.targets[0], ast.Name)
        and isinstance(get.value, ast.Call)
        and isinstance(get.value.func, ast.Attribute)
        and get.value.func.attr == "get"
        and len(get.value.args) == 1
        and isinstance(get.value.args[0], ast.Name)
        and get.value.args[0].id == method
        and not get.value.keywords
        and (registry := _expr_text(get.value.func.value)) is not None
    ):
        return None
    found = get.targets[0].id
    if not (
        isinstance(check, ast.If)
        and not check.orelse
        and isinstance(check.test, ast.Name)
        and check.test.id == found
        and len(check.body) == 1
        and isinstance(check.body[0], ast.Expr)
        and isinstance((append := check.body[0].value), ast.Call)
        and isinstance(append.func, ast.Attribute)
        and append.func.attr == "append"
        and isinstance(append.func.value, ast.Name)
        and append.func.value.id == listed
        and [a.id if isinstance(a, ast.Name) else None for a in append.args] == [found]
    ):
        return None
    if not (
        isinstance(step, ast.Assign)
        and len(step.targets) == 1
        and isinstance(step.targets[0], ast.Name)
        and step.targets[0].id == method
        and isinstance(step.value, ast.Attribute)
        and step.value.attr == "__wrapped__"
        and isinstance(step.value.value, ast.Name)
        and step.value.value.id == method
    ):
        return None
    return registry


def _getattr_wrapped(node: ast.expr, method: str, with_default: bool) -> bool:
    """`getattr(method, "__wrapped__", None)` (with_default) or `hasattr(method, "__wrapped__")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
        return False
    expected = ("getattr", 3) if with_default else ("hasattr", 2)
    if (node.func.id, len(node.args)) != expected:
        return False
    target, attr = node.args[0], node.args[1]
    if not (isinstance(target, ast.Name) and target.id == method):
        return False
    if not (isinstance(attr, ast.Constant) and attr.value == "__wrapped__"):
        return False
    return not with_default or (isinstance(node.args[2], ast.Constant) and node.args[2].value is None)


_MUTATORS = frozenset({"update", "setdefault", "__setitem__", "__ior__"})


def _container_stores(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The containers a function (nested functions included) stores a key into: `X[k] = v`, `X[k] |=
    v`, `X.update(...)`, `X.setdefault(...)`, `X.__setitem__(...)`, `X |= ...` with X a dotted name,
    as texts; the store `_registers_self` recognizes (its own wrapper, keyed to itself) left out."""
    recognized = _registers_self(node)
    found: set[str] = set()
    for inner in walk(node):
        targets: list[ast.expr] = []
        if isinstance(inner, ast.Assign):
            targets = inner.targets
        elif isinstance(inner, (ast.AugAssign, ast.AnnAssign)):
            targets = [inner.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                text = _expr_text(target.value)
                if text is not None and not (inner in node.body and text == recognized):
                    found.add(text)
            elif isinstance(inner, ast.AugAssign) and (text := _expr_text(target)) is not None:
                found.add(text)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in _MUTATORS
        ):
            text = _expr_text(inner.func.value)
            if text is not None:
                found.add(text)
    return sorted(found)
