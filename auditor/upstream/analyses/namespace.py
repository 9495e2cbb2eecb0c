"""Which names a module, class or instance namespace binds, as its AST says: the completeness facts.

Input: the AST of a module or class body. Output: every bound name (whatever the statement), names
bound more than once, unpacked names, star imports in order, `self.x` attributes, what module code
does to its classes from outside them, whether locals()/vars()/exec() open a namespace to any name,
and the module `__getattr__` program the evaluator (`dynamic`) reads. Nothing is executed.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

import griffe

from apidrift.auditor.upstream import dynamic as dynamic_eval
from apidrift.auditor.upstream.analyses.nodes import (
    _all_nodes,
    _last_name_of,
    _module_statements,
    _own_nodes,
)
from apidrift.auditor.upstream.astwalk import children, walk, walk_once


def _getattr_program(node: ast.Module) -> dict[str, Any] | None:
    """What the `__getattr__` evaluator needs of a module that binds one: its pruned source, and the
    lines of the functions that build or serve it (their globals()/sys.modules use is the evaluator's)."""
    if not dynamic_eval.defines_getattr(node):
        return None
    helpers = dynamic_eval.getattr_helpers(node)
    lines = [
        (stmt.lineno, stmt.end_lineno or stmt.lineno)
        for stmt in node.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in helpers
    ]
    try:
        source = dynamic_eval.program_source(copy.deepcopy(node))
    except (RecursionError, MemoryError):
        source = None
    names, written = _named_namespace_writes(node)
    return {"source": source, "helper_lines": lines + written, "written_names": names}


def _computed_namespace(node: ast.Module) -> dict[str, Any] | None:
    """A module that binds names through `globals()` in ways the evaluator reads (a loop over a table,
    `globals().update(...)`): the lines of those statements, its pruned source and its Enum classes'
    members, for the resolver to evaluate."""
    writes = dynamic_eval.namespace_writes(node)
    if not writes:
        return None
    try:
        source = dynamic_eval.program_source(copy.deepcopy(node))
    except (RecursionError, MemoryError):
        return None
    return {
        "source": source,
        "lines": [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in writes],
        "enums": dynamic_eval.enum_members(node),
    }


def _is_namespace_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("globals", "vars")
        and not node.args
        and not node.keywords
    )


def _named_namespace_writes(module: ast.Module) -> tuple[list[str], list[tuple[int, int]]]:
    """Module-level writes to the namespace whose names are literal: `globals()["x"] = v`, or
    `globals()[n] = v` in a loop `for n in ["a", "b"]:` (numpy 2.0's platform float aliases). They bind
    those names (maybe: the write may fail or not run) and no other; their lines are left out of the
    dynamic-marker test. Returns the names and the lines of the writes."""
    names: list[str] = []
    lines: list[tuple[int, int]] = []

    def key_names(key: ast.expr, loops: dict[str, list[str]]) -> list[str] | None:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return [key.value]
        if isinstance(key, ast.Name) and key.id in loops:
            return loops[key.id]
        return None

    def visit(statements: list[ast.stmt], loops: dict[str, list[str]]) -> None:
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Subscript) and _is_namespace_call(target.value):
                    found = key_names(target.slice, loops)
                    if found is not None and not any(
                        isinstance(inner, ast.Call)
                        and isinstance(inner.func, ast.Name)
                        and inner.func.id in _NAMESPACE_FUNCTIONS
                        for inner in walk(stmt.value)
                    ):
                        names.extend(found)
                        lines.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
                continue
            inner_loops = loops
            if (
                isinstance(stmt, ast.For)
                and isinstance(stmt.target, ast.Name)
                and isinstance(stmt.iter, (ast.List, ast.Tuple, ast.Set))
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.iter.elts)
            ):
                inner_loops = {**loops, stmt.target.id: [e.value for e in stmt.iter.elts]}  # type: ignore[attr-defined]  # str constants (checked above)
            for field_name in ("body", "orelse", "finalbody"):
                visit(getattr(stmt, field_name, None) or [], inner_loops)
            for handler in getattr(stmt, "handlers", None) or []:
                visit(handler.body, inner_loops)

    visit(module.body, {})
    return names, lines


