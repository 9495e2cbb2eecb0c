"""Self-contained HTML report: one file, inline CSS and JS, no network; jinja2 templates in `templates/`.

Everything is in the markup (readable without JavaScript, and printable); the script only adds the
filters (severity, rule, file, text search). Rule docs are included, so a finding links to its rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from apidrift.auditor.core.results import (
    Applicability,
    AuditResult,
    Coverage,
    FileStatus,
    Finding,
    FixKind,
    Location,
    Severity,
    UncheckedSite,
)
from apidrift.auditor.core.wording import plural
from apidrift.reports.sigdiff import Row, diff_signatures, single_side
from apidrift.rules.base import Rule
from apidrift.rules.registry import all_rules

TEMPLATES = Path(__file__).parent / "templates"
SEVERITIES = (Severity.ERROR, Severity.WARNING, Severity.INFO)


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["slug"] = slug
    env.filters["plural"] = plural
    env.filters["inline_md"] = inline_markdown
    env.filters["fold"] = fold_unchanged
    env.filters["side"] = side_items
    return env


def render(result: AuditResult) -> str:
    """The whole HTML document, ending with a newline."""
    html = _environment().get_template("report.html.j2").render(**context(result))
    return html if html.endswith("\n") else html + "\n"


# ---- the view model


@dataclass(frozen=True)
class SignatureView:
    old_label: str | None  # None: the old version is not named
    new_label: str | None
    old_rows: tuple[Row, ...] | None  # None: that side is unknown
    new_rows: tuple[Row, ...] | None
    old_returns: str | None
    new_returns: str | None
    summary: str  # "1 parameter removed, 1 added" in words, for everyone (and screen readers)
    old_text: str | None
    new_text: str | None
    named: frozenset[str] = frozenset()  # parameters the finding's message names, emphasized


@dataclass(frozen=True)
class SourceLine:
    number: int
    before: str
    marked: str
    after: str
    use: bool  # a line of the use itself (not context)


@dataclass(frozen=True)
class FindingView:
    id: str
    finding: Finding
    rule: Rule | None
    before: str
    marked: str
    after: str
    signature: SignatureView | None
    search: str
    lines: tuple[SourceLine, ...] = ()  # the whole use with context lines, when the finding has them
    suppression: str = ""  # the comment that silences this finding, to copy
    fixable: str | None = None  # "safe" or "unsafe" when `apidrift fix` can edit it


_EDIT_KINDS = (
    FixKind.RENAME_KEYWORD,
    FixKind.REMOVE_KEYWORD,
    FixKind.MOVE_IMPORT,
    FixKind.MOVE_IMPORTS,
    FixKind.RENAME_ATTRIBUTE,
    FixKind.REPLACE_NAME,
    FixKind.POSITIONAL_TO_KEYWORD,
)  # what `apidrift fix` edits (auditor/fix/model.py EDIT_KINDS, without importing LibCST)


def context(result: AuditResult) -> dict[str, Any]:
    rules = {rule.code: rule for rule in all_rules()}
    # Most severe first, then by file and position: what fails the gate is read first.
    findings = sorted(
        result.findings,
        key=lambda f: (
            -f.severity.rank,
            *f.location.order,
            f.code,
            f.message,
        ),
    )
    views = [_finding_view(i, f, rules.get(f.code), result) for i, f in enumerate(findings, start=1)]
    by_file: dict[str, list[FindingView]] = {}
    for view in views:
        by_file.setdefault(view.finding.location.path, []).append(view)
    fired = {f.code for f in findings}
    rule_rows = []
    for rule in all_rules():
        if rule.code in fired:
            counts = Counter(f.severity.value for f in findings if f.code == rule.code)
            rule_rows.append({"rule": rule, "counts": counts, "total": sum(counts.values())})
    for code in sorted(fired - set(rules)):  # an unregistered code still gets a row
        counts = Counter(f.severity.value for f in findings if f.code == code)
        rule_rows.append({"rule": None, "code": code, "counts": counts, "total": sum(counts.values())})
    widest = max((len(group) for group in by_file.values()), default=1)
    file_ids = unique_ids(by_file, "file-")
    file_rows = [
        {
            "path": path,
            "id": file_ids[path],
            "total": len(group),
            "counts": Counter(v.finding.severity.value for v in group),
            "percent": round(100 * len(group) / widest, 1),
            "text": _file_text(group),
        }
        for path, group in by_file.items()
    ]
    statuses = Counter(outcome.status for outcome in result.files)
    skipped = Counter(o.reason or "no reason given" for o in result.files if o.status is FileStatus.SKIPPED)
    title = f"apidrift: {result.downstream.label} against {result.upstream.label}"
    return {
        "title": title,
        "result": result,
        "severities": [s.value for s in SEVERITIES],
        "totals": {s.value: result.count(s) for s in SEVERITIES},
        "classes": dict(
            sorted(Counter(f.classification.value for f in findings if f.classification).items())
        ),
        "findings": views,
        "by_file": by_file,
        "file_ids": file_ids,
        "file_rows": file_rows,
        "rule_rows": rule_rows,
        "rule_docs": [(rule, rule_docs_html(rule)) for rule in all_rules() if rule.code in fired],
        "coverage": [
            {
                "c": c,
                "reasons": sorted(c.not_checkable.items(), key=lambda kv: (-kv[1], kv[0])),
                "sites": _unchecked_by_reason(c),
            }
            for c in result.coverage
        ],
        "file_counts": {s.value: statuses.get(s, 0) for s in FileStatus},
        "skipped": sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])),
        "failed": sorted((o for o in result.files if o.status is FileStatus.FAILED), key=lambda o: o.path),
        "run": result.run,
        "seconds": result.run.get("seconds")
        if result.run
        else (sum(result.timings.values()) if result.timings else None),
    }


def _finding_view(number: int, finding: Finding, rule: Rule | None, result: AuditResult) -> FindingView:
    before, marked, after = split_marked(finding.location)
    search = " ".join(
        filter(
            None,
            (
                finding.code,
                finding.rule,
                finding.message,
                finding.symbol,
                finding.location.path,
                finding.hint,
                finding.location.source_line.strip(),
            ),
        )
    ).lower()
    return FindingView(
        id=f"finding-{number}",
        finding=finding,
        rule=rule,
        before=before,
        marked=marked,
        after=after,
        signature=_signature_view(finding, result),
        search=search,
        lines=source_lines(finding),
        suppression=f"# apidrift: ignore[{finding.code}]",
        fixable=_fixable(finding),
    )


def _fixable(finding: Finding) -> str | None:
    fix = finding.fix
    if (
        fix is None
        or finding.guarded
        or fix.kind not in _EDIT_KINDS
        or fix.applicability not in (Applicability.SAFE, Applicability.UNSAFE)
    ):
        return None
    return fix.applicability.value


def source_lines(finding: Finding) -> tuple[SourceLine, ...]:
    """The finding's context lines, the use's own lines marked (its span, from column to end column)."""
    loc = finding.location
    if not finding.context or finding.context_start < 1:
        return ()
    rows = []
    for offset, text in enumerate(finding.context):
        number = finding.context_start + offset
        if number < loc.line or number > max(loc.end_line, loc.line):
            rows.append(SourceLine(number, text, "", "", False))
            continue
        start = (
            min(max(loc.column, 1), len(text) + 1) - 1
            if number == loc.line
            else len(text) - len(text.lstrip())
        )
        end = (loc.end_column - 1) if number == loc.end_line else len(text.rstrip())
        end = min(max(end, start + 1 if number == loc.line else start), len(text))
        rows.append(SourceLine(number, text[:start], text[start:end], text[end:], True))
    return tuple(rows)


def split_marked(location: Location) -> tuple[str, str, str]:
    """The source line cut into (before, the span, after); a span running past its first line is marked
    to the end of that line, trailing blanks excluded (as the text report's carets)."""
    line = location.source_line
    start = min(max(location.column, 1), len(line) + 1) - 1
    end = location.end_column - 1 if location.end_line == location.line else len(line.rstrip())
    end = min(max(end, start + 1), len(line))
    return line[:start], line[start:end], line[end:]


def _signature_view(finding: Finding, result: AuditResult) -> SignatureView | None:
    old, new = finding.old_signature, finding.new_signature
    if not old and not new:
        return None
    mentioned = frozenset(_INLINE_CODE.findall(finding.message))
    new_label = result.upstream.label
    old_label = result.old_upstream.label if result.old_upstream else None
    if old and new:
        diff = diff_signatures(old, new)
        if diff is not None:
            words = []
            for label, names in (("removed", diff.removed), ("added", diff.added), ("changed", diff.changed)):
                if names:
                    words.append(f"{plural(len(names), 'parameter')} {label} ({', '.join(names)})")
            if diff.returns_changed:
                words.append("return type changed")
            return SignatureView(
                old_label,
                new_label,
                diff.old,
                diff.new,
                diff.old_returns,
                diff.new_returns,
                "; ".join(words) or "no parameter differences",
                old,
                new,
                mentioned,
            )
    old_rows = _focus(single_side(old), mentioned) if old else None
    new_rows = _focus(single_side(new), mentioned) if new else None
    returns = {}
    for side, text in (("old", old), ("new", new)):
        returns[side] = text.split(") -> ", 1)[1] if text and ") -> " in text else None
    if new and not old:
        summary = f"unknown in {old_label}" if result.old_upstream else "no earlier version to compare with"
    else:
        summary = f"unknown in {new_label}"
    return SignatureView(
        old_label if old else None,
        new_label if new else None,
        old_rows,
        new_rows,
        returns["old"],
        returns["new"],
        summary,
        old,
        new,
    )


def _file_text(group: list[FindingView]) -> str:
    counts = Counter(v.finding.severity.value for v in group)
    parts = [
        plural(counts[s.value], s.value) if s is not Severity.INFO else f"{counts[s.value]} info"
        for s in SEVERITIES
        if counts.get(s.value)
    ]
    return f"{plural(len(group), 'finding')}: {', '.join(parts)}"


def _focus(rows: tuple[Row, ...] | None, names: frozenset[str]) -> tuple[Row, ...] | None:
    """Mark the parameters the finding's message names (`block_size`), when there is no old side to diff."""
    if rows is None:
        return None
    return tuple(Row(row.param, "named") if row.param.name in names else row for row in rows)


# ---- small helpers the template uses


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def unique_ids(texts: Iterable[str], prefix: str) -> dict[str, str]:
    """`prefix` + slug of each text, made unique: `a-b.py`, `a_b.py` and `a b.py` all slug to `a-b-py`,
    so the second and later (in sorted order, for stable links) get `-2`, `-3`..."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for text in sorted(set(texts)):
        base = candidate = prefix + slug(text)
        number = 1
        while candidate in taken or f"{candidate}-heading" in taken:  # the template also uses ID-heading
            number += 1
            candidate = f"{base}-{number}"
        taken.update((candidate, f"{candidate}-heading"))
        ids[text] = candidate
    return ids


_INLINE_CODE = re.compile(r"`([^`]+)`")


def inline_markdown(text: str) -> Markup:
    """Escape `text`, then turn `code` spans into <code> (messages and hints use them)."""
    escaped = str(escape(text))
    return Markup(_INLINE_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", escaped))


def rule_docs_html(rule: Rule) -> Markup:
    """The rule's markdown docs (## sections, paragraphs, fenced code, inline code) as HTML; headings
    are demoted to h4 so they sit under the rule's own h3."""
    out: list[str] = []
    paragraph: list[str] = []
    lines = rule.docs.splitlines()

    def flush() -> None:
        if paragraph:
            out.append(f"<p>{inline_markdown(' '.join(paragraph))}</p>")
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            language = line[3:].strip()
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            label = f' data-lang="{escape(language)}"' if language else ""
            out.append(f"<pre{label}><code>{escape(chr(10).join(block))}</code></pre>")
        elif line.startswith("#"):
            flush()
            out.append(f"<h4>{inline_markdown(line.lstrip('#').strip())}</h4>")
        elif line.lstrip().startswith(("- ", "* ")):
            flush()
            items = []
            while i < len(lines) and lines[i].lstrip().startswith(("- ", "* ")):
                items.append(f"<li>{inline_markdown(lines[i].lstrip()[2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.strip())
        i += 1
    flush()
    return Markup("\n".join(out))


FOLD_AT = 4  # runs of unchanged parameters at least this long are folded into a <details>


def fold_unchanged(rows: list[Any] | None, named: Any) -> list[tuple[str, Any, int]]:
    """Rows as ("row", row, number) items, with long runs of unchanged, unnamed parameters grouped as
    ("fold", [rows], number of the first): a config class of fifty fields shows what changed, the rest
    one click away (a native <details>: no script needed, and screen readers announce it). Numbers are
    the parameters' true positions (1-based), folded or not."""
    items: list[tuple[str, Any, int]] = []
    run: list[tuple[int, Any]] = []

    def flush() -> None:
        if len(run) >= FOLD_AT:
            items.append(("fold", [r for _, r in run], run[0][0]))
        else:
            items.extend(("row", r, n) for n, r in run)
        run.clear()

    for number, row in enumerate(rows or [], start=1):
        if row.status == "same" and row.param.name not in named:
            run.append((number, row))
            continue
        flush()
        items.append(("row", row, number))
    flush()
    return items


def aligned_pairs(
    old: tuple[Row, ...], new: tuple[Row, ...]
) -> list[tuple[tuple[int, Row] | None, tuple[int, Row] | None]]:
    """Old and new parameters side by side, row by row: the same parameter on one row, a removed one
    beside a gap, an added one beside a gap; each with its true (1-based) position."""
    old_numbered = list(enumerate(old, start=1))
    by_name = {row.param.name: (n, row) for n, row in old_numbered if row.status != "removed"}
    used: set[int] = set()
    pairs: list[tuple[tuple[int, Row] | None, tuple[int, Row] | None]] = []
    cursor = 0
    for number, row in enumerate(new, start=1):
        match = by_name.get(row.param.name) if row.status != "added" else None
        if match is not None:
            while cursor < len(old_numbered) and old_numbered[cursor][0] < match[0]:
                earlier = old_numbered[cursor]
                if earlier[0] not in used and earlier[1].status == "removed":
                    pairs.append((earlier, None))
                    used.add(earlier[0])
                cursor += 1
            pairs.append((match, (number, row)))
            used.add(match[0])
        else:
            while cursor < len(old_numbered) and old_numbered[cursor][0] <= number:
                earlier = old_numbered[cursor]  # a parameter removed at this place is listed first
                if earlier[0] not in used and earlier[1].status == "removed":
                    pairs.append((earlier, None))
                    used.add(earlier[0])
                    cursor += 1
                else:
                    break
            pairs.append((None, (number, row)))
    pairs += [(item, None) for item in old_numbered if item[0] not in used]
    return pairs


def side_items(sig: SignatureView, side: str) -> list[tuple[str, Any, int | None]]:
    """One side's list items, aligned with the other side when both are known: ("row", row, number),
    ("gap", None, None) where the other side has a parameter this one lacks, and ("fold", rows, first
    number) for long runs of parameters unchanged on both sides."""
    rows = sig.old_rows if side == "old" else sig.new_rows
    if sig.old_rows is None or sig.new_rows is None:
        folded: list[tuple[str, Any, int | None]] = list(fold_unchanged(list(rows or []), sig.named))
        return folded
    pairs = aligned_pairs(sig.old_rows, sig.new_rows)
    items: list[tuple[str, Any, int | None]] = []
    run: list[tuple[int, Row]] = []

    def flush() -> None:
        if len(run) >= FOLD_AT:
            items.append(("fold", [r for _, r in run], run[0][0]))
        else:
            items.extend(("row", r, n) for n, r in run)
        run.clear()

    for old, new in pairs:
        mine = old if side == "old" else new
        if (
            old is not None
            and new is not None
            and old[1].status == new[1].status == "same"
            and old[1].param.name not in sig.named
        ):
            run.append(old if side == "old" else new)
            continue
        flush()
        items.append(("row", mine[1], mine[0]) if mine is not None else ("gap", None, None))
    flush()
    return items


# At most this many not-checkable sites per reason are listed in the page (the JSON report has them all).
_SITES_PER_REASON = 200


def _unchecked_by_reason(coverage: Coverage) -> list[dict[str, Any]]:
    """The sites that could not be checked, grouped by reason (most frequent first), each as
    "path:line:column" and the use as written; long groups cut at `_SITES_PER_REASON`."""
    groups: dict[str, list[UncheckedSite]] = {}
    for site in coverage.sites:
        groups.setdefault(site.reason, []).append(site)
    shown = []
    for reason, sites in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rows = [{"where": site.where, "code": site.code} for site in sites[:_SITES_PER_REASON]]
        shown.append({"reason": reason, "rows": rows, "more": len(sites) - len(rows)})
    return shown
