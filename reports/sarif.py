"""SARIF 2.1.0 report: one run, every registered rule as metadata, one result per finding."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    AuditResult,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    Location,
    Severity,
)
from apidrift.reports.paths import source_root
from apidrift.rules.base import Rule
from apidrift.rules.registry import all_rules

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/apidrift/apidrift"  # placeholder until the project has a public home
SRCROOT = "SRCROOT"  # every result path is relative to the downstream root, which this id names
FINGERPRINT_KEY = "apidriftFingerprint/v1"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(result: AuditResult) -> str:
    """The SARIF log as indented JSON, ending with a newline."""
    return json.dumps(sarif_log(result), indent=2) + "\n"


def sarif_log(result: AuditResult) -> dict[str, Any]:
    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    fingerprints = fingerprints_of(result.findings)
    driver: dict[str, Any] = {"name": "apidrift", "informationUri": INFORMATION_URI}
    if result.tool_version:  # an empty version string would only earn a validator warning
        driver["version"] = result.tool_version
    driver["rules"] = [rule_descriptor(rule) for rule in rules]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [_invocation(result)],
        "originalUriBaseIds": {SRCROOT: _srcroot(result)},
        # Our columns count characters of a Python str; SARIF's default would be UTF-16 code units.
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index, fingerprints[i]) for i, f in enumerate(result.findings)],
        "properties": _run_properties(result),
    }
    return {"$schema": SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def help_uri(rule: Rule) -> str:
    """The rule's row in the README's rules table."""
    return f"{INFORMATION_URI}#rule-{rule.code.lower()}"


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    what = rule.section("What it does") or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what, "markdown": what},
        "help": {"text": rule.docs, "markdown": rule.docs},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["api-drift", rule.family.value]},
    }


def fingerprint(finding: Finding) -> str:
    """Hash of what identifies a finding without its line number, so it survives edits above it."""
    loc = finding.location
    key = "\0".join((finding.code, loc.path, finding.symbol, loc.source_line.strip()))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def fingerprints_of(findings: list[Finding]) -> list[str]:
    """`hash:n`, n counting equal hashes in file order, so identical lines in one file stay distinct."""
    order = sorted(range(len(findings)), key=lambda i: _position(findings[i]))
    seen: Counter[str] = Counter()
    result = [""] * len(findings)
    for i in order:
        digest = fingerprint(findings[i])
        seen[digest] += 1
        result[i] = f"{digest}:{seen[digest]}"
    return result


def _position(finding: Finding) -> tuple[str, int, int, int, str]:
    return (*finding.location.order, finding.code)


def _result(finding: Finding, rule_index: dict[RuleCode, int], fingerprint_value: str) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in rule_index:  # an unregistered code keeps its ruleId but cannot point into rules[]
        result["ruleIndex"] = rule_index[finding.code]
    result["level"] = LEVELS[finding.severity]
    text = _sentence(finding.message)
    if finding.hint:
        text += f" Hint: {_sentence(finding.hint)}"
    result["message"] = {"text": text}
    result["locations"] = [{"physicalLocation": physical_location(finding.location)}]
    result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint_value}
    properties = {
        "symbol": finding.symbol,
        "upstream": finding.upstream,
        "classification": finding.classification.value if finding.classification else None,
        "newSignature": finding.new_signature,
        "oldSignature": finding.old_signature,
        "sourceLine": finding.location.source_line or None,
        # In a notebook: the region above is in its JSON; this is where the cell shows the finding.
        "notebookCell": finding.location.cell,
        "cellLine": finding.location.line if finding.location.cell is not None else None,
        "cellColumn": finding.location.column if finding.location.cell is not None else None,
        "role": finding.role,  # where the file lives: shipped, tests, examples, build, other
        "since": finding.since.as_dict() if finding.since is not None else None,  # with `audit --history`
    }
    result["properties"] = {key: value for key, value in properties.items() if value is not None}
    return result


def artifact_location(path: str) -> dict[str, str]:
    """A relative URI reference under SRCROOT: percent-encoded, never starting with a slash."""
    return {"uri": quote(PurePosixPath(path).as_posix().lstrip("/"), safe="/"), "uriBaseId": SRCROOT}


def physical_location(loc: Location) -> dict[str, Any]:
    if loc.cell is not None:
        return _notebook_location(loc)
    start_line = max(loc.line, 1)
    start_column = max(loc.column, 1)
    end_line = max(loc.end_line, start_line)
    end_column = max(loc.end_column, start_column) if end_line == start_line else max(loc.end_column, 1)
    region: dict[str, Any] = {
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": end_column,
    }
    physical: dict[str, Any] = {"artifactLocation": artifact_location(loc.path), "region": region}
    line = loc.source_line
    if not line or end_line != start_line or end_column > len(line) + 1:
        return physical  # we only hold the first line: no snippet rather than a wrong one
    # A snippet is the text *of the region*; the whole line goes in a context region around it.
    region["snippet"] = {"text": line[start_column - 1 : end_column - 1]}
    if (
        start_column > 1 or end_column < len(line) + 1
    ):  # SARIF wants a context strictly larger than the region
        physical["contextRegion"] = {
            "startLine": start_line,
            "startColumn": 1,
            "endLine": start_line,
            "endColumn": len(line) + 1,
            "snippet": {"text": line},
        }
    return physical


def _invocation(result: AuditResult) -> dict[str, Any]:
    notifications: list[dict[str, Any]] = [
        {"level": "note", "message": {"text": _sentence(note)}} for note in result.notes
    ]
    # A file we could not read or parse is a gap in the audit, not a finding: say so as a warning.
    notifications += [
        _failed_file(outcome) for outcome in sorted(_failed(result.files), key=lambda o: o.path)
    ]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def _failed(files: list[FileOutcome]) -> list[FileOutcome]:
    return [outcome for outcome in files if outcome.status is FileStatus.FAILED]


def _failed_file(outcome: FileOutcome) -> dict[str, Any]:
    return {
        "level": "warning",
        "message": {
            "text": _sentence(f"{outcome.path} was not audited: {outcome.reason or 'no reason given'}")
        },
        "locations": [{"physicalLocation": {"artifactLocation": artifact_location(outcome.path)}}],
    }


def _srcroot(result: AuditResult) -> dict[str, Any]:
    # The absolute root is known only for a local folder; otherwise the description says what SRCROOT is.
    downstream = result.downstream
    entry: dict[str, Any] = {
        "description": {
            "text": f"The root of the downstream {downstream.label} ({downstream.origin}: {downstream.location})."
        }
    }
    # Paths are relative to the source root, which may be the folder's src/ (or its parent): found on disk.
    root = None
    if downstream.origin == "directory" and Path(downstream.location).is_absolute():
        root = source_root(result) or Path(downstream.location)
    if root is not None:
        entry["uri"] = root.as_uri().rstrip("/") + "/"  # SARIF requires the trailing slash on a base URI
    return entry


def _run_properties(result: AuditResult) -> dict[str, Any]:
    statuses = Counter(outcome.status for outcome in result.files)
    properties: dict[str, Any] = {
        "downstream": result.downstream.label,
        "upstream": result.upstream.label,
    }
    if result.old_upstream is not None:
        properties["oldUpstream"] = result.old_upstream.label
    properties["summary"] = {severity.value: result.count(severity) for severity in Severity}
    properties["coverage"] = [_coverage(c) for c in result.coverage]
    properties["files"] = {status.value: statuses.get(status, 0) for status in FileStatus}
    return properties


def _coverage(coverage: Coverage) -> dict[str, Any]:
    return {
        "upstream": coverage.upstream,
        "found": coverage.found,
        "resolved": coverage.resolved,
        "checked": coverage.checked,
        "notCheckable": dict(sorted(coverage.not_checkable.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def _sentence(text: str) -> str:
    """SARIF asks for plain-text messages as complete sentences."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _notebook_location(loc: Location) -> dict[str, Any]:
    """A finding in a notebook: the region its characters have in the notebook's JSON file, which
    code scanning and editors open as it is (a cell's line is no line of the file). No snippet: the
    JSON's text of the region is escaped, not the code. Without a region, the file alone."""
    physical: dict[str, Any] = {"artifactLocation": artifact_location(loc.path)}
    if loc.json_region is not None:
        line, column, end_line, end_column = loc.json_region
        end_line = max(end_line, line)
        physical["region"] = {
            "startLine": max(line, 1),
            "startColumn": max(column, 1),
            "endLine": end_line,
            "endColumn": max(end_column, column) if end_line == line else max(end_column, 1),
        }
    return physical
