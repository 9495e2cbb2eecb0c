"""Scan one downstream file with libcst: every import, attribute use and call that reaches an upstream.

The audit scans with `astscan` (CPython's parser); this scanner reads only the files CPython's parser
refuses (a newer grammar, or a syntax error it then locates), and tests/test_scanner_parity.py
checks that both give the same sites wherever both parse.

Input: a file's text and the upstream's top-level import names. Output: a `FileScan` value holding
`UseSite`s, each with a version-independent `Ref` (see `refs`), the call's shape and exact positions.
Local data flow is followed where it is unambiguous: imports and aliases, `x = Cls(...)`,
`self.x = ...` in any method, annotations of parameters and variables, and return annotations.
A name bound more than one way in a scope is not followed (no guessing).

The scanner's parts mirror `astscan`'s: `collector` (the LibCST visitor: scopes and bindings in
`values`, `guards`, candidate use sites), `evaluator` (what an expression's value is), `forwarding`
(keywords handed on through `__init__`), `sites`, `overrides`, `signatures`, `nodes` and `names`;
`downstream.shared` holds what both scanners share.
"""

from __future__ import annotations

import unicodedata

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from apidrift.auditor.downstream.scan.collector import _Collector
from apidrift.auditor.downstream.scan.evaluator import _Evaluator
from apidrift.auditor.downstream.scan.names import _bound_names
from apidrift.auditor.downstream.scan.overrides import _override_sites
from apidrift.auditor.downstream.scan.sites import _site
from apidrift.auditor.downstream.scan.values import _ClassScope
from apidrift.auditor.downstream.sites import FileScan, UseSite


class _Identifiers(cst.CSTTransformer):
    """Identifiers as CPython reads them: NFKC-normalized (`ªb` is `ab`), where that keeps their length
    (so every position stays where it was); LibCST keeps them as written."""

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        value = updated_node.value
        if value.isascii():
            return updated_node
        normal = unicodedata.normalize("NFKC", value)
        return updated_node.with_changes(value=normal) if len(normal) == len(value) else updated_node


def scan_source(
    path: str, source: str, upstream_names: frozenset[str], aliases: tuple[tuple[str, str], ...] = ()
) -> FileScan:
    """Find the use sites of one file. Raises libcst.ParserSyntaxError on a file it cannot parse."""
    module = cst.parse_module(source)
    if not source.isascii():
        module = module.visit(_Identifiers())
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector(upstream_names, aliases)
    wrapper.visit(collector)
    positions = wrapper.resolve(PositionProvider)
    stars = collector.module_scope.star_modules
    evaluator = _Evaluator(
        _bound_names(source) if stars and None not in stars else frozenset(), collector.attribute_stores
    )
    lines = tuple(source.splitlines())
    sites: list[UseSite] = []
    for candidate in collector.candidates:
        if candidate.kind == "class":
            assert isinstance(candidate.scope, _ClassScope)
            sites.extend(_override_sites(candidate.scope, evaluator, positions, upstream_names, lines))
            continue
        site = _site(candidate, evaluator, positions, upstream_names, lines)
        if site is not None:
            sites.append(site)
    return FileScan(path, tuple(sites), lines)
