"""The results of an impact run: a row per dependent, a row per finding, the summary by upstream symbol.

Statuses: `broken` (an error this release causes), `at-risk` (warnings only), `clean` (uses the
upstream, nothing found), `not-using` (no use site of the upstream at all), `not-yet-affected` (every
requirement on the upstream excludes the release: the findings say what will break when it
upgrades), `timeout`, `memory` and `error` (the audit could not be done). Findings that were already
there on the old version (`pre-existing`) are counted apart: this release did not cause them.

Rows are written as JSON Lines as they arrive (so an interrupted run loses nothing and `--resume`
picks up), and as Parquet at the end when pyarrow is installed.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import re
import stat
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apidrift.auditor.core.results import AuditResult, Classification, Severity
from apidrift.auditor.core.version import __version__
from apidrift.auditor.safe_read import loads_json, read_bounded

STATUSES = ("broken", "at-risk", "not-yet-affected", "clean", "not-using", "timeout", "memory", "error")
FAILED = ("timeout", "memory", "error")
ROWS_FILE, FINDINGS_FILE = "dependents.jsonl", "findings.jsonl"
_FINDING_FIELDS = ("code", "rule", "severity", "message", "symbol", "classification", "guarded", "hint",
                   "new_signature", "old_signature", "role")  # fmt: skip
# Whom a broken (or at-risk) dependent's findings reach: "users" when one is in code its distribution
# installs (or of a role not decided), "own-code" when every one is in its tests, examples, build
# scripts or other files it does not install: the release then breaks only its own development.
REACHES = ("users", "own-code")
BUCKETS = ("breaks-users", "breaks-own-code", "warns-users", "warns-own-code")
BUCKET_TITLES = {
    "breaks-users": "Breaks its users (an error in code the dependent ships)",
    "breaks-own-code": "Breaks only its own tests, examples or scripts",
    "warns-users": "At risk in code it ships (warnings)",
    "warns-own-code": "At risk only in its own tests, examples or scripts",
}


def row_from_audit(
    key: str, label: str, spec: str, result: AuditResult, pin: str | None, *, max_findings: int
) -> dict[str, Any]:
    """A dependent's row (with its findings) from its `AuditResult`."""
    new = [f for f in result.findings if f.classification is not Classification.PRE_EXISTING]
    counts = Counter(f.severity for f in new)
    coverage = result.coverage[0] if result.coverage else None
    found = coverage.found if coverage else 0
    if pin is not None:
        status = "not-yet-affected"
    elif counts[Severity.ERROR]:
        status = "broken"
    elif counts[Severity.WARNING]:
        status = "at-risk"
    elif found == 0 and not result.findings:
        status = "not-using"
    else:
        status = "clean"
    graded = Severity.ERROR if counts[Severity.ERROR] else Severity.WARNING
    roles = Counter(f.role or "other" for f in new if f.severity is graded)
    reach = None
    if status in ("broken", "at-risk", "not-yet-affected") and roles:
        shipped = any(f.role in (None, "shipped") for f in new if f.severity is graded)
        reach = "users" if shipped else "own-code"
    findings = []
    for finding in result.findings[:max_findings]:
        item = {name: getattr(finding, name) for name in _FINDING_FIELDS}
        item["severity"] = finding.severity.value
        item["classification"] = finding.classification.value if finding.classification else None
        loc = finding.location
        item.update(path=loc.path, line=loc.line, column=loc.column, source_line=loc.source_line[:500])
        findings.append(item)
    notes = list(result.notes)
    if len(result.findings) > max_findings:
        notes.append(f"{len(result.findings)} findings, the first {max_findings} kept")
    return {
        "key": key,
        "dependent": label,
        "spec": spec,
        "name": result.downstream.name,
        "version": result.downstream.version,
        "status": status,
        "reach": reach,
        "roles": dict(sorted(roles.items())),
        "error": None,
        "pin": pin,
        "errors": counts[Severity.ERROR],
        "warnings": counts[Severity.WARNING],
        "infos": counts[Severity.INFO],
        "pre_existing": len(result.findings) - len(new),
        "by_rule": dict(sorted(Counter(f.code for f in new).items())),
        "found": found,
        "resolved": coverage.resolved if coverage else 0,
        "checked": coverage.checked if coverage else 0,
        "not_checkable": dict(coverage.not_checkable) if coverage else {},
        "timings": {k: round(v, 4) for k, v in result.timings.items()},
        "notes": notes,
        "findings": findings,
    }


