"""Reading a file named by an untrusted tree or argument: regular files only, never past a size cap.

`open(path).read()` on a FIFO blocks forever, on `/dev/zero` (or a symlink to it) grows memory until
the process dies, and follows links anywhere. `read_bounded` opens without blocking and without
following a final symlink unless asked, checks the opened file (not the name) is a regular file, and
reads at most `limit` bytes; everything else is a `BoundedReadError`, an `OSError` whose `strerror`
is one line saying why.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_CHUNK = 1 << 16


class BoundedReadError(OSError):
    """The file is not a regular file, lies outside the allowed tree, or is larger than allowed."""

    def __init__(self, reason: str, path: Path | str) -> None:
        super().__init__(errno.EINVAL, reason, str(path))


def is_within(path: Path, root: Path) -> bool:
    """Whether `path`, with every symlink resolved, lies inside `root` (also resolved)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop, a name too long...
        return False


def read_bounded(
    path: Path | str, limit: int, *, within: Path | None = None, follow_symlinks: bool = True
) -> bytes:
    """The bytes of the regular file `path`, refusing FIFOs, devices, folders and files over `limit` bytes.

    `within`: the file (its links resolved) must lie inside that folder. `follow_symlinks=False`
    refuses a symlink as the last component.
    """
    path = Path(path)
    if within is not None and not is_within(path, within):
        raise BoundedReadError("a link out of its tree", path)
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise BoundedReadError("a symlink", path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BoundedReadError("not a regular file", path)
        if info.st_size > limit:
            raise BoundedReadError(f"larger than {limit} bytes", path)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(_CHUNK, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # a file that grew while read
                raise BoundedReadError(f"larger than {limit} bytes", path)
        return b"".join(chunks)
    finally:
        os.close(fd)


class NestingError(ValueError):
    """A JSON or TOML document nested deeper than the parser's recursion allows (`[[[[...` 200,000 deep)."""


def loads_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`, with a document nested too deeply a `ValueError` (as a syntax error is) instead
    of the parser's `RecursionError`."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise NestingError("nested too deeply to read") from None


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, with a document nested too deeply a `ValueError` instead of a `RecursionError`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestingError("nested too deeply to read") from None
