"""One dependent = one job: the ordinary audit, run in a child process with a time and a memory limit.

`run_job(job)` is what an executor's worker calls; it returns a plain dict (the dependent's row with
its findings), always: an audit that raises, runs out of time or out of memory is a row with status
`error`, `timeout` or `memory`. The child is a fork of the worker when the worker has a single thread
(the process pool's workers: imports and warm caches are shared), else a fresh interpreter
(`python -m apidrift.auditor.impact.child`, e.g. in a Dask worker, which runs tasks in threads).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from apidrift.auditor.bump import drop_in_aliases
from apidrift.auditor.cache import Cache
from apidrift.auditor.core.wording import first_line
from apidrift.auditor.downstream import walk
from apidrift.auditor.engine import AuditRequest, _build_index, audit
from apidrift.auditor.impact.inputs import pin_excluding
from apidrift.auditor.impact.results import row_from_audit
from apidrift.auditor.sources.index_client import IndexClient, select_release
from apidrift.auditor.sources.locate import locate
from apidrift.auditor.sources.specs import SourceError, SpecError
from apidrift.auditor.upstream import kept

MAX_RESULT_BYTES = 256 * 1024 * 1024  # what a child may hand back
MAX_FINDINGS = 20_000  # findings kept per dependent (the counts stay exact)
EXIT_MEMORY = 3
_MEMORY_SIGNALS = (signal.SIGKILL, signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS)


@dataclass(frozen=True)
class Job:
    key: str  # the dependent and the versions: what `--resume` matches
    dependent: str  # a spec (downstream role) or an absolute folder
    label: str
    latest: bool  # a bare name: its latest release on the index
    release: str  # the upstream spec audited against
    old: str  # the upstream spec the dependents were written for
    upstream: str  # the upstream's distribution name
    upstream_version: str | None
    pin: str | None = None  # known from discovery
    origin: str = "list"
    cache_dir: str | None = None
    index_url: str | None = None
    offline: bool = False
    timeout: float = 600.0  # seconds of wall time
    memory_mb: int | None = 4096  # address-space limit of the child
    trace_dir: str | None = None  # a start marker per attempt is written here (to see retries)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_job(job: Job) -> dict[str, Any]:
    """Run one job under its limits; the row it returns carries the wall time and where it ran."""
    started = time.perf_counter()
    _trace(job)
    if hasattr(os, "fork") and threading.active_count() == 1:
        row = _in_fork(job)
        _absorb(row.pop(_KEPT_FIELD, None))
    else:
        row = _in_subprocess(job)
    row.setdefault("key", job.key)
    row.setdefault("dependent", job.label)
    row["origin"] = job.origin
    row["wall_seconds"] = round(time.perf_counter() - started, 4)
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


def _trace(job: Job) -> None:
    if not job.trace_dir:
        return
    name = f"{job.key[:16]}-{os.getpid()}-{time.time_ns()}"
    Path(job.trace_dir, name).write_text(json.dumps({"key": job.key, "pid": os.getpid()}), encoding="utf-8")


def failed_row(job: Job, status: str, message: str) -> dict[str, Any]:
    return {
        "key": job.key, "dependent": job.label, "spec": job.dependent, "version": None, "status": status,
        "error": message, "pin": job.pin, "errors": 0, "warnings": 0, "infos": 0, "pre_existing": 0,
        "by_rule": {}, "found": 0, "resolved": 0, "checked": 0, "not_checkable": {}, "timings": {},
        "notes": [], "findings": [],
    }  # fmt: skip


def die_with_parent(parent: int | None = None) -> bool:
    """Have the kernel kill this process when its parent dies (Linux: prctl PR_SET_PDEATHSIG with
    SIGKILL), so a `kill -9` of the command leaves no pool worker, job child or, through them, resource
    tracker running. Exits at once when `parent` is already gone. False where not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG = 1
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:  # it died before the call: nobody would signal
        os._exit(1)
    return True


# ---- the fork path --------------------------------------------------------------------------------

# The upstream models are kept in the worker (`upstream.kept`): each fork inherits them, and hands back
# under this field (removed before the row goes anywhere) the modules it loaded, which the worker then
# loads from the API cache, for the next fork.
_KEPT_FIELD = "_kept_models"


def _kept_models() -> list[dict[str, Any]]:
    return kept.loaded() if kept.enabled() else []


def _absorb(models: Any) -> None:
    if not models or not isinstance(models, list):
        return

    try:
        kept.absorb(models, _build_index)
    except Exception:  # never the worker's end: the next fork rebuilds what it needs
        kept.enable(False)
        kept.enable(True)


def _in_fork(job: Job) -> dict[str, Any]:
    memory_payload = json.dumps(failed_row(job, "memory", _memory_message(job))).encode()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            die_with_parent(parent)
            os.close(read_end)
            try:
                row = limited_result(job)
                row[_KEPT_FIELD] = _kept_models()
                payload = json.dumps(row).encode()
            except MemoryError:
                payload, code = memory_payload, EXIT_MEMORY
            _write_all(write_end, payload)
        except BaseException:
            code = code or 4
        finally:
            os._exit(code)
    os.close(write_end)
    data, timed_out = _read_until(read_end, time.monotonic() + job.timeout)
    if timed_out:
        _kill(pid)
    _, status = os.waitpid(pid, 0)
    return _outcome(job, data, timed_out, status)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.close(fd)


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"", True
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks), False
            size += len(chunk)
            if size > MAX_RESULT_BYTES:
                return b"", False
            chunks.append(chunk)
    finally:
        os.close(fd)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _outcome(job: Job, data: bytes, timed_out: bool, status: int) -> dict[str, Any]:
    if timed_out:
        return failed_row(job, "timeout", f"the audit took longer than {job.timeout:g} s; stopped")
    if data:
        try:
            row = json.loads(data)
            if isinstance(row, dict):
                return row
        except ValueError:
            pass
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if job.memory_mb and number in _MEMORY_SIGNALS:
            return failed_row(job, "memory", f"{_memory_message(job)} (the child died of signal {number})")
        return failed_row(job, "error", f"the audit's process died of signal {number}")
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    if code == EXIT_MEMORY:
        return failed_row(job, "memory", _memory_message(job))
    return failed_row(job, "error", f"the audit's process ended with status {code} and no result")


