"""The downstream side: walk a source tree, read each Python file, and scan those that mention the upstream.

Input: a folder (or one file) and the upstream's import names. Jupyter notebooks (`.ipynb`) are
read too: their code cells are one text (`notebook`), and their scans carry the map back to cells. Output: the `FileScan`s and, for every
file, a `FileOutcome` (scanned, skipped with a reason, failed with the error): one bad file never
stops the audit. Scans are cached per file content, so a warm run never loads the parser.

Files are hostile input: unreadable files and folders, FIFOs and devices, symlinks, undecodable bytes,
syntax errors, null bytes, files too large or too deeply nested to parse in bounded time, names that
are not UTF-8 and scanner failures all become an outcome with its reason, never an exception.
Nothing is imported or executed.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import os
import re
import stat
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Union

from apidrift.auditor.core.results import FileOutcome, FileStatus
from apidrift.auditor.core.sites import FileScan, SiteKind, site_from_data, site_to_data
from apidrift.auditor.core.wording import first_line
from apidrift.auditor.downstream.linking import (
    Aside,
    aside_text,
    constructing_names,
    exports_to_data,
    link,
    module_names,
    module_set,
    namespace_aliases,
    reaching_modules,
    set_aside,
    unlinked,
    version_gates,
)
from apidrift.auditor.downstream.notebook import MAX_NOTEBOOK_BYTES, Notebook, NotebookError, read_notebook
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.pysource import (
    MAX_NESTING,
    SourceDecodeError,
    decode_source,
    nesting_problem,
    parse_problem,
)

log = logging.getLogger(__name__)

# Folders of a local tree that hold no code of the project itself.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "__pycache__",
        ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside it
        "build",
        "dist",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
    }
)
# Larger files are generated code: skipped, and said so. A file of this size scans in a few seconds
# and under 300 MiB (tests/hostile/test_hostile.py measures it).
MAX_FILE_BYTES = 2 * 1024 * 1024
# Files that CPython's parser refuses go to LibCST up to this size only (it is slow on large ones).
LIBCST_MAX_CHARS = 256 * 1024
SCAN_VERSION = 52  # part of the scan cache key: bump when the scanner's (or the linking's) output changes


def scan_downstream(
    root: Path,
    upstream_names: frozenset[str],
    cache_dir: Path,
    exclude: tuple[str, ...] = (),
    aliases: tuple[tuple[str, str], ...] = (),
) -> tuple[list[FileScan], list[FileOutcome]]:
    """Parse only the files that mention an upstream import name (and, round by round, those that
    mention a module of the downstream whose values reach the upstream: see `linking`); every file gets
    an outcome. `aliases`: module names other distributions register upstream modules under
    (`requests.packages.urllib3`)."""
    outcomes: list[FileOutcome] = []
    # A name, or a function named like one of its hooks (`def pytest_configure(`: a plugin need not
    # import its host to implement its hooks).
    names = "|".join(re.escape(n) for n in sorted(upstream_names))
    mention = re.compile(rf"\b(?:{names})\b|\bdef[ \t]+(?:{names})_") if upstream_names else None
    scans: list[FileScan | None] = []
    notebooks: dict[str, Notebook] = {}  # of the files still to parse
    pending: list[
        tuple[int, int, str, bytes, str, _Local]
    ] = []  # to parse: outcome and scan positions, path, bytes, text, what it knows of the downstream's modules
    files, unreadable = _python_files(root)
    outcomes.extend(unreadable)
    modules = module_names([relative for _, relative in files])
    names_also = namespace_aliases([relative for _, relative in files], modules)
    local_names = (
        frozenset(module.split(".")[0] for module in module_set(modules, names_also)) - upstream_names
    )
    local_mention = _Words(local_names) if local_names else None
    unmentioned: list[_Unmentioned] = []  # files not scanned
    for path, relative in files:
        if any(
            fnmatch.fnmatchcase(relative, pattern) or relative.startswith(pattern.rstrip("/") + "/")
            for pattern in exclude
        ):
            outcomes.append(FileOutcome(relative, FileStatus.SKIPPED, "excluded by configuration"))
            continue
        notebook: Notebook | None = None
        if relative.endswith(NOTEBOOK_SUFFIX):
            read = _read_notebook(path, relative, mention)
            if isinstance(read, FileOutcome):
                outcomes.append(read)
                continue
            data, notebook = read
            text = notebook.text
        else:
            read_text = _read_text(path, relative)
            if isinstance(read_text, FileOutcome):
                outcomes.append(read_text)
                continue
            data, text = read_text
        # A notebook is scanned when any of its code cells' lines (a magic, a cell that does not parse) names it.
        if mention is None or not mention.search("\n".join(notebook.lines) if notebook else text):
            if notebook is None:
                unmentioned.append((len(outcomes), path, relative, hashlib.sha256(data).hexdigest()))
            outcomes.append(FileOutcome(relative, FileStatus.SKIPPED, "does not mention the upstream"))
            continue
        local = _local_of(relative, text, modules, local_mention)
        cached = _cached_scan(relative, data, text, upstream_names, cache_dir, aliases, local, path, notebook)
        if cached is not None and notebook is not None:
            cached = _in_notebook(cached, notebook)
        if cached is not None:
            outcomes.append(FileOutcome(relative, FileStatus.SCANNED))
            scans.append(cached)
            continue
        pending.append((len(outcomes), len(scans), relative, data, text, local))
        if notebook is not None:
            notebooks[relative] = notebook
        outcomes.append(FileOutcome(relative, FileStatus.SCANNED))  # both placeholders are filled once parsed
        scans.append(None)
    _parse_pending(pending, scans, outcomes, notebooks, upstream_names, cache_dir, aliases)
    if local_names and unmentioned:
        _scan_reaching(
            unmentioned, scans, outcomes, modules, local_mention, upstream_names, cache_dir, aliases
        )
    if local_names:
        paths = {relative: path for path, relative in files}
        _constructing(scans, outcomes, modules, local_mention, upstream_names, cache_dir, aliases, paths)
    found = [s for s in scans if s is not None]
    if local_names:
        gates = version_gates(found, modules, upstream_names)
        found = link(found, modules, upstream_names, local_names, cache_dir, str(SCAN_VERSION))
        if gates:
            found = _gated(found, gates, modules, files)
    else:
        found = [unlinked(scan) for scan in found]
    uses = {scan.path: _uses(scan) for scan in found}
    for index, outcome in enumerate(outcomes):
        if outcome.status is FileStatus.SCANNED and outcome.path in uses:
            outcomes[index] = replace(outcome, use_sites=uses[outcome.path])
    return found, outcomes


def _gated(
    scans: list[FileScan],
    gates: dict[str, tuple[str, int]],
    modules: dict[str, tuple[str, str | None]],
    files: list[tuple[Path, str]],
) -> list[FileScan]:
    """The scans of the modules imported only under a test of the upstream's major version, their sites
    marked with it (`UseSite.runs_if`). Only where every mention of the module's name in the
    downstream's other Python files and notebooks is one of those imports (no other import, no file not scanned,
    no `import_module("...")`, not even a comment): else it may be imported otherwise."""
    paths = {module: relative for relative, (module, _) in modules.items()}
    names = {module: module.rsplit(".", 1)[-1] for module in gates}
    mentions = dict.fromkeys(gates, 0)
    words = re.compile(_words(set(names.values())))
    for path, relative in files:  # notebooks too: a cell may import it
        read = _read_text(path, relative)
        if isinstance(read, FileOutcome):
            return scans  # a file not read may import it
        found = set(words.findall(read[1]))
        for module, name in names.items():
            if name in found and relative != paths.get(module):
                mentions[module] += len(re.findall(rf"\b{re.escape(name)}\b", read[1]))
    runs_if = {
        paths[module]: flags
        for module, (flags, imports) in gates.items()
        if mentions[module] == imports and module in paths
    }
    return [
        replace(scan, sites=tuple(replace(site, runs_if=runs_if[scan.path]) for site in scan.sites))
        if scan.path in runs_if
        else scan
        for scan in scans
    ]


class _Words:
    """Which of a few names a text mentions as words (as `\\b(name)\\b` would find them)."""

    # Up to this many names, each is looked for with `str.find` (a pass over the text each, at memory
    # speed); more go through one regular expression (a slower pass that stops at every match).
    FIND_AT_MOST = 8

    def __init__(self, names: frozenset[str]) -> None:
        self.names = tuple(sorted(names))
        self.pattern = re.compile(r"\b({})\b".format("|".join(re.escape(n) for n in self.names)))

    def found(self, text: str) -> set[str]:
        if len(self.names) > self.FIND_AT_MOST:
            return set(self.pattern.findall(text))
        return {name for name in self.names if _has_word(text, name)}


def _has_word(text: str, name: str) -> bool:
    """Whether `name` occurs in `text` between word boundaries (the `re` module's `\\b` for str)."""
    start = text.find(name)
    end = len(text)
    while start >= 0:
        after = start + len(name)
        if (start == 0 or not _word_char(text[start - 1])) and (after == end or not _word_char(text[after])):
            return True
        start = text.find(name, start + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _words(words: set[str], *more: str) -> str:
    """An expression finding any of `words` as a word, or any of `more`."""
    return "|".join((r"\b(?:{})\b".format("|".join(re.escape(w) for w in sorted(words))), *more))


def _read_text(path: Path, relative: str) -> tuple[bytes, str] | FileOutcome:
    try:
        data = _read_bounded(path)
    except OSError as error:
        return FileOutcome(relative, FileStatus.FAILED, f"unreadable: {error.strerror or error}")
    if data is None:
        return FileOutcome(relative, FileStatus.SKIPPED, f"larger than {MAX_FILE_BYTES // 1024 // 1024} MiB")
    try:
        return data, decode_source(data)
    except SourceDecodeError as error:
        return FileOutcome(relative, FileStatus.FAILED, f"cannot decode: {error}")


def _local_of(
    relative: str,
    text: str,
    modules: dict[str, tuple[str, str | None]],
    local_mention: _Words | None,
) -> _Local:
    """What a file's scan needs of the downstream's own modules: the top-level names of them it
    mentions (its own package's among them: its relative imports), its module and its package. Only
    these are part of its scan's cache key: adding a module elsewhere leaves its cached scan valid."""
    if local_mention is None:
        return _NO_LOCAL
    module, package = modules.get(relative, (None, None))
    names = local_mention.found(text)
    if package is not None:
        names.add(package.split(".")[0])
    if module is not None:  # a module outside any package (`tools.py`) still hands values to the others
        names.add(module.split(".")[0])
    return frozenset(names), module, package, frozenset()


def _parse_pending(
    pending: list[tuple[int, int, str, bytes, str, _Local]],
    scans: list[FileScan | None],
    outcomes: list[FileOutcome],
    notebooks: dict[str, Notebook],
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...],
) -> None:
    jobs = [
        (relative, data, text, upstream_names, cache_dir, aliases, local)
        for _, _, relative, data, text, local in pending
    ]
    for (position, slot, relative, _, text, _), scan in zip(pending, _parse_all(jobs)):
        if isinstance(scan, str):
            outcomes[position] = FileOutcome(relative, FileStatus.FAILED, scan)
        else:
            outcomes[position] = FileOutcome(relative, FileStatus.SCANNED)
            # A pool's worker sends the sites only (see `_pool_job`): the lines are this process's text.
            scan = scan if scan.lines else replace(scan, lines=tuple(text.splitlines()))
            scans[slot] = _in_notebook(scan, notebooks[relative]) if relative in notebooks else scan


# Rounds of scanning the files that mention a module whose values reach the upstream (a re-export
# through a package's `__init__` needs one more round for the files that import the package)
MAX_ROUNDS = 3


# A file that names no upstream module: its outcome's position, path, relative path, bytes' digest
_Unmentioned = tuple[int, Path, str, str]


def _scan_reaching(
    unmentioned: list[_Unmentioned],
    scans: list[FileScan | None],
    outcomes: list[FileOutcome],
    modules: dict[str, tuple[str, str | None]],
    local_mention: _Words | None,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...],
) -> None:
    """Scan the files that name no upstream module but one of the downstream's own modules whose
    values reach the upstream (`from app.db import client`), round by round."""
    left = list(unmentioned)
    done: set[str] = set()
    for _ in range(MAX_ROUNDS):
        found = [scan for scan in scans if scan is not None]
        named = reaching_modules(
            found, modules, upstream_names, cache_dir, str(SCAN_VERSION), frozenset(done)
        )
        reaching = {m: names for m, names in named.items() if names and m not in done}
        done.update(reaching)
        if not reaching:
            return
        # A file that uses one of them names its module (`from app import helpers`, `from .helpers import
        # get`, `import app.helpers as h`, or a package's name `from . import get`) and the name itself
        modules_named = _words({m.rsplit(".", 1)[-1] for m in reaching}, r"\bfrom\s+\.+\s+import\b")
        names_named = _words({name for names in reaching.values() for name in names})
        chosen, texts = _naming(left, modules_named, names_named, cache_dir)
        pending: list[tuple[int, int, str, bytes, str, _Local]] = []
        keep = []
        for position, path, relative, digest in left:
            if relative not in chosen:
                keep.append((position, path, relative, digest))
                continue
            read = texts[relative] if relative in texts else _read_text(path, relative)
            if isinstance(read, FileOutcome):
                continue
            data, text = read
            local = _local_of(relative, text, modules, local_mention)
            cached = _cached_scan(relative, data, text, upstream_names, cache_dir, aliases, local, path)
            outcomes[position] = FileOutcome(relative, FileStatus.SCANNED)
            if cached is not None:
                scans.append(cached)
                continue
            pending.append((position, len(scans), relative, data, text, local))
            scans.append(None)
        left = keep
        _parse_pending(pending, scans, outcomes, {}, upstream_names, cache_dir, aliases)


