"""The `Signature` of a downstream def, defaults and annotations as LibCST prints them."""

from __future__ import annotations

import libcst as cst

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature


def _signature_of(function: cst.FunctionDef) -> Signature:
    code = cst.Module([]).code_for_node
    params: list[Parameter] = []

    def add(param: cst.Param, kind: ParamKind) -> None:
        default = code(param.default) if param.default is not None else None
        annotation = code(param.annotation.annotation) if param.annotation is not None else None
        params.append(Parameter(param.name.value, kind, param.default is not None, default, annotation))

    for param in function.params.posonly_params:
        add(param, ParamKind.POSITIONAL_ONLY)
    for param in function.params.params:
        add(param, ParamKind.POSITIONAL_OR_KEYWORD)
    if isinstance(function.params.star_arg, cst.Param):
        add(function.params.star_arg, ParamKind.VAR_POSITIONAL)
    for param in function.params.kwonly_params:
        add(param, ParamKind.KEYWORD_ONLY)
    if isinstance(function.params.star_kwarg, cst.Param):
        add(function.params.star_kwarg, ParamKind.VAR_KEYWORD)
    return Signature(tuple(params))