@dataclass(frozen=True)
class Group:
    """One upstream symbol and rule, with the dependents and call sites it breaks."""

    symbol: str
    code: str
    rule: str
    severity: str
    message: str  # one finding's message, as an example
    dependents: tuple[str, ...]
    sites: int
    pinned: tuple[str, ...]  # not-yet-affected dependents that will meet it when they upgrade
    new_signature: str | None
    old_signature: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol, "code": self.code, "rule": self.rule, "severity": self.severity,
            "message": self.message, "dependents": list(self.dependents), "sites": self.sites,
            "pinned": list(self.pinned), "new_signature": self.new_signature, "old_signature": self.old_signature,
        }  # fmt: skip


@dataclass
class ImpactResult:
    release: dict[str, Any]  # name, version, label, origin, location
    old: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)  # each with its "findings"
    dropped: list[dict[str, Any]] = field(default_factory=list)  # discovery: candidates not audited
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    executor: str = ""
    results_dir: str | None = None
    tool_version: str = __version__

    def counts(self) -> dict[str, int]:
        found = Counter(row["status"] for row in self.rows)
        return {status: found.get(status, 0) for status in STATUSES}

    def groups(self) -> list[Group]:
        return group_findings(self.rows)

    def buckets(self) -> dict[str, list[dict[str, Any]]]:
        """What a maintainer reads first: the broken (and at-risk) dependents, split by whom their
        findings reach: their users (code they ship), or only their own tests, examples and scripts."""
        found: dict[str, list[dict[str, Any]]] = {name: [] for name in BUCKETS}
        for row in sorted(self.rows, key=lambda r: r["dependent"]):
            if row["status"] not in ("broken", "at-risk"):
                continue
            own = row.get("reach") == "own-code"
            verb = "breaks" if row["status"] == "broken" else "warns"
            found[f"{verb}-{'own-code' if own else 'users'}"].append(row)
        return found

    def findings(self) -> list[dict[str, Any]]:
        return [finding_row(row, f) for row in self.rows for f in row.get("findings", ())]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": {"name": "apidrift", "version": self.tool_version},
            "release": self.release,
            "old": self.old,
            "counts": self.counts(),
            "buckets": {name: [row["dependent"] for row in rows] for name, rows in self.buckets().items()},
            "groups": [g.as_dict() for g in self.groups()],
            "dependents": [{k: v for k, v in row.items() if k != "findings"} for row in self.rows],
            "dropped": self.dropped,
            "notes": self.notes,
            "elapsed": round(self.elapsed, 3),
            "executor": self.executor,
            "results_dir": self.results_dir,
        }


def finding_row(row: dict[str, Any], finding: dict[str, Any]) -> dict[str, Any]:
    return {"key": row["key"], "dependent": row["dependent"], "version": row.get("version"),
            "status": row["status"], **finding}  # fmt: skip


_CODE_SPAN = re.compile(r"`([^`]+)`")
_PRIVATE = re.compile(r"(?:^|[.\s(])_(?!_)\w*")  # `_helper`, `pkg._impl.x`; not a dunder (`__init__`)


def _mentions_private(message: str) -> bool:
    return any(_PRIVATE.search(span) for span in _CODE_SPAN.findall(message))


def _example(messages: Counter[str]) -> str:
    """The group's example message: one naming only public names if there is one (a maintainer reads
    it as the way dependents meet the change), else the most common, then the first in order."""
    return min(messages, key=lambda m: (_mentions_private(m), -messages[m], m))


