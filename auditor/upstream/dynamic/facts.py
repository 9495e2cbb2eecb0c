"""Facts of one module's tree, computed once: its module-level bindings, the statements certain to run
and the tests known statically, the names changed in place, and the program the evaluator reads.
"""

from __future__ import annotations

import ast
import builtins
import functools

from apidrift.auditor.upstream.astwalk import walk_once
from apidrift.auditor.upstream.escape import Escapes, changed_depths


@functools.lru_cache(maxsize=32)
def _module_facts(
    source: str,
) -> tuple[dict[str, list[tuple[ast.stmt, bool]]], set[str], dict[str, list[ast.stmt]], bool, Escapes] | str:
    """A module's bindings, mutated names, changes made in place, whether it star-imports, and the
    depths from which its values may be changed unseen (parsed once per source: every name asked
    reads them). The trees are only read, never changed, by the interpreter."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        return str(error) or type(error).__name__
    mutations = _module_mutations(tree)
    followed = {id(change) for changes in mutations.values() for change in changes}
    # (the last: escape.Escapes)
    return _bindings(tree), _mutated(tree), mutations, _has_star_import(tree), changed_depths(tree, followed)


def _module_statements(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements, inside `if`/`try`/`with`/`for` too, not inside defs or classes; of an
    `if` whose test is known without running anything (see _static_truths), the branch that runs."""
    truths = _static_truths(tree)
    found: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        found.append(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If) and id(stmt) in truths:
            stack.extend(reversed(stmt.body if truths[id(stmt)] else stmt.orelse))
            continue
        nested: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            nested.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()) or ():
            nested.extend(handler.body)
        stack.extend(reversed(nested))
    return found


def _bindings(tree: ast.Module) -> dict[str, list[tuple[ast.stmt, bool]]]:
    """Module-level statements binding each name (several: bound more than one way), each with whether
    it runs for certain on import (not under an `if`, in a loop or in an exception handler)."""
    bindings: dict[str, list[tuple[ast.stmt, bool]]] = {}
    certain = _certain_statements(tree)
    for stmt in _module_statements(tree):
        names: list[str] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [stmt.name]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"]
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                names.extend(
                    n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(stmt.target, ast.Name) and (
                not isinstance(stmt, ast.AnnAssign) or stmt.value is not None
            ):
                names = [stmt.target.id]
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = (
                [stmt.target]
                if isinstance(stmt, (ast.For, ast.AsyncFor))
                else [i.optional_vars for i in stmt.items if i.optional_vars]
            )
            for target in targets:
                names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, ast.Delete):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        for inner in (
            ast.walk(stmt)
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            else ()
        ):
            if isinstance(inner, ast.NamedExpr):
                names.append(inner.target.id)
        for name in names:
            bindings.setdefault(name, []).append((stmt, id(stmt) in certain))
    return bindings


def _certain_statements(tree: ast.Module) -> set[int]:
    """Ids of the module-level statements that run on every import: the top level, `try` and `with`
    bodies (an exception there fails the import, or binds in a handler: counted as another binding)."""
    truths = _static_truths(tree)
    found: set[int] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        found.add(id(stmt))
        if isinstance(stmt, ast.If) and id(stmt) in truths:
            stack.extend(stmt.body if truths[id(stmt)] else stmt.orelse)  # the branch that runs
        if isinstance(stmt, (ast.Try, ast.With)) or type(stmt).__name__ == "TryStar":
            stack.extend(getattr(stmt, "body", ()))  # `TryStar` (3.11+) is not in 3.10's `ast`
            if isinstance(stmt, ast.Try):
                stack.extend(stmt.finalbody)
    return found


@functools.lru_cache(maxsize=8)
def _static_truths(tree: ast.Module) -> dict[int, bool]:
    """The module-level `if` statements whose test is known without running anything (id -> the
    test's truth): `TYPE_CHECKING` imported from `typing`, or `typing.TYPE_CHECKING` (False at run
    time), and a name bound only by
    the idiom that gives it a default unless something put it into builtins first, `try: NAME` /
    `except NameError: NAME = <constant>` (numpy's `__NUMPY_SETUP__`, which only its own build sets);
    `not` of either. Such an `if` runs one branch on every import."""
    stores = _store_counts(tree)
    statements = _module_level(tree)
    known, typing_modules = _known_names(statements, stores)
    truths: dict[int, bool] = {}
    if not known and not typing_modules:
        return truths
    for stmt in statements:
        if isinstance(stmt, ast.If):
            truth = _known_test(stmt.test, known, typing_modules)
            if truth is not None:
                truths[id(stmt)] = truth
    return truths


