"""CPU seconds of every test, its own and its children's (``pytest -p _cputime``).

Wall time says little on a busy machine; CPU time does not depend on the load. For each test
(setup, call and teardown) this records the CPU seconds of the pytest process and of every
child process that ended meanwhile (kernels, browsers, pool workers: ``RUSAGE_CHILDREN`` counts
a child, and its own children, once it has been waited for). A module-scoped fixture's cost
falls on the test that set it up, and a browser's on the test whose teardown closed it: sum by
file for those. Appends one JSON line per test to ``$LECNOTES_CPU_LOG`` (default
``_build/test-cpu.jsonl``) and prints the costliest tests and files at the end.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import defaultdict
from pathlib import Path

import pytest

LOG = Path(os.environ.get("LECNOTES_CPU_LOG",
                          Path(__file__).resolve().parents[1] / "_build" / "test-cpu.jsonl"))


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.perf_counter()
    yield
    row = {"test": item.nodeid, "cpu": round(_cpu() - cpu, 2),
           "wall": round(time.perf_counter() - wall, 2),
           "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with LOG.open("a") as f:
        f.write(json.dumps(row) + "\n")


def summary(path: Path = LOG, top: int = 15) -> str:
    """The costliest tests and the CPU seconds by file, from a log."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        f = files[r["test"].split("::")[0]]
        f[0] += r["cpu"]
        f[1] += r["wall"]
    lines = [f"{len(rows)} tests, {sum(r['cpu'] for r in rows):.0f} CPU s, "
             f"{sum(r['wall'] for r in rows):.0f} s of test wall time (summed over workers)"]
    lines += [f"  {cpu:7.1f} CPU s {wall:7.1f} wall s  {name}" for name, (cpu, wall) in
              sorted(files.items(), key=lambda kv: -kv[1][0])]
    lines += ["costliest tests:"]
    lines += [f"  {r['cpu']:7.1f} CPU s {r['wall']:7.1f} wall s  {r['test']}"
              for r in sorted(rows, key=lambda r: -r["cpu"])[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else LOG))
