"""Methods of a downstream subclass that override a method of its upstream base: the upstream calls them."""

from __future__ import annotations

from apidrift.auditor.core.refs import AttrRef, InstanceRef
from apidrift.auditor.core.sites import SiteKind, UseSite
from apidrift.auditor.downstream.astscan.evaluator import _Evaluator
from apidrift.auditor.downstream.astscan.signatures import _signature_of
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import _ClassScope, _DownClass
from apidrift.auditor.downstream.shared import OVERRIDE_DECORATORS


def _override_sites(
    cls: _ClassScope, evaluator: _Evaluator, text: _Text, upstream_names: frozenset[str]
) -> list[UseSite]:
    """One site per method that overrides a method of the class's upstream base: the upstream calls it."""
    base = evaluator.upstream_base(cls, upstream_names)
    if base is None:
        return []
    sites = []
    for name, method in cls.methods.items():
        if name.startswith("__") and name.endswith("__"):
            continue
        if method.decorators - OVERRIDE_DECORATORS or _defined_between(cls, name, evaluator):
            continue
        signature = _signature_of(method.args, method.indent, text)
        if "staticmethod" not in method.decorators:
            signature = signature.bound()
        sites.append(
            UseSite(
                SiteKind.OVERRIDE,
                AttrRef(InstanceRef(base), name),
                method.name_span,
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
