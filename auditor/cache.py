"""The on-disk cache: a root folder (`Path`) with one sub-folder per use, and atomic file writes (`bytes`/`str` -> file).

Layout under the root:
    sources/<normalized-name>/<version>-<sha256[:16]>/   extracted index releases (manifest.json + tree/)
    sources/<normalized-name>/file-<sha256[:16]>/        extracted local archives given as NAME@PATH
    downloads/<sha256[:16]>/<filename>                   archives while they are being extracted
    index/<index-key>/<normalized-name>.json             project listings, so `--offline` can resolve specifiers
Other stages take their own folder with `cache.dir("api")`.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import platformdirs

ENV_VAR = "APIDRIFT_CACHE_DIR"
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._+!-]")


def default_root() -> Path:
    """`$APIDRIFT_CACHE_DIR` if set, else the platform's user cache folder for apidrift."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(platformdirs.user_cache_dir("apidrift"))


def path_component(text: str) -> str:
    """`text` made safe as one path component (versions are, but this stays safe for any input)."""
    safe = _UNSAFE_CHARS.sub("_", text).lstrip(".")
    return safe or "_"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see either the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


class Cache:
    """The cache root and its sub-folders; nothing is created until a folder is asked for."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root: Path = Path(root).expanduser().absolute() if root is not None else default_root().absolute()

    def __repr__(self) -> str:
        return f"Cache({str(self.root)!r})"

    def dir(self, *parts: str) -> Path:
        """The sub-folder `root/parts...`, created if missing (e.g. `cache.dir("api")`)."""
        path = self.root.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def downloads(self) -> Path:
        return self.dir("downloads")

    def index_file(self, index_key: str, normalized_name: str) -> Path:
        return self.root / "index" / path_component(index_key) / f"{path_component(normalized_name)}.json"

    def sources_of(self, normalized_name: str) -> Path:
        """Folder holding every extracted tree of one distribution (not created)."""
        return self.root / "sources" / path_component(normalized_name)

    def source_dir(self, normalized_name: str, label: str, sha256: str) -> Path:
        """Folder of one extracted archive, e.g. label "0.3.0" for a release or "file" for a local archive."""
        return self.sources_of(normalized_name) / f"{path_component(label)}-{sha256[:16]}"
