"""Imports of the downstream's own modules made only under a test of the upstream's major version.

`if _get_click_major() < 8: from ._completion_click7 import completion_init` (typer): under click 8
the module is never imported, so nothing in it runs. A test is read only where the value compared is
the upstream's own major version, by evidence: a module-level function without parameters whose one
statement returns it, or a module-level name bound to it (`int(pkg.__version__.split(".")[0])`,
`packaging.version.parse(pkg.__version__).major`, `Version(pkg.__version__).major`), in this module or
imported from another of the downstream's (the linking checks that module's own summary), compared
with an integer literal. Never from a name's spelling. What is recorded here is each such import and
the tests around it; `downstream.linking.version_gates` decides across the files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from apidrift.auditor.downstream.astscan.nodes import _dotted

MAX_GATED = 50  # gated imports recorded per file at most
MAX_DEPTH = 40  # statements nested deeper are not walked


def _version_of(node: ast.expr, roots: frozenset[str], names: dict[str, str]) -> str | None:
    """The upstream root whose version string `node` is: `pkg.__version__`, `importlib.metadata
    .version("pkg")` (`metadata.version`, `version` imported from it), or a module-level name bound
    to one of them (`names`)."""
    dotted = _dotted(node) or ""
    if dotted.endswith(".__version__") and dotted[: -len(".__version__")] in roots:
        return dotted[: -len(".__version__")]
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if (
        isinstance(node, ast.Call)
        and (_dotted(node.func) or "").rsplit(".", 1)[-1] == "version"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in roots
    ):
        return str(node.args[0].value)
    return None


def _major_of(node: ast.expr, roots: frozenset[str], names: dict[str, str]) -> str | None:
    """The upstream root whose major version `node` computes: `int(V.split(".")[0])` (also with a
    maxsplit), `parse(V).major`, `Version(V).major`, where V is its version string."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "int"
        and len(node.args) == 1
        and not node.keywords
    ):
        inner = node.args[0]
        if (
            isinstance(inner, ast.Subscript)
            and isinstance(inner.slice, ast.Constant)
            and inner.slice.value == 0
            and isinstance(inner.value, ast.Call)
            and isinstance(inner.value.func, ast.Attribute)
            and inner.value.func.attr == "split"
            and 1 <= len(inner.value.args) <= 2
            and isinstance(inner.value.args[0], ast.Constant)
            and inner.value.args[0].value == "."
            and not inner.value.keywords
        ):
            return _version_of(inner.value.func.value, roots, names)
        return None
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "major"
        and isinstance(node.value, ast.Call)
        and (_dotted(node.value.func) or "").rsplit(".", 1)[-1] in ("parse", "Version")
        and len(node.value.args) == 1
        and not node.value.keywords
    ):
        return _version_of(node.value.args[0], roots, names)
    return None


def version_majors(body: list[ast.stmt], roots: frozenset[str]) -> dict[str, str]:
    """The module-level names that give an upstream root's major version: `def f(): return MAJOR`
    (no parameters, that one statement besides a docstring) and `NAME = MAJOR`, each bound once."""
    versions: dict[str, str] = {}
    found: dict[str, str] = {}
    counts: dict[str, int] = {}
    for stmt in body:
        targets: list[str] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [stmt.name]
        elif isinstance(stmt, ast.Assign):
            targets = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
            targets = [stmt.target.id]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            targets = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        for name in targets:
            counts[name] = counts.get(name, 0) + 1
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            version = _version_of(stmt.value, roots, {})
            if version is not None:
                versions[name] = version
            major = _major_of(stmt.value, roots, versions)
            if major is not None:
                found[name] = major
        elif isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list and _no_parameters(stmt.args):
            statements = stmt.body[1:] if _docstring(stmt.body[0]) else stmt.body
            if len(statements) == 1 and isinstance(statements[0], ast.Return) and statements[0].value:
                major = _major_of(statements[0].value, roots, versions)
                if major is not None:
                    found[stmt.name] = major
    return {name: root for name, root in found.items() if counts.get(name) == 1}


