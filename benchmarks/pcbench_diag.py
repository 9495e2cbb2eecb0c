"""Per-site diagnosis of apidrift on PCBench cases adapted by the PCBench harness (adapt.py).

    python benchmarks/pcbench_diag.py CASES RUN_NAME OUT.jsonl [lib,lib,...]
    python benchmarks/pcbench_diag.py --summary OUT.jsonl [error,warning]

CASES is adapt.py's output folder; RUN_NAME is the run_tool.py --name whose SARIFs are read from
CASES/_runs/RUN_NAME/. Writes one JSON line per PCBench test case: its label, the SARIF findings
in its module, and every call and attribute site with, for the new (V2) and old (V1) version, the
resolution, the first certain miss, the call target and its signature, the binder's verdict and
the reason the site could not be checked. Needs the upstream sources already in the cache (run
the audit first; this script works offline, with APIDRIFT_CACHE_DIR as the audit had it).

It reads engine internals (locate, scan_downstream, Resolver, Relocator, check_site), written
against commit 88ad3a3 and brought to 3d1232a: each site is checked as `engine.audit` does (old
version first, then the new one with the relocator and the old result), and an old version that
cannot be had leaves `old` empty instead of failing the folder. It changes nothing in the engine.

`--summary` reads such a file and prints the false negatives and false positives (at the given
SARIF levels, `error` by default) grouped by the state of the case's API call site in both versions
(`new=unk:decorator old=ok`, `new=ok old=ok`, `missing`...), then per API folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from apidrift.auditor.cache import Cache
from apidrift.auditor.check.checked import check_site
from apidrift.auditor.core.bind import Break, Ok
from apidrift.auditor.core.reasons import Unknown
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.downstream.walk import scan_downstream
from apidrift.auditor.engine import _index
from apidrift.auditor.sources.locate import locate
from apidrift.auditor.sources.specs import SourceError
from apidrift.auditor.upstream.relocate import Relocator
from apidrift.auditor.upstream.resolve import Resolver


def describe(check) -> dict | None:  # type: ignore[no-untyped-def]
    if check is None:
        return None
    out: dict = {"res": type(check.resolution).__name__}
    if isinstance(check.resolution, Unknown):
        out["res_reason"] = check.resolution.label
    if check.missing is not None:
        out["missing"] = f"{check.missing.owner}.{check.missing.name}"
    if check.unknown is not None:
        out["unknown"] = check.unknown.label
    if check.target is not None:
        out["target"] = check.target.defined_at
        out["sig"] = [
            (p.name, p.kind.name, p.has_default, p.default) for p in check.target.signature.parameters
        ]
    verdict = check.verdict
    if isinstance(verdict, Ok):
        out["verdict"] = "ok"
        out["assignments"] = [list(a) for a in verdict.assignments]
    elif isinstance(verdict, Break):
        out["verdict"] = "break:" + ",".join(f"{p.kind.value}{list(p.names)}" for p in verdict.problems)
    elif isinstance(verdict, Unknown):
        out["verdict"] = "unknown:" + verdict.label
    if check.relocated:
        out["relocated"] = list(check.relocated)
    return out


def sarif_findings(path: Path) -> dict[str, list] | None:
    try:
        sarif = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    found: dict[str, list] = {}
    for run in sarif.get("runs", []):
        for result in run.get("results", []):
            for location in result.get("locations", []):
                physical = location.get("physicalLocation", {})
                module = Path(physical.get("artifactLocation", {}).get("uri", "")).stem
                found.setdefault(module, []).append(
                    [
                        result.get("ruleId"),
                        result.get("level"),
                        physical.get("region", {}).get("startLine"),
                        result.get("message", {}).get("text", "")[:300],
                    ]
                )
    return found


def _api_site(record: dict) -> dict | None:
    """The case's call of the benchmarked API: the last call site whose reference ends in its name."""
    last = record["api"].split(".")[-1]
    calls = [
        s
        for s in record.get("sites", [])
        if s["kind"] == "call"
        and (s["ref"] == last or s["ref"].endswith("." + last) or s["ref"].endswith("." + last + "(...)"))
    ]
    return calls[-1] if calls else None


def _side(check: dict | None) -> str:
    if check is None:
        return "none"
    if check.get("missing"):
        return "missing"
    if check.get("unknown"):
        return "unk:" + check["unknown"].split(":")[0]
    verdict = check.get("verdict") or check.get("res")
    return verdict.split(":[")[0] if verdict.startswith("break") else verdict