_DYNAMIC_BINDING = "dynamic-binding"  # a Reason code (auditor/core/reasons.py)


_NAMESPACE_FUNCTIONS = frozenset({"locals", "vars", "globals", "exec"})


def _unpacked_names(statements: list[ast.stmt]) -> list[tuple[str, int]]:
    """Names bound by unpacking assignments (`(DEBUG, INFO) = range(2)`, `a, *rest = ...`): plain
    attributes of the namespace, which griffe does not record."""
    found: list[tuple[str, int]] = []
    for stmt in statements:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, (ast.Tuple, ast.List)):
                    found.extend((name, stmt.lineno) for name in _target_names(target))
    return found


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _body_bound_names(statements: list[ast.stmt]) -> set[str]:
    """Every name a class body binds, whatever the statement (for, with, walrus, del, imports...)."""
    names: set[str] = set()
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*")
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers"):
            if isinstance(getattr(stmt, field_name, None), list):
                break  # a compound statement: its own statements come separately; read its header only
        else:
            field_name = ""
        parts = (
            [stmt]
            if not field_name
            else [
                getattr(stmt, f)
                for f in ("target", "test", "iter", "items", "subject")
                if getattr(stmt, f, None) is not None
            ]
        )
        for part in parts:
            for inner in (
                walk(part) if isinstance(part, ast.AST) else (n for item in part for n in walk(item))
            ):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    names.add(inner.id)
        if isinstance(stmt, ast.Try):
            names.update(h.name for h in stmt.handlers if h.name)
    return names


def _uses_namespace_functions(statements: list[ast.stmt]) -> bool:
    """A class body that calls locals()/vars()/exec(): it may bind any name."""
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        headers = (
            [stmt]
            if not any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse", "handlers"))
            else [
                getattr(stmt, f)
                for f in ("target", "test", "iter", "subject")
                if getattr(stmt, f, None) is not None
            ]
        )
        for header in headers:
            for inner in walk(header):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Name)
                    and inner.func.id in _NAMESPACE_FUNCTIONS
                ):
                    return True
    return False


def _open_module_namespace(module: ast.Module) -> str | None:
    """A module whose top-level code calls locals()/vars()/exec() (globals() is already a marker)."""
    for stmt in _module_statements(module):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in walk(stmt):
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id in ("locals", "vars", "exec")
            ):
                return _DYNAMIC_BINDING
    return None


def _class_patches(module: ast.Module) -> dict[str, dict[str, Any]]:
    """What the module's code (functions included) does to its own top-level classes from outside their
    bodies: `Cls.name = ...` and `setattr(Cls, "name", ...)` bind `name`; `setattr(Cls, expr, ...)`,
    `Cls.__dict__`/`vars(Cls)` games bind unknown names (the class's namespace is open)."""
    classes = {stmt.name for stmt in _module_statements(module) if isinstance(stmt, ast.ClassDef)}
    patches: dict[str, dict[str, Any]] = {}
    if not classes:
        return patches
    for inner in walk_once(module):
        owner, name = None, None
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.value, ast.Name)
            and inner.value.id in classes
        ):
            if isinstance(inner.ctx, (ast.Store, ast.Del)):
                owner, name = inner.value.id, inner.attr
            elif inner.attr == "__dict__":
                owner = inner.value.id
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in ("setattr", "vars")
            and inner.args
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id in classes
        ):
            owner = inner.args[0].id
            second = inner.args[1] if inner.func.id == "setattr" and len(inner.args) > 1 else None
            if isinstance(second, ast.Constant) and isinstance(second.value, str):
                name = second.value
        if owner is None:
            continue
        patch = patches.setdefault(owner, {"names": [], "open": False})
        if name is not None:
            patch["names"].append(name)
        else:
            patch["open"] = True
    return patches


