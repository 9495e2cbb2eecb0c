"""Each finding's history over the releases walked: the release where it first appeared, where its
target was first deprecated (the deprecation the engine reads, or a deprecation warning in the
callee naming the parameter) and the migration window (the new way already accepted, the old one
still working).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from packaging.version import Version

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.reasons import Unknown
from apidrift.auditor.core.results import (
    Finding,
    ManualStep,
    MoveImport,
    RemoveKeyword,
    RenameKeyword,
    Severity,
)
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.upstream.analyses.deprecations import DEPRECATION_CATEGORIES
from apidrift.auditor.upstream.callables import call_target
from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue, Missing

from .model import Event, History, ReleaseRow, finding_key


class _Runner(Protocol):
    """What a history asks of the walk (plan/walk.py's runner): a release's label and its API."""

    def label(self, version: str) -> str: ...

    def view(self, version: str) -> Any: ...


MAX_SOURCE_BYTES = 5 * 1024 * 1024  # a module larger than this is not read for parameter deprecations


def _history(finding: Finding, order: list[str], runner: _Runner, rows: dict[str, ReleaseRow]) -> History:
    target = order[-1]
    key = finding_key(finding, runner.label(target))
    index = len(order) - 1
    while index > 0 and key in rows[order[index - 1]].keys:
        index -= 1
    first = order[index] if index > 0 else None
    last_clean = order[index - 1] if index > 0 else None
    history = History(finding, key, first, last_clean)
    if first is None:
        history.events.append(
            Event(order[0], "appeared", f"already there in {order[0]}, the written-for release")
        )
    else:
        history.events.append(Event(order[0], "clean", f"fine in {order[0]}, the written-for release"))
    if finding.severity is Severity.ERROR and first is not None:
        question = _question(finding, target, runner)
        # Without a new way to offer (a name that is gone, nowhere else), only the deprecation is asked.
        _deprecation(history, question or _Question("name", finding.symbol, ()), order[: index + 1], runner)
        if question is not None:
            _window(history, question, order[:index], runner)
    if first is not None:
        history.events.append(
            Event(
                first, "appeared", f"first found in {first}: {_plain(finding.message, runner.label(target))}"
            )
        )
    if target != first:
        history.events.append(Event(target, "target", f"still there in {target}, the target"))
    history.events.sort(
        key=lambda e: (
            Version(e.version),
            ["clean", "deprecated", "window-opens", "appeared", "target"].index(e.kind),
        )
    )
    return history


def _plain(message: str, label: str) -> str:
    return message.replace(f" in {label}", "").replace(f" ({label})", "")


@dataclass(frozen=True)
class _Question:
    """What to ask of a release's API about one finding."""

    kind: str  # "add-argument", "drop-keyword", "rename-keyword", "move-import", "name" (no new way known)
    callee: str  # dotted path of the callee (or, for a move, the new home of the name)
    names: tuple[str, ...]  # the parameters concerned (for a move: the name)
    new: str | None = None  # a renamed keyword's new name


def _question(finding: Finding, target: str, runner: _Runner) -> _Question | None:
    data = finding.fix.data if finding.fix else None
    if (
        finding.code == RuleCode.MISSING_REQUIRED_ARGUMENT
        and isinstance(data, ManualStep)
        and data.parameters
    ):
        names = tuple(p.name.strip() for p in data.parameters if p.name.strip())
        return _Question("add-argument", data.callee or finding.symbol, names)
    if finding.code == RuleCode.UNEXPECTED_KEYWORD:
        if isinstance(data, RenameKeyword):
            return _Question("rename-keyword", finding.symbol, (data.old,), data.new)
        if isinstance(data, RemoveKeyword) and data.name:
            return _Question("drop-keyword", finding.symbol, (data.name,))
    if isinstance(data, MoveImport):
        return _Question("move-import", f"{data.new_module}.{data.name}", (data.name,))
    return None


def _deprecation(history: History, question: _Question, releases: list[str], runner: _Runner) -> None:
    """The first release (up to the break) where the finding's target or parameter is deprecated."""
    if not releases:
        return

    def deprecated(version: str) -> str | None:
        view = runner.view(version)
        return _deprecation_in(view, question) if view else None

    before = releases[:-1]
    found = _earliest(before, lambda v: deprecated(v) is not None)
    if found is None and deprecated(releases[-1]):
        found = releases[-1]  # deprecated in the very release that breaks (a member left behind)
    if found is None:
        return
    history.deprecated_in, history.deprecation = found, deprecated(found)
    history.events.append(Event(found, "deprecated", f"deprecated in {found}: {history.deprecation}"))


def _window(history: History, question: _Question, before: list[str], runner: _Runner) -> None:
    """The releases before the break where the old way still works and the new one already does."""
    names = ", ".join(f"`{n}`" for n in question.names)
    if not before:
        return

    def both(version: str) -> bool:
        view = runner.view(version)
        return bool(view) and _new_way_works(view[0], question)

    opens = _earliest(before, both)
    if opens is None:
        history.migration = f"no release before {history.first_appeared} accepts the new way: a clean break at {history.first_appeared}"
        return
    history.window_from, history.window_to = opens, before[-1]
    span = opens if opens == before[-1] else f"{opens} on (to {before[-1]})"
    if question.kind == "add-argument":
        what = f"pass {names}"
    elif question.kind == "drop-keyword":
        what = f"stop passing {names} (optional there)"
    elif question.kind == "rename-keyword":
        what = f"pass `{question.new}=` instead of {names}"
    else:
        what = f"import {names} from `{question.callee.rpartition('.')[0]}`"
    history.migration = f"{what} from {span}, where both work"
    history.events.append(
        Event(opens, "window-opens", f"{what}: accepted from {opens}, while the old way still works")
    )


def _earliest(versions: list[str], test: Callable[[str], bool]) -> str | None:
    """The first version passing `test`, by bisection (what is added stays): checks the last one first."""
    if not versions or not test(versions[-1]):
        return None
    low, high = 0, len(versions) - 1  # test(versions[high]) is true
    while low < high:
        middle = (low + high) // 2
        if test(versions[middle]):
            high = middle
        else:
            low = middle + 1
    return versions[high]


def _signature(resolver: Any, path: str) -> Any:
    """The signature a call of `path` binds against in this release, or None."""

    if path.endswith(".__init__"):
        path = path[: -len(".__init__")]
    value = resolver.lookup(path)
    try:
        target = call_target(value, resolver)
    except Exception:  # a shape the checker never meets at a call site: no answer, not a crash
        return None
    return None if isinstance(target, Unknown) else target.signature


def _new_way_works(resolver: Any, question: _Question) -> bool:

    if question.kind == "move-import":
        value = resolver.lookup(question.callee)
        return not isinstance(value, (Missing, Unknown))
    signature = _signature(resolver, question.callee)
    if signature is None:
        return False
    keywordable = (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)
    if question.kind == "add-argument":
        return all((p := signature.get(n)) is not None and p.kind in keywordable for n in question.names)
    if question.kind == "rename-keyword":
        param = signature.get(question.new or "")
        return param is not None and param.kind in keywordable
    param = signature.get(question.names[0])  # drop-keyword: leaving it out must already bind
    return param is None or not param.required


def _deprecation_in(view: Any, question: _Question) -> str | None:
    """A deprecation of the finding's target in this release: the callee's own, a member named like the
    keyword, or a deprecation warning in the callee's body that names the parameter."""

    resolver, _tree = view
    path = question.callee[: -len(".__init__")] if question.callee.endswith(".__init__") else question.callee
    value = resolver.lookup(path)
    info = getattr(value, "info", None)
    own = getattr(info, "deprecated", None)
    if own:
        return own
    if isinstance(value, ClassValue):
        for name in question.names:
            member = value.info.members.get(name) if isinstance(value.info.members, dict) else None
            deprecated = getattr(member, "deprecated", None)
            if deprecated:
                return deprecated
        init = resolver.attribute(value, "__init__")
        function = init if isinstance(init, FunctionValue) else None
        if function is not None and function.info.deprecated:
            return function.info.deprecated  # constructing it warns: the class is deprecated
    else:
        function = value if isinstance(value, FunctionValue) else None
    if function is None or function.info.lineno is None or question.kind == "move-import":
        return None
    module = _defining_module(resolver, function.path)
    if module is None:
        return None
    return _parameter_warning(module, function.info.lineno, question.names)


def _defining_module(resolver: Any, path: str) -> Path | None:
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        file = resolver.index.module_file(".".join(parts[:cut]))
        if file is not None and file.is_file():
            return file
    return None


def _parameter_warning(file: Path, lineno: int, names: tuple[str, ...]) -> str | None:
    """A `warnings.warn(..., DeprecationWarning)` (or a message saying "deprecat") in the function
    defined at `lineno` whose message names one of `names`. The file is parsed, never run."""

    try:
        data = file.read_bytes()[: MAX_SOURCE_BYTES + 1]
        if len(data) > MAX_SOURCE_BYTES:
            return None
        tree = ast.parse(decode_source(data))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, SourceDecodeError):
        return None
    function = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and lineno in (node.lineno, *(d.lineno for d in node.decorator_list))
        ),
        None,
    )
    if function is None:
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee = (
            node.func.attr
            if isinstance(node.func, ast.Attribute)
            else node.func.id
            if isinstance(node.func, ast.Name)
            else ""
        )
        if callee not in ("warn", "warn_once", "deprecated", "warning_once", "warning"):
            continue
        message = _text(node.args[0])
        category = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "category"), None)
        )
        category_name = (
            (category.attr if isinstance(category, ast.Attribute) else getattr(category, "id", ""))
            if category is not None
            else ""
        )
        deprecating = category_name in DEPRECATION_CATEGORIES or "deprecat" in message.lower()
        if deprecating and any(_names_word(message, name) for name in names):
            return message
    return None


def _text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{…}" for v in node.values)  # type: ignore[misc]  # a Constant in an f-string holds text
    try:
        return ast.unparse(node)
    except Exception:
        return ""


def _names_word(message: str, name: str) -> bool:

    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None
