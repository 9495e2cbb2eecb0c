"""Rule codes: the stable name of each kind of finding (`AD101`), as constants.

Each rule module declares its code from here (`RuleMeta.code`), `Finding.code` is one of them, and logic
that treats some findings apart (folding, planning, reports) names them by constant, never by literal.
A code is a `str` (it compares, hashes, formats and serialises as its text), never reused once published.
"""

from __future__ import annotations

from enum import Enum


class RuleCode(str, Enum):
    """A rule's code; the member's name is the rule's name (`unexpected-keyword`) in upper case."""

    MISSING_MODULE = "AD001"
    MISSING_IMPORT_NAME = "AD002"
    MISSING_ATTRIBUTE = "AD003"
    MISSING_METHOD = "AD004"
    MODULE_RAISES_ON_IMPORT = "AD005"
    READ_ONLY_ATTRIBUTE_ASSIGNED = "AD006"
    UNEXPECTED_KEYWORD = "AD101"
    MISSING_REQUIRED_ARGUMENT = "AD102"
    TOO_MANY_POSITIONAL = "AD103"
    POSITIONAL_ONLY_AS_KEYWORD = "AD104"
    ARGUMENT_GIVEN_TWICE = "AD105"
    OVERRIDE_INCOMPATIBLE = "AD106"
    ARGUMENT_COMBINATION_REJECTED = "AD107"
    CALL_ALWAYS_RAISES = "AD108"
    HOOK_IMPLEMENTATION_REJECTED = "AD109"
    POSITIONAL_ARGUMENT_REMAPPED = "AD201"
    DEFAULT_CHANGED = "AD202"
    DEPRECATED_TARGET = "AD203"
    DEFINITION_LEFT_UPSTREAM = "AD204"
    POSITIONAL_THROUGH_WARNING_SHIM = "AD205"
    VALUE_KIND_CHANGED = "AD206"
    PRIVATE_UPSTREAM_NAME = "AD301"
    STAR_IMPORT_FROM_COMPILED = "AD302"
    UNPARSABLE_FILE = "AD901"

    def __str__(self) -> str:  # the code itself, as a plain `str` prints, on every Python version
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