def _top_level_names(module: ast.Module) -> set[str]:
    """Every name bound at module level, whatever the statement (for, with, walrus, global...)."""
    names: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
                functions = (
                    [stmt]
                    if not isinstance(stmt, ast.ClassDef)
                    else [f for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
                )
                for function in functions:  # `global x` in a function binds a module name
                    for inner in _own_nodes(function):
                        if isinstance(inner, ast.Global):
                            names.update(inner.names)
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.name != "*":
                        names.add(alias.asname or alias.name.split(".")[0])
                continue
            for inner in walk(stmt):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    names.add(inner.id)
                elif isinstance(inner, ast.ExceptHandler) and inner.name:
                    names.add(inner.name)
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                nested = getattr(stmt, field_name, None)
                if isinstance(nested, list):
                    visit([s for s in nested if isinstance(s, ast.stmt)])
            if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                for handler in getattr(stmt, "handlers", ()):  # `TryStar` (3.11+) is not in 3.10's `ast`
                    visit(handler.body)
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    visit(case.body)

    visit(module.body)
    return names


def _without_main_blocks(code: str) -> str:
    """The source with its `if __name__ == "__main__":` blocks blanked (line numbers kept): they never run
    on import, so nothing they bind is a module attribute."""
    if "__main__" not in code:
        return code
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code  # griffe reports the error itself
    lines = code.splitlines(keepends=True)
    for stmt in tree.body:
        if _is_main_block(stmt) and stmt.end_lineno is not None:
            for index in range(stmt.lineno - 1, stmt.end_lineno):
                lines[index] = "\n"
    return "".join(lines)


def _is_main_block(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _rebound_names(body: list[ast.stmt]) -> set[str]:
    """Names a body binds more than once to a function, class or import (per branch of `if`/`try`
    included): which definition runs depends on the platform or on what imported, so no one is certain.
    Overloads and property setters are one definition, not several."""
    counts: dict[str, int] = {}

    def count(statements: list[ast.stmt]) -> None:
        for stmt in statements:
            if _is_main_block(stmt):
                continue  # `if __name__ == "__main__":` never runs on import
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not any(
                    _last_name_of(d) in ("overload", "setter", "deleter", "getter")
                    for d in stmt.decorator_list
                ):
                    counts[stmt.name] = counts.get(stmt.name, 0) + 1
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.name != "*":
                        name = alias.asname or alias.name.split(".")[0]
                        counts[name] = counts.get(name, 0) + 1
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id in counts:
                        counts[target.id] += 1  # `f = wrap(f)` after `def f`: rebound
            for field_name in ("body", "orelse", "finalbody"):
                nested = getattr(stmt, field_name, None)
                if isinstance(nested, list) and not isinstance(
                    stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    count(nested)
            for handler in getattr(stmt, "handlers", []) or []:
                count(handler.body)

    count(body)
    return {name for name, n in counts.items() if n > 1}


def _star_imports(node: ast.Module, mod: griffe.Module) -> list[str]:
    paths = []
    for stmt in sorted(_module_statements(node), key=lambda s: (s.lineno, s.col_offset)):
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            if stmt.level:
                base = mod.path.split(".")
                keep = len(base) - stmt.level + (1 if mod.is_init_module else 0)
                prefix = base[:keep]
                paths.append(".".join(prefix + ([stmt.module] if stmt.module else [])))
            elif stmt.module:
                paths.append(stmt.module)
    return paths


def _instance_attributes(node: ast.ClassDef) -> tuple[set[str], bool]:
    """The attributes the class's methods set on `self`, and whether they may set names no one can list:
    `setattr(...)` with a name that is neither a string literal nor, on `self`, a variable an enclosing
    `if name == "literal":` pins; or `__dict__` used other than read (`self.__dict__.copy()` binds
    nothing; `self.__dict__.update(...)`, `self.__dict__[k] = v` may bind anything)."""
    names: set[str] = set()
    dynamic = False
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        pinned = _pinned_names(method)
        for inner in _all_nodes(method):
            if (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.ctx, ast.Store)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == self_name
            ):
                names.add(inner.attr)
            elif (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "setattr"
            ):
                name = inner.args[1] if len(inner.args) > 1 else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    names.add(name.value)
                elif (
                    isinstance(name, ast.Name)
                    and isinstance(inner.args[0], ast.Name)
                    and inner.args[0].id == self_name
                    and id(inner) in pinned.get(name.id, {})
                ):
                    names.add(pinned[name.id][id(inner)])
                else:
                    dynamic = True
            elif (
                isinstance(inner, ast.Attribute)
                and inner.attr == "__dict__"
                and not _read_only(inner, method)
            ):
                dynamic = True
    return names, dynamic


# Methods of a `__dict__` that bind no name: reads, and removals (`self.__dict__.pop(k, None)`, as
# memoizing classes reset what they cached: an attribute removed is never one added).
_READ_METHODS = frozenset(
    {"copy", "get", "items", "keys", "values", "__contains__", "pop", "popitem", "clear"}
)


def _read_only(attribute: ast.Attribute, function: ast.AST) -> bool:
    """`x.__dict__` only read or emptied: `x.__dict__.copy()` / `.get(...)` / `.items()` / `.pop(k)`,
    `k in x.__dict__`, `x.__dict__[k]` loaded or deleted."""
    for parent in walk(function):
        for child in children(parent):
            if child is not attribute:
                continue
            if isinstance(parent, ast.Attribute) and parent.attr in _READ_METHODS:
                return True
            if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Load, ast.Del)):
                return True
            if isinstance(parent, ast.Compare) and attribute in parent.comparators:
                return all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
            return False
    return False


