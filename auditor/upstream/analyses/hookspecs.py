"""Hook specifications: the hooks a pluggy-based upstream declares, which its plugins implement by name.

Input: a module's AST. Output (nothing is evaluated):

- `markers`: the module-level names bound to `HookspecMarker(<project>)` / `HookimplMarker(<project>)`
  (`pluggy.HookspecMarker`, or the class imported from `pluggy`), each
  {"name", "kind": "spec" | "impl", "project": the literal string, or None, "project_ref": the name the
  project is given as when it is a name (`HookspecMarker(NAME)`), else ""};
- `specs`: the functions (module level, or methods of a class at module level) decorated by a name
  (`@hookspec`, `@hookspec(...)`) that is a spec marker of this module or imported from another module
  (the loader keeps those whose decorator is the package's own, the index those whose decorator is a
  marker; pytest's undecorated `pytest_*` specs of such a module are read from its members there), each {"name", "decorator", "cls", "lineno",
  "params" (the positional parameter names pluggy reads: `self` of a method dropped), "firstresult",
  "historic", "warn" (the literal message of `warn_on_impl=Warning("...")`, else ""), "warn_ref" (the
  name `warn_on_impl=NAME` gives, else ""), "warn_args" ({argument: literal message})};
- `impl_prefixes`: the prefixes a plugin manager's `parse_hookimpl_opts` requires of a hook's name
  (`if not name.startswith("pytest_"): return None`): the upstream takes every function of a plugin
  whose name starts so as a hook implementation, marked or not.

Bounded: at most MAX_SPECS specs per module.
"""

from __future__ import annotations

import ast
from typing import Any

MAX_SPECS = 400  # per module
_MARKERS = {"HookspecMarker": "spec", "HookimplMarker": "impl"}


def hookspec_facts(tree: ast.Module) -> dict[str, Any]:
    markers = _markers(tree)
    imported = {a.asname or a.name for s in tree.body if isinstance(s, ast.ImportFrom) for a in s.names} | {
        m["name"] for m in markers if m["kind"] == "spec"
    }
    specs: list[dict[str, Any]] = []
    for node, cls in _definitions(tree):
        if len(specs) >= MAX_SPECS:
            break
        for decorator in node.decorator_list:
            spec = _spec(node, decorator, cls)
            if spec is not None and spec["decorator"] in imported:
                specs.append(spec)
                break
    return {
        "markers": markers,
        "specs": specs,
        "impl_prefixes": _prefixes(tree, "parse_hookimpl_opts"),
        "spec_prefixes": _prefixes(tree, "parse_hookspec_opts"),
    }


def _definitions(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((stmt, ""))
        elif isinstance(stmt, ast.ClassDef):
            found.extend(
                (s, stmt.name) for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    return found


def _markers(tree: ast.Module) -> list[dict[str, Any]]:
    strings = {
        t.id: s.value.value
        for s in tree.body
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    found = []
    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        ):
            continue
        value = stmt.value
        if not isinstance(value, ast.Call) or len(value.args) != 1:
            continue
        func = value.func
        called = (
            func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        )
        if called not in _MARKERS:
            continue
        arg = value.args[0]
        project = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
        ref = ""
        if isinstance(arg, ast.Name):
            project = strings.get(arg.id)
            ref = "" if project is not None else arg.id
        found.append(
            {"name": stmt.targets[0].id, "kind": _MARKERS[called], "project": project, "project_ref": ref}
        )
    return found


def _spec(
    node: ast.FunctionDef | ast.AsyncFunctionDef, decorator: ast.expr, cls: str
) -> dict[str, Any] | None:
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    if not isinstance(target, ast.Name):
        return None
    options: dict[str, Any] = {
        "firstresult": False,
        "historic": False,
        "warn": "",
        "warn_ref": "",
        "warn_args": {},
    }
    for keyword in call.keywords if call is not None else ():
        if keyword.arg in ("firstresult", "historic"):
            options[keyword.arg] = isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        elif keyword.arg == "warn_on_impl":
            options["warn"] = _message(keyword.value) or ""
            if not options["warn"] and isinstance(keyword.value, ast.Name):
                options["warn_ref"] = keyword.value.id
        elif keyword.arg == "warn_on_impl_args" and isinstance(keyword.value, ast.Dict):
            options["warn_args"] = {
                k.value: _message(v) or ""
                for k, v in zip(keyword.value.keys, keyword.value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    args = node.args
    params = [p.arg for p in [*args.posonlyargs, *args.args]]
    if cls and params and params[0] in ("self", "cls"):
        params = params[1:]
    name = target.id if isinstance(target, ast.Name) else ""
    return {
        "name": node.name,
        "decorator": name,
        "cls": cls,
        "lineno": node.lineno,
        "params": params,
        **options,
    }


def message_of(text: str) -> str | None:
    """The literal message of a warning's text (`PytestRemovedIn8Warning("...")`), or None."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _message(tree.body)


def _message(value: ast.expr) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Call) and value.args:
        first = value.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
        if isinstance(first, ast.JoinedStr):
            return None
    return None


def _prefixes(tree: ast.Module, method: str) -> list[str]:
    """The literal prefixes `method` (of a class at module level) tests names with `.startswith`."""
    found: list[str] = []
    methods = (s for c in tree.body if isinstance(c, ast.ClassDef) for s in c.body)
    for node in methods:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == method:
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == "startswith"
                    and len(inner.args) == 1
                    and isinstance(inner.args[0], ast.Constant)
                    and isinstance(inner.args[0].value, str)
                    and inner.args[0].value.endswith("_")
                ):
                    found.append(inner.args[0].value)
    return sorted(set(found))
