"""The `Signature` of a downstream def, defaults and annotations written as LibCST prints them."""

from __future__ import annotations

import ast

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.downstream.astscan.text import _Text


def _signature_of(args: ast.arguments, indent: str, text: _Text) -> Signature:
    params: list[Parameter] = []

    def add(param: ast.arg, kind: ParamKind, default: ast.expr | None = None) -> None:
        code = text.parenthesized(default, indent) if default is not None else None
        annotation = text.parenthesized(param.annotation, indent) if param.annotation is not None else None
        params.append(Parameter(param.arg, kind, default is not None, code, annotation))

    positional = [(p, ParamKind.POSITIONAL_ONLY) for p in args.posonlyargs] + [
        (p, ParamKind.POSITIONAL_OR_KEYWORD) for p in args.args
    ]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (param, kind), default in zip(positional, defaults):
        add(param, kind, default)
    if args.vararg is not None:
        add(args.vararg, ParamKind.VAR_POSITIONAL)
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        add(param, ParamKind.KEYWORD_ONLY, default)
    if args.kwarg is not None:
        add(args.kwarg, ParamKind.VAR_KEYWORD)
    return Signature(tuple(params))
