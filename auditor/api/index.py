"""A lazy, cached view of one upstream version: dotted module path -> `ModuleInfo`, loaded on demand.

Only the modules the downstream reaches (and what resolving them needs) are ever parsed. Each parsed
module is stored as JSON under the cache, keyed by a hash of its source and the model version, so a
warm run reads a few small files instead of running griffe.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from apidrift.auditor.api.model import MODEL_VERSION, ModuleInfo

log = logging.getLogger(__name__)


@dataclass
class LoadStats:
    parsed: int = 0
    from_cache: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # module -> why it could not be read


class ApiIndex:
    def __init__(
        self,
        root: Path,
        import_names: Iterable[str],
        *,
        name: str = "",
        version: str | None = None,
        compiled_modules: Iterable[str] = (),
        cache_dir: Path | None = None,
    ) -> None:
        self.root = root
        self.import_names = frozenset(import_names)
        self.name = name
        self.version = version
        self.compiled_modules = frozenset(compiled_modules)
        self.cache_dir = cache_dir
        self.stats = LoadStats()
        self._modules: dict[str, ModuleInfo | None] = {}

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name

    def owns(self, dotted: str) -> bool:
        """Whether a dotted path lies in this upstream's import names."""
        return dotted.split(".")[0] in self.import_names

    def is_compiled(self, dotted: str) -> bool:
        return dotted in self.compiled_modules

    def module_file(self, dotted: str) -> Path | None:
        """The file of a module, stubs first as type checkers do; a namespace package is its folder."""
        base = self.root.joinpath(*dotted.split("."))
        for candidate in (base.with_suffix(".pyi"), base.with_suffix(".py"), base / "__init__.pyi", base / "__init__.py"):
            if candidate.is_file():
                return candidate
        if base.is_dir() and any(p.suffix in (".py", ".pyi") or p.is_dir() for p in base.iterdir()):
            return base  # namespace package (PEP 420)
        return None

    def module(self, dotted: str) -> ModuleInfo | None:
        """The module, parsed or from the cache; None when no such module exists in the sources."""
        if dotted in self._modules:
            return self._modules[dotted]
        info = self._load(dotted) if self.owns(dotted) else None
        self._modules[dotted] = info
        return info

    def _load(self, dotted: str) -> ModuleInfo | None:
        filepath = self.module_file(dotted)
        if filepath is None:
            return None
        if filepath.is_dir():
            return ModuleInfo(path=dotted, filepath=filepath.relative_to(self.root).as_posix(), is_package=True)
        data = filepath.read_bytes()
        key = hashlib.sha256(f"{MODEL_VERSION}\0{dotted}\0{filepath.name}\0".encode() + data).hexdigest()
        cached = self._read_cache(key)
        if cached is not None:
            self.stats.from_cache += 1
            return cached
        from apidrift.auditor.api.loader import load_module  # griffe is imported only on a cache miss

        try:
            info = load_module(dotted, filepath, _decode(data), self.root)
        except (SyntaxError, ValueError, RecursionError, UnicodeDecodeError) as error:
            # Unparsable module (Python 2, broken encoding...): its names are unknowable, not missing.
            self.stats.failed[dotted] = f"{type(error).__name__}: {error}".splitlines()[0]
            return ModuleInfo(path=dotted, filepath=filepath.relative_to(self.root).as_posix(), dynamic_namespace=True)
        self.stats.parsed += 1
        self._write_cache(key, info)
        return info

    def _read_cache(self, key: str) -> ModuleInfo | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / key[:2] / f"{key}.json"
        try:
            return ModuleInfo.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError) as error:  # a torn or stale entry: rebuild it
            log.debug("ignoring bad API cache entry %s: %s", path, error)
            return None

    def _write_cache(self, key: str, info: ModuleInfo) -> None:
        if self.cache_dir is None:
            return
        from apidrift.auditor.cache import atomic_write_text

        try:
            atomic_write_text(self.cache_dir / key[:2] / f"{key}.json", json.dumps(info.as_dict()))
        except OSError as error:  # a read-only cache must not stop the audit
            log.debug("cannot write API cache entry: %s", error)


def _decode(data: bytes) -> str:
    """Source bytes to text, honouring a PEP 263 coding cookie."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)
