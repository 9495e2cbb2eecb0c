"""Renderers of an `AuditResult`: pure functions `render(result) -> str`, one module per format.

Every renderer returns the whole document ending with a newline; nothing here prints or writes files.
"""

from __future__ import annotations

from collections.abc import Callable

from apidrift.auditor.results import AuditResult
from apidrift.reports import github, html, json, markdown, sarif, text

Renderer = Callable[[AuditResult], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "html": html.render,
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
