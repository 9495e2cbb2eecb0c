"""Case files shared by the test modules: named sections of files, written out as trees.

A case file holds sections `[KIND PATH]` (e.g. `[old pkg/mod.py]`, `[new pkg/mod.py]`,
`[downstream app.py]`); each section's lines are that file's text.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any


def parse_case(
    path: Path, kinds: tuple[str, ...] = ("old", "new", "downstream")
) -> dict[str, dict[str, str]]:
    section = re.compile(rf"^\[({'|'.join(kinds)}) ([^\]]+)\]\s*$")
    sections: dict[str, dict[str, str]] = {kind: {} for kind in kinds}
    current: tuple[str, str] | None = None
    for line in path.read_text().splitlines(keepends=True):
        match = section.match(line)
        if match:
            current = (match.group(1), match.group(2).strip())
            sections[current[0]][current[1]] = ""
        elif current is not None:
            sections[current[0]][current[1]] += line
    return sections


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def name_sites_agree(names_only: Any, full: Any) -> str | None:
    """Whether the LibCST scanner's sites (it reads names only) are, identically and in order, the
    `ast` scanner's sites at the same places; the `ast` scanner's other sites are those it finds through
    values. None when they agree, else what differs."""
    places = {(s.kind, s.span) for s in names_only.sites}
    # `use` (how the value is used) and `tests` (the introspection tests around a use, read against each
    # version) are the `ast` scanner's only: the LibCST scanner guards a branch of `hasattr()` as a whole
    # and reads no `inspect.signature` test, so where `tests` are, its `guarded` says nothing.
    kept = [replace(s, use="", tests=()) for s in full.sites if (s.kind, s.span) in places]
    tested = [bool(s.tests) for s in full.sites if (s.kind, s.span) in places]
    for index, (before, after) in enumerate(zip(names_only.sites, kept)):
        if index < len(tested) and tested[index]:
            after = replace(after, guarded=before.guarded)
        if after.ref != before.ref and _followed_a_value(after.ref):
            after = replace(after, ref=before.ref)  # an isinstance() narrowing the `ast` scanner read
        if after != before:
            return f"site {index} differs: {before} != {after}"
    if len(kept) != len(names_only.sites):
        return f"{len(names_only.sites)} sites by names, {len(kept)} of them found again"
    return None


def _followed_a_value(ref: Any) -> bool:
    """A reference only the value model gives: an instance narrowed by isinstance(), an element, an
    opaque value."""
    from apidrift.auditor.downstream.refs import InstanceRef, ItemRef, OpaqueRef

    while ref is not None:
        if isinstance(ref, (InstanceRef, ItemRef, OpaqueRef)):
            return True
        ref = getattr(ref, "base", None) or getattr(ref, "func", None)
    return False
