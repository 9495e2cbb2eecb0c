"""The rule registry: complete docs, stable unique codes, families, and the README's table."""

from __future__ import annotations

import re
from pathlib import Path

from apidrift.rules.base import DOC_SECTIONS
from apidrift.rules.registry import FAMILIES, all_rules, get_rule

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_rule_has_its_four_doc_sections() -> None:
    for rule in all_rules():
        for title in DOC_SECTIONS:
            assert rule.section(title), f"{rule.code} lacks `## {title}`"


def test_codes_names_and_families_are_unique_and_consistent() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for rule in rules:
        assert re.fullmatch(r"AD\d{3}", rule.code)
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name)
        assert rule.code.startswith(FAMILIES[rule.family]), rule.code
        assert get_rule(rule.code) is rule and get_rule(rule.name) is rule


def test_readme_table_lists_every_rule() -> None:
    text = README.read_text()
    for rule in all_rules():
        assert (
            f'<a id="rule-{rule.code.lower()}"></a>`{rule.code}` | `{rule.name}` | {rule.severity.value}'
            in text
        )
