"""What a command says on the terminal while it runs: informational lines on stderr, a spinner (or, for
`impact`, a count with an ETA) on a terminal, and the `--verbose` report of what was fetched and what
came from the cache."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import click

from apidrift.auditor.core.results import AuditResult


def is_tty(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def want_color(mode: str) -> bool:
    """`--color auto|always|never`: auto colours a terminal, unless NO_COLOR is set or TERM is dumb."""
    if mode != "auto":
        return mode == "always"
    return is_tty(sys.stdout) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class Messages:
    """Informational lines on stderr, silenced by --quiet (errors are not routed through here)."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            click.echo(f"apidrift: {text}", err=True)


# ---- progress on a terminal


def on_terminal(say: Messages) -> Messages | None:
    """`say` for progress lines (`auditing against X (2 audited, ...)`), only when stderr is a terminal:
    a log or a CI step gets the result and the lines that matter, not a line per step."""
    return say if not say.quiet and is_tty(sys.stderr) else None


class Progress:
    """A one-line spinner with the elapsed time on a terminal, redrawn from a thread; erased at the end.

    The engine does not report its phases while it runs, so this says what is being done and for how long.
    """

    FRAMES = "|/-\\"

    def __init__(self, label: str, stream: IO[str], interval: float = 0.1) -> None:
        self.label = label
        self.stream = stream
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="apidrift-progress", daemon=True)
        self._start = 0.0
        self.frames_drawn = 0

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.stream.write("\r\x1b[2K")
        self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval if self.frames_drawn else 0.3):  # quick runs draw nothing
            elapsed = time.monotonic() - self._start
            frame = self.FRAMES[self.frames_drawn % len(self.FRAMES)]
            self.stream.write(f"\r\x1b[2K{frame} {self.label} ({elapsed:.1f}s)")
            self.stream.flush()
            self.frames_drawn += 1


@contextmanager
def progress(label: str, *, enabled: bool, stream: IO[str] | None = None) -> Iterator[Progress | None]:
    if not enabled:
        yield None
        return
    with Progress(label, stream or sys.stderr) as shown:
        yield shown


def spinner(label: str, *, quiet: bool) -> AbstractContextManager[Progress | None]:
    """The spinner a command shows while it runs: on a terminal only, and not with --quiet."""
    return progress(label, enabled=not quiet and is_tty(sys.stderr))


class DependentsProgress:
    """`12/40 dependents, 3 broken, ETA 1m20s` on one terminal line, redrawn as rows arrive (`impact`)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.first: float | None = None
        self.done_at_first = 0
        self.broken = 0

    def __call__(self, done: int, total: int, row: dict[str, Any]) -> None:
        self.broken += row.get("status") == "broken"
        now = time.monotonic()
        if self.first is None:  # resumed rows arrive at once: the rate counts from the first new one
            self.first, self.done_at_first = now, done - 1
        rate_done = done - self.done_at_first
        eta = ""
        if rate_done > 0 and done < total:
            seconds = (
                (now - self.first) / rate_done * (total - done)
                if rate_done > 1
                else (now - self.start) * (total - done)
            )
            eta = f", ETA {_duration(seconds)}"
        self.stream.write(f"\r\x1b[2K{done}/{total} dependents, {self.broken} broken{eta}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\r\x1b[2K")
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


# ---- --verbose: what was fetched and what came from the cache


@dataclass(frozen=True)
class CacheSnapshot:
    root: Path
    entries: dict[str, frozenset[str]]  # sub-folder -> relative paths of what is in it

    WATCHED = ("sources", "downloads", "api", "scan", "index")

    @classmethod
    def take(cls, cache_dir: Path | None) -> CacheSnapshot:
        # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
        from apidrift.auditor.cache import Cache

        root = Cache(cache_dir).root
        entries = {}
        for name in cls.WATCHED:
            folder = root / name
            depth = 2 if name in ("sources", "downloads") else 8
            entries[name] = frozenset(_listing(folder, depth)) if folder.is_dir() else frozenset()
        return cls(root, entries)


def _listing(folder: Path, depth: int) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(folder):
        relative = Path(dirpath).relative_to(folder)
        level = len(relative.parts)
        if level + 1 >= depth:
            yield from ((relative / d).as_posix() for d in dirnames)
            dirnames[:] = []
        yield from ((relative / f).as_posix() for f in filenames if not f.startswith("."))


def describe_run(result: AuditResult, request: Any, before: CacheSnapshot) -> list[str]:
    """Lines for --verbose: each input and where it came from (cache or fetched), cache reuse, timings."""
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.sources.index_client import redact_url, resolve_index_url
    from apidrift.auditor.sources.specs import normalize_name

    after = CacheSnapshot.take(request.cache_dir)
    lines = [f"cache: {after.root}"]
    index = redact_url(resolve_index_url(request.index_url))
    roles = [
        ("downstream", result.downstream),
        ("upstream", result.upstream),
        ("old upstream", result.old_upstream),
    ]
    for role, info in roles:
        if info is None:
            continue
        if info.origin == "index":
            stem = f"{normalize_name(info.name)}/"
            cached = any(
                e.startswith(stem) and info.sha256 and e.endswith(info.sha256[:16])
                for e in before.entries["sources"]
            )
            how = "from the cache (extracted earlier)" if cached else f"fetched from {index}"
            if request.offline and not cached:
                how = "from the cache"
            digest = f", sha256 {info.sha256}" if info.sha256 else ""
            lines.append(f"{role}: {info.label}: {info.location} {how}{digest}")
        elif info.origin == "path":
            lines.append(f"{role}: {info.label}: read from {info.location}")
        else:
            lines.append(f"{role}: {info.label}: {info.origin} at {info.location}")
    for name, what in (("api", "parsed upstream modules"), ("scan", "scanned downstream files")):
        # scan/link/ holds the linking's results across the downstream's modules, no file's scan
        before_, after_ = ({e for e in s.entries[name] if not e.startswith("link/")} for s in (before, after))
        new = len(after_ - before_)
        kept = len(after_ & before_)
        lines.append(f"{what}: {new} written to the cache, {kept} cache entries already there")
    if result.timings:
        phases = ", ".join(f"{phase} {seconds:.2f}s" for phase, seconds in result.timings.items())
        lines.append(f"timings: {phases} (total {sum(result.timings.values()):.2f}s)")
    return lines


def quiet_libraries() -> None:
    """The libraries' log records stay out of the terminal (they would break a progress line) unless
    `--verbose` sets up logging: a handler on the root logger that drops them keeps Python's
    last-resort handler from printing warnings to stderr."""
    root = logging.getLogger()
    if not any(isinstance(h, Silent) for h in root.handlers) and not root.handlers:
        root.addHandler(Silent())


class Silent(logging.NullHandler):
    pass


def show_log_records() -> None:
    """`--verbose`: log records at INFO and above go to stderr, one line each."""
    for handler in [h for h in logging.getLogger().handlers if isinstance(h, Silent)]:
        logging.getLogger().removeHandler(handler)
    logging.basicConfig(level=logging.INFO, format="apidrift: %(message)s")