def _naming(
    left: list[_Unmentioned], modules_named: str, names_named: str, cache_dir: Path
) -> tuple[set[str], dict[str, tuple[bytes, str] | FileOutcome]]:
    """The files of `left` that name one of a round's modules and one of its names (and those that
    cannot be read: they leave the rounds), with the texts read to find them. The answer is kept in
    the cache under a key made of the two expressions and every file's path and bytes' digest: an
    unchanged tree compiles and searches nothing."""
    key = hashlib.sha256(f"naming\0{SCAN_VERSION}\0{modules_named}\0{names_named}".encode())
    for _, _, relative, digest in left:
        key.update(f"\0{relative}\0{digest}".encode("utf-8", "replace"))
    entry = cache_dir / "link" / f"{key.hexdigest()}.json"
    try:
        stored = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(stored, list) and all(isinstance(name, str) for name in stored):
            return set(stored), {}
    except FileNotFoundError:
        pass
    except Exception as error:  # torn or corrupted: searched again
        log.debug("ignoring a bad naming cache entry %s: %s", entry.name, error)
    modules_search = re.compile(modules_named).search  # compiled only here: 0.1 s on pandas' rounds
    names_search = re.compile(names_named).search
    named: set[str] = set()
    texts: dict[str, tuple[bytes, str] | FileOutcome] = {}
    unread = False
    for _, path, relative, _ in left:
        read = _read_text(path, relative)
        if isinstance(read, FileOutcome):  # changed since it was first read: left by the caller, not kept
            unread = True
            named.add(relative)
            texts[relative] = read
        elif modules_search(read[1]) and names_search(read[1]):
            named.add(relative)
            texts[relative] = read
    if not unread:
        try:
            atomic_write_text(entry, json.dumps(sorted(named)))
        except OSError:
            pass  # a read-only cache must not stop the audit
    return named, texts


