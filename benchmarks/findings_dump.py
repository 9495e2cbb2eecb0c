"""Every case file's findings, as JSON, to show a refactoring changed no behaviour.

    python benchmarks/findings_dump.py OUT.json [--cases ROOT] [--flagship CACHE]
    python benchmarks/findings_dump.py --compare BEFORE.json AFTER.json

Runs the audit on each `tests/cases/*.case` (as written and re-exported, as tests/engine/test_cases.py
does), on each `tests/fix_cases/*.case` (the audit, then the safe and the unsafe fix plans), and, with
--flagship, on speculators 0.3.0 against vLLM 0.16.0, 0.17.0 and 0.11.0 through the command line
(real releases from the index, cached in CACHE). Every field of every finding is kept, with coverage,
files and notes; timings, the run's description and temporary paths are left out. --cases reads the
case files of another checkout (ROOT holds `tests/`), so that the same inputs run on both sides.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "engine"))

from casefiles import parse_case, write_tree  # noqa: E402
from test_cases import reexported  # noqa: E402

from apidrift import AuditRequest, audit  # noqa: E402


def _stable(report: dict[str, Any], *temporary: Path) -> Any:
    report = {k: v for k, v in report.items() if k not in ("timings", "run", "tool")}
    for side in ("downstream", "upstream", "old_upstream"):
        if report.get(side):
            report[side] = {k: v for k, v in report[side].items() if k not in ("path", "sha256", "source")}
    text = json.dumps(report, sort_keys=True, default=str)
    for folder in temporary:
        text = text.replace(str(folder), "<TMP>")
    return json.loads(text)


def _audit(new: Path, old: Path | None, down: Path, cache: Path) -> Any:
    return audit(
        AuditRequest(str(down), f"pkg@{new}", f"pkg@{old}" if old else None, cache_dir=cache, offline=True)
    )


def dump(cases_root: Path, flagship_cache: Path | None) -> dict[str, Any]:
    from apidrift.auditor.fix.codemods import plan_fixes

    found: dict[str, Any] = {}
    for case in sorted((cases_root / "tests" / "cases").glob("*.case")):
        sections = parse_case(case)
        for variant in ("direct", "reexport"):
            new_files, old_files = sections["new"], sections["old"]
            if variant == "reexport":
                new_files, old_files = reexported(new_files), reexported(old_files)
            with tempfile.TemporaryDirectory() as folder:
                tmp = Path(folder)
                new = write_tree(tmp / "new", new_files)
                old = write_tree(tmp / "old", old_files) if old_files else None
                down = write_tree(tmp / "down", sections["downstream"])
                result = _audit(new, old, down, tmp / "cache")
                found[f"case/{case.stem}/{variant}"] = _stable(result.as_dict(), tmp)
    for case in sorted((cases_root / "tests" / "fix_cases").glob("*.case")):
        sections = parse_case(case, ("old", "new", "downstream", "safe", "fixed"))
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            new, old = write_tree(tmp / "new", sections["new"]), write_tree(tmp / "old", sections["old"])
            down = write_tree(tmp / "down", sections["downstream"])
            result = _audit(new, old, down, tmp / "cache")
            entry: dict[str, Any] = {"audit": _stable(result.as_dict(), tmp)}
            for unsafe in (False, True):
                fixed = plan_fixes(result, down, unsafe=unsafe)
                entry[f"unsafe={unsafe}"] = json.loads(
                    json.dumps(
                        {
                            "changes": [(c.path, c.after) for c in fixed.changes],
                            "outcomes": [
                                (
                                    o.finding.location.line,
                                    o.finding.code,
                                    o.status,
                                    getattr(o, "reason", None),
                                )
                                for o in fixed.outcomes
                            ],
                            "notes": fixed.notes,
                        },
                        default=str,
                    ).replace(str(tmp), "<TMP>")
                )
            found[f"fix/{case.stem}"] = entry
    if flagship_cache is not None:
        from apidrift.auditor.cli.main import main

        for against in ("vllm==0.16.0", "vllm==0.17.0", "vllm==0.11.0"):
            with tempfile.TemporaryDirectory() as folder:
                report = Path(folder) / "report.json"
                argv = ["audit", "speculators==0.3.0", "--against", against, "--format", "json"]
                status = main([*argv, "--output", str(report), "--cache-dir", str(flagship_cache)])
                data = json.loads(report.read_text(encoding="utf-8"))
                found[f"flagship/{against}"] = {
                    "status": status,
                    **_stable(data, flagship_cache, Path(folder)),
                }
    return found


def _findings(entries: dict[str, Any]) -> int:
    return sum(len(e.get("findings", e.get("audit", {}).get("findings", []))) for e in entries.values())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--cases", type=Path, default=ROOT)
    parser.add_argument("--flagship", type=Path, metavar="CACHE")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        differing = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        print(f"{len(before)} / {len(after)} entries, {_findings(before)} / {_findings(after)} findings; "
              f"{len(differing)} differ{': ' + ', '.join(differing[:20]) if differing else ''}")  # fmt: skip
        return 1 if differing else 0
    if args.out is None:
        parser.error("give OUT.json, or --compare BEFORE AFTER")
    found = dump(args.cases, args.flagship)
    args.out.write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(found)} entries, {_findings(found)} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
