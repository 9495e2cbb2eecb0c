"""Running an impact: prepare the release once, hand one job per dependent to an Executor, collect rows.

The executor is a `concurrent.futures.Executor`: the standard library's `ProcessPoolExecutor` on this
machine by default, or a Dask cluster's (`distributed.Client(address).get_executor()`). A job whose
worker died (the pool broke, or Dask gave up on it) is submitted again, up to `max_attempts` times;
after that it is a row with status `error`, never a lost dependent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import socket
import struct
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import first_line, plural
from apidrift.auditor.engine import Sources
from apidrift.auditor.impact.inputs import Dependent, previous_release
from apidrift.auditor.impact.jobs import Job, failed_row, hard_memory_mb, run_job
from apidrift.auditor.impact.results import FAILED, ROWS_FILE, ImpactResult, ResultStore, results_key
from apidrift.auditor.sources.index_client import classify_filename
from apidrift.auditor.sources.locate import SourceTree, locate

Progress = Callable[[int, int, dict[str, Any]], None]  # (done, total, row)


@dataclass(frozen=True)
class ImpactRequest:
    release: str  # NAME==VER or NAME@PATH
    dependents: tuple[Dependent, ...]
    old: str | None = None  # `--from`; None: the previous release on the index
    results_dir: Path = Path("apidrift-impact")
    resume: bool = False
    executor: str = "process"  # "process" or "dask"
    scheduler: str | None = None  # a Dask scheduler address
    workers: int | None = None  # process pool size (default: the CPU count)
    timeout: float = 600.0
    memory_mb: int | None = 4096
    max_attempts: int = 3
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None
    trace_dir: Path | None = None
    dropped: tuple[dict[str, Any], ...] = ()  # discovery's candidates that were not kept
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Prepared:
    release: SourceTree
    old_spec: str
    old: SourceTree


def release_spec(text: str, cache_dir: Path | None = None) -> str:
    """The release as a spec: a bare path to a wheel, an sdist or a project folder becomes NAME@PATH."""
    path = Path(text).expanduser()
    if "@" in text or not (path.is_file() or path.is_dir()) or not any(c in text for c in "/\\."):
        return text
    if path.is_file():
        if classify_filename(path.name) is None:
            return text
        try:
            name = str(
                parse_wheel_filename(path.name)[0]
                if path.name.endswith(".whl")
                else parse_sdist_filename(path.name)[0]
            )
        except (InvalidSdistFilename, InvalidWheelFilename):
            return text
        return f"{name}@{path.resolve()}"
    tree = locate(
        str(path.resolve()), role="downstream", cache=Cache(cache_dir)
    )  # a folder: only its metadata is read
    return f"{tree.name}@{path.resolve()}"


def prepare(request: ImpactRequest) -> Prepared:
    """Locate the release and the old version once (downloads land in the shared cache)."""
    sources = Sources(Cache(request.cache_dir), request.index_url, request.offline)
    release = sources.locate(request.release, "upstream")
    if request.old:
        old_spec = request.old
    elif not release.absence_is_evidence and release.version:  # Python itself: the minor version before
        major, minor = (int(part) for part in release.version.split(".")[:2])
        old_spec = f"python=={major}.{minor - 1}"
    else:
        old_spec = previous_release(
            release.name, release.version, sources.cache, request.index_url, request.offline
        )
    old = sources.locate(old_spec, "upstream")
    return Prepared(release, old_spec, old)


def _label(tree: SourceTree) -> str:
    return f"{tree.name}=={tree.version}" if tree.version else tree.name


def _info(tree: SourceTree, spec: str) -> dict[str, Any]:
    return {"name": tree.name, "version": tree.version, "label": _label(tree), "spec": spec,
            "origin": tree.origin, "location": tree.location, "sha256": tree.sha256}  # fmt: skip


def job_key(dependent: Dependent, prepared: Prepared) -> str:
    """The dependent and both upstream versions (and their archives' digests) as one key."""
    parts = [dependent.key_text, _label(prepared.release), prepared.release.sha256 or prepared.release.location,
             _label(prepared.old), prepared.old.sha256 or prepared.old.location, __version__]  # fmt: skip
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


def jobs_for(request: ImpactRequest, prepared: Prepared) -> list[Job]:
    release_spec = request.release
    return [
        Job(
            key=job_key(d, prepared),
            dependent=d.spec,
            label=d.label,
            latest=d.latest,
            release=release_spec,
            old=prepared.old_spec,
            upstream=prepared.release.name,
            upstream_version=prepared.release.version,
            pin=d.pin,
            origin=d.origin,
            cache_dir=str(request.cache_dir) if request.cache_dir else None,
            index_url=request.index_url,
            offline=request.offline,
            timeout=request.timeout,
            memory_mb=request.memory_mb,
            trace_dir=str(request.trace_dir) if request.trace_dir else None,
        )
        for d in request.dependents
    ]


def run_impact(request: ImpactRequest, progress: Progress | None = None) -> ImpactResult:
    started = time.perf_counter()
    notes = list(request.notes)
    hard = hard_memory_mb()
    if (
        request.memory_mb
        and hard is not None
        and request.memory_mb > hard
        and request.executor != "dask"
        and not request.scheduler
    ):
        notes.append(
            f"--memory-limit {request.memory_mb} MB is above this process's hard address-space limit "
            f"({hard} MB, `ulimit -v`): each audit runs under {hard} MB"
        )
        request = replace(request, memory_mb=hard, notes=tuple(notes))
    prepared = prepare(request)
    result = ImpactResult(
        release=_info(prepared.release, request.release), old=_info(prepared.old, prepared.old_spec),
        dropped=list(request.dropped), notes=list(request.notes), results_dir=str(request.results_dir),
    )  # fmt: skip
    key, key_note = results_key(Cache(request.cache_dir).root)
    if key_note:
        result.notes.append(key_note)
    store = ResultStore(request.results_dir, key)
    jobs = jobs_for(request, prepared)
    done: dict[str, dict[str, Any]] = {}
    if request.resume:
        previous = store.previous()
        wanted = {job.key for job in jobs}
        done = {k: row for k, row in previous.items() if k in wanted and row["status"] != "error"}
        if done:
            result.notes.append(
                f"--resume: {plural(len(done), 'dependent')} already audited for these versions"
            )
        for refused in store.refused:
            result.notes.append(f"--resume: {request.results_dir / ROWS_FILE}: {refused}")
    else:
        store.start(fresh=True)
    todo = [job for job in jobs if job.key not in done]
    total = len(jobs)
    rows = dict(done)

    def collect(row: dict[str, Any]) -> None:
        store.append(row)
        rows[row["key"]] = row
        if progress is not None:
            progress(len(rows), total, row)

    with make_executor(request) as pool:
        result.executor = pool.description
        run_jobs(todo, pool, collect, request.max_attempts)
    result.rows = [rows[job.key] for job in jobs if job.key in rows]
    if not store.write_parquet(result):
        result.notes.append(
            "pyarrow is not installed: results as JSON Lines only (install apidrift[dask] for Parquet)"
        )
    result.elapsed = time.perf_counter() - started
    return result


# ---- executors ------------------------------------------------------------------------------------


def _warm(parent: int | None = None) -> None:
    """A pool worker dies with the command (a `kill -9` of it leaves no worker behind), then imports
    the audit once (the parser too); each job's child is a fork of it."""
    # lazy: a pool worker loads the audit here, once, before its jobs fork from it
    from apidrift.auditor.impact.jobs import die_with_parent

    die_with_parent(parent)
    # A worker's stderr is the command's terminal: a library's warning or log record there would break
    # the progress line (the rows say what went wrong).
    warnings.simplefilter("ignore")
    logging.getLogger().addHandler(logging.NullHandler())
    # lazy: a pool worker loads the audit here, once, before its jobs fork from it
    import libcst  # noqa: F401

    # lazy: a pool worker loads the audit here, once, before its jobs fork from it
    import apidrift.auditor.downstream.cst_to_ast
    import apidrift.auditor.engine
    import apidrift.auditor.impact.results  # noqa: F401
    from apidrift.auditor.upstream import kept
    from apidrift.rules.registry import all_rules

    all_rules()
    kept.enable(os.environ.get("APIDRIFT_KEEP_UPSTREAM", "1") != "0")  # one upstream model per worker


class Pool:
    """An Executor and how to get a new one when it breaks; a context manager that shuts it down."""

    def __init__(
        self,
        make: Callable[[], Executor],
        slots: int,
        description: str,
        close: Callable[[], None] | None = None,
    ) -> None:
        self._make = make
        self.slots = slots
        self.description = description
        self._close = close
        self.executor = make()

    def renew(self) -> None:
        _shutdown(self.executor, wait=False)
        self.executor = self._make()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        _shutdown(self.executor, wait=True)
        if self._close is not None:
            self._close()


def _shutdown(executor: Executor, *, wait: bool) -> None:
    try:
        executor.shutdown(wait=wait, cancel_futures=True)
    except TypeError:  # an Executor without cancel_futures (Dask's)
        executor.shutdown(wait=wait)


def make_executor(request: ImpactRequest) -> Pool:
    if request.executor == "dask" or request.scheduler:
        return dask_pool(request.scheduler)
    workers = request.workers or os.cpu_count() or 1
    context = multiprocessing.get_context("spawn")
    return Pool(
        lambda: ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_warm, initargs=(os.getpid(),)
        ),
        workers,
        f"process pool, {plural(workers, 'worker')}",
    )


