"""Self-contained HTML dashboard of an impact run (jinja2, inline CSS and JS, no network).

The groups by upstream symbol first (what the maintainer acts on), then every dependent with its
findings in a collapsible block. All of it is in the markup; the script only adds the filters
(status, rule, text search).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from apidrift.auditor.core.wording import plural
from apidrift.auditor.impact.results import STATUSES, ImpactResult
from apidrift.reports.html import inline_markdown
from apidrift.reports.impact_text import bucket_lines, counts_line, detail, group_verdict, title

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["plural"] = plural
    env.filters["code"] = inline_markdown  # messages name code in `backticks`: shown as <code>
    return env


def render(result: ImpactResult) -> str:
    order = {status: i for i, status in enumerate(STATUSES)}
    rows = sorted(result.rows, key=lambda r: (order[r["status"]], r["dependent"]))
    counts = result.counts()
    groups = result.groups()
    views: list[dict[str, Any]] = []
    for number, row in enumerate(rows, start=1):
        rules = sorted(row.get("by_rule", {}))
        findings: list[dict[str, Any]] = list(row.get("findings", ()))
        views.append({
            "id": f"dep-{number}",
            "row": row,
            "detail": detail(row),
            "rules": " ".join(rules),
            "search": " ".join([row["dependent"], str(row.get("version") or ""), row["status"], *rules,
                                *(f["symbol"] for f in findings)]).lower(),
            "findings": sorted(findings, key=lambda f: (f["path"], f["line"], f["code"])),
        })  # fmt: skip
    all_rules = sorted({code for row in rows for code in row.get("by_rule", {})})
    html = (
        _environment()
        .get_template("impact.html.j2")
        .render(
            title=f"apidrift impact: {title(result)}",
            result=result,
            summary=counts_line(result),
            buckets=bucket_lines(result),
            statuses=[s for s in STATUSES if counts[s]],
            counts=counts,
            groups=[
                {
                    "g": g,
                    "line": group_verdict(g),
                    "search": " ".join([g.symbol, g.code, g.rule, *g.dependents, *g.pinned]).lower(),
                }
                for g in groups
            ],
            dependents=views,
            rules=all_rules,
        )
    )
    return html if html.endswith("\n") else html + "\n"
