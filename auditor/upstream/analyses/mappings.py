"""Where a function's keyword mapping goes, and what checks its keys; what names a decorator adds.

Input: a `def` node. Output, as plain JSON-able facts:

- `mapping_handovers`: a parameter (`**kwargs` or a plain one) whose mapping is handed, as a positional
  argument, to one call that certainly runs: `self._internal_update(kwargs)`, `self.update({..., **kwargs})`;
- `checked_keys`: a parameter whose keys are looked up as attributes of `self` and rejected when the
  attribute is not callable: `for k, v in props.items(): func = getattr(self, f"set_{k}", None); if not
  callable(func): raise AttributeError(...)` (matplotlib's `Artist._update_props`);
- `added_names`: the names `setattr(cls, <name>, ...)` can give, as patterns over literals and the
  decorator's own arguments (`prefix + alias` for `prefix in ["get_", "set_"]`, `alias` in the values
  of `alias_d`), or None when a name is not readable.

Nothing here runs code: a pattern is expanded by the resolver from the literal arguments written at the
decoration site (`expand_names`, which a warm run uses without the loader: this module imports no griffe
at the top).
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

from apidrift.auditor.upstream.astwalk import children

_MAX_NAMES = 4096  # expansions of one decorator's name patterns at a class


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = node.args
    return [p.arg for p in a.posonlyargs + a.args]


def _has_return(statements: list[ast.stmt]) -> bool:
    for statement in statements:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Return):
                return True
    return False


def _top_level_path(node: ast.FunctionDef | ast.AsyncFunctionDef, target: ast.AST, mapping: str) -> bool:
    """The call runs whenever the function runs past the statements before it: it sits in a top-level
    statement (or a `with` body, or an `if m:` / `if len(m):` test of the mapping), after no `return`."""
    body: list[ast.stmt] = list(node.body)
    while True:
        for index, statement in enumerate(body):
            if not any(inner is target for inner in ast.walk(statement)):
                continue
            if _has_return(body[:index]):
                return False
            if isinstance(statement, (ast.Expr, ast.Assign, ast.Return, ast.AugAssign, ast.AnnAssign)):
                return True
            if isinstance(statement, ast.With) and not any(
                any(inner is target for inner in ast.walk(item)) for item in statement.items
            ):
                body = list(statement.body)
                break
            if (
                isinstance(statement, ast.If)
                and not statement.orelse
                and _tests_nonempty(statement.test, mapping)
            ):
                body = list(statement.body)
                break
            return False
        else:
            return False


def _tests_nonempty(test: ast.expr, mapping: str) -> bool:
    """`if kwargs:` / `if len(kwargs):` / `if len(kwargs) > 0:` (true whenever a key is passed)."""

    def is_len(expr: ast.expr) -> bool:
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "len"
            and len(expr.args) == 1
            and isinstance(expr.args[0], ast.Name)
            and expr.args[0].id == mapping
        )

    if isinstance(test, ast.Name):
        return test.id == mapping
    if is_len(test):
        return True
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Gt, ast.NotEq))
        and is_len(test.left)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == 0
    )


def mapping_handovers(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, dict[str, Any]]:
    """{parameter: {"target": callee text, "index": the positional argument it is, "consumed": [...]}}."""
    # `**kwargs` handed to any call; a plain parameter (not self) only to a method of self, the
    # chain a mapping takes inside one class (`_internal_update(self, kwargs)` -> `self._update_props`)
    params = _params(node)
    plain = params[1:] if params and params[0] == "self" else []
    names = plain + ([node.args.kwarg.arg] if node.args.kwarg is not None else [])
    # lazy: griffe (64 ms) loads only where the loader runs
    from apidrift.auditor.upstream.analyses.nodes import _own_nodes

    found: dict[str, dict[str, Any]] = {}
    own = list(_own_nodes(node))
    for name in names:
        uses = [n for n in own if isinstance(n, ast.Name) and n.id == name]
        if not uses or any(isinstance(u.ctx, ast.Store) for u in uses):
            continue
        allowed: set[int] = set()
        consumed: list[str] = []
        handover: tuple[ast.Call, int] | None = None
        ok = True
        for n in own:
            if (
                isinstance(n, (ast.If, ast.While, ast.Assert))
                and isinstance(n.test, ast.Name)
                and n.test.id == name
            ):
                allowed.add(id(n.test))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
                if len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id == name:
                    allowed.add(id(n.args[0]))
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
                and n.func.attr in ("pop", "setdefault")
                and n.args
                and isinstance(n.args[0], ast.Constant)
                and isinstance(n.args[0].value, str)
            ):
                allowed.add(id(n.func.value))
                if n.func.attr == "pop":
                    consumed.append(n.args[0].value)
            elif isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
                for index, arg in enumerate(n.args):
                    spread = isinstance(arg, ast.Dict) and any(
                        k is None and isinstance(v, ast.Name) and v.id == name
                        for k, v in zip(arg.keys, arg.values, strict=True)
                    )
                    if (isinstance(arg, ast.Name) and arg.id == name) or spread:
                        if handover is not None or any(isinstance(a, ast.Starred) for a in n.args[:index]):
                            ok = False
                        handover = (n, index)
                        if isinstance(arg, ast.Dict):
                            allowed.update(
                                id(v)
                                for k, v in zip(arg.keys, arg.values, strict=True)
                                if k is None and isinstance(v, ast.Name) and v.id == name
                            )
                        else:
                            allowed.add(id(arg))
        if not ok or handover is None or any(id(u) not in allowed for u in uses):
            continue
        call, index = handover
        on_self = (
            isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "self"
        )
        if not _top_level_path(node, call, name) or (name in plain and not on_self):
            continue
        found[name] = {"target": ast.unparse(call.func), "index": index, "consumed": consumed}
    return found


def checked_keys(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """A method that rejects a key of its mapping parameter unless `getattr(self, prefix + key + suffix,
    None)` is callable: {"param", "index" (among the parameters after self), "prefix", "suffix", "exempt"}."""
    params = _params(node)
    if len(params) < 2:
        return None
    self_name = params[0]
    body: list[ast.stmt] = list(node.body)
    while True:
        loop_at = next((i for i, s in enumerate(body) if isinstance(s, (ast.For, ast.With))), None)
        if loop_at is None or _has_return(body[:loop_at]):
            return None
        statement = body[loop_at]
        if isinstance(statement, ast.With):
            body = list(statement.body)
            continue
        break
    loop = statement
    assert isinstance(loop, ast.For)
    key: str | None = None
    mapping: str | None = None
    it = loop.iter
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr == "items"
        and isinstance(it.func.value, ast.Name)
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == 2
        and isinstance(loop.target.elts[0], ast.Name)
    ):
        mapping, key = it.func.value.id, loop.target.elts[0].id
    elif isinstance(it, ast.Name) and isinstance(loop.target, ast.Name):
        mapping, key = it.id, loop.target.id
    if mapping is None or key is None or mapping not in params[1:]:
        return None
    found = _key_check(list(loop.body), key, self_name, [])
    if found is None:
        return None
    prefix, suffix, exempt = found
    return {
        "param": mapping,
        "index": params.index(mapping) - 1,
        "prefix": prefix,
        "suffix": suffix,
        "exempt": exempt,
    }


def _key_check(
    body: list[ast.stmt], key: str, self_name: str, exempt: list[str]
) -> tuple[str, str, list[str]] | None:
    """Statements of the loop body up to the check: raising `if`s, `if key == "lit": ... else:` (the
    check in the else branch), then `f = getattr(self, <name of key>, None)` and `if not callable(f): raise`."""
    for index, statement in enumerate(body):
        if isinstance(statement, ast.If):
            literals = _key_literals(statement.test, key)
            if literals is not None and statement.orelse:
                return _key_check(list(statement.orelse), key, self_name, [*exempt, *literals])
            if not statement.orelse and statement.body and isinstance(statement.body[-1], ast.Raise):
                if any(
                    isinstance(n, (ast.Continue, ast.Break, ast.Return))
                    for s in statement.body
                    for n in ast.walk(s)
                ):
                    return None
                continue
            return None
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name)
            and statement.value.func.id == "getattr"
            and len(statement.value.args) == 3
            and isinstance(statement.value.args[0], ast.Name)
            and statement.value.args[0].id == self_name
        ):
            parts = _key_name(statement.value.args[1], key)
            follow = body[index + 1] if index + 1 < len(body) else None
            if parts is None or follow is None or not _rejects(follow, statement.targets[0].id):
                return None
            return parts[0], parts[1], exempt
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        return None
    return None


def _key_literals(test: ast.expr, key: str) -> list[str] | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
        return None
    if test.left.id != key:
        return None
    right = test.comparators[0]
    if isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return [right.value]
    if isinstance(test.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts):
            return [e.value for e in right.elts]  # type: ignore[attr-defined]
    return None


def _key_name(expr: ast.expr, key: str) -> tuple[str, str] | None:
    """`f"set_{k}"`, `"set_" + k`, `"set_%s" % k`: the literal text around the key."""
    if isinstance(expr, ast.JoinedStr):
        texts: list[str] = []
        seen = False
        before, after = "", ""
        for value in expr.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                texts.append(value.value)
            elif (
                isinstance(value, ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id == key
                and value.conversion == -1
                and value.format_spec is None
                and not seen
            ):
                seen = True
                before, texts = "".join(texts), []
            else:
                return None
        after = "".join(texts)
        return (before, after) if seen else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = expr.left, expr.right
        if isinstance(left, ast.Constant) and isinstance(left.value, str) and isinstance(right, ast.Name):
            return (left.value, "") if right.id == key else None
        if (
            isinstance(left, ast.Name)
            and left.id == key
            and isinstance(right, ast.Constant)
            and isinstance(right.value, str)
        ):
            return ("", right.value)
    return None


def _rejects(statement: ast.stmt, name: str) -> bool:
    """`if not callable(f): raise ...` or `if f is None: raise ...`."""
    if not isinstance(statement, ast.If) or statement.orelse or not statement.body:
        return False
    if not isinstance(statement.body[-1], ast.Raise) or len(statement.body) != 1:
        return False
    test = statement.test
    if (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Call)
        and isinstance(test.operand.func, ast.Name)
        and test.operand.func.id == "callable"
        and len(test.operand.args) == 1
        and isinstance(test.operand.args[0], ast.Name)
        and test.operand.args[0].id == name
    ):
        return True
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


# --- names a decorator adds -------------------------------------------------------------------------
# A pattern is a list of parts; a part is ["lit", text] or ["arg", parameter, op, op, ...], the ops
# ("keys", "values", "iter") taking the strings out of that argument's literal value.


def added_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[list[str]]] | None:
    """The patterns of the names `setattr(cls, <name>, ...)` and `cls.<name> = ...` can add, where `cls`
    is a parameter of the function or of a function it returns (a decorator factory's `decorate(cls)`,
    its names drawn from the factory's own arguments); None when one name is not readable."""
    params = _all_params(node)
    returned = {id(f) for f in returned_functions(node)}
    parents: dict[int, ast.AST] = {}
    for parent in ast.walk(node):
        for child in children(parent):
            parents[id(child)] = parent
    own: dict[int, tuple[set[str], Counter[str]]] = {}  # per function: its parameters, its own stores

    def scope_of(
        function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
    ) -> tuple[set[str], Counter[str]]:
        if id(function) not in own:
            stores = Counter(
                n.id
                for n in _scope_nodes(function)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
            own[id(function)] = (set(_all_params(function)), stores)
        return own[id(function)]

    patterns: list[list[list[str]]] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "setattr":
            if not inner.args or not isinstance(inner.args[0], ast.Name):
                continue
            target: ast.Name = inner.args[0]
        elif (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.ctx, ast.Store)
            and isinstance(inner.value, ast.Name)
        ):
            target = inner.value
        else:
            continue
        # the functions around the use, innermost first, up to `node`
        chain: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
        current = parents.get(id(inner))
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                chain.append(current)
            current = parents.get(id(current))
        binder = next((f for f in chain if target.id in scope_of(f)[0] or target.id in scope_of(f)[1]), None)
        if binder is None or target.id not in scope_of(binder)[0] or target.id == "self":
            continue  # a local or a global, not an argument
        if binder is not node and id(binder) not in returned:
            return None  # a parameter of a nested helper, which may be handed the class
        if isinstance(inner, ast.Attribute):
            patterns.append([["lit", inner.attr]])
            continue
        if len(inner.args) < 2:
            return None
        # the factory's arguments a name can come from: those no function nearer the use rebinds
        shadowed: set[str] = set()
        assigned: Counter[str] = Counter()
        for function in chain:
            names, stores = scope_of(function)
            if function is not node:
                shadowed |= names | set(stores)
            assigned += stores
        sources = [p for p in params if p not in shadowed]
        env = _loop_env(inner, parents, sources)
        if env is None:
            return None
        pattern = _pattern(inner.args[1], env, sources, assigned)
        if pattern is None:
            return None
        patterns.append(pattern)
    return patterns


def returned_functions(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions defined in `function`'s own body that it returns by name (`def decorate(cls): ...;
    return decorate`): what a decorator factory hands to the class it decorates."""
    own = _scope_nodes(function)
    returned = {n.value.id for n in own if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    return [n for n in own if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in returned]


def _all_params(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    return [p.arg for p in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _scope_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of the function's own scope (not of the functions, classes or comprehensions in it)."""
    found: list[ast.AST] = []
    stack = list(children(node))
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, _SCOPES):
            stack.extend(children(current))
    return found


def _loop_env(node: ast.AST, parents: dict[int, ast.AST], params: list[str]) -> dict[str, list[str]] | None:
    """The loop variables around `node`, each bound to the part it stands for."""
    loops: list[ast.For] = []
    current = parents.get(id(node))
    while current is not None:
        if isinstance(current, ast.For):
            loops.append(current)
        current = parents.get(id(current))
    env: dict[str, list[str]] = {}
    for loop in reversed(loops):
        it = loop.iter
        if _rebinds_target(loop):
            # a loop variable the body binds again may hold anything there
            for name in ast.walk(loop.target):
                if isinstance(name, ast.Name):
                    env.pop(name.id, None)
            continue
        if isinstance(it, (ast.List, ast.Tuple, ast.Set)) and isinstance(loop.target, ast.Name):
            if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in it.elts):
                continue  # not a name source: a name built from it is unreadable below
            env[loop.target.id] = ["lits", *(e.value for e in it.elts)]  # type: ignore[attr-defined]
            continue
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and isinstance(it.func.value, ast.Name)
            and not it.args
        ):
            base = _source(it.func.value.id, env, params)
            if base is None:
                continue
            if it.func.attr == "items" and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2:
                k, v = loop.target.elts
                if isinstance(k, ast.Name):
                    env[k.id] = [*base, "keys"]
                if isinstance(v, ast.Name):
                    env[v.id] = [*base, "values"]
            elif it.func.attr in ("keys", "values") and isinstance(loop.target, ast.Name):
                env[loop.target.id] = [*base, it.func.attr]
            continue
        if isinstance(it, ast.Name) and isinstance(loop.target, ast.Name):
            base = _source(it.id, env, params)
            if base is not None:
                env[loop.target.id] = [*base, "iter"]
    return env


def _rebinds_target(loop: ast.For) -> bool:
    """Whether the loop's body (or a `global`/`nonlocal` in it) binds a name of its target again."""
    names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for statement in [*loop.body, *loop.orelse]:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names:
                return True
            if isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names):
                return True
    return False


def _source(name: str, env: dict[str, list[str]], params: list[str]) -> list[str] | None:
    if name in env and env[name][0] == "arg":
        return env[name]
    if name in params:
        return ["arg", name]
    return None


def _pattern(
    expr: ast.expr, env: dict[str, list[str]], params: list[str], assigned: Counter[str]
) -> list[list[str]] | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [["lit", expr.value]]
    if isinstance(expr, ast.Name):
        if expr.id in env:  # the element of a loop whose body does not rebind it
            return [env[expr.id]]
        if expr.id in params and expr.id not in assigned:
            return [["arg", expr.id]]
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = _pattern(expr.left, env, params, assigned)
        right = _pattern(expr.right, env, params, assigned)
        return None if left is None or right is None else left + right
    if isinstance(expr, ast.JoinedStr):
        parts: list[list[str]] = []
        for value in expr.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(["lit", value.value])
            elif (
                isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
            ):
                inner = _pattern(value.value, env, params, assigned)
                if inner is None:
                    return None
                parts.extend(inner)
            else:
                return None
        return parts
    return None


def expand_names(patterns: list[list[list[str]]], arguments: dict[str, Any]) -> set[str] | None:
    """The names the patterns give with the decorator's arguments (literal values by parameter); None
    when one is not known or not a string, or when there are too many."""
    names: set[str] = set()
    for pattern in patterns:
        current = {""}
        for part in pattern:
            options = _part_values(part, arguments)
            if options is None:
                return None
            current = {c + o for c in current for o in options}
            if len(current) > _MAX_NAMES:
                return None
        names |= current
        if len(names) > _MAX_NAMES:
            return None
    return names


def _part_values(part: list[str], arguments: dict[str, Any]) -> set[str] | None:
    if part[0] == "lit":
        return {part[1]}
    if part[0] == "lits":
        return set(part[1:])
    if part[0] != "arg" or part[1] not in arguments:
        return None
    values: list[Any] = [arguments[part[1]]]
    for op in part[2:]:
        taken: list[Any] = []
        for value in values:
            if op == "keys" and isinstance(value, dict):
                taken.extend(value.keys())
            elif op == "values" and isinstance(value, dict):
                taken.extend(value.values())
            elif op == "iter" and isinstance(value, dict):
                taken.extend(value.keys())
            elif op == "iter" and isinstance(value, (list, tuple, set, frozenset)):
                taken.extend(value)
            else:
                return None
        values = taken
    if not all(isinstance(v, str) for v in values):
        return None
    return set(values)
