"""Renderers of an `AuditResult`: pure functions `render(result) -> str`, one module per format.

Every renderer returns the whole document ending with a newline; nothing here prints or writes files.
"""

from __future__ import annotations

from collections.abc import Callable

from apidrift.auditor.core.results import AuditResult
from apidrift.reports import github, json, markdown, sarif, text

Renderer = Callable[[AuditResult], str]


def _html(result: AuditResult) -> str:
    """The HTML report; its module (and jinja2) is imported only when HTML is asked for."""
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

__all__ = ["RENDERERS", "Renderer", "render"]


def render(result: AuditResult, fmt: str, *, color: bool = False) -> str:
    """Render `result` as `fmt` (a key of `RENDERERS`); `color` applies to text only."""
    if fmt == "text":
        return text.render(result, color=color)
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(RENDERERS)}") from None
    return renderer(result)
