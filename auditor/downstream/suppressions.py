"""Inline suppressions: `# apidrift: ignore` or `# apidrift: ignore[AD101, calls, missing-method]`.

A comment silences a finding when it stands on the finding's line or on the first line of the use
site (so one comment covers a whole multi-line call). Codes, rule names and families all work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMENT = re.compile(r"#\s*apidrift:\s*ignore(?:\[([^\]]*)\])?", re.IGNORECASE)


@dataclass(frozen=True)
class Suppression:
    path: str
    line: int
    selectors: frozenset[str] | None  # None: everything on the line

    def matches(self, code: str, name: str, family: str) -> bool:
        if self.selectors is None:
            return True
        return bool({code.lower(), name.lower(), family.lower()} & self.selectors)

    def render(self) -> str:
        inside = f"[{', '.join(sorted(self.selectors))}]" if self.selectors is not None else ""
        return f"{self.path}:{self.line}: # apidrift: ignore{inside}"


def suppression_on(path: str, lines: tuple[str, ...], line: int) -> Suppression | None:
    if not 0 < line <= len(lines):
        return None
    match = COMMENT.search(lines[line - 1])
    if match is None:
        return None
    selectors = match.group(1)
    if selectors is None:
        return Suppression(path, line, None)
    return Suppression(path, line, frozenset(s.strip().lower() for s in selectors.split(",") if s.strip()))


def all_suppressions(path: str, lines: tuple[str, ...]) -> list[Suppression]:
    found = []
    for number, text in enumerate(lines, start=1):
        if "apidrift" in text:
            suppression = suppression_on(path, lines, number)
            if suppression is not None:
                found.append(suppression)
    return found
