"""Which code is guarded: try/except ImportError, `contextlib.suppress`, `hasattr`, version and
feature tests, `if TYPE_CHECKING:`."""

from __future__ import annotations

import ast

from apidrift.auditor.downstream.astscan.nodes import _dotted
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.shared import GUARD_EXCEPTIONS, VERSIONISH, precise_catches


def _handler_guards(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = []
    for item in types:
        dotted = _dotted(item.value if isinstance(item, ast.Starred) else item)
        if dotted:
            names.append(dotted.split(".")[-1])
    return any(n in GUARD_EXCEPTIONS for n in names)


def _try_catches(handlers: list[ast.ExceptHandler]) -> frozenset[str] | None:
    """The builtin exception classes a `try`'s handlers catch, when each names only builtin classes
    (see shared.precise_catches)."""
    names: list[list[str | None]] = []
    for handler in handlers:
        if handler.type is None:
            names.append([])
            continue
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names.append([None if isinstance(t, ast.Starred) else _dotted(t) for t in types])
    return precise_catches(names)


def _suppressed(node: ast.With | ast.AsyncWith) -> frozenset[str] | None:
    """The builtin exception classes `with contextlib.suppress(...):` swallows, when the statement's
    one item is such a call naming only builtin classes; else None."""
    if len(node.items) != 1:
        return None
    call = node.items[0].context_expr
    if not (isinstance(call, ast.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress"):
        return None
    if call.keywords or not call.args:
        return None
    return precise_catches([[None if isinstance(a, ast.Starred) else _dotted(a) for a in call.args]])


def _suppresses(node: ast.With | ast.AsyncWith) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress":
            values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [
                k.value for k in call.keywords
            ]
            names = {(_dotted(v) or "").rsplit(".", 1)[-1] for v in values}
            if names & GUARD_EXCEPTIONS:
                return True
    return False


def _handler_names(handler: ast.ExceptHandler) -> set[str]:
    """The last names of the exception classes a handler catches."""
    if handler.type is None:
        return set()
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {(_dotted(t.value if isinstance(t, ast.Starred) else t) or "").split(".")[-1] for t in types}


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    return bool(_handler_names(handler) & {"ImportError", "ModuleNotFoundError"})


def _catches_attribute_error(handler: ast.ExceptHandler) -> bool:
    """`except AttributeError:` (alone or in a tuple): the fallback for a name the `try` body uses
    and an older (or newer) version lacks; it runs only when that body fails."""
    if handler.type is None:
        return False  # a bare `except:` is an import fallback already
    return "AttributeError" in _handler_names(handler)


def _is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` alone: its body never runs."""
    dotted = _dotted(test)
    return dotted is not None and dotted.split(".")[-1] == "TYPE_CHECKING"


def _is_guard_test(test: ast.expr, text: _Text) -> bool:
    """`if TYPE_CHECKING:`, `hasattr(...)`, a version or feature flag, or a boolean combination with one."""
    if isinstance(test, ast.BoolOp):
        return any(_is_guard_test(value, text) for value in test.values)
    if isinstance(test, ast.UnaryOp):
        return _is_guard_test(test.operand, text)
    dotted = _dotted(test)
    if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
        return True
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and _dotted(node.func) in ("hasattr", "getattr"):
            return True  # `hasattr(m, "x")`, `callable(getattr(m, "x", None))`, `getattr(m, "x", None) is not None`
    return bool(VERSIONISH.search(text.segment(test)))


def _hasattr_tests(test: ast.expr, text: _Text) -> list[tuple[str, str]] | None:
    """For a test that guards only through `hasattr(x, "a")` / `getattr(x, "a", ...)` of plain names:
    each call's (name, attribute); None when a part of it guards otherwise (`TYPE_CHECKING`, a version
    test) or a call is of another shape."""
    operands: list[ast.expr] = []
    pending = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BoolOp):
            pending.extend(node.values)
        elif isinstance(node, ast.UnaryOp):
            pending.append(node.operand)
        else:
            operands.append(node)
    found: list[tuple[str, str]] = []
    for operand in operands:
        dotted = _dotted(operand)
        if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
            return None
        if VERSIONISH.search(text.segment(operand)):
            return None
        for call in ast.walk(operand):
            if isinstance(call, ast.Call) and _dotted(call.func) in ("hasattr", "getattr"):
                args = call.args
                if (
                    len(args) < 2
                    or not isinstance(args[0], ast.Name)
                    or not isinstance(args[1], ast.Constant)
                    or not isinstance(args[1].value, str)
                ):
                    return None
                found.append((args[0].id, args[1].value))
    return found or None


_SKIP_DECORATORS = frozenset({"skipif", "skipIf", "skipUnless"})


def _skip_condition(decorator: ast.expr) -> ast.expr | None:
    """The condition of `@pytest.mark.skipif(cond, ...)`, `@unittest.skipIf(cond, ...)` or
    `@unittest.skipUnless(cond, ...)`: the decorated test's body runs only on one side of it."""
    if (
        isinstance(decorator, ast.Call)
        and decorator.args
        and (_dotted(decorator.func) or "").rsplit(".", 1)[-1] in _SKIP_DECORATORS
    ):
        return decorator.args[0]
    return None


# An introspection test of one upstream object: (kind, the object's expression, the name tested,
# whether the test is true where the name is there). See sites.Introspected for the kinds.
_Atom = tuple[str, ast.expr, str, bool]

_SIGNATURE = frozenset({"signature", "inspect.signature"})
_ARGSPEC = frozenset({"getfullargspec", "inspect.getfullargspec"})


def _introspection(test: ast.expr) -> tuple[list[_Atom], bool] | None:
    """A test made only of introspection tests of objects (`hasattr(X, "x")`, `"x" in
    inspect.signature(X).parameters`, `inspect.signature(X).parameters.get("x")`, `"x" in
    inspect.getfullargspec(X).args` or `.kwonlyargs`, `"x" in X.__code__.co_varnames`, each possibly
    negated), alone or joined by one `and` / `or`: its tests and whether they are joined by `or`."""
    if isinstance(test, ast.BoolOp):
        atoms = [_atom(value) for value in test.values]
        if any(atom is None for atom in atoms):
            return None
        return [a for a in atoms if a is not None], isinstance(test.op, ast.Or)
    atom = _atom(test)
    return ([atom], False) if atom is not None else None


def _atom(node: ast.expr) -> _Atom | None:
    positive = True
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        positive, node = not positive, node.operand
    if (
        isinstance(node, ast.Call)
        and _dotted(node.func) == "hasattr"
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.args[0], (ast.Name, ast.Attribute))
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return ("attribute", node.args[0], node.args[1].value, positive)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if (
            isinstance(op, (ast.In, ast.NotIn))
            and isinstance(left, ast.Constant)
            and isinstance(left.value, str)
        ):
            found = _collection(right)
            if found is not None:
                return (found[0], found[1], left.value, positive is isinstance(op, ast.In))
            return None
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
            got = _parameters_get(left)
            if got is not None:
                return ("parameter", got[0], got[1], positive is isinstance(op, ast.IsNot))
        return None
    got = _parameters_get(node)  # an `inspect.Parameter` is always true
    return ("parameter", got[0], got[1], positive) if got is not None else None


def _called_with(node: ast.expr, names: frozenset[str]) -> ast.expr | None:
    """`signature(X)` (a name in `names` called with one plain name or attribute): X."""
    if (
        isinstance(node, ast.Call)
        and _dotted(node.func) in names
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], (ast.Name, ast.Attribute))
    ):
        return node.args[0]
    return None


def _collection(node: ast.expr) -> tuple[str, ast.expr] | None:
    """The names an introspection lists, with the object it reads them of."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "keys"
        and not node.args
        and not node.keywords
    ):
        node = node.func.value
    if not isinstance(node, ast.Attribute):
        return None
    inner = node.value
    if node.attr == "parameters":
        of = _called_with(inner, _SIGNATURE)
        return ("parameter", of) if of is not None else None
    if node.attr in ("args", "kwonlyargs"):
        of = _called_with(inner, _ARGSPEC)
        return ("positional" if node.attr == "args" else "keyword-only", of) if of is not None else None
    if (
        node.attr == "co_varnames"
        and isinstance(inner, ast.Attribute)
        and inner.attr == "__code__"
        and isinstance(inner.value, (ast.Name, ast.Attribute))
    ):
        return ("varname", inner.value)
    return None


def _parameters_get(node: ast.expr) -> tuple[ast.expr, str] | None:
    """`inspect.signature(X).parameters.get("x")`: (X, "x")."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "parameters"
    ):
        of = _called_with(node.func.value.value, _SIGNATURE)
        return (of, node.args[0].value) if of is not None else None
    return None
