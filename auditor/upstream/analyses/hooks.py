"""Methods the upstream calls by name on objects it is handed: implicit hooks.

Input: a module's AST. Output: the calls whose method name the code spells as a string, a sign that
the name is one the upstream looks for on its users' objects rather than one it declares:

- `getattr(obj, "hook")(...)`;
- `obj.hook(...)` inside `if hasattr(obj, "hook"):` (or any test that calls `hasattr(obj, "hook")`,
  `getattr(obj, "hook", None)` or `callable(getattr(obj, "hook", ...))`);
- `h = getattr(obj, "hook", None)` (the only binding of `h` in the function) then `h(...)`.

Each call: {"method", "receiver": "self" | "typed" | "untyped", "on" (the annotation's text for
"typed", else ""), "cls" (the enclosing class's dotted name in the module for "self", else ""),
"caller" (the function's dotted name in the module), "positional", "keywords", "star_args",
"star_kwargs", "lineno", "text"}. `self` is the first parameter of a plain method; "typed" is a
parameter annotated with a plain class the function never rebinds. Nothing is evaluated.
"""

from __future__ import annotations

import ast
from typing import Any

from apidrift.auditor.upstream.analyses.calls import _plain_class
from apidrift.auditor.upstream.analyses.nodes import _last_name_of, _own_nodes

MAX_HOOK_CALLS = 64  # per module
_MAX_FUNCTIONS = 4000  # functions read per module


def hook_calls(tree: ast.Module) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, str]] = []  # def, qualname, class
    stack: list[tuple[ast.AST, str, str]] = [(tree, "", "")]
    while stack and len(functions) < _MAX_FUNCTIONS:
        node, prefix, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                stack.append((child, f"{prefix}{child.name}.", f"{prefix}{child.name}"))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((child, f"{prefix}{child.name}", cls))
                stack.append((child, f"{prefix}{child.name}.", ""))
            elif not isinstance(child, (ast.expr, ast.Lambda)):
                stack.append((child, prefix, cls))
    functions.sort(key=lambda f: f[0].lineno)
    for function, qualname, cls in functions:
        for call in _calls_by_name(function, cls):
            if len(found) >= MAX_HOOK_CALLS:
                return found
            found.append({**call, "caller": qualname})
    return found


def _calls_by_name(function: ast.FunctionDef | ast.AsyncFunctionDef, cls: str) -> list[dict[str, Any]]:
    nodes = _own_nodes(function)
    static = any(_last_name_of(d) in ("staticmethod", "classmethod") for d in function.decorator_list)
    positional = [*function.args.posonlyargs, *function.args.args]
    self_name = positional[0].arg if cls and positional and not static else None
    rebound: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            rebound[node.id] = rebound.get(node.id, 0) + 1
    annotated = {
        a.arg: _plain_class(a.annotation)
        for a in (*positional, *function.args.kwonlyargs)
        if a.annotation is not None and a.arg != self_name
    }

    def receiver(node: ast.expr) -> tuple[str, str, str] | None:
        """What the call's object is: (receiver kind, annotation text, class)."""
        if isinstance(node, ast.Name) and node.id not in rebound:
            if node.id == self_name:
                return "self", "", cls
            if annotated.get(node.id):
                return "typed", annotated[node.id] or "", ""
        return "untyped", "", ""

    found: list[dict[str, Any]] = []
    seen: set[tuple[object, ...]] = set()

    def add(call: ast.Call, method: str, obj: ast.expr) -> None:
        kind = receiver(obj)
        if kind is None:
            return
        shape = {
            "method": method,
            "receiver": kind[0],
            "on": kind[1],
            "cls": kind[2],
            "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
            "keywords": [k.arg for k in call.keywords if k.arg is not None],
            "star_args": any(isinstance(a, ast.Starred) for a in call.args),
            "star_kwargs": any(k.arg is None for k in call.keywords),
        }
        key = tuple(str(v) for v in shape.values())
        if key in seen:
            return
        seen.add(key)
        found.append({**shape, "lineno": call.lineno, "text": ast.unparse(call)[:120]})

    # `h = getattr(obj, "hook", None)`: the names bound once to a looked-up method.
    looked_up: dict[str, tuple[str, ast.expr]] = {}
    for node in nodes:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and rebound.get(node.targets[0].id) == 1
            and (named := _named_lookup(node.value, ("getattr",))) is not None
        ):
            looked_up[node.targets[0].id] = named
    for node in nodes:
        if isinstance(node, ast.Call):
            named = _named_lookup(node.func, ("getattr",))
            if named is not None:  # getattr(obj, "hook")(...)
                add(node, named[0], named[1])
            elif isinstance(node.func, ast.Name) and node.func.id in looked_up:
                add(node, *looked_up[node.func.id])
        elif isinstance(node, ast.If):
            tested = [
                named
                for inner in ast.walk(node.test)
                if (named := _named_lookup(inner, ("hasattr", "getattr"))) is not None
            ]
            for name, obj in tested:
                text = ast.dump(obj)
                for statement in node.body:
                    for inner in ast.walk(statement):
                        if (
                            isinstance(inner, ast.Call)
                            and isinstance(inner.func, ast.Attribute)
                            and inner.func.attr == name
                            and ast.dump(inner.func.value) == text
                        ):
                            add(inner, name, obj)
    return found


def _named_lookup(node: ast.AST, functions: tuple[str, ...]) -> tuple[str, ast.expr] | None:
    """`getattr(obj, "name"[, default])` / `hasattr(obj, "name")`: (name, obj)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in functions
        and len(node.args) in ((2, 3) if node.func.id == "getattr" else (2,))
        and not node.keywords
    ):
        return None
    obj, name = node.args[0], node.args[1]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier()):
        return None
    if isinstance(obj, ast.Starred):
        return None
    return name.value, obj