def _constructing(
    scans: list[FileScan | None],
    outcomes: list[FileOutcome],
    modules: dict[str, tuple[str, str | None]],
    local_mention: _Words | None,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...],
    paths: dict[str, Path],
) -> None:
    """Scan again, keeping their calls of them, the files that mention a name of another module bound
    to a downstream class whose call runs an upstream constructor (`class Client(up.Base): pass`, then
    `Client(...)` elsewhere; `linking.Linker.constructor`). Only those names: the calls of the
    downstream's other classes, most of a large downstream's calls, are never kept. Those names are
    cached with the summaries (`linking.constructing_names`), and each rescan's entry is a scan cache
    entry of its own (the names are part of its key): a warm run parses nothing again."""
    found = [scan for scan in scans if scan is not None]
    classes = constructing_names(found, modules, upstream_names, cache_dir, str(SCAN_VERSION))
    if not classes:
        return
    words = re.compile(_words(set(classes)))
    slots = {scan.path: index for index, scan in enumerate(scans) if scan is not None}
    positions = {outcome.path: index for index, outcome in enumerate(outcomes)}
    pending: list[tuple[int, int, str, bytes, str, _Local]] = []
    for relative, slot in slots.items():
        scan = scans[slot]
        assert scan is not None
        if scan.notebook is not None or not words.search("\n".join(scan.lines)):
            continue
        read = _read_text(paths[relative], relative) if relative in paths else None
        if not isinstance(read, tuple):
            continue
        data, text = read
        names, module, package, _ = _local_of(relative, text, modules, local_mention)
        local = (names, module, package, frozenset(words.findall(text)))
        cached = _cached_scan(
            relative, data, text, upstream_names, cache_dir, aliases, local, paths[relative]
        )
        if cached is not None:
            scans[slot] = cached
            continue
        pending.append((positions[relative], slot, relative, data, text, local))
    _parse_pending(pending, scans, outcomes, {}, upstream_names, cache_dir, aliases)