SCHEDULER_TIMEOUT = 10.0  # seconds to reach a Dask scheduler and finish its handshake
MAX_HANDSHAKE_BYTES = 1 << 20  # a scheduler's first message (its handshake) is a few hundred bytes


def dask_pool(address: str | None, timeout: float | None = None) -> Pool:
    timeout = SCHEDULER_TIMEOUT if timeout is None else timeout
    try:
        # lazy: dask, an optional dependency (0.65 s), loads only with --scheduler
        from distributed import Client
    except ImportError:
        raise RuntimeError("the Dask executor needs the dask extra: pip install 'apidrift[dask]'") from None
    if address:
        probe_scheduler(address, timeout)
    client = _within(
        timeout + 5,
        lambda: Client(address, timeout=timeout) if address else Client(processes=True),
        f"cannot reach the Dask scheduler at {address}" if address else "cannot start a local Dask cluster",
    )
    threads = sum(client.nthreads().values()) or 1
    where = address or "a local Dask cluster"
    return Pool(
        lambda: client.get_executor(pure=False),
        threads,
        f"Dask at {where}, {plural(threads, 'thread')}",
        client.close,
    )


def probe_scheduler(address: str, timeout: float) -> None:
    """Check that `address` (tcp://HOST:PORT, or HOST:PORT) speaks Dask before Dask's client is handed it.

    A scheduler sends its handshake as soon as it accepts a connection: an 8-byte length, then that many
    bytes. A port that accepts and stays silent (a dashboard's, by mistake) would hold the client past
    its timeout, and a server speaking something else would have it allocate whatever length its first
    bytes spell (3 EiB for "HTTP/1.1"). Both are a one-line error here, within `timeout`. `tls://`
    needs Dask's TLS configuration: without one it is refused here, in one line; with one only the TCP
    connection is checked (its handshake comes after TLS's).
    """
    scheme, sep, rest = address.partition("://")
    scheme = scheme.lower() if sep else "tcp"
    if scheme not in ("tcp", "tls"):
        return  # another transport (inproc, ucx, ws...): Dask's own checks
    if scheme == "tls":
        # lazy: dask, an optional dependency (0.13 s), loads only with --executor dask
        import dask

        if not dask.config.get("distributed.comm.tls.client.cert", None) and not dask.config.get(
            "distributed.comm.tls.ca-file", None
        ):
            raise RuntimeError(
                f"cannot reach the Dask scheduler at {address}: tls:// needs Dask's TLS configuration "
                "(distributed.comm.tls in the Dask config); none is set"
            )
    try:
        parts = urlsplit(f"//{rest if sep else address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise RuntimeError(f"{address!r} is not a Dask scheduler address (tcp://HOST:PORT)")
    deadline = time.monotonic() + timeout
    hint = f"is {port} the scheduler's port (8786 by default), not its dashboard's (8787)?"
    try:
        with _connect(host, port, deadline) as sock:
            if scheme == "tls":
                return
            header = _receive(sock, struct.calcsize("Q"), deadline)
            (length,) = struct.unpack("Q", header)
            if length > MAX_HANDSHAKE_BYTES:
                raise RuntimeError(
                    f"{address} does not speak Dask's protocol (its first message announces {length} bytes); {hint}"
                )
            _receive(sock, length, deadline)
    except TimeoutError:
        raise RuntimeError(
            f"cannot reach the Dask scheduler at {address}: no Dask handshake within {timeout:g} s; {hint}"
        ) from None
    except ConnectionError as error:
        raise RuntimeError(
            f"cannot reach the Dask scheduler at {address}: {error.strerror or error}"
        ) from None
    except OSError as error:
        raise RuntimeError(
            f"cannot reach the Dask scheduler at {address}: {error.strerror or first_line(error)}"
        ) from None


def _connect(host: str, port: int, deadline: float) -> Any:
    """A TCP connection, retried while refused (a scheduler still starting) until `deadline`, as Dask does."""
    while True:
        try:
            return socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.1))
        except ConnectionRefusedError:
            if time.monotonic() + 0.2 >= deadline:
                raise
            time.sleep(0.2)