def _memory_message(job: Job) -> str:
    return f"the audit needed more than the memory limit of {job.memory_mb} MB; stopped"


# ---- the subprocess path --------------------------------------------------------------------------


def _in_subprocess(job: Job) -> dict[str, Any]:
    command = [sys.executable, "-m", "apidrift.auditor.impact.child"]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        out, _ = process.communicate(json.dumps(job.as_dict()).encode(), timeout=job.timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return failed_row(job, "timeout", f"the audit took longer than {job.timeout:g} s; stopped")
    status = process.returncode
    wait_status = (-status) if status < 0 else (status << 8)  # as os.waitpid reports it
    return _outcome(job, out[:MAX_RESULT_BYTES], False, wait_status)


# ---- inside the child -----------------------------------------------------------------------------


class LimitError(Exception):
    """The limits could not be set in the child: said in the row, never a bare exit status."""


def hard_memory_mb() -> int | None:
    """This process's hard address-space limit (`ulimit -v`, a container's) in MB; None when unlimited."""
    # lazy: Unix only (no `resource` module on Windows)
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if hard == resource.RLIM_INFINITY else hard // (1024 * 1024)


def set_limits(job: Job) -> str | None:
    """The memory limit (address space) and a CPU-time backstop, should the supervisor be gone.

    A `--memory-limit` above the hard limit this process was given cannot be set (setrlimit refuses to
    raise a hard limit): the hard limit is used instead, and the note returned says so.
    """
    # lazy: Unix only (no `resource` module on Windows)
    import resource

    note = None
    try:
        if job.memory_mb:
            limit = job.memory_mb * 1024 * 1024
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY and limit > hard:
                note = (
                    f"--memory-limit {job.memory_mb} MB is above the hard address-space limit of the worker "
                    f"({hard // (1024 * 1024)} MB, `ulimit -v`): the audit ran under {hard // (1024 * 1024)} MB"
                )
                limit = hard
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        cpu = math.ceil(job.timeout * 1.5) + 10
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard == resource.RLIM_INFINITY or cpu < hard:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    except (OSError, ValueError) as error:
        raise LimitError(f"cannot set the audit's limits (memory {job.memory_mb} MB): {error}") from None
    return note


def limited_result(job: Job) -> dict[str, Any]:
    """Set the limits, then audit; a limit that cannot be set is an `error` row saying why."""
    try:
        note = set_limits(job)
    except LimitError as error:
        return failed_row(job, "error", str(error))
    row = child_result(job)
    if note:
        row.setdefault("notes", []).append(note)
    return row


def child_result(job: Job) -> dict[str, Any]:
    """The audit of one dependent as a row; input errors become an `error` row."""
    try:
        return _audit_row(job)
    except MemoryError:
        raise
    except (SpecError, SourceError) as error:
        return failed_row(job, "error", first_line(error, strip=False))
    except Exception as error:
        first = first_line(error, default="", strip=False)
        return failed_row(job, "error", f"internal error: {type(error).__name__}: {first}")


def _audit(request: Any) -> Any:
    if hasattr(walk, "POOL_MIN_FILES"):
        # The jobs already keep every core busy: a pool of parsers inside each one only adds forks.
        walk.POOL_MIN_FILES = sys.maxsize
    return audit(request)


def _audit_row(job: Job) -> dict[str, Any]:
    cache = Cache(job.cache_dir)
    started = time.perf_counter()
    spec = job.dependent
    if job.latest:
        spec = _latest(spec, cache, job)
    tree = locate(spec, role="downstream", cache=cache, index_url=job.index_url, offline=job.offline)
    fetched = time.perf_counter() - started  # the download and unpacking, done here, not in the audit
    pin = job.pin or pin_excluding(tree.requires, job.upstream, job.upstream_version)
    cache_dir = Path(job.cache_dir) if job.cache_dir else None
    request = AuditRequest(
        spec, job.release, old=job.old, cache_dir=cache_dir, offline=job.offline, index_url=job.index_url
    )
    result = _audit(request)
    row = row_from_audit(job.key, job.label, spec, result, pin, max_findings=MAX_FINDINGS)
    row["aliases"] = _drop_ins(tree, result)
    timings = row.setdefault("timings", {})
    timings["fetch"] = round(timings.get("fetch", 0.0) + fetched, 4)
    return row


def _drop_ins(tree: Any, result: Any) -> list[str]:
    """ "uses asyncclick as click: 48 uses of `click.` in 3 files not audited": what the audit cannot see."""
    upstream = frozenset(result.upstream.import_names)
    try:
        found = drop_in_aliases(tree.root, upstream, frozenset(tree.import_names) - upstream)
    except OSError:
        return []
    return [item.sentence() for item in found]


def _latest(name: str, cache: Any, job: Job) -> str:
    with IndexClient(cache, job.index_url, offline=job.offline) as client:
        release = select_release(client.project(name), None)
    return f"{name}=={release.version}"