def group_findings(rows: list[dict[str, Any]]) -> list[Group]:
    """Findings this release causes, grouped by (upstream symbol, rule): what a maintainer acts on."""
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        if row["status"] not in ("broken", "at-risk", "not-yet-affected"):
            continue
        for finding in row.get("findings", ()):
            if (
                finding.get("classification") == Classification.PRE_EXISTING.value
                or finding["severity"] == "info"
            ):
                continue
            entry = acc.setdefault((finding["symbol"], finding["code"]), {
                "finding": finding, "dependents": {}, "pinned": {}, "sites": 0, "messages": Counter()})  # fmt: skip
            if row["status"] == "not-yet-affected":
                entry["pinned"][row["dependent"]] = True
                continue
            entry["dependents"][row["dependent"]] = True
            entry["sites"] += 1
            entry["messages"][finding["message"]] += 1
    groups = []
    for (symbol, code), entry in acc.items():
        sample = entry["finding"]
        message = _example(entry["messages"]) if entry["messages"] else sample["message"]
        groups.append(Group(
            symbol, code, sample["rule"], sample["severity"], message, tuple(sorted(entry["dependents"])),
            entry["sites"], tuple(sorted(entry["pinned"])), sample.get("new_signature"), sample.get("old_signature"),
        ))  # fmt: skip
    rank = {s.value: s.rank for s in Severity}
    return sorted(groups, key=lambda g: (-rank[g.severity], -len(g.dependents), -g.sites, g.symbol, g.code))


# ---- the results folder ---------------------------------------------------------------------------


class ResultsError(RuntimeError):
    """The results folder cannot be used safely (a link or a special file where a result goes): one line."""


RESULT_FILES = (ROWS_FILE, FINDINGS_FILE, "dependents.parquet", "findings.parquet")
_COUNTS = ("errors", "warnings", "infos", "pre_existing", "found", "resolved", "checked")
_TEXTS = ("dependent", "spec", "name", "version", "error", "pin", "origin", "attempt", "check", "worker",
          "reach")  # fmt: skip