def _uses(scan: FileScan) -> int:
    """The use sites of a file, its stores (`x.name = value`, read by one rule) not counted."""
    return sum(1 for site in scan.sites if site.kind is not SiteKind.STORE)


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t]+([A-Za-z_][\w.]*)", re.M)
MAX_PREFIXES = 20


def vendored_prefixes(root: Path, upstream_names: frozenset[str]) -> list[str]:
    """Module paths the downstream imports an upstream module under, inside another package
    (`from requests.packages.urllib3.util import Retry`: "requests.packages"), at most MAX_PREFIXES."""
    if not upstream_names:
        return []
    mention = re.compile(r"\.(?:{})\b".format("|".join(re.escape(n) for n in sorted(upstream_names))))
    found: dict[str, None] = {}
    files, _ = _python_files(root)
    for path, _relative in files:
        try:
            data = _read_bounded(path)
            text = decode_source(data) if data is not None else ""
        except (OSError, SourceDecodeError):
            continue
        if not mention.search(text):
            continue
        for match in _IMPORT_LINE.finditer(text):
            parts = match.group(1).split(".")
            if parts[0] in upstream_names:
                continue
            for index in range(1, len(parts)):
                if parts[index] in upstream_names:
                    found[".".join(parts[:index])] = None
                    break
        if len(found) >= MAX_PREFIXES:
            break
    return list(found)[:MAX_PREFIXES]


