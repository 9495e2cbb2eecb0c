"""Shared helpers of the drift rules: both versions' bindings of one call, side by side."""

from __future__ import annotations

import ast

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Ok
from apidrift.auditor.core.signature import Signature
from apidrift.auditor.core.sites import SiteKind


def both_bound(checked: CheckedSite) -> tuple[Ok, Ok, Signature, Signature] | None:
    """The old and new bindings and signatures, when the call binds under both versions."""
    old = checked.old
    new = checked.new
    if (
        checked.site.kind is not SiteKind.CALL
        or checked.site.forwarded
        or checked.site.through_init
        or old is None
        or old.target is None
        or new.target is None
    ):
        return None
    if not isinstance(old.verdict, Ok) or not isinstance(new.verdict, Ok):
        return None
    return old.verdict, new.verdict, old.target.signature, new.target.signature


def literal(text: str | None) -> tuple[bool, object]:
    """(True, value) when a default's source text is a Python literal; (False, None) otherwise."""
    if text is None:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
