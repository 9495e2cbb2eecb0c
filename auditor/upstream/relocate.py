"""Where did a missing name go? Search the new upstream version for an object of the same name and kind.

Input: a certain miss (`Missing`) and what the name was in the old version. Output: the dotted paths
it can be imported from now, shortest (most public) first. A text search narrows the modules to
load; the resolver confirms each candidate, so a hint never rests on a regular expression alone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from apidrift.auditor.downstream.refs import AttrRef, ModuleRef
from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue, ModuleValue, Resolution, Resolver, value_path

SKIPPED_PARTS = frozenset({"tests", "test", "testing", "_vendor", "vendor", "examples", "benchmarks"})
MAX_FILES = 20_000


class Relocator:
    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._files: list[tuple[str, Path]] | None = None
        self.find = lru_cache(maxsize=None)(self._find)

    def _modules(self) -> list[tuple[str, Path]]:
        if self._files is None:
            index = self.resolver.index
            files: list[tuple[str, Path]] = []
            for name in sorted(index.import_names):
                base = index.root / name
                candidates = sorted(base.rglob("*.py*")) if base.is_dir() else []
                for path in candidates[:MAX_FILES]:
                    relative = path.relative_to(index.root)
                    if path.suffix not in (".py", ".pyi") or SKIPPED_PARTS & set(relative.parts[:-1]):
                        continue
                    parts = list(relative.with_suffix("").parts)
                    if parts[-1] == "__init__":
                        parts.pop()
                    files.append((".".join(parts), path))
            self._files = files
        return self._files

    def _find(self, name: str, kind: str | None, missing_from: str) -> tuple[str, ...]:
        """Import paths of objects called `name` (of `kind`: "class", "function", "module" or None)."""
        definition = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", re.M)
        found: dict[str, str] = {}
        for dotted, path in self._modules():
            if dotted == missing_from:
                continue
            if kind == "module" and dotted.rsplit(".", 1)[-1] == name:
                found[dotted] = dotted
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if name not in text or not definition.search(text):
                continue
            value = self.resolver.resolve(AttrRef(ModuleRef(dotted), name))
            if _kind(value) is None or (kind is not None and _kind(value) != kind):
                continue
            canonical = value_path(value)  # type: ignore[arg-type]
            found.setdefault(canonical, f"{dotted}.{name}")
        return tuple(sorted({self._most_public(canonical, name) for canonical in found}, key=lambda p: (p.count("."), p)))

    def _most_public(self, canonical: str, name: str) -> str:
        """The shortest package path that re-exports the same object (`pkg.X` over `pkg._impl.mod.X`)."""
        parts = canonical.split(".")[:-1]
        for size in range(1, len(parts) + 1):
            prefix = ".".join(parts[:size])
            value = self.resolver.resolve(AttrRef(ModuleRef(prefix), name))
            if _kind(value) is not None and value_path(value) == canonical:  # type: ignore[arg-type]
                return f"{prefix}.{name}"
        return canonical


def _kind(value: Resolution) -> str | None:
    if isinstance(value, ClassValue):
        return "class"
    if isinstance(value, FunctionValue):
        return "function"
    if isinstance(value, ModuleValue):
        return "module"
    return None


def kind_of(value: Resolution | None) -> str | None:
    return _kind(value) if value is not None else None