class ResultStore:
    """`DIR/dependents.jsonl` and `DIR/findings.jsonl`, appended as rows arrive; Parquet at the end.

    Nothing is written through a link: a symbolic link (or anything but a regular file) where a result
    file goes is refused before the run, files are opened with O_NOFOLLOW, and Parquet is written to a
    new file renamed into place. Each row carries `check`, an HMAC of the row and its findings under a
    key kept in the cache folder: `--resume` reuses only rows that check, so a row planted or edited in
    the folder is audited again, never trusted.
    """

    def __init__(self, folder: Path, key: bytes | None = None) -> None:
        self.folder = folder
        self.key = key if key is not None else os.urandom(32)
        self.refused: list[str] = []  # why rows of a previous run were not reused (for --resume's note)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ResultsError(
                f"cannot create the results folder {folder}: {error.strerror or error}"
            ) from None
        for name in RESULT_FILES:
            path = folder / name
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError as error:
                raise ResultsError(f"cannot use {path}: {error.strerror or error}") from None
            if stat.S_ISLNK(info.st_mode):
                raise ResultsError(
                    f"{path} is a symbolic link; refused (results are never written through a link): remove it"
                )
            if not stat.S_ISREG(info.st_mode):
                raise ResultsError(f"{path} is not a regular file; refused: remove it")

    def sign(self, row: dict[str, Any], findings: list[dict[str, Any]]) -> str:
        """The check of a row (without its own `check`) and its findings, as they are written."""
        body = {k: v for k, v in row.items() if k not in ("check", "findings")}
        text = json.dumps([body, findings], sort_keys=True, separators=(",", ":"))
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()[:32]

    def previous(self) -> dict[str, dict[str, Any]]:
        """Rows already there, by key (the last one wins), with their findings; for `--resume`.

        Only rows whose shape is a row's and whose `check` holds are returned; `refused` says how many
        others there were.
        """
        rows: dict[str, dict[str, Any]] = {}
        unreadable: list[int] = []
        records = _read_jsonl(self.folder / ROWS_FILE, unreadable)
        malformed = len(unreadable)
        for row in records:
            if _row_shape(row):
                row["findings"] = []
                rows[row["key"]] = row
            else:
                malformed += 1
        for finding in _read_jsonl(self.folder / FINDINGS_FILE):
            if not isinstance(finding, dict) or not isinstance(finding.get("key"), str):
                continue
            row = rows.get(finding["key"])
            if row is not None and finding.get("attempt") == row.get("attempt"):
                row["findings"].append(
                    {
                        k: v
                        for k, v in finding.items()
                        if k not in ("key", "dependent", "version", "status", "attempt")
                    }
                )
        kept: dict[str, dict[str, Any]] = {}
        unchecked = 0
        for key, row in rows.items():
            check = row.get("check")
            valid = isinstance(check, str) and hmac.compare_digest(check, self.sign(row, row["findings"]))
            if valid and all(_finding_shape(f) for f in row["findings"]):
                del row["check"]
                kept[key] = row
            else:
                unchecked += 1
        if malformed:
            self.refused.append(
                f"{malformed} malformed or unreadable {'line' if malformed == 1 else 'lines'} skipped"
            )
        if unchecked:
            self.refused.append(
                f"{unchecked} {'row' if unchecked == 1 else 'rows'} without a valid check (not written by this"
                " apidrift, or edited since) not reused"
            )
        return kept

    def start(self, fresh: bool) -> None:
        if fresh:
            for name in (ROWS_FILE, FINDINGS_FILE):
                (self.folder / name).unlink(missing_ok=True)

    def append(self, row: dict[str, Any]) -> None:
        """Findings first, then the row: a row on disk always has all its findings before it."""
        row.setdefault("attempt", _attempt_id())
        written = [
            {
                k: v
                for k, v in finding.items()
                if k not in ("key", "dependent", "version", "status", "attempt")
            }
            for finding in row.get("findings", ())
        ]
        lines = [
            json.dumps({**finding_row(row, finding), "attempt": row["attempt"]}) + "\n"
            for finding in row.get("findings", ())
        ]
        record = {k: v for k, v in row.items() if k not in ("findings", "check")}
        record["check"] = self.sign(record, json.loads(json.dumps(written)))
        _append(self.folder / FINDINGS_FILE, "".join(lines))
        _append(self.folder / ROWS_FILE, json.dumps(record) + "\n")

    def write_parquet(self, result: ImpactResult) -> list[Path]:
        """dependents.parquet and findings.parquet; nested values as JSON text. [] without pyarrow."""
        try:
            # lazy: pyarrow (0.2 s), an optional dependency, loads only for Parquet output
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return []
        nested = ("by_rule", "not_checkable", "timings", "notes", "roles", "aliases")
        rows = [
            {k: (json.dumps(v) if k in nested else v) for k, v in row.items() if k != "findings"}
            for row in result.rows
        ]
        written = []
        for name, data, schema in (
            ("dependents.parquet", rows, _ROW_SCHEMA),
            ("findings.parquet", result.findings(), _FINDING_SCHEMA),
        ):
            fields = [pa.field(column, kind) for column, kind in schema(pa)]
            table = pa.Table.from_pylist(
                [{c.name: item.get(c.name) for c in fields} for item in data], schema=pa.schema(fields)
            )
            path = self.folder / name
            # A new file renamed over the name: a link planted there is replaced, its target never written.
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    pq.write_table(table, out)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            written.append(path)
        return written


