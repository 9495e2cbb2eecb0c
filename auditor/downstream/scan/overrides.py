"""Methods of a downstream subclass that override a method of its upstream base: the upstream calls them."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange

from apidrift.auditor.core.refs import AttrRef, InstanceRef
from apidrift.auditor.core.sites import SiteKind, UseSite
from apidrift.auditor.downstream.scan.evaluator import _Evaluator
from apidrift.auditor.downstream.scan.nodes import _dotted, _span
from apidrift.auditor.downstream.scan.signatures import _signature_of
from apidrift.auditor.downstream.scan.values import _ClassScope, _DownClass
from apidrift.auditor.downstream.shared import OVERRIDE_DECORATORS


def _override_sites(
    cls: _ClassScope,
    evaluator: _Evaluator,
    positions: Mapping[cst.CSTNode, CodeRange],
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
) -> list[UseSite]:
    """One site per method that overrides a method of the class's upstream base: the upstream calls it."""
    base = evaluator.upstream_base(cls, upstream_names)
    if base is None:
        return []
    sites = []
    for name, function in cls.methods.items():
        if name.startswith("__") and name.endswith("__"):
            continue
        decorators = {(_dotted(d.decorator) or "?").rsplit(".", 1)[-1] for d in function.decorators}
        if decorators - OVERRIDE_DECORATORS or _defined_between(cls, name, evaluator):
            continue
        signature = _signature_of(function)
        if "staticmethod" not in decorators:
            signature = signature.bound()
        span = _span(positions[function.name])
        sites.append(
            UseSite(
                SiteKind.OVERRIDE,
                AttrRef(InstanceRef(base), name),
                span,
                f"def {name}(...)",
                signature=signature,
            )
        )
    return sites


def _defined_between(cls: _ClassScope, name: str, evaluator: _Evaluator) -> bool:
    """Whether a downstream class between `cls` and its upstream base already defines `name`."""
    parent = evaluator.single_base(cls)
    while isinstance(parent, _DownClass):
        if name in parent.cls.methods:
            return True
        parent = evaluator.single_base(parent.cls)
    return False
