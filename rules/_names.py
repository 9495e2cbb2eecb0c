"""Shared helpers of the name rules: which miss a site has, and how to say it."""

from __future__ import annotations

from apidrift.auditor.checked import CheckedSite
from apidrift.auditor.refs import AttrRef, ModuleRef
from apidrift.auditor.resolve import Missing


def miss(checked: CheckedSite) -> Missing | None:
    return checked.new.missing


def is_module_import(checked: CheckedSite) -> bool:
    return checked.site.kind == "import" and isinstance(checked.site.ref, ModuleRef)


def is_name_import(checked: CheckedSite) -> bool:
    return checked.site.kind == "import" and isinstance(checked.site.ref, AttrRef)


def missing_path(missing: Missing) -> str:
    return f"{missing.owner}.{missing.name}" if missing.owner != missing.name else missing.name
