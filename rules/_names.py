"""Shared helpers of the name rules: which miss a site has, and how to say it."""

from __future__ import annotations

from apidrift.auditor.check.checked import CheckedSite, before_miss
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.results import (
    Applicability,
    Fix,
    FixKind,
    ManualStep,
    MoveImport,
    RenameAttribute,
    ReplaceName,
)
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.replacement import named_in
from apidrift.auditor.upstream.resolve import ExternalValue, Missing, ServedValue
from apidrift.rules.base import FixOffer


def miss(checked: CheckedSite) -> Missing | None:
    return checked.new.missing


def is_module_import(checked: CheckedSite) -> bool:
    return checked.site.kind is SiteKind.IMPORT and isinstance(checked.site.ref, ModuleRef)


def is_name_import(checked: CheckedSite) -> bool:
    return checked.site.kind is SiteKind.IMPORT and isinstance(checked.site.ref, AttrRef)


def missing_path(missing: Missing) -> str:
    return f"{missing.owner}.{missing.name}" if missing.owner != missing.name else missing.name


def hint(checked: CheckedSite, missing: Missing, fallback: str) -> str:
    """What the module's `__getattr__` says of the name, where the name went, the old version's
    deprecation notice, or the fallback."""
    parts = []
    replacement = checked.new.replacement
    if replacement is not None:
        parts.append(f"use `{replacement.name}` instead")
    if missing.message and missing.message != missing.name:  # `raise AttributeError(name)` says nothing more
        parts.append(f"{checked.new.version} says: \u201c{missing.message}\u201d")
    relocated = checked.new.relocated
    if relocated:
        others = f" (also: {', '.join(f'`{p}`' for p in relocated[1:3])})" if len(relocated) > 1 else ""
        module = relocated[0].rpartition(".")[0]
        if checked.new.relocated_same is not None or checked.old is None:
            parts.append(
                f"moved: now importable as `{relocated[0]}` (from {module} import {missing.name}){others}"
            )
        else:  # an object of the same name and kind, not shown to be the old definition: said as such
            parts.append(
                f"an object of the same name is importable as `{relocated[0]}` (from {module} import "
                f"{missing.name}){others}, but its code is not the old one's: check its uses there"
            )
    elsewhere = external_before(checked, missing)
    if elsewhere is not None:
        module = elsewhere.rpartition(".")[0]
        parts.append(
            f"in {checked.old.version if checked.old else 'the old version'} it was `{elsewhere}`, re-exported"
            f" from another distribution: import it from there (from {module} import {missing.name})"
        )
    deprecated = old_deprecation(checked)
    if deprecated and not relocated:
        parts.append(
            f"{checked.old.version if checked.old else 'the old version'} deprecated it: \u201c{deprecated}\u201d"
        )
    return "; ".join(parts) if parts else fallback


def external_before(checked: CheckedSite, missing: Missing) -> str | None:
    """Where the old version got the missing name from when it re-exported another distribution's
    object of the same name (`jinja2.Markup` was `markupsafe.Markup`), if the name is not found in the
    new version either: that path."""
    old = checked.old
    if old is None or checked.new.relocated:
        return None
    resolution = before_miss(checked.new, old)
    if isinstance(resolution, ExternalValue):
        path = resolution.path
    elif isinstance(resolution, ServedValue) and resolution.target is not None:
        path = resolution.target
    else:
        return None
    module, _, name = path.rpartition(".")
    if name != missing.name or not module or module.split(".")[0] == missing.owner.split(".")[0]:
        return None
    return path


def old_deprecation(checked: CheckedSite) -> str | None:
    before = before_miss(checked.new, checked.old)
    if isinstance(before, ServedValue):
        return before.deprecated
    info = getattr(before, "info", None)
    return getattr(info, "deprecated", None)


# What `rename_fix` can make, for the rules that use it to declare.
RENAME_ATTRIBUTE_OFFERS = (
    FixOffer(
        FixKind.RENAME_ATTRIBUTE,
        Applicability.SAFE,
        "the old version bound the name as an alias of another name this version still has "
        "(`assertEquals = assertEqual`): the same object",
    ),
    FixOffer(
        FixKind.RENAME_ATTRIBUTE,
        Applicability.UNSAFE,
        "only a stub says the two behave alike (an empty subclass whose deprecation names its base: "
        "`SafeConfigParser`)",
    ),
)


