"""Renderers of an `AuditResult`: pure functions `render(result) -> str`, one module per format.

Every renderer returns the whole document ending with a newline; nothing here prints or writes files.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from apidrift.auditor.core.results import AuditResult
from apidrift.reports import github, json, markdown, sarif, text

if TYPE_CHECKING:
    from apidrift.auditor.plan import PlanResult

Renderer = Callable[[AuditResult], str]


def _html(result: AuditResult) -> str:
    """The HTML report; its module (and jinja2) is imported only when HTML is asked for."""
    # lazy: jinja2 is imported only when HTML is asked for
    from apidrift.reports import html

    return html.render(result)


RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "html": _html,
    "github": github.render,
    "markdown": markdown.render,
}

__all__ = ["RENDERERS", "Renderer", "render", "render_plan"]


def render(result: AuditResult, fmt: str, *, color: bool = False, show_unchecked: bool = False) -> str:
    """Render `result` as `fmt` (a key of `RENDERERS`); `color` and `show_unchecked` (list each site
    that could not be checked) apply to text only (JSON and HTML always list them)."""
    if fmt == "text":
        return text.render(result, color=color, show_unchecked=show_unchecked)
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(RENDERERS)}") from None
    return renderer(result)


def render_plan(result: PlanResult, fmt: str) -> str:
    """Render an `apidrift plan` result as `fmt` (one of `plan.PLAN_FORMATS`)."""
    # lazy: only `apidrift plan` renders a plan
    from apidrift.reports import plan

    if fmt == "text":
        return plan.render_text(result)
    if fmt == "json":
        return plan.render_json(result)
    if fmt == "markdown":
        return plan.render_markdown(result)
    if fmt == "html":
        # lazy: jinja2 is imported only when HTML is asked for
        from apidrift.reports import plan_html

        return plan_html.render(result)
    raise ValueError(f"unknown plan format {fmt!r}; choose from {', '.join(plan.PLAN_FORMATS)}")
