"""Upstream models kept across the audits of one process (`apidrift impact`'s workers).

`apidrift impact` audits many dependents against the same two upstream versions. Rebuilt for every
dependent, the upstream model (each `ApiIndex` with its loaded modules) is read again from the API
cache each time. Kept, it is built once per worker: the worker process
holds it, each dependent's audit runs in a fork of the worker and inherits it, and what a fork loads
is handed back (`absorb`) so that the worker loads it too, from the API cache the fork wrote.

Input: the arguments an `ApiIndex` is built from. Output: that index, the same object for the same
arguments while keeping is on (`enable()`); a new one each call otherwise (the CLI's single audit).
An index is a pure function of its arguments (a release tree from the cache is never changed). What
depends on the audit stays per audit: each audit gets its own `Resolver` over the kept index (whose
memos would otherwise skip the index), and the index records the modules this audit asked for, so
that the notes about modules that could not be parsed name only those (`failed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apidrift.auditor.upstream.api_index import ApiIndex

MAX_KEPT = 8  # models kept at once (an impact uses two)

_enabled = False
_kept: dict[tuple[Any, ...], ApiIndex] = {}


def enable(on: bool = True) -> None:
    """Keep models from now on (off: forget them all)."""
    global _enabled
    _enabled = on
    if not on:
        _kept.clear()


def enabled() -> bool:
    return _enabled


def key_of(index_args: dict[str, Any]) -> tuple[Any, ...]:
    def plain(value: Any) -> Any:
        if isinstance(value, (set, frozenset)):
            return tuple(sorted(value))
        if isinstance(value, (list, tuple)):
            return tuple(value)
        return Path(value) if isinstance(value, Path) else value

    return tuple((name, plain(value)) for name, value in sorted(index_args.items()))


def index(index_args: dict[str, Any], build: Callable[[dict[str, Any]], ApiIndex]) -> ApiIndex:
    """The index built from `index_args` (kept when keeping is on), its record of modules asked for
    started anew for this audit."""
    if not _enabled:
        return build(index_args)
    key = key_of(index_args)
    found = _kept.get(key)
    if found is None:
        if len(_kept) >= MAX_KEPT:
            _kept.pop(next(iter(_kept)))
        found = _kept[key] = build(index_args)
        found.kept_args = dict(index_args)  # type: ignore[attr-defined]
    found.touched = set()  # this audit's modules (the notes name only those)
    return found


def failed(index: ApiIndex) -> dict[str, str]:
    """The modules of `index` that could not be parsed, among those this audit touched."""
    touched = getattr(index, "touched", None)
    if touched is None:
        return index.stats.failed
    return {module: why for module, why in index.stats.failed.items() if module in touched}


def loaded() -> list[dict[str, Any]]:
    """What the kept models hold, to hand back to the worker: each index's arguments and the modules
    it has loaded."""
    return [
        {"args": _plain(i.kept_args), "modules": sorted(i.loaded_modules())}  # type: ignore[attr-defined]
        for i in _kept.values()
        if getattr(i, "kept_args", None) is not None
    ]


def absorb(models: Iterable[dict[str, Any]], build: Callable[[dict[str, Any]], ApiIndex]) -> None:
    """Load into this process's kept models the modules a fork loaded (read from the API cache)."""
    if not _enabled:
        return
    for model in models:
        args = dict(model["args"])
        args["root"] = Path(args["root"])
        if args.get("cache_dir") is not None:
            args["cache_dir"] = Path(args["cache_dir"])
        kept = index(args, build)
        for dotted in model["modules"]:
            kept.module(dotted)
        kept.touched = None


def _plain(args: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            str(value)
            if isinstance(value, Path)
            else sorted(value)
            if isinstance(value, (set, frozenset))
            else value
        )
        for name, value in args.items()
    }
