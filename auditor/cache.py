"""The on-disk cache: a root folder (`Path`) with one sub-folder per use.

Layout under the root:
    sources/<normalized-name>/<version>-<sha256[:16]>/   extracted index releases (manifest.json + tree/)
    sources/<normalized-name>/file-<sha256[:16]>/        extracted local archives given as NAME@PATH
    downloads/<random>/<filename>                        an archive while it is downloaded and extracted
    index/<index-key>/<normalized-name>.json             project listings, so `--offline` can resolve specifiers
Other stages take their own folder with `cache.dir("api")`.

Every write is atomic (`apidrift.auditor.files`: a temporary sibling renamed into place), so concurrent runs sharing one cache
never see torn files, and every reader treats an unreadable entry as absent and rebuilds it. When the
root cannot be written (read-only, or not a folder), reads still use it and new entries go to a
temporary folder that is deleted at exit; `Cache.note` says so.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

import platformdirs

from apidrift.auditor.core.wording import first_line

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


def probe_writable(folder: Path) -> None:
    """Create `folder` if needed and check that a file can be created in it; raise `OSError` if not."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe-")
    os.close(fd)
    os.unlink(tmp)


class Cache:
    """The cache root and its sub-folders; nothing is created until a folder is asked for."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root: Path = (
            Path(root).expanduser().absolute() if root is not None else default_root().absolute()
        )
        self.fallback: Path | None = None  # where new entries go when the root cannot be written
        self.note: str | None = None  # says so, once the fallback is in use
        self._writable: bool | None = None

    def __repr__(self) -> str:
        return f"Cache({str(self.root)!r})"

    # -- writability -----------------------------------------------------------------------------

    def check_writable(self) -> bool:
        """Whether the root can be written; the first failure switches new entries to a temporary folder."""
        if self._writable is None:
            try:
                probe_writable(self.root)
                self._writable = True
            except OSError as error:
                self._use_fallback(error)
        return bool(self._writable)

    def _use_fallback(self, error: OSError) -> None:
        self._writable = False
        if self.fallback is not None:
            return
        self.fallback = Path(tempfile.mkdtemp(prefix="apidrift-cache-"))
        atexit.register(shutil.rmtree, self.fallback, True)
        self.note = (
            f"the cache folder {self.root} cannot be written ({error.strerror or first_line(error)}): "
            f"new cache entries go to the temporary folder {self.fallback}, deleted at exit"
        )

    def write_path(self, path: Path) -> Path:
        """Where to write `path` (a path under the root): itself, or its twin under the fallback folder."""
        if self.check_writable():
            return path
        assert self.fallback is not None
        try:
            return self.fallback / path.relative_to(self.root)
        except ValueError:
            return self.fallback / path.name

    def write_dir(self, *parts: str) -> Path:
        """The sub-folder `root/parts...`, created and writable (under the fallback folder if need be)."""
        path = self.write_path(self.root.joinpath(*parts))
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- folders ---------------------------------------------------------------------------------

    def dir(self, *parts: str) -> Path:
        """The sub-folder `root/parts...`, created if missing (e.g. `cache.dir("api")`).

        An existing folder is returned even if it is read-only (its entries can still be read; writes
        fail and are skipped by its users); one that cannot be created comes from the fallback folder.
        """
        path = self.root.joinpath(*parts)
        try:
            path.mkdir(parents=True, exist_ok=True)
            return path
        except OSError as error:
            self._use_fallback(error)
        return self.write_dir(*parts)

    @property
    def downloads(self) -> Path:
        return self.write_dir("downloads")

    def index_file(self, index_key: str, normalized_name: str) -> Path:
        return self.root / "index" / path_component(index_key) / f"{path_component(normalized_name)}.json"

    def sources_of(self, normalized_name: str) -> Path:
        """Folder holding every extracted tree of one distribution (not created)."""
        return self.root / "sources" / path_component(normalized_name)

    def source_dir(self, normalized_name: str, label: str, sha256: str) -> Path:
        """Folder of one extracted archive, e.g. label "0.3.0" for a release or "file" for a local archive."""
        return self.sources_of(normalized_name) / f"{path_component(label)}-{sha256[:16]}"
