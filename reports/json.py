"""Machine-readable JSON report: `AuditResult.as_dict()` plus the metadata of the rules that fired."""

from __future__ import annotations

import json
from typing import Any

from apidrift.auditor.core.results import AuditResult
from apidrift.rules.registry import all_rules


def render(result: AuditResult) -> str:
    """The document described in docs/json-schema.md, indented, ending with a newline."""
    data = result.as_dict()
    data["rules"] = rules_with_findings(result)
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def rules_with_findings(result: AuditResult) -> list[dict[str, Any]]:
    """Registry order, so the array does not depend on the order of the findings."""
    fired = {finding.code for finding in result.findings}
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "severity": rule.severity.value,
            "summary": rule.summary,
            "family": rule.family.value,
        }
        for rule in all_rules()
        if rule.code in fired
    ]
