"""The impact summary as JSON: counts, groups, one object per dependent (findings are in the results folder)."""

from __future__ import annotations

import json

from apidrift.auditor.impact.results import ImpactResult


def render(result: ImpactResult) -> str:
    return json.dumps(result.as_dict(), indent=2, sort_keys=False) + "\n"
