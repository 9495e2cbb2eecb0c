"""Which code is guarded: try/except ImportError, `contextlib.suppress`, `hasattr`, version and
feature tests, `if TYPE_CHECKING:`."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from apidrift.auditor.downstream.scan.nodes import _calls_in, _dotted
from apidrift.auditor.downstream.shared import GUARD_EXCEPTIONS, VERSIONISH, precise_catches


def _handler_guards(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = []
    for item in types:
        expression = item.value if isinstance(item, cst.Element) else item
        dotted = _dotted(expression)
        if dotted:
            names.append(dotted.split(".")[-1])
    return any(n in GUARD_EXCEPTIONS for n in names)


def _try_catches(handlers: Sequence[cst.ExceptHandler]) -> frozenset[str] | None:
    """The builtin exception classes a `try`'s handlers catch, when each names only builtin classes
    (see shared.precise_catches)."""
    names: list[list[str | None]] = []
    for handler in handlers:
        if handler.type is None:
            names.append([])
            continue
        types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        names.append(
            [
                None
                if isinstance(t, cst.StarredElement)
                else _dotted(t.value if isinstance(t, cst.Element) else t)
                for t in types
            ]
        )
    return precise_catches(names)


def _suppressed(node: cst.With) -> frozenset[str] | None:
    """The builtin exception classes `with contextlib.suppress(...):` swallows, when the statement's
    one item is such a call naming only builtin classes; else None."""
    if len(node.items) != 1:
        return None
    call = node.items[0].item
    if not (isinstance(call, cst.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress"):
        return None
    if not call.args or any(a.keyword is not None or a.star for a in call.args):
        return None
    return precise_catches([[_dotted(a.value) for a in call.args]])


def _suppresses(node: cst.With) -> bool:
    for item in node.items:
        call = item.item
        if isinstance(call, cst.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress":
            names = {(_dotted(a.value) or "").rsplit(".", 1)[-1] for a in call.args}
            if names & GUARD_EXCEPTIONS:
                return True
    return False


def _handler_names(handler: cst.ExceptHandler) -> set[str]:
    """The last names of the exception classes a handler catches."""
    if handler.type is None:
        return set()
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    return {(_dotted(t.value if isinstance(t, cst.Element) else t) or "").split(".")[-1] for t in types}


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    return bool(_handler_names(handler) & {"ImportError", "ModuleNotFoundError"})


def _catches_attribute_error(handler: cst.ExceptHandler) -> bool:
    """`except AttributeError:` (alone or in a tuple): the fallback for a name the `try` body uses
    and an older (or newer) version lacks; it runs only when that body fails."""
    if handler.type is None:
        return False  # a bare `except:` is an import fallback already
    return "AttributeError" in _handler_names(handler)


def _is_type_checking(test: cst.BaseExpression) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` alone: its body never runs."""
    dotted = _dotted(test)
    return dotted is not None and dotted.split(".")[-1] == "TYPE_CHECKING"


def _is_guard_test(test: cst.BaseExpression) -> bool:
    """`if TYPE_CHECKING:`, `hasattr(...)`, a version or feature flag, or a boolean combination with one."""
    if isinstance(test, cst.BooleanOperation):
        return _is_guard_test(test.left) or _is_guard_test(test.right)
    if isinstance(test, cst.UnaryOperation):
        return _is_guard_test(test.expression)
    dotted = _dotted(test)
    if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
        return True
    if any(_dotted(call.func) in ("hasattr", "getattr") for call in _calls_in(test)):
        return (
            True  # `hasattr(m, "x")`, `callable(getattr(m, "x", None))`, `getattr(m, "x", None) is not None`
        )
    return bool(VERSIONISH.search(cst.Module([]).code_for_node(test)))


def _hasattr_tests(test: cst.BaseExpression) -> list[tuple[str, str]] | None:
    """For a test that guards only through `hasattr(x, "a")` / `getattr(x, "a", ...)` of plain names:
    each call's (name, attribute); None when a part of it guards otherwise (`TYPE_CHECKING`, a version
    test) or a call is of another shape."""
    operands: list[cst.BaseExpression] = []
    pending = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.BooleanOperation):
            pending.extend((node.left, node.right))
        elif isinstance(node, cst.UnaryOperation):
            pending.append(node.expression)
        else:
            operands.append(node)
    found: list[tuple[str, str]] = []
    for operand in operands:
        dotted = _dotted(operand)
        if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
            return None
        if VERSIONISH.search(cst.Module([]).code_for_node(operand)):
            return None
        for call in _calls_in(operand):
            if _dotted(call.func) not in ("hasattr", "getattr"):
                continue
            args = call.args
            if (
                len(args) < 2
                or any(a.keyword is not None or a.star for a in args[:2])
                or not isinstance(args[0].value, cst.Name)
                or not isinstance(args[1].value, (cst.SimpleString, cst.ConcatenatedString))
            ):
                return None
            attribute = args[1].value.evaluated_value
            if not isinstance(attribute, str):
                return None
            found.append((args[0].value.value, attribute))
    return found or None


_SKIP_DECORATORS = frozenset({"skipif", "skipIf", "skipUnless"})


def _skip_condition(decorator: cst.Decorator) -> cst.BaseExpression | None:
    """The condition of `@pytest.mark.skipif(cond, ...)`, `@unittest.skipIf(cond, ...)` or
    `@unittest.skipUnless(cond, ...)`: the decorated test's body runs only on one side of it."""
    call = decorator.decorator
    if (
        isinstance(call, cst.Call)
        and call.args
        and call.args[0].keyword is None
        and not call.args[0].star
        and (_dotted(call.func) or "").rsplit(".", 1)[-1] in _SKIP_DECORATORS
    ):
        return call.args[0].value
    return None