# Parsing is the cost of a cold scan: with enough to parse, both cores. A fork pool starts in about
# 30 ms and sends every FileScan back pickled, while `ast` scans about 1 MiB a second: measured with
# benchmarks/scan_vs_parse.py, 64 pandas files (0.2 s) or 512 small ones (0.7 MiB) are faster in this
# process, 256 pandas files (3 s) 1.4x faster in the pool. So: at least 8 files and 1 MiB of text.
POOL_MIN_FILES = 8
POOL_MIN_CHARS = 1024 * 1024


# The downstream's own top-level module names the file mentions, its module and its package (see
# linking), and the names of the downstream's classes (of other modules) whose calls run an upstream
# constructor that the file mentions (`_constructing`): its calls of them are kept as sites
_Local = tuple[frozenset[str], Union[str, None], Union[str, None], frozenset[str]]
_NO_LOCAL: _Local = (frozenset(), None, None, frozenset())
_Job = tuple[str, bytes, str, frozenset[str], Path, tuple[tuple[str, str], ...], _Local]


def _parse_all(jobs: list[_Job]) -> list[FileScan | str]:
    workers = min(os.cpu_count() or 1, len(jobs))
    small = len(jobs) < POOL_MIN_FILES or sum(len(job[2]) for job in jobs) < POOL_MIN_CHARS
    # Forking while other threads run (`apidrift upgrade` walks dependencies in threads) may copy a lock
    # another thread holds: then this thread parses, as the other walks use the other core.
    threaded = threading.active_count() > 1
    if workers < 2 or small or threaded or not hasattr(os, "fork"):
        return [_parse_job(job) for job in jobs]
    # lazy: multiprocessing only for a pool of parsers; a warm run never imports it
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    if "fork" not in multiprocessing.get_all_start_methods():
        return [_parse_job(job) for job in jobs]
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return list(pool.map(_pool_job, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
    except (OSError, BrokenProcessPool) as error:  # no processes to be had
        log.debug("parsing in this process: %s", error)
        return [_parse_job(job) for job in jobs]


def _parse_job(job: _Job) -> FileScan | str:
    return _fresh_scan(*job)


NOTEBOOK_SUFFIX = ".ipynb"


def _read_notebook(
    path: Path, relative: str, mention: re.Pattern[str] | None
) -> tuple[bytes, Notebook] | FileOutcome:
    """A notebook's bytes and code cells, or its outcome: skipped (too large, not Python, or its JSON
    names no upstream import name anywhere: then it is not decoded) or failed."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        return FileOutcome(relative, FileStatus.FAILED, f"unreadable: {error.strerror or error}")
    if len(data) > MAX_NOTEBOOK_BYTES:
        return FileOutcome(
            relative, FileStatus.SKIPPED, f"notebook larger than {MAX_NOTEBOOK_BYTES // 1024 // 1024} MiB"
        )
    # A name in the JSON is written as is unless escaped (`\u0070kg`): without escapes, no match is no mention.
    if b"\\u" not in data and (mention is None or not mention.search(data.decode("utf-8", "replace"))):
        return FileOutcome(relative, FileStatus.SKIPPED, "does not mention the upstream")
    try:
        notebook = read_notebook(data)
    except NotebookError as error:
        return FileOutcome(relative, FileStatus.FAILED, str(error))
    if notebook.language is not None and notebook.language.lower() not in ("python", "python3", "ipython"):
        return FileOutcome(
            relative, FileStatus.SKIPPED, f"not a Python notebook (kernel language: {notebook.language[:40]})"
        )
    return data, notebook


def _in_notebook(scan: FileScan, notebook: Notebook) -> FileScan:
    """A notebook's scan: its cells' lines as written (the parser read `pass` for what is not
    Python), and the map from those lines to cells and to the JSON."""
    return FileScan(scan.path, scan.sites, notebook.lines, notebook.map, scan.exports, scan.aside)


def _pool_job(job: _Job) -> FileScan | str:
    """`_parse_job` in a pool's worker: the scan goes back pickled without the file's lines, which the
    parent already holds (on pandas, 18 MiB of text that would cross the pipe again)."""
    scan = _fresh_scan(*job)
    return scan if isinstance(scan, str) or not scan.lines else replace(scan, lines=())


def _read_bounded(path: Path) -> bytes | None:
    """The file's bytes, or None when it is larger than MAX_FILE_BYTES (then never read whole)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    return None if len(data) > MAX_FILE_BYTES else data


def _entry(
    relative: str,
    data: bytes,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...] = (),
    local: _Local = _NO_LOCAL,
) -> Path:
    names, module, package, classes = local
    head = (
        f"{SCAN_VERSION}\0{','.join(sorted(upstream_names))}\0".encode()
        + "".join(f"{alias}={target};" for alias, target in aliases).encode()
        + relative.encode("utf-8", "replace")
        + f"\0{','.join(sorted(names))}\0{module or ''}\0{package or ''}".encode("utf-8", "replace")
        + f"\0{','.join(sorted(classes))}".encode("utf-8", "replace")
        + b"\0"
    )
    key = hashlib.sha256(head + data).hexdigest()
    return cache_dir / key[:2] / f"{key}.jsonl"


def _cached_scan(
    relative: str,
    data: bytes,
    text: str,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...] = (),
    local: _Local = _NO_LOCAL,
    path: Path | None = None,
    notebook: Notebook | None = None,
) -> FileScan | None:
    """The file's use sites (and, aside, what the linking reads: see `linking.Aside`) from the scan
    cache, when this content was scanned before. An entry is three lines of JSON: the sites rooted at
    upstream names, the module's summary, the sites rooted at the downstream's own modules; only the
    first is decoded here."""
    entry = _entry(relative, data, upstream_names, cache_dir, aliases, local)
    try:
        head, exports, aside = entry.read_text(encoding="utf-8").split("\n", 2)
        sites = tuple(site_from_data(d) for d in json.loads(head)["s"])
    except FileNotFoundError:
        return None
    except Exception as error:  # a torn, stale or corrupted entry (or not a file at all): scan again
        log.debug("ignoring bad scan cache entry %s: %s", entry, error)
        return None

    # A notebook's cells are kept to scan it again; a file is read again (its text is not held)
    source = (data, text) if notebook is not None else path
    reload = partial(_rescanned_aside, relative, source, upstream_names, cache_dir, aliases, local)
    held = Aside(entry.stem, exports, sites_text=aside, reload=reload)
    return FileScan(relative, sites, tuple(text.splitlines()), aside=held)


