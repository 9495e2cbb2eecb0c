"""The one ordered table of rules: codes, families, and lookup by code or name."""

from __future__ import annotations

from functools import cache

from apidrift.rules import (
    argument_combination_rejected,
    argument_given_twice,
    call_always_raises,
    default_changed,
    definition_left_upstream,
    deprecated_target,
    hook_implementation_rejected,
    missing_argument,
    missing_attribute,
    missing_import_name,
    missing_method,
    missing_module,
    module_raises_on_import,
    override_incompatible,
    positional_only_as_keyword,
    positional_remapped,
    positional_through_warning,
    private_name,
    read_only_attribute_assigned,
    star_import_compiled,
    too_many_positional,
    unexpected_keyword,
    unparsable_file,
    value_kind_changed,
)
from apidrift.rules.base import Family, Rule, rule_from_module

_MODULES = (
    missing_module,
    missing_import_name,
    missing_attribute,
    missing_method,
    module_raises_on_import,
    read_only_attribute_assigned,
    unexpected_keyword,
    missing_argument,
    too_many_positional,
    positional_only_as_keyword,
    argument_given_twice,
    argument_combination_rejected,
    call_always_raises,
    hook_implementation_rejected,
    override_incompatible,
    positional_remapped,
    default_changed,
    deprecated_target,
    definition_left_upstream,
    positional_through_warning,
    value_kind_changed,
    private_name,
    star_import_compiled,
    unparsable_file,
)

FAMILIES = {
    Family.NAMES: "AD0",
    Family.CALLS: "AD1",
    Family.DRIFT: "AD2",
    Family.RISK: "AD3",
    Family.INPUT: "AD9",
}  # each family's code prefix


@cache
def all_rules() -> tuple[Rule, ...]:
    return tuple(rule_from_module(module) for module in _MODULES)


def get_rule(code_or_name: str) -> Rule | None:
    wanted = code_or_name.strip()
    return next((r for r in all_rules() if wanted.upper() == r.code or wanted.lower() == r.name), None)
