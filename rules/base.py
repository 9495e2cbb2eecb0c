"""What a rule is: stable metadata, docs taken from its module docstring, and one pure check."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from apidrift.auditor.results import Severity

if TYPE_CHECKING:
    from apidrift.auditor.checked import CheckedSite
    from apidrift.auditor.results import Finding

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix")


@dataclass(frozen=True)
class Rule:
    code: str  # stable, never reused: "AD101"
    name: str  # kebab-case, reads after "allow": "unexpected-keyword"
    severity: Severity  # default severity
    summary: str  # one line, for tables and SARIF shortDescription
    family: str  # "names" or "calls": usable in ignores for the whole family
    since: str  # apidrift version that introduced the rule
    check: Callable[[CheckedSite], Iterator[Finding]]
    docs: str  # markdown with the four DOC_SECTIONS

    def section(self, title: str) -> str:
        """The body of one `## title` section of the docs, or an empty string."""
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.docs, re.S | re.M)
        return match.group(1).strip() if match else ""


def rule_from_module(module: ModuleType) -> Rule:
    """Each rule module holds a `RULE` dict of metadata, a `check` function and its docs as docstring."""
    meta = module.RULE
    return Rule(
        code=meta["code"],
        name=meta["name"],
        severity=meta["severity"],
        summary=meta["summary"],
        family=meta["family"],
        since=meta.get("since", "0.1.0"),
        check=module.check,
        docs=(module.__doc__ or "").strip(),
    )