def _receive(sock: Any, count: int, deadline: float) -> bytes:
    """Exactly `count` bytes, or TimeoutError at `deadline`, or ConnectionError when the peer hangs up."""
    data = bytearray()
    while len(data) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(min(count - len(data), 1 << 16))
        if not chunk:
            raise ConnectionResetError(0, "the server closed the connection before its Dask handshake")
        data += chunk
    return bytes(data)


def _within(seconds: float, start: Callable[[], Any], failure: str) -> Any:
    """`start()` in a daemon thread, given `seconds`: what it returns, or one RuntimeError line (its error,
    or that it did not finish in time; the thread is then left behind, it holds nothing of ours)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = start()
        except BaseException as error:  # MemoryError too: a hostile answer, not our memory
            outcome["error"] = error

    thread = threading.Thread(target=target, name="apidrift-dask-connect", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise RuntimeError(f"{failure}: no answer within {seconds:g} s")
    error = outcome.get("error")
    if error is not None:
        raise RuntimeError(f"{failure}: {type(error).__name__}: {first_line(error, default='')[:300]}")
    return outcome["value"]


def run_jobs(
    jobs: Iterable[Job], pool: Pool, collect: Callable[[dict[str, Any]], None], max_attempts: int = 3
) -> None:
    """Submit every job (a window at a time), collect each row; resubmit a job whose worker died."""
    pending = deque(jobs)
    attempts: dict[str, int] = {}
    in_flight: dict[Future[dict[str, Any]], Job] = {}
    window = max(2 * pool.slots, 2)
    while pending or in_flight:
        while pending and len(in_flight) < window:
            job = pending.popleft()
            attempts[job.key] = attempts.get(job.key, 0) + 1
            try:
                in_flight[pool.executor.submit(run_job, job)] = job
            except (BrokenProcessPool, RuntimeError):
                pool.renew()
                in_flight[pool.executor.submit(run_job, job)] = job
        finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
        broken = False
        for future in finished:
            job = in_flight.pop(future)
            try:
                row = future.result()
            except Exception as error:
                broken = broken or isinstance(error, BrokenProcessPool)
                if attempts[job.key] < max_attempts:
                    pending.appendleft(job)
                    continue
                message = (
                    f"the worker running it died {attempts[job.key]} times ({type(error).__name__}: {error})"
                )
                row = failed_row(job, "error", first_line(message))
                row["origin"] = job.origin
            row["attempts"] = attempts[job.key]
            collect(row)
        if broken:
            # Every other job of a broken pool fails the same way: requeue them on a new pool.
            for future, job in list(in_flight.items()):
                future.cancel()
                attempts[job.key] -= 1  # they did not fail: their worker's neighbour did
                pending.appendleft(job)
            in_flight.clear()
            pool.renew()


__all__ = ["FAILED", "ImpactRequest", "make_executor", "run_impact", "run_jobs"]