def _rescanned_aside(
    relative: str,
    source: tuple[bytes, str] | Path | None,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...],
    local: _Local,
) -> Aside | None:
    """The aside of a fresh scan of a file whose cached aside does not decode."""
    if source is None:
        return None
    read = _read_text(source, relative) if isinstance(source, Path) else source
    if isinstance(read, FileOutcome):
        return None
    fresh = _fresh_scan(relative, *read, upstream_names, cache_dir, aliases, local)
    return fresh.aside if isinstance(fresh, FileScan) else None


def _fresh_scan(
    relative: str,
    data: bytes,
    text: str,
    upstream_names: frozenset[str],
    cache_dir: Path,
    aliases: tuple[tuple[str, str], ...] = (),
    local: _Local = _NO_LOCAL,
) -> FileScan | str:
    """Parse one file and store its use sites (and its exports, see `linking`) in the cache; or say why
    it could not be parsed."""
    entry = _entry(relative, data, upstream_names, cache_dir, aliases, local)
    scan = _scan_text(relative, text, upstream_names, aliases, local)
    if isinstance(scan, str):
        return scan
    exports = json.dumps(exports_to_data(scan.exports)) if scan.exports else "null"
    scan = set_aside(scan, upstream_names, entry.stem, exports)
    try:
        # One site at a time: a list of every site's dict costs about 1.5 KiB a site at once.
        atomic_write_text(
            entry,
            '{"s":['
            + ",".join(json.dumps(site_to_data(s)) for s in scan.sites)
            + "]}\n"
            + exports
            + "\n"
            + aside_text(scan),
        )
    except OSError:
        pass  # a read-only cache must not stop the audit
    return scan


