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

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apidrift import __version__
from apidrift.auditor.results import AuditResult, Classification, Severity

STATUSES = ("broken", "at-risk", "not-yet-affected", "clean", "not-using", "timeout", "memory", "error")
FAILED = ("timeout", "memory", "error")
ROWS_FILE, FINDINGS_FILE = "dependents.jsonl", "findings.jsonl"
_FINDING_FIELDS = ("code", "rule", "severity", "message", "symbol", "classification", "guarded", "hint",
                   "new_signature", "old_signature")  # fmt: skip


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

    def findings(self) -> list[dict[str, Any]]:
        return [finding_row(row, f) for row in self.rows for f in row.get("findings", ())]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": {"name": "apidrift", "version": self.tool_version},
            "release": self.release,
            "old": self.old,
            "counts": self.counts(),
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


class ResultStore:
    """`DIR/dependents.jsonl` and `DIR/findings.jsonl`, appended as rows arrive; Parquet at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def previous(self) -> dict[str, dict[str, Any]]:
        """Rows already there, by key (the last one wins), with their findings; for `--resume`."""
        rows: dict[str, dict[str, Any]] = {}
        for row in _read_jsonl(self.folder / ROWS_FILE):
            if isinstance(row, dict) and isinstance(row.get("key"), str) and row.get("status") in STATUSES:
                row["findings"] = []
                rows[row["key"]] = row
        for finding in _read_jsonl(self.folder / FINDINGS_FILE):
            if not isinstance(finding, dict):
                continue
            row = rows.get(finding.get("key"))  # type: ignore[arg-type]  # a JSON record: a missing or odd key finds no row
            if row is not None and finding.get("attempt") == row.get("attempt"):
                row["findings"].append(
                    {
                        k: v
                        for k, v in finding.items()
                        if k not in ("key", "dependent", "version", "status", "attempt")
                    }
                )
        return rows

    def start(self, fresh: bool) -> None:
        if fresh:
            for name in (ROWS_FILE, FINDINGS_FILE):
                (self.folder / name).unlink(missing_ok=True)

    def append(self, row: dict[str, Any]) -> None:
        """Findings first, then the row: a row on disk always has all its findings before it."""
        row.setdefault("attempt", _attempt_id())
        with open(self.folder / FINDINGS_FILE, "a", encoding="utf-8") as out:
            for finding in row.get("findings", ()):
                out.write(json.dumps({**finding_row(row, finding), "attempt": row["attempt"]}) + "\n")
        with open(self.folder / ROWS_FILE, "a", encoding="utf-8") as out:
            out.write(json.dumps({k: v for k, v in row.items() if k != "findings"}) + "\n")

    def write_parquet(self, result: ImpactResult) -> list[Path]:
        """dependents.parquet and findings.parquet; nested values as JSON text. [] without pyarrow."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return []
        nested = ("by_rule", "not_checkable", "timings", "notes")
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
            pq.write_table(table, path)
            written.append(path)
        return written


def _ROW_SCHEMA(pa: Any) -> list[tuple[str, Any]]:
    text, count = pa.string(), pa.int64()
    return [("key", text), ("dependent", text), ("spec", text), ("name", text), ("version", text),
            ("status", text), ("error", text), ("pin", text), ("origin", text), ("errors", count),
            ("warnings", count), ("infos", count), ("pre_existing", count), ("by_rule", text),
            ("found", count), ("resolved", count), ("checked", count), ("not_checkable", text),
            ("timings", text), ("wall_seconds", pa.float64()), ("worker", text), ("notes", text)]  # fmt: skip


def _FINDING_SCHEMA(pa: Any) -> list[tuple[str, Any]]:
    text, count = pa.string(), pa.int64()
    return [("key", text), ("dependent", text), ("version", text), ("status", text), ("code", text),
            ("rule", text), ("severity", text), ("symbol", text), ("path", text), ("line", count),
            ("column", count), ("message", text), ("classification", text), ("guarded", pa.bool_()),
            ("hint", text), ("new_signature", text), ("old_signature", text), ("source_line", text)]  # fmt: skip


def _attempt_id() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


def _read_jsonl(path: Path) -> list[Any]:
    items: list[Any] = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError:
        return items
    with handle:
        for line in handle:
            try:
                items.append(json.loads(line))
            except ValueError:
                continue  # a line torn by an interrupted run
    return items