def _pinned_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, dict[int, str]]:
    """For each variable and each call under an `if var == "literal":` (in its body, the variable not
    rebound there): the literal the variable holds at that call."""
    found: dict[str, dict[int, str]] = {}
    for stmt in walk(function):
        if not isinstance(stmt, ast.If):
            continue
        test = stmt.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Name)
            and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.comparators[0].value, str)
        ):
            continue
        variable, value = test.left.id, test.comparators[0].value
        body = [n for s in stmt.body for n in walk(s)]
        if any(
            isinstance(n, ast.Name) and n.id == variable and not isinstance(n.ctx, ast.Load) for n in body
        ):
            continue
        for inner in body:
            if isinstance(inner, ast.Call):
                found.setdefault(variable, {})[id(inner)] = value
    return found


def _import_twins(body: list[ast.stmt], module: str, is_package: bool) -> dict[str, tuple[str, str]]:
    """`try: from ._speedups import soft_str [as soft_str] except ImportError: from ._native import
    soft_str [as soft_str]` at the module's top level (MarkupSafe): each name the `try` body and the
    handler both bind, once each and nowhere else, with where each branch takes it from (the `try`
    branch's first). Only `from ... import` statements in both bodies, one handler for `ImportError`
    (or `ModuleNotFoundError`), no `else`/`finally`. Which branch runs is not known; the resolver
    decides whether the two are the same callable as far as a call can tell."""
    counts: dict[str, int] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    counts[name] = counts.get(name, 0) + 1

    def sources(statements: list[ast.stmt]) -> dict[str, str] | None:
        found: dict[str, str] = {}
        for stmt in statements:
            if not isinstance(stmt, ast.ImportFrom) or any(a.name == "*" for a in stmt.names):
                return None
            if stmt.level:
                base = module.split(".")
                keep = len(base) - stmt.level + (1 if is_package else 0)
                if keep <= 0:
                    return None
                origin = ".".join(base[:keep] + ([stmt.module] if stmt.module else []))
            elif stmt.module:
                origin = stmt.module
            else:
                return None
            for alias in stmt.names:
                found[alias.asname or alias.name] = f"{origin}.{alias.name}"
        return found

    twins: dict[str, tuple[str, str]] = {}
    for stmt in body:
        if not isinstance(stmt, ast.Try) or stmt.orelse or stmt.finalbody or len(stmt.handlers) != 1:
            continue
        handler = stmt.handlers[0]
        caught = handler.type
        if handler.name or not (
            isinstance(caught, ast.Name) and caught.id in ("ImportError", "ModuleNotFoundError")
        ):
            continue
        first, second = sources(stmt.body), sources(handler.body)
        if first is None or second is None:
            continue
        for name in set(first) & set(second):
            if counts.get(name) == 2:
                twins[name] = (first[name], second[name])
    return twins