def _scan_text(
    relative: str,
    text: str,
    upstream_names: frozenset[str],
    aliases: tuple[tuple[str, str], ...] = (),
    local: _Local = _NO_LOCAL,
) -> FileScan | str:
    """The use sites of one file, read with CPython's parser (`astscan`); or why it could not be read.

    A file this Python cannot parse (newer syntax, or invalid) goes to LibCST's parser, which reads
    the grammar of newer Pythons too and says where the syntax error is; its tree is converted to
    CPython's (`cst_to_ast`) and scanned by `astscan` all the same; unless it is larger than
    LIBCST_MAX_CHARS (LibCST takes about 20 s and 1.5 GiB a MiB): then CPython's message is the outcome.
    """
    # lazy: the scanners load only on a scan-cache miss; a warm run never loads a parser
    from apidrift.auditor.downstream import astscan

    try:
        return astscan.scan_source(relative, text, upstream_names, aliases, local=local)
    except astscan.TooDeep as error:
        return f"nesting too deep to parse ({error.depth} levels, at most {MAX_NESTING})"
    except (RecursionError, MemoryError):
        return "nesting too deep to parse"
    except SyntaxError as error:
        problem = parse_problem(error)
        if problem is not None:
            return problem
        if len(text) > LIBCST_MAX_CHARS:
            return f"syntax error: {error.msg} (line {error.lineno})"
        return _scan_with_libcst(relative, text, upstream_names, aliases, local)
    except ValueError:  # null bytes (Python 3.11)
        if len(text) > LIBCST_MAX_CHARS:
            return "syntax error: source code contains null bytes"
        return _scan_with_libcst(relative, text, upstream_names, aliases, local)
    except Exception as error:  # a scanner bug must cost one file, not the audit
        return _scanner_error(error)


