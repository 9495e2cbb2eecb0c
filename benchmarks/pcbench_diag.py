"""Per-site diagnosis of apidrift on PCBench cases adapted by the PCBench harness (adapt.py).

    python benchmarks/pcbench_diag.py CASES RUN_NAME OUT.jsonl [lib,lib,...]

CASES is adapt.py's output folder; RUN_NAME is the run_tool.py --name whose SARIFs are read from
CASES/_runs/RUN_NAME/. Writes one JSON line per PCBench test case: its label, the SARIF findings
in its module, and every call and attribute site with, for the new (V2) and old (V1) version, the
resolution, the first certain miss, the call target and its signature, the binder's verdict and
the reason the site could not be checked. Needs the upstream sources already in the cache (run
the audit first; this script works offline, with APIDRIFT_CACHE_DIR as the audit had it).

It reads engine internals (locate, scan_downstream, Resolver, check_site), written against commit
88ad3a3: adjust the imports if they move. It changes nothing in the engine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from apidrift.auditor.bind import Break, Ok, Unknown as BindUnknown
from apidrift.auditor.cache import Cache
from apidrift.auditor.checked import check_site
from apidrift.auditor.downstream import scan_downstream
from apidrift.auditor.engine import _index
from apidrift.auditor.resolve import Resolver, Unknown
from apidrift.auditor.sources import locate


def describe(check) -> dict | None:  # type: ignore[no-untyped-def]
    if check is None:
        return None
    out: dict = {"res": type(check.resolution).__name__}
    if isinstance(check.resolution, Unknown):
        out["res_reason"] = check.resolution.reason
    if check.missing is not None:
        out["missing"] = f"{check.missing.owner}.{check.missing.name}"
    if check.unknown_reason:
        out["unknown"] = check.unknown_reason
    if check.target is not None:
        out["target"] = check.target.defined_at
        out["sig"] = [(p.name, p.kind.name, p.has_default, p.default) for p in check.target.signature.parameters]
    verdict = check.verdict
    if isinstance(verdict, Ok):
        out["verdict"] = "ok"
        out["assignments"] = [list(a) for a in verdict.assignments]
    elif isinstance(verdict, Break):
        out["verdict"] = "break:" + ",".join(f"{p.kind.value}{list(p.names)}" for p in verdict.problems)
    elif isinstance(verdict, BindUnknown):
        out["verdict"] = "unknown:" + verdict.reason
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
                    [result.get("ruleId"), result.get("level"), physical.get("region", {}).get("startLine"),
                     result.get("message", {}).get("text", "")[:300]]
                )
    return found


def main(argv: list[str]) -> int:
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
                old_tree = locate(f"{meta['pypi']}=={meta['v1']}", role="upstream", cache=cache, offline=True)
                down_tree = locate(str(folder / "down"), role="downstream", cache=cache, offline=True)
                names = frozenset(new_tree.import_names) | frozenset(old_tree.import_names)
                scans, outcomes = scan_downstream(down_tree.root, names, cache.dir("scan"))
                new = Resolver(_index(new_tree, cache.dir("api")))
                old = Resolver(_index(old_tree, cache.dir("api")))
            except Exception as exc:  # noqa: BLE001 - a folder apidrift could not run
                for case in meta["cases"]:
                    out.write(json.dumps({**base, "module": case["module"], "label": case["label"], "error": repr(exc)[:300]}) + "\n")
                continue
            status = {o.path: (o.status, o.reason) for o in outcomes}
            by_module = {Path(s.path).stem: s for s in scans}
            for case in meta["cases"]:
                module = case["module"]
                record = {**base, "module": module, "label": case["label"], "findings": (findings or {}).get(module, []),
                          "sarif": findings is not None, "file_status": status.get(module + ".py"), "sites": []}
                scan = by_module.get(module)
                for site in scan.sites if scan is not None else ():
                    if site.kind == "import":
                        continue
                    entry = {"kind": site.kind, "line": site.span.line, "code": site.code[:120], "ref": site.ref.render()}
                    try:
                        entry["new"] = describe(check_site(site, new, "new"))
                        entry["old"] = describe(check_site(site, old, "old"))
                    except Exception as exc:  # noqa: BLE001 - reported, not hidden
                        entry["crash"] = repr(exc)[:200]
                    record["sites"].append(entry)
                out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
