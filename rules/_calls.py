"""Shared helpers of the call rules: the problem of one kind in a call's verdict, and how to say it."""

from __future__ import annotations

from apidrift.auditor.bind import Break, Problem, ProblemKind
from apidrift.auditor.checked import CheckedSite
from apidrift.auditor.sites import Span


def problem(checked: CheckedSite, kind: ProblemKind) -> Problem | None:
    verdict = checked.new.verdict
    if checked.site.kind != "call" or not isinstance(verdict, Break):
        return None
    return next((p for p in verdict.problems if p.kind is kind), None)


def callee(checked: CheckedSite) -> str:
    target = checked.new.target
    return target.defined_at if target else checked.site.ref.render()


def display(checked: CheckedSite) -> str:
    """`Scheduler()`: how the callee reads in a message."""
    target = checked.new.target
    path = target.description.split(" ")[0] if target else checked.site.ref.render()
    return f"{path.rsplit('.', 1)[-1] if '.' in path else path}()"


def keyword_span(checked: CheckedSite, name: str) -> Span | None:
    return next((span for keyword, span in checked.site.keyword_spans if keyword == name), None)


def names(items: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in items)
