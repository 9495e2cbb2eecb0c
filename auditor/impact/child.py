"""`python -m apidrift.auditor.impact.child`: one job (JSON on stdin) -> its row (JSON on stdout).

Used where forking the worker is not safe (a worker that runs tasks in threads). The limits are set
before the audit's modules are imported.
"""

from __future__ import annotations

import json
import os
import sys

from apidrift.auditor.impact.jobs import EXIT_MEMORY, Job, failed_row, limited_result


def main() -> int:
    job = Job(**json.loads(sys.stdin.buffer.read(1 << 20)))
    memory_payload = json.dumps(
        failed_row(
            job, "memory", f"the audit needed more than the memory limit of {job.memory_mb} MB; stopped"
        )
    ).encode()
    try:
        payload = json.dumps(limited_result(job)).encode()
        code = 0
    except MemoryError:
        payload, code = memory_payload, EXIT_MEMORY
    out = sys.stdout.buffer
    out.write(payload)
    out.flush()
    return code


if __name__ == "__main__":
    os._exit(main())
