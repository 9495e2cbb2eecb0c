"""A candidate turned into a `UseSite` once the whole file is read; a call's shape."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.refs import AttrRef, ModuleRef, OpaqueRef, Ref, root_module
from apidrift.auditor.core.sites import Introspected, SiteKind, Span, UseSite
from apidrift.auditor.downstream.astscan.evaluator import _Evaluator
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import _Candidate, _DownClass, _Scope
from apidrift.auditor.downstream.shared import REFS, code_at, site_guard


def _tests(
    candidate: _Candidate, evaluator: _Evaluator, upstream_names: frozenset[str]
) -> tuple[tuple[Introspected, ...], bool]:
    """The introspection tests around a candidate that test an upstream object, and whether one tests
    an object not known (`hasattr(x, "a")` of a value not followed): that one guards the use as a
    whole, as any feature test does. A parameter test of a downstream function guards nothing."""
    found: list[Introspected] = []
    unknown = False
    position = evaluator.position
    for kind, expression, name, holds, scope, line in candidate.tests:
        evaluator.position = line
        value = evaluator.expression(expression, scope)
        if (
            isinstance(value, REFS)
            and root_module(value) in upstream_names
            and not isinstance(value, OpaqueRef)
        ):
            found.append(Introspected(kind, value, name, holds))
        elif kind == "attribute" or value is None or isinstance(value, OpaqueRef):
            unknown = True  # an object not followed: the test may be of the upstream
    evaluator.position = position
    return tuple(found), unknown


def _kept(ref: Ref, upstream_names: frozenset[str], reaching: frozenset[str]) -> bool:
    """Whether a site of this reference is kept: one of the upstream, or one of a value of the
    downstream's other modules (resolved by `downstream.linking`); not a name of such a module itself
    (`helpers.get`, `get(...)`: whatever it holds, such a use is checked where the module imports it,
    and such sites are most of a large downstream's own calls)."""
    root = root_module(ref)
    if root in upstream_names:
        return True
    if root not in reaching:
        return False
    return isinstance(ref, AttrRef) and not isinstance(ref.base, ModuleRef)


def _class_call(
    ref: Ref, upstream_names: frozenset[str], reaching: frozenset[str], classes: frozenset[str]
) -> bool:
    """A call of a name of another of the downstream's modules bound to a class whose call runs an
    upstream constructor (`classes`, known once every file is scanned: `walk._constructing`):
    kept for `downstream.linking`, which checks it as that constructor."""
    return (
        isinstance(ref, AttrRef)
        and isinstance(ref.base, ModuleRef)
        and ref.name in classes
        and root_module(ref) in reaching
        and root_module(ref) not in upstream_names
    )


def _site(
    candidate: _Candidate,
    evaluator: _Evaluator,
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
    reaching: frozenset[str] | None = None,
    classes: frozenset[str] = frozenset(),
) -> UseSite | None:
    """The use site of a candidate whose value reaches the upstream, or one of `reaching` (the
    upstream's names and the downstream's own modules', whose sites `downstream.linking` resolves)."""
    site = _site_of(candidate, evaluator, upstream_names, lines, reaching, classes)
    if site is None:
        return None
    own, bases = _getter_fallback(candidate.scope, evaluator, upstream_names)
    if own:
        return replace(site, caught=site.caught | _ATTRIBUTE_ERROR)
    return replace(site, getattr_bases=bases) if bases else site


_ATTRIBUTE_ERROR = frozenset({"AttributeError"})


def _getter_fallback(
    scope: _Scope, evaluator: _Evaluator, upstream_names: frozenset[str]
) -> tuple[bool, tuple[Ref, ...]]:
    """For a use written in the body of a property getter (`@property`, `@cached_property`): CPython
    calls the class's `__getattr__` when the getter raises AttributeError, so reading the property gives
    what `__getattr__` answers instead of failing. Whether the class or a downstream base of its defines
    `__getattr__`, else the upstream classes among its bases (whose MROs the check reads); (False, ())
    anywhere else, or where a base is not followed."""
    while scope.inline and scope.parent is not None:
        scope = scope.parent
    cls = scope.owner
    if cls is None or not any(
        m.function is not None and m.function.scope is scope and m.function.is_property
        for m in cls.methods.values()
    ):
        return False, ()
    pending, seen, upstream = [cls], {id(cls)}, []
    while pending and len(seen) < 50:
        current = pending.pop()
        if "__getattr__" in current.methods:
            return True, ()
        assert current.parent is not None
        reach, evaluator.reach = evaluator.reach, None
        try:
            bases = [evaluator.expression(base, current.parent) for base in current.bases]
        finally:
            evaluator.reach = reach
        for base in bases:
            if isinstance(base, _DownClass):
                if id(base.cls) not in seen:
                    seen.add(id(base.cls))
                    pending.append(base.cls)
            elif isinstance(base, (AttrRef, ModuleRef)) and root_module(base) in upstream_names:
                upstream.append(base)
    return False, tuple(upstream)


def _site_of(
    candidate: _Candidate,
    evaluator: _Evaluator,
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
    reaching: frozenset[str] | None = None,
    classes: frozenset[str] = frozenset(),
) -> UseSite | None:
    kind, span = candidate.kind, candidate.span
    reaching = upstream_names if reaching is None else reaching
    guarded, caught = site_guard(candidate.guarded, candidate.scope)
    assert span is not None
    evaluator.position = span.line
    tests: tuple[Introspected, ...] = ()
    if candidate.tests:
        tests, unknown = _tests(candidate, evaluator, upstream_names)
        guarded = guarded or unknown
    if kind == "call":
        func = evaluator.expression(candidate.expression, candidate.scope)
        if func is None:
            return None
        shape, keyword_spans = candidate.shape, candidate.keyword_spans
        assert shape is not None
        forwarded: tuple[str, ...] = ()
        through_init = False
        subclass = isinstance(func, _DownClass)
        if isinstance(func, _DownClass):  # a downstream subclass that keeps its upstream base's constructor
            inherited = evaluator.inherited_constructor(func.cls, upstream_names)
            if inherited is None:
                inherited = evaluator.wrapped_constructor(func.cls, upstream_names)  # or a wrapper of one
            if inherited is None:
                return None
            func, forwarding = inherited
            if forwarding is not None:
                handed_on = forwarding.shape_for(shape)
                if handed_on is None:
                    return None
                shape, forwarded = handed_on
                through_init = (
                    True  # even handing on nothing: a parameter the upstream now requires is missing
                )
                keyword_spans = tuple((k, s) for k, s in keyword_spans if k in forwarded)
        if not isinstance(func, REFS) or not (
            _kept(func, upstream_names, reaching) or _class_call(func, upstream_names, reaching, classes)
        ):
            return None
        return UseSite(
            SiteKind.CALL,
            func,
            span,
            code_at(lines, span),
            shape,
            keyword_spans,
            guarded,
            caught=caught,
            import_caught=candidate.import_caught is not None,
            import_attrs=candidate.import_caught or 0,
            forwarded=forwarded,
            through_init=through_init,
            subclass=subclass,
            use=candidate.use,
            tests=tests,
            at=candidate.at,
        )
    if kind == "store":  # `x.name = value`: the object x is, whatever the downstream stored on it
        expression = candidate.expression
        base = evaluator.expression(expression[1], candidate.scope) if expression else None
        if not isinstance(base, REFS) or not _kept(AttrRef(base, ""), upstream_names, reaching):
            return None
        if isinstance(base, OpaqueRef) and not base.alternatives:
            return None
        assert expression is not None
        return UseSite(
            SiteKind.STORE, AttrRef(base, expression[2]), span, code_at(lines, span), guarded=guarded,
            caught=caught, import_caught=candidate.import_caught is not None,
            import_attrs=candidate.import_caught or 0, tests=tests, at=candidate.at,
        )  # fmt: skip
    if kind == "attribute":
        ref = evaluator.expression(candidate.expression, candidate.scope)
        if not isinstance(ref, (AttrRef, OpaqueRef)) or not _kept(ref, upstream_names, reaching):
            return None
        return UseSite(
            SiteKind.ATTRIBUTE,
            ref,
            span,
            code_at(lines, span),
            guarded=guarded,
            caught=caught,
            import_caught=candidate.import_caught is not None,
            import_attrs=candidate.import_caught or 0,
            use=candidate.use,
            tests=tests,
            at=candidate.at,
        )
    assert candidate.extra is not None
    module, name, code_span = candidate.extra
    assert module is not None and code_span is not None  # an upstream import names its module
    code = code_at(lines, code_span)
    if kind == "import-name":
        assert name is not None
        return UseSite(
            SiteKind.IMPORT, AttrRef(ModuleRef(module), name), span, code, guarded=guarded, caught=caught,
            tests=tests,
        )  # fmt: skip
    return UseSite(
        SiteKind.IMPORT, ModuleRef(module), span, code, guarded=guarded, caught=caught, tests=tests
    )


def _shape(
    node: ast.Call, text: _Text, interned: dict[Any, Any]
) -> tuple[CallShape, tuple[tuple[str, Span], ...]]:
    positional = 0
    star_args = star_kwargs = False
    values: list[str] = []
    literals: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            star_args = True
        else:
            positional += 1
            values.append(_value_letter(arg))
            literals.append(constant_text(arg))
    keywords: list[str] = []
    spans: list[tuple[str, Span]] = []
    for keyword in node.keywords:
        if keyword.arg is None:
            star_kwargs = True
        else:
            keywords.append(keyword.arg)
            spans.append((keyword.arg, text.span(keyword)))
            values.append(_value_letter(keyword.value))
            literals.append(constant_text(keyword.value))
    shape = CallShape(
        positional,
        tuple(keywords),
        star_args,
        star_kwargs,
        "".join(values),
        tuple(literals) if any(literals) else (),
    )
    return interned.setdefault(shape, shape), tuple(spans)


_LITERALS = (
    ast.Constant,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Lambda,
)


MAX_CONSTANT = 80  # characters of a constant argument's `repr` recorded (CallShape.literals)


def constant_text(node: ast.expr) -> str:
    """CallShape.literals' entry for one argument: the `repr` of a plain immutable constant (a negated
    number included), "" for anything else or a longer one."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = node.operand
        number = operand.value if isinstance(operand, ast.Constant) else None
        if type(number) not in (int, float, complex):
            return ""
        value: object = -number  # type: ignore[operator]  # an int, float or complex (checked above)
    elif isinstance(node, ast.Constant) and node.value is not Ellipsis:
        value = node.value
    else:
        return ""
    text = repr(value)
    return text if len(text) <= MAX_CONSTANT else ""


def _value_letter(node: ast.expr) -> str:
    """CallShape.values' letter for one argument."""
    if isinstance(node, ast.Constant) and node.value is None:
        return "n"
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, (ast.Constant, *_LITERALS)):
        return "l"
    return "l" if isinstance(node, _LITERALS) else "?"
