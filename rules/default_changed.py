"""## What it does
Finds calls that rely on a parameter's default (they do not pass it) where the default value
changed between the old and the new version. Only literal defaults are compared, so the verdict
is certain.

A default of `None` that the function's body replaces at once is compared as the value it is
replaced by, read from the upstream's source: `if x is None: x = 5`, or `x = self.x` where the
class (no bases, no metaclass, no `setattr`) binds `x` only to a literal or, in `__init__`, to a
parameter with a literal default. click 8.2's `CliRunner.invoke()`, whose `catch_exceptions` defaults to None, takes the
runner's `catch_exceptions`, `True` unless the runner was built with another value: the same as
8.1's default `True`, so no warning. A delegation to another value is still one.

## Why is this bad?
Nothing raises: the call now behaves differently than when it was written and tested.

## Example
```python
connect(host)  # old: connect(host, timeout=30); new: connect(host, timeout=5)
```

## Fix
Pass the value the code relies on explicitly. A collection that only gained items (the old ones
first, in order) is reported as information.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.rules import _calls, _drift
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.DEFAULT_CHANGED,
    name="default-changed",
    severity=Severity.WARNING,
    family=Family.DRIFT,
    summary="The default of a parameter the call omits changed",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    bound = _drift.both_bound(checked)
    if bound is None:
        return
    old_ok, new_ok, old_signature, new_signature = bound
    given_old = {name for _, name in old_ok.assignments}
    given_new = {name for _, name in new_ok.assignments}
    for new_param in new_signature.parameters:
        if new_param.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD) or not new_param.has_default:
            continue
        old_param = old_signature.get(new_param.name)
        if old_param is None or not old_param.has_default:
            continue
        if new_param.name in given_new or old_param.name in given_old:
            continue
        if "..." in (old_param.default, new_param.default):
            continue  # a stub's placeholder: the value is the implementation's, not known here
        if _became_alias(old_signature, new_signature, old_param.name):
            continue
        # What omitting the argument means: the default, or what the body replaces a `None` by at once.
        old_text = old_param.replaced_by or old_param.default
        new_text = new_param.replaced_by or new_param.default
        old_ok_literal, old_value = _drift.literal(old_text)
        new_ok_literal, new_value = _drift.literal(new_text)
        if not (old_ok_literal and new_ok_literal) or (
            old_value == new_value and type(old_value) is type(new_value)
        ):
            continue
        fit = fits(old_value, new_param.annotation_expanded or new_param.annotation)
        if fit:
            hint = f"pass `{new_param.name}={old_text}` to keep the old behaviour"
        elif fit is False:  # passing the old value would be rejected by the new signature
            hint = (
                f"the old default {old_text} does not fit the new annotation `{new_param.annotation}`: "
                f"decide which value `{new_param.name}` should have"
            )
        else:  # the annotation names a type not known here: no claim either way
            hint = (
                f"pass `{new_param.name}={old_text}` to keep the old behaviour, if the new annotation "
                f"`{new_param.annotation}` accepts it"
            )
        extended = _extends(old_value, new_value)
        yield rule.finding(
            checked,
            f"{_calls.display(checked)}: the default of `{new_param.name}` changed from {_shown(old_param)} "
            f"to {_shown(new_param)} in {checked.new.version}"
            + (" (extended: every old item is still there)" if extended else ""),
            symbol=_calls.callee(checked),
            hint=hint,
            severity=Severity.INFO if extended else None,
        )


def _shown(param: Parameter) -> str:
    """The default as written, and what the body replaces it by when it does."""
    if param.replaced_by is None:
        return str(param.default)
    return f"{param.default} (which the function replaces by {param.replaced_by})"


def _became_alias(old_signature: Signature, new_signature: Signature, name: str) -> bool:
    """`string` renamed in place to `data` and kept as a keyword-only alias defaulting to None
    (typeshed's `hashlib.sha1(data=b"", *, string=None)` for 3.13): the parameter that took its place
    keeps its old default, so a call that omits both means what it did."""
    before, alias = old_signature.get(name), new_signature.get(name)
    if before is None or alias is None or alias.kind is not ParamKind.KEYWORD_ONLY or alias.default != "None":
        return False
    if before.kind not in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD):
        return False
    index = old_signature.parameters.index(before)
    if index >= len(new_signature.parameters):
        return False
    heir = new_signature.parameters[index]
    return (
        heir.name != name
        and heir.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
        and heir.default == before.default
    )


def _extends(old: object, new: object) -> bool:
    """A collection default that only gained items (`functools.WRAPPER_ASSIGNMENTS` gained
    `__type_params__` in Python 3.12): the call does all it did, and more. Information, not a warning."""
    kinds = (tuple, list, set, frozenset)
    if not (isinstance(old, kinds) and isinstance(new, kinds) and type(old) is type(new)):
        return False
    try:
        return set(old) < set(new) and (
            not isinstance(old, (tuple, list)) or list(new)[: len(old)] == list(old)
        )
    except TypeError:  # unhashable items
        return False


_BUILTIN_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "float": (float, int), "complex": (complex, float, int), "bool": (bool,), "str": (str,),
    "bytes": (bytes,), "list": (list,), "dict": (dict,), "tuple": (tuple,), "set": (set,),
    "frozenset": (frozenset,), "List": (list,), "Dict": (dict,), "Tuple": (tuple,), "Set": (set,),
    "Sequence": (list, tuple, str), "Mapping": (dict,),
}  # fmt: skip
_ANY = frozenset({"Any", "object"})


def fits(value: object, annotation: str | None) -> bool | None:
    """Whether the literal `value` is accepted by `annotation` (source text, type aliases written out):
    True certainly, False certainly not, None when the annotation names a type not understood here
    (a class of the upstream's, a type variable...): a hint must never be wrong."""
    if annotation is None or not annotation.strip():
        return True  # nothing declared: the old value is as good as any
    try:
        tree = ast.parse(annotation.strip().strip("\"'"), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _fits(value, tree, 0)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.Optional, t.Any
        return node.attr
    return None


def _any_of(answers: list[bool | None]) -> bool | None:
    """A union: fits when one member does, does not when none does, else unknown."""
    if any(a is True for a in answers):
        return True
    return False if all(a is False for a in answers) else None


def _fits(value: object, node: ast.expr, depth: int) -> bool | None:
    if depth > 20:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return value is None
        if isinstance(node.value, str):  # a string annotation inside a subscript: parse it
            try:
                return _fits(value, ast.parse(node.value, mode="eval").body, depth + 1)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _any_of([_fits(value, node.left, depth + 1), _fits(value, node.right, depth + 1)])
    if isinstance(node, ast.Subscript):
        outer = _name(node.value)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if outer == "Optional":
            return True if value is None else _fits(value, items[0], depth + 1)
        if outer == "Union":
            return _any_of([_fits(value, item, depth + 1) for item in items])
        if outer == "Literal":
            if any(
                isinstance(i, ast.Constant) and i.value == value and type(i.value) is type(value)
                for i in items
            ):
                return True
            return False if all(isinstance(i, ast.Constant) for i in items) else None
        if outer in ("Annotated",):
            return _fits(value, items[0], depth + 1)
        types = _BUILTIN_TYPES.get(outer or "")
        if types is None:
            return None
        if not isinstance(value, types):
            return False
        return None if isinstance(value, (list, dict, tuple, set)) and value else True  # items unchecked
    name = _name(node)
    if name in _ANY:
        return True
    if name == "None":
        return value is None
    types = _BUILTIN_TYPES.get(name or "")
    if not types:
        return None  # a class of the upstream's, a type variable...: not known to accept the value or not
    if isinstance(value, bool) and bool not in types:
        return None  # True is an int to CPython, not to every validator: no claim
    return isinstance(value, types)