def _scan_with_libcst(
    relative: str,
    text: str,
    upstream_names: frozenset[str],
    aliases: tuple[tuple[str, str], ...] = (),
    local: _Local = _NO_LOCAL,
) -> FileScan | str:
    """A file CPython's parser refused, parsed by LibCST, turned into the tree CPython would build
    (`cst_to_ast`) and scanned by `astscan` like every other file."""
    problem = nesting_problem(text)  # LibCST's native parser would overflow the C stack on these
    if problem is not None:
        return problem
    # lazy: LibCST (0.3 s) loads only for a file this Python cannot parse
    import libcst

    from apidrift.auditor.downstream import astscan
    from apidrift.auditor.downstream.cst_to_ast import Unfaithful, parse

    try:
        return astscan.scan_source(relative, text, upstream_names, aliases, tree=parse(text), local=local)
    except (
        libcst.ParserSyntaxError,
        libcst.CSTValidationError,
    ) as error:  # the latter: e.g. an invalid identifier
        first = first_line(error, default="syntax error")
        return f"syntax error: {first}"
    except Unfaithful as error:
        return f"not parsed: {error}"
    except SyntaxError as error:  # what LibCST reads and CPython refuses (`b"a" "b"`, a bad escape)
        return f"syntax error: {error.msg}"
    except astscan.TooDeep as error:
        return f"nesting too deep to parse ({error.depth} levels, at most {MAX_NESTING})"
    except (RecursionError, MemoryError):
        return "nesting too deep to parse"
    except Exception as error:  # a scanner bug must cost one file, not the audit
        return _scanner_error(error)


def _scanner_error(error: Exception) -> str:
    first = first_line(error, default="")[:200]
    return f"scanner error: {type(error).__name__}" + (f": {first}" if first else "")


def _display(relative: str) -> str:
    """A path as the file system gave it, with bytes that are not UTF-8 shown as escapes so any report can print it."""
    try:
        relative.encode("utf-8")
        return relative
    except UnicodeEncodeError:
        return os.fsencode(relative).decode("utf-8", "backslashreplace")


def _links_to_folder(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)  # stat only: nothing is opened
    except OSError:
        return False


def _python_files(root: Path) -> tuple[list[tuple[Path, str]], list[FileOutcome]]:
    """The regular `.py` and `.ipynb` files under `root` with their display paths (sorted), and the folders that could not be read.

    Iterative (deep trees hit no recursion limit); symlinks are never followed, so a link can neither
    leave the tree nor loop; FIFOs and devices are never opened.
    """
    if not root.is_dir():
        return ([(root, _display(root.name))] if root.is_file() else []), []
    files: list[tuple[Path, str]] = []
    problems: list[FileOutcome] = []
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, parts = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError as error:
            relative = _display("/".join(parts) or ".")
            problems.append(
                FileOutcome(
                    relative + "/", FileStatus.FAILED, f"unreadable folder: {error.strerror or error}"
                )
            )
            continue
        for entry in listed:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info"):
                    continue
                stack.append((Path(entry.path), (*parts, entry.name)))
            elif stat.S_ISREG(mode) and entry.name.endswith((".py", NOTEBOOK_SUFFIX)):
                files.append((Path(entry.path), _display("/".join((*parts, entry.name)))))
            elif stat.S_ISLNK(mode) and (
                entry.name.endswith((".py", NOTEBOOK_SUFFIX)) or _links_to_folder(entry.path)
            ):
                relative = _display("/".join((*parts, entry.name)))
                problems.append(FileOutcome(relative, FileStatus.SKIPPED, "symlink, not followed"))
            elif entry.name.endswith((".py", NOTEBOOK_SUFFIX)) and not stat.S_ISREG(
                mode
            ):  # a FIFO, a device, a socket
                relative = _display("/".join((*parts, entry.name)))
                problems.append(FileOutcome(relative, FileStatus.SKIPPED, "not a regular file"))
    files.sort(key=lambda item: item[1].split("/"))  # as paths sort: by component
    problems.sort(key=lambda outcome: outcome.path)
    return files, problems
