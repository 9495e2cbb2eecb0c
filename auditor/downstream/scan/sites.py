"""A candidate turned into a `UseSite` once the whole file is read; a call's shape."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.refs import AttrRef, ModuleRef, root_module
from apidrift.auditor.core.sites import SiteKind, Span, UseSite
from apidrift.auditor.downstream.scan.evaluator import _Evaluator
from apidrift.auditor.downstream.scan.nodes import _name_of, _span
from apidrift.auditor.downstream.scan.values import _Candidate, _DownClass
from apidrift.auditor.downstream.shared import REFS, code_at, site_guard


def _site(
    candidate: _Candidate,
    evaluator: _Evaluator,
    positions: Mapping[cst.CSTNode, CodeRange],
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
) -> UseSite | None:
    node = candidate.node
    guarded, caught = site_guard(candidate.guarded, candidate.scope)
    span = _span(positions[node])
    if candidate.kind == "import-module" and candidate.module:
        return UseSite(
            SiteKind.IMPORT,
            ModuleRef(candidate.module),
            span,
            code_at(lines, span),
            guarded=guarded,
            caught=caught,
        )
    if candidate.kind == "import-from-module" and candidate.module:
        assert isinstance(node, cst.ImportFrom) and node.module is not None
        return UseSite(
            SiteKind.IMPORT,
            ModuleRef(candidate.module),
            _span(positions[node.module]),
            code_at(lines, span),
            guarded=guarded,
            caught=caught,
        )
    if candidate.kind == "import-name" and candidate.module:
        assert isinstance(node, cst.ImportAlias)
        name = _name_of(node.name) or ""
        ref = AttrRef(ModuleRef(candidate.module), name)
        return UseSite(
            SiteKind.IMPORT,
            ref,
            _span(positions[node.name]),
            code_at(lines, span),
            guarded=guarded,
            caught=caught,
        )
    if candidate.kind == "call":
        assert isinstance(node, cst.Call)
        func = evaluator.expression(node.func, candidate.scope)
        shape, keyword_spans = _shape(node, positions)
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
        if not isinstance(func, REFS) or root_module(func) not in upstream_names:
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
            forwarded=forwarded,
            through_init=through_init,
            subclass=subclass,
        )
    if candidate.kind == "attribute":
        assert isinstance(node, cst.Attribute)
        value = evaluator.expression(node, candidate.scope)
        if not isinstance(value, AttrRef) or root_module(value) not in upstream_names:
            return None
        return UseSite(SiteKind.ATTRIBUTE, value, span, code_at(lines, span), guarded=guarded, caught=caught)
    return None


def _shape(
    node: cst.Call, positions: Mapping[cst.CSTNode, CodeRange]
) -> tuple[CallShape, tuple[tuple[str, Span], ...]]:
    positional = 0
    keywords: list[str] = []
    spans: list[tuple[str, Span]] = []
    star_args = star_kwargs = False
    positional_values: list[str] = []
    keyword_values: list[str] = []
    for arg in node.args:
        if arg.star == "*":
            star_args = True
        elif arg.star == "**":
            star_kwargs = True
        elif arg.keyword is not None:
            keywords.append(arg.keyword.value)
            spans.append((arg.keyword.value, _span(positions[arg])))
            keyword_values.append(_value_letter(arg.value))
        else:
            positional += 1
            positional_values.append(_value_letter(arg.value))
    values = "".join(positional_values + keyword_values)
    return CallShape(positional, tuple(keywords), star_args, star_kwargs, values), tuple(spans)


_LITERALS = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Ellipsis,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Lambda,
)


def _value_letter(node: cst.BaseExpression) -> str:
    """CallShape.values' letter for one argument (as the ast scanner's)."""
    if isinstance(node, cst.Name) and node.value == "None":
        return "n"
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "l"
    if isinstance(node, cst.UnaryOperation) and (
        isinstance(node.expression, (cst.Integer, cst.Float, cst.Imaginary, *_LITERALS))
        or (isinstance(node.expression, cst.Name) and node.expression.value in ("None", "True", "False"))
    ):
        return "l"
    return "l" if isinstance(node, _LITERALS) else "?"
