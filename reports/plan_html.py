"""Self-contained HTML plan (`apidrift plan --format html`): the release table and a timeline per finding.

One file, inline CSS, no script and no network; jinja2 template `templates/plan.html.j2`, autoescaped
(messages come from untrusted sources). Each finding's timeline has one cell per release of the range,
coloured by its state there: fine, deprecated, both ways work (the migration window), broken (an
error) or warned about (a warning or a note); releases
that were not audited are marked so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2
from packaging.version import Version

from apidrift.auditor.core.wording import plural
from apidrift.reports.html import TEMPLATES, inline_markdown, slug
from apidrift.reports.plan import headline, history_lines, status_text

if TYPE_CHECKING:
    from apidrift.auditor.plan import History, PlanResult

STATES = {
    "fine": "works",
    "deprecated": "works, deprecated",
    "window": "old and new way both work",
    "broken": "breaks",
    "present": "warned about",
}


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["slug"] = slug
    env.filters["plural"] = plural
    env.filters["inline_md"] = inline_markdown
    return env


@dataclass(frozen=True)
class Cell:
    version: str
    state: str  # a key of STATES
    audited: bool
    label: str  # what a reader (and a screen reader) is told about this release


@dataclass(frozen=True)
class TimelineView:
    id: str
    history: History
    cells: tuple[Cell, ...]
    lines: tuple[str, ...]


def _state(history: History, version: str, present: bool) -> str:
    if present:
        return "broken" if history.finding.severity.value == "error" else "present"
    v = Version(version)
    if history.window_from and Version(history.window_from) <= v:
        return "window"
    if history.deprecated_in and Version(history.deprecated_in) <= v:
        return "deprecated"
    return "fine"


def timelines(result: PlanResult) -> list[TimelineView]:
    views = []
    walk = result.walk
    for number, history in enumerate(result.histories, start=1):
        cells = []
        for row in walk:
            state = _state(history, row.version, history.key in row.keys)
            audited = row.status == "audited"
            how = "audited" if audited else "not audited"
            cells.append(Cell(row.version, state, audited, f"{row.version}: {STATES[state]} ({how})"))
        views.append(TimelineView(f"finding-{number}", history, tuple(cells), tuple(history_lines(history))))
    return views


def render(result: PlanResult) -> str:
    context: dict[str, Any] = {
        "result": result,
        "title": headline(result),
        "timelines": timelines(result),
        "states": STATES,
        "status_text": status_text,
    }
    html = _environment().get_template("plan.html.j2").render(**context)
    return html if html.endswith("\n") else html + "\n"