def _store_counts(tree: ast.Module) -> dict[str, int]:
    """How often each name is bound anywhere in the module (a `global` statement counts twice)."""
    stores: dict[str, int] = {}
    for node in walk_once(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Global):
            for name in node.names:
                stores[name] = stores.get(name, 0) + 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                stores[bound] = stores.get(bound, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores[node.name] = stores.get(node.name, 0) + 1
    return stores


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements, blocks included, not inside defs or classes."""
    statements: list[ast.stmt] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        statements.append(stmt)
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for name in ("body", "orelse", "finalbody"):
                stack.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
            for handler in getattr(stmt, "handlers", ()) or ():
                stack.extend(handler.body)
    return statements


def _known_names(statements: list[ast.stmt], stores: dict[str, int]) -> tuple[dict[str, bool], set[str]]:
    """The names whose truth is known (`TYPE_CHECKING` from typing, an injected default) and the names
    `import typing` binds (each as the one binding of its name)."""
    known: dict[str, bool] = {}
    typing_modules: set[str] = set()
    for stmt in statements:
        if (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module in ("typing", "typing_extensions")
            and not stmt.level
        ):
            for alias in stmt.names:
                if alias.name == "TYPE_CHECKING" and stores.get(alias.asname or alias.name) == 1:
                    known[alias.asname or alias.name] = False
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name
                if alias.name in ("typing", "typing_extensions") and stores.get(bound) == 1:
                    typing_modules.add(bound)
        default = _injected_default(stmt)
        if default is not None and stores.get(default[0]) == 1 and not hasattr(builtins, default[0]):
            known[default[0]] = default[1]
    return known, typing_modules


def _known_test(test: ast.expr, known: dict[str, bool], typing_modules: set[str]) -> bool | None:
    """An `if` test's truth where it is known (`not` of a known test included), else None."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.Name) and test.id in known:
        return known[test.id] != negated
    if (
        isinstance(test, ast.Attribute)
        and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name)
        and test.value.id in typing_modules
    ):
        return negated  # `if typing.TYPE_CHECKING:` never runs its body
    return None


def _injected_default(stmt: ast.stmt) -> tuple[str, bool] | None:
    """`try: NAME` / `except NameError: NAME = <constant>`: the name, and its constant's truth."""
    if not (isinstance(stmt, ast.Try) and len(stmt.body) == 1 and len(stmt.handlers) == 1):
        return None
    if stmt.orelse or stmt.finalbody:
        return None
    probe, handler = stmt.body[0], stmt.handlers[0]
    if not (isinstance(probe, ast.Expr) and isinstance(probe.value, ast.Name)):
        return None
    name = probe.value.id
    if not (isinstance(handler.type, ast.Name) and handler.type.id == "NameError" and len(handler.body) == 1):
        return None
    assign = handler.body[0]
    if not (
        isinstance(assign, ast.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], ast.Name)
        and assign.targets[0].id == name
        and isinstance(assign.value, ast.Constant)
    ):
        return None
    return name, bool(assign.value.value)


def _has_star_import(tree: ast.Module) -> bool:
    """A star import that may run (one under `if typing.TYPE_CHECKING:` never does)."""
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in _module_statements(tree)
    )


def _module_mutations(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """Names changed in place only by module-level statements that run on every import, each one plain
    change of the name (`T.update(...)`, `T.append(x)`, `T[k] = v`, `del T[k]`): those statements, in
    source order. A name changed anywhere else (in a function, in a loop, through an attribute, or
    declared `global`) is not here: its value is not followed."""
    counts: dict[str, int] = {}
    for inner in ast.walk(tree):
        for name in _changed_names(inner):
            counts[name] = counts.get(name, 0) + 1
    certain = _certain_statements(tree)
    found: dict[str, list[ast.stmt]] = {}
    for stmt in _module_statements(tree):
        if id(stmt) not in certain:
            continue
        changed = _plain_change(stmt)
        if changed is not None:
            found.setdefault(changed, []).append(stmt)
    return {
        name: sorted(changes, key=lambda c: c.lineno)
        for name, changes in found.items()
        if counts.get(name) == len(changes)
    }


def _changed_names(inner: ast.AST) -> list[str]:
    """The names one node changes in place (as _mutated counts them), `global` ones twice."""
    if isinstance(inner, ast.Global):
        return [*inner.names, *inner.names]
    if isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(inner.ctx, (ast.Store, ast.Del)):
        return [inner.value.id] if isinstance(inner.value, ast.Name) else []
    if (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and isinstance(inner.func.value, ast.Name)
        and inner.func.attr in _MUTATORS
    ):
        return [inner.func.value.id]
    return []


def _plain_change(stmt: ast.stmt) -> str | None:
    """The name a statement changes in place, if that is all it does to it: `T.update(...)` (any of
    _MUTATORS) as a statement, `T[k] = v` or `del T[k]`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in _MUTATORS:
            return func.value.id
        return None
    if isinstance(stmt, (ast.Assign, ast.Delete)) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value.id
    return None


_MUTATORS = frozenset(
    {
        "update",
        "setdefault",
        "pop",
        "popitem",
        "clear",
        "append",
        "extend",
        "insert",
        "remove",
        "add",
        "discard",
        "__setitem__",
        "__delitem__",
        "sort",
        "reverse",
        "difference_update",
        "intersection_update",
    }
)


def _mutated(tree: ast.Module) -> set[str]:
    """Names changed in place anywhere in the module, functions included (`T[k] = v`, `T.update(...)`,
    `del T[k]`, `T.x = ...`), or declared `global` in a function: their first value may not be the one
    the `__getattr__` reads. (A local of the same name in some function counts too: only more unknowns.)"""
    names: set[str] = set()
    for inner in ast.walk(tree):
        if isinstance(inner, ast.Global):
            names.update(inner.names)
        elif isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(
            inner.ctx, (ast.Store, ast.Del)
        ):
            if isinstance(inner.value, ast.Name):
                names.add(inner.value.id)
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
        ) and inner.func.attr in _MUTATORS:
            names.add(inner.func.value.id)
    return names


class _Pruner(ast.NodeTransformer):
    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.bases, node.keywords, node.body, node.decorator_list = [], [], [ast.Pass()], []
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:] or [ast.Pass()]
        node.body = body
        node.returns = None
        for argument in ast.walk(node.args):
            if isinstance(argument, ast.arg):
                argument.annotation = None
        self.generic_visit(node)
        return node
