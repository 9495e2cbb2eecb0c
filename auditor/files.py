"""Atomic file writes: readers see either the old file or the whole new one, never a torn one.

The new content goes to a temporary file in the target's own folder (so it is on the same file
system) and is then renamed over the target with `os.replace`, which is atomic there. Used by the
cache (concurrent runs share it) and by `apidrift fix` (a crash must not leave half a source file).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None, suffix: str = ".tmp") -> None:
    """Write `data` to `path` atomically, creating its folder if needed. The temporary sibling is named
    `.<name>.<random><suffix>` and is removed if anything fails; `mode` sets the new file's permission
    bits (else they are the temporary file's, 0o600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:  # already gone, or not removable: the first error is the one to report
            pass
        raise


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))
