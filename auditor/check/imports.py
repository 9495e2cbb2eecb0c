"""Whether importing an upstream module raises: its top level (or that of a module of its package it
imports unconditionally) raises, or needs another distribution the downstream does not require.

Input: the dotted module an import runs, the upstream's model, and what the downstream and the upstream
declare they require (Requires-Dist lines). Output: an `ImportFailure` or None.

A module whose `try: import other` / `except ImportError: raise ...` names an extra of the upstream
(`pip install "dask[dataframe]"`) fails unless the downstream requires that extra, a distribution the
extra lists, or a distribution named as the module imported; the upstream's own requirements (without
extras) providing it counts too. Without a named extra, or where the downstream declares no
requirements, nothing is said: which distribution provides a module is not known otherwise. A
distribution another requirement pulls in is not seen (the requirements are read one level deep).
A `raise` at the top level of the module fails whatever is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from apidrift.auditor.upstream.api_index import ApiIndex

MAX_MODULES = 30  # modules read following unconditional imports, per import
MAX_DEPTH = 3


@dataclass(frozen=True)
class ImportFailure:
    module: str  # the module whose top level raises
    exception: str
    message: str | None
    line: int
    missing: tuple[str, ...] = ()  # top-level import names of other distributions not required
    extra: str | None = None  # the upstream's extra the message names
    # other distributions the downstream requires, which may install a missing one in turn (their own
    # requirements are not read): the failure is then not certain
    others: tuple[str, ...] = ()
    through: str | None = None  # the module the import runs, when the failing one is another


@dataclass(frozen=True)
class Requirements:
    """What the downstream declares it requires, and the upstream's extras."""

    upstream: str  # the upstream's distribution name
    downstream: tuple[Requirement, ...]
    upstream_base: frozenset[str]  # canonical names the upstream requires without an extra
    upstream_extras: dict[str, frozenset[str]]  # extra -> canonical names it adds

    @classmethod
    def of(
        cls, upstream: str, upstream_requires: tuple[str, ...], downstream_requires: tuple[str, ...]
    ) -> Requirements:
        down = tuple(r for r in map(_parse, downstream_requires) if r is not None)
        base: set[str] = set()
        extras: dict[str, set[str]] = {}
        for requirement in filter(None, map(_parse, upstream_requires)):
            marker = str(requirement.marker or "")
            found = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
            if found:
                for extra in found:
                    extras.setdefault(canonicalize_name(extra), set()).add(
                        canonicalize_name(requirement.name)
                    )
            else:
                base.add(canonicalize_name(requirement.name))
        return cls(upstream, down, frozenset(base), {k: frozenset(v) for k, v in extras.items()})

    def others(self) -> tuple[str, ...]:
        """The distributions the downstream requires besides the upstream."""
        upstream = canonicalize_name(self.upstream)
        return tuple(dict.fromkeys(r.name for r in self.downstream if canonicalize_name(r.name) != upstream))

    def missing(self, imports: tuple[str, ...], extra: str) -> tuple[str, ...] | None:
        """The import names not provided; None when it cannot be told."""
        upstream = canonicalize_name(self.upstream)
        # `dataframe = ["dask[array]", "pandas"]`: the upstream itself is no distribution it adds
        listed = self.upstream_extras.get(canonicalize_name(extra), frozenset()) - {upstream}
        if not self.downstream or not listed:
            return None
        if listed & self.upstream_base:
            return ()
        names = {canonicalize_name(r.name) for r in self.downstream}
        for requirement in self.downstream:
            if canonicalize_name(requirement.name) == upstream and canonicalize_name(extra) in {
                canonicalize_name(e) for e in requirement.extras
            }:
                return ()
        if names & listed:
            return ()
        return tuple(i for i in imports if canonicalize_name(i) not in names)


def _parse(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def import_failure(
    module: str,
    index: ApiIndex,
    requirements: Requirements | None,
    depth: int = 0,
    seen: set[str] | None = None,
) -> ImportFailure | None:
    """Why importing `module` (already found to exist) raises, or None."""
    seen = seen if seen is not None else set()
    if module in seen or len(seen) >= MAX_MODULES or depth > MAX_DEPTH:
        return None
    seen.add(module)
    info = index.import_facts(module)  # read with `ast`, not loaded as a model: imports run deep
    if info is None:
        return None
    fails = info.import_fails
    if fails:
        imports = tuple(fails.get("imports", ()))
        message = fails.get("message")
        if not imports:
            return ImportFailure(module, fails["exception"], message, fails["line"])
        extra = _named_extra(message or "", requirements.upstream) if requirements is not None else None
        if requirements is not None and extra is not None:
            missing = requirements.missing(imports, extra)
            if missing:
                return ImportFailure(
                    module,
                    fails["exception"],
                    message,
                    fails["line"],
                    missing,
                    extra,
                    others=requirements.others(),
                )
    for imported in info.own_imports:
        if index.import_facts(imported) is None:
            continue  # `from pkg.mod import name`: a name, not a module
        found = import_failure(imported, index, requirements, depth + 1, seen)
        if found is not None:
            return ImportFailure(
                found.module,
                found.exception,
                found.message,
                found.line,
                found.missing,
                found.extra,
                through=module if depth == 0 else None,
                others=found.others,
            )
    return None


def _named_extra(message: str, upstream: str) -> str | None:
    """The extra of the upstream a message names: `pip install "dask[dataframe]"`."""
    pattern = re.escape(upstream).replace(r"\-", "[-_.]").replace(r"_", "[-_.]")
    found = re.search(rf"(?<![\w.-]){pattern}\[([A-Za-z0-9][A-Za-z0-9._-]*)\]", message, re.I)
    return found.group(1) if found else None
