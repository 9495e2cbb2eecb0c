"""The signature a def or a lambda spells, read from its `ast` node: no decorator, no annotation read."""

from __future__ import annotations

import ast

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature


def spelled_signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Signature:
    """The signature `node`'s parameters spell (a def's or a lambda's), defaults as source text."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = []
    for index, arg in enumerate(positional):
        kind = ParamKind.POSITIONAL_ONLY if index < len(args.posonlyargs) else ParamKind.POSITIONAL_OR_KEYWORD
        default = args.defaults[index - first_default] if index >= first_default else None
        params.append(
            Parameter(
                arg.arg, kind, default is not None, ast.unparse(default) if default is not None else None
            )
        )
    if args.vararg is not None:
        params.append(Parameter(args.vararg.arg, ParamKind.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(
            Parameter(
                arg.arg,
                ParamKind.KEYWORD_ONLY,
                default is not None,
                ast.unparse(default) if default is not None else None,
            )
        )
    if args.kwarg is not None:
        params.append(Parameter(args.kwarg.arg, ParamKind.VAR_KEYWORD))
    return Signature(tuple(params))