def _state(record: dict) -> str:
    if "error" in record:
        return "diag-error"
    if record.get("file_status") and record["file_status"][0] != "scanned":
        return f"file:{record['file_status']}"
    site = _api_site(record)
    if site is None:
        return "no-api-call-site"
    if "crash" in site:
        return "crash"
    return f"new={_side(site.get('new'))} old={_side(site.get('old'))}"


def summary(path: Path, levels: set[str]) -> int:
    from collections import Counter, defaultdict

    by_state: dict[str, Counter] = defaultdict(Counter)
    by_folder: dict[str, Counter] = defaultdict(Counter)
    for line in path.open():
        record = json.loads(line)
        flagged = any(f[1] in levels for f in record.get("findings", []))
        positive = record["label"][0] == "N"
        kind = ("TP" if flagged else "FN") if positive else ("FP" if flagged else "TN")
        if kind in ("FN", "FP"):
            rules = ",".join(sorted({f[0] for f in record.get("findings", []) if f[1] in levels}))
            by_state[kind][_state(record) + (f" [{rules}]" if rules else "")] += 1
            by_folder[kind][(record["lib"], record["folder"], record["label"], _state(record))] += 1
    for kind in ("FN", "FP"):
        print(f"== {kind} {sum(by_state[kind].values())}")
        for state, count in by_state[kind].most_common():
            print(f"  {count:4d} {state}")
        for key, count in sorted(by_folder[kind].items()):
            print(f"  {count:4d} {key}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--summary":
        return summary(Path(argv[2]), set(argv[3].split(",")) if len(argv) > 3 else {"error"})
    root, run, out_path = Path(argv[1]), argv[2], Path(argv[3])
    libs = set(argv[4].split(",")) if len(argv) > 4 else None
    cache = Cache()
    with out_path.open("w") as out:
        for case_json in sorted(root.glob("*/*/case.json")):
            meta = json.loads(case_json.read_text())
            if libs and meta["lib"] not in libs:
                continue
            folder = case_json.parent
            base = {"lib": meta["lib"], "folder": folder.name, "api": meta["api"]}
            findings = sarif_findings(root / "_runs" / run / meta["lib"] / f"{folder.name}.sarif")
            try:
                new_tree = locate(f"{meta['pypi']}=={meta['v2']}", role="upstream", cache=cache, offline=True)
                try:
                    old_tree = locate(
                        f"{meta['pypi']}=={meta['v1']}", role="upstream", cache=cache, offline=True
                    )
                except SourceError:  # the audit goes on without it (a note since 865b2b0)
                    old_tree = None
                down_tree = locate(str(folder / "down"), role="downstream", cache=cache, offline=True)
                names = frozenset(new_tree.import_names) | frozenset(
                    old_tree.import_names if old_tree else ()
                )
                scans, outcomes = scan_downstream(down_tree.root, names, cache.dir("scan"))
                new = Resolver(_index(new_tree, cache.dir("api")))
                old = Resolver(_index(old_tree, cache.dir("api"))) if old_tree else None
                relocator = Relocator(new)
            except Exception as exc:
                for case in meta["cases"]:
                    out.write(
                        json.dumps(
                            {
                                **base,
                                "module": case["module"],
                                "label": case["label"],
                                "error": repr(exc)[:300],
                            }
                        )
                        + "\n"
                    )
                continue
            status = {o.path: (o.status, o.reason) for o in outcomes}
            by_module = {Path(s.path).stem: s for s in scans}
            for case in meta["cases"]:
                module = case["module"]
                record = {
                    **base,
                    "module": module,
                    "label": case["label"],
                    "findings": (findings or {}).get(module, []),
                    "sarif": findings is not None,
                    "file_status": status.get(module + ".py"),
                    "sites": [],
                }
                scan = by_module.get(module)
                for site in scan.sites if scan is not None else ():
                    if site.kind is SiteKind.IMPORT:
                        continue
                    entry = {
                        "kind": site.kind.value,
                        "line": site.span.line,
                        "code": site.code[:120],
                        "ref": site.ref.render(),
                    }
                    try:
                        old_check = check_site(site, old, "old") if old is not None else None
                        entry["new"] = describe(check_site(site, new, "new", relocator, old_check))
                        entry["old"] = describe(old_check)
                    except Exception as exc:
                        entry["crash"] = repr(exc)[:200]
                    record["sites"].append(entry)
                out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