def _no_parameters(args: ast.arguments) -> bool:
    return not (args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _imported(body: list[ast.stmt], package: str | None) -> dict[str, tuple[str, str]]:
    """Names the module binds at its top level by `from MODULE import NAME`: name -> (module, name)."""
    found: dict[str, tuple[str, str]] = {}
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom):
            module = _absolute(stmt, package)
            if module is None:
                continue
            for alias in stmt.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = (module, alias.name)
    return found


def _absolute(stmt: ast.ImportFrom, package: str | None) -> str | None:
    if not stmt.level:
        return stmt.module
    if package is None:
        return None
    parts = package.split(".")
    if stmt.level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (stmt.level - 1)])
    return f"{base}.{stmt.module}" if stmt.module else base


# A test: (module the compared name is imported from, "" for this module; the name; flags when it is the
# upstream's major version)
Test = tuple[str, str, str]


def _test(node: ast.expr, imported: dict[str, tuple[str, str]], negated: bool) -> Test | None:
    """`NAME() < 8`, `NAME >= 8`, ... where NAME may give the major version: the flags under which the
    branch runs ("+before:8", "+since:8"; both for `==`), or None for any other test."""
    if not (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.comparators[0], ast.Constant)
        and type(node.comparators[0].value) is int
        and node.comparators[0].value >= 0
    ):
        return None
    left = node.left
    if isinstance(left, ast.Call) and not left.args and not left.keywords:
        left = left.func
    if not isinstance(left, ast.Name):
        return None
    bound: int = node.comparators[0].value
    op = node.ops[0]
    since: int | None
    before: int | None
    ranges: dict[
        type, tuple[int | None, int | None]
    ] = {  # the majors the branch runs for: (since, before), None for no bound
        ast.Lt: (None, bound),
        ast.LtE: (None, bound + 1),
        ast.Gt: (bound + 1, None),
        ast.GtE: (bound, None),
        ast.Eq: (bound, bound + 1),
    }
    if isinstance(op, ast.NotEq):
        if not negated:
            return None
        since, before = bound, bound + 1
        negated = False
    else:
        kind = ranges.get(type(op))
        if kind is None:
            return None
        since, before = kind
    if negated:
        if since is not None and before is not None:
            return None  # the else of `==`: two ranges
        since, before = before, since
    flags = (f"+since:{since}" if since is not None else "") + (
        f"+before:{before}" if before is not None else ""
    )
    module, name = imported.get(left.id, ("", left.id))
    return module, name, flags


def gated_imports(
    body: list[ast.stmt], package: str | None, local_names: frozenset[str]
) -> list[tuple[str, tuple[Test, ...]]]:
    """The imports of the downstream's own modules (`local_names` their top-level names) made under
    tests that may be of the upstream's major version: (module imported, the tests around it)."""
    imported = _imported(body, package)
    found: list[tuple[str, tuple[Test, ...]]] = []
    for stmt, tests in _walk(body, (), imported, 0):
        if len(found) >= MAX_GATED:
            break
        targets: list[str] = []
        if isinstance(stmt, ast.ImportFrom):
            module = _absolute(stmt, package)
            if module is None:
                continue
            targets = [module] + [f"{module}.{a.name}" for a in stmt.names if a.name != "*"]
        elif isinstance(stmt, ast.Import):
            targets = [a.name for a in stmt.names]
        for target in targets:
            if target.split(".")[0] in local_names:
                found.append((target, tests))
    return found


def _walk(
    body: list[ast.stmt], tests: tuple[Test, ...], imported: dict[str, tuple[str, str]], depth: int
) -> Iterator[tuple[ast.stmt, tuple[Test, ...]]]:
    if depth > MAX_DEPTH:
        return
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if tests:
                yield stmt, tests
        elif isinstance(stmt, ast.If):
            test = _test(stmt.test, imported, False)
            yield from _walk(stmt.body, (*tests, test) if test else tests, imported, depth + 1)
            test = _test(stmt.test, imported, True)
            yield from _walk(stmt.orelse, (*tests, test) if test else tests, imported, depth + 1)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    statements = [s for s in inner if isinstance(s, ast.stmt)]
                    for handler in inner:
                        if isinstance(handler, ast.ExceptHandler):
                            statements.extend(handler.body)
                    yield from _walk(statements, tests, imported, depth + 1)
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    yield from _walk(case.body, tests, imported, depth + 1)