def results_key(cache_root: Path) -> tuple[bytes, str | None]:
    """The key rows are checked with: 32 random bytes in `impact-key` of the cache folder (created once,
    mode 0600, never through a link), so a results folder cannot vouch for itself. When the cache cannot
    hold it, a key for this run only (and a note: `--resume` will then audit everything again)."""
    path = cache_root / "impact-key"
    try:
        data = read_bounded(path, 1024, follow_symlinks=False)
        if len(data) == 32:
            return data, None
    except FileNotFoundError:
        pass
    except OSError:
        data = b""
    key = os.urandom(32)
    try:
        cache_root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key)
        return key, None
    except FileExistsError:  # another run made it meanwhile, or a file of another size is there
        try:
            data = read_bounded(path, 1024, follow_symlinks=False)
            if len(data) == 32:
                return data, None
        except OSError:
            pass
    except OSError:
        pass
    return key, f"cannot keep the results key in {path}: a later --resume will audit every dependent again"


def _append(path: Path, text: str) -> None:
    """Append to a regular file, never through a link (O_NOFOLLOW) nor into a FIFO or a device."""
    flags = (
        os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    )
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ResultsError(
                f"{path} is a symbolic link; refused (results are never written through a link)"
            ) from None
        raise ResultsError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultsError(f"{path} is not a regular file; refused")
        with os.fdopen(fd, "a", encoding="utf-8", closefd=False) as out:
            out.write(text)
    finally:
        os.close(fd)


def _row_shape(row: Any) -> bool:
    """Whether a record read back has a row's shape (the types the renderers rely on)."""
    if not isinstance(row, dict) or not isinstance(row.get("key"), str) or row.get("status") not in STATUSES:
        return False
    if not isinstance(row.get("dependent"), str):
        return False
    if any(not isinstance(row.get(name, 0), int) or isinstance(row.get(name, 0), bool) for name in _COUNTS):
        return False
    if any(row.get(name) is not None and not isinstance(row.get(name), str) for name in _TEXTS):
        return False
    for name in ("by_rule", "not_checkable"):
        value = row.get(name, {})
        if not isinstance(value, dict) or not all(isinstance(n, int) for n in value.values()):
            return False
    for name in ("notes", "aliases"):
        items = row.get(name, [])
        if not isinstance(items, list) or not all(isinstance(n, str) for n in items):
            return False
    return True


def _finding_shape(finding: Any) -> bool:
    if not isinstance(finding, dict) or finding.get("severity") not in ("error", "warning", "info"):
        return False
    return all(isinstance(finding.get(name, ""), str) for name in ("code", "rule", "message", "symbol"))


def _ROW_SCHEMA(pa: Any) -> list[tuple[str, Any]]:
    text, count = pa.string(), pa.int64()
    return [("key", text), ("dependent", text), ("spec", text), ("name", text), ("version", text),
            ("status", text), ("reach", text), ("roles", text), ("aliases", text), ("error", text),
            ("pin", text), ("origin", text), ("errors", count),
            ("warnings", count), ("infos", count), ("pre_existing", count), ("by_rule", text),
            ("found", count), ("resolved", count), ("checked", count), ("not_checkable", text),
            ("timings", text), ("wall_seconds", pa.float64()), ("worker", text), ("notes", text)]  # fmt: skip


def _FINDING_SCHEMA(pa: Any) -> list[tuple[str, Any]]:
    text, count = pa.string(), pa.int64()
    return [("key", text), ("dependent", text), ("version", text), ("status", text), ("code", text),
            ("rule", text), ("severity", text), ("symbol", text), ("path", text), ("line", count),
            ("column", count), ("message", text), ("classification", text), ("guarded", pa.bool_()),
            ("hint", text), ("new_signature", text), ("old_signature", text), ("source_line", text),
            ("role", text)]  # fmt: skip


def _attempt_id() -> str:
    return uuid.uuid4().hex[:12]


def _read_jsonl(path: Path, unreadable: list[int] | None = None) -> list[Any]:
    """The records of a JSON Lines file; a line that does not parse is skipped (and counted in `unreadable`)."""
    items: list[Any] = []
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return items
    with handle:
        for line in handle:
            try:
                items.append(loads_json(line))
            except ValueError:  # a line torn by an interrupted run, or nested too deeply to read
                if unreadable is not None:
                    unreadable.append(1)
    return items