def rename_fix(checked: CheckedSite, missing: Missing) -> Fix | None:
    """`obj.old` -> `obj.new` (and `from m import old` -> `from m import new as old`) where the old
    version bound `old` as an alias of `new`, which is still there (`SiteCheck.renamed`): the same
    object under its other name, a safe edit. Where only a stub says so (an empty subclass whose
    deprecation names its base, `SafeConfigParser`), the edit is unsafe."""
    new = checked.new.renamed
    if new is None:
        return None
    exact = checked.new.renamed_exact
    how = f"`{missing.name}` was its alias" if exact else f"`{missing.name}` was a subclass adding nothing"
    return Fix(
        FixKind.RENAME_ATTRIBUTE,
        Applicability.SAFE if exact else Applicability.UNSAFE,
        f"use `{new}`: {how}",
        RenameAttribute(missing.name, new),
        evidence=f"the old version bound `{missing.name}` as `{new}`, which this version still has"
        if exact
        else None,
    )


def replacement_fix(checked: CheckedSite, old_name: str, module: str | None) -> Fix | None:
    """The safe fix to the replacement the upstream names (`checked.new.replacement`): the imported
    name (`module` given: `from jinja2 import pass_context as contextfunction`, so every use in the
    file follows) or the attribute (`np.float_` -> `np.float64`) is rewritten, in place."""
    replacement = checked.new.replacement
    if replacement is None:
        return None
    if checked.site.kind is SiteKind.IMPORT:
        if module is None:
            return None
        how = f"import `{replacement.name}` from `{module}` (as `{old_name}`)"
    else:
        how = f"use `{replacement.name}` instead of `{old_name}`"
    return Fix(
        FixKind.REPLACE_NAME,
        Applicability.SAFE,
        how,
        ReplaceName(old_name, replacement.name, module=module),
        evidence=replacement.evidence,
    )


def external_fix(checked: CheckedSite, missing: Missing) -> Fix | None:
    """`from jinja2 import Markup`, where the old version re-exported another distribution's object
    (`markupsafe.Markup`): import it from there. Safe: the old version bound the same object. Whether
    the downstream declares that distribution is for the fix run to say (`codemods.undeclared_imports`)."""
    path = external_before(checked, missing)
    if path is None or not is_name_import(checked):
        return None
    module = path.rpartition(".")[0]
    old = checked.old.version if checked.old is not None else "the old version"
    return Fix(
        FixKind.MOVE_IMPORT,
        Applicability.SAFE,
        f"import `{missing.name}` from `{module}`",
        MoveImport(missing.name, module, missing.owner),
        evidence=f"{old}'s `{missing.owner}.{missing.name}` was `{path}`, re-exported: the same object",
    )


def message_step(checked: CheckedSite, missing: Missing) -> Fix | None:
    """A manual step quoting what the upstream itself says to use instead, where that is not a name
    shown to take the same uses (`np.NINF`: "Use `-np.inf` instead"; `np.round_` whose replacement
    is not followed to a callable): the recipe, never an edit."""

    def says_what_instead(text: str | None) -> bool:
        if not text:
            return False
        return "instead" in text.lower() or bool(named_in(text, missing.name))

    said = []
    if missing.message and missing.message != missing.name and says_what_instead(missing.message):
        said.append((checked.new.version, missing.message))
    deprecated = old_deprecation(checked)
    if deprecated and checked.old is not None and says_what_instead(deprecated):
        said.append((checked.old.version, deprecated))
    if not said:
        return None
    who, text = said[0]
    quoted = " ".join(text.split())
    if len(quoted) > 300:
        quoted = quoted[:297] + "..."
    return Fix(
        FixKind.MANUAL,
        Applicability.MANUAL,
        f"replace `{missing.name}` as {who} says: \u201c{quoted}\u201d",
        ManualStep(""),
    )
