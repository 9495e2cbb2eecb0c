"""The accepted-findings file (baseline): today's findings, recorded so that a gate fails only on new ones.

A finding is identified without its line number, so that edits above it do not break the match:
by file, rule code, upstream symbol and the stripped text of its source line. Equal keys are counted,
so two identical calls on two lines need two entries. The file is JSON, sorted, one entry per key:

    {"apidrift_baseline": 1, "findings": [
        {"path": "pkg/mod.py", "code": "AD101", "symbol": "vllm.f", "source": "f(x=1)", "count": 1}]}
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from apidrift.auditor.core.results import AuditResult, Finding
from apidrift.auditor.core.wording import plural
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.safe_read import loads_json, read_bounded

FORMAT_VERSION = 1
MAX_BASELINE_BYTES = 64 * 1024 * 1024  # larger baseline files are refused

Key = tuple[str, str, str, str]  # path, code, symbol, stripped source line


class BaselineError(ValueError):
    """A baseline file that cannot be read; one line, naming the file."""


def key(finding: Finding) -> Key:
    return (finding.location.path, finding.code, finding.symbol, finding.location.source_line.strip())


@dataclass(frozen=True)
class Split:
    new: list[Finding]  # not in the baseline: reported
    accepted: list[Finding]  # matched an entry: not reported
    unmatched: int  # entries (counted) that matched nothing: fixed since, or moved


def write_baseline(path: Path, findings: list[Finding]) -> int:
    """Record `findings`; returns how many were written."""
    counts = Counter(key(f) for f in findings)
    entries = [
        {"path": p, "code": c, "symbol": s, "source": src, "count": n}
        for (p, c, s, src), n in sorted(counts.items())
    ]
    document = {"apidrift_baseline": FORMAT_VERSION, "findings": entries}
    try:
        atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        raise BaselineError(f"cannot write baseline {path}: {error.strerror}") from None
    return sum(counts.values())


def read_baseline(path: Path) -> Counter[Key]:
    try:
        document = loads_json(
            read_bounded(path, MAX_BASELINE_BYTES).decode("utf-8")
        )  # never a FIFO nor /dev/zero
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist (create it with --write-baseline)") from None
    except OSError as error:
        raise BaselineError(f"cannot read baseline {path}: {error.strerror}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise BaselineError(f"baseline {path} is not valid JSON: {error}") from None
    if not isinstance(document, dict) or document.get("apidrift_baseline") != FORMAT_VERSION:
        raise BaselineError(f"baseline {path} is not an apidrift baseline (version {FORMAT_VERSION})")
    entries = document.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"baseline {path}: `findings` must be a list")
    counts: Counter[Key] = Counter()
    for number, entry in enumerate(entries, start=1):
        try:
            entry_key = (entry["path"], entry["code"], entry["symbol"], entry["source"])
            count = entry.get("count", 1)
        except (KeyError, TypeError, AttributeError):
            raise BaselineError(
                f"baseline {path}: entry {number} needs path, code, symbol and source"
            ) from None
        if not all(isinstance(part, str) for part in entry_key) or not isinstance(count, int) or count < 1:
            raise BaselineError(f"baseline {path}: entry {number} is malformed")
        counts[entry_key] += count
    return counts


def split(findings: list[Finding], baseline: Counter[Key]) -> Split:
    """Match findings to entries in file order, each entry as many times as its count."""
    remaining = Counter(baseline)
    new: list[Finding] = []
    accepted: list[Finding] = []
    order = sorted(findings, key=lambda f: (*f.location.order, f.code))
    for finding in order:
        k = key(finding)
        if remaining[k] > 0:
            remaining[k] -= 1
            accepted.append(finding)
        else:
            new.append(finding)
    kept = set(map(id, new))
    return Split(
        [f for f in findings if id(f) in kept], accepted, sum(n for n in remaining.values() if n > 0)
    )


def record_baseline(result: AuditResult, path: Path) -> int:
    """`--write-baseline`: record the audit's findings as accepted in `path` and report none of them;
    the result's notes say so. Returns how many were recorded."""
    written = write_baseline(path, result.findings)
    result.notes.append(f"baseline {path}: recorded {plural(written, 'finding')} as accepted")
    result.findings = []
    return written


def apply_baseline(result: AuditResult, accepted: Counter[Key], path: Path) -> Split:
    """`--baseline`: keep only the findings not accepted in `path` (read with `read_baseline`); the
    result's notes say how many were accepted and how many accepted ones are no longer found."""
    parts = split(result.findings, accepted)
    result.findings = parts.new
    note = (
        f"baseline {path}: {plural(len(parts.accepted), 'accepted finding')} not shown, {len(parts.new)} new"
    )
    if parts.unmatched:
        note += f"; {parts.unmatched} accepted no longer found (fixed? refresh it with --write-baseline)"
    result.notes.append(note)
    return parts
