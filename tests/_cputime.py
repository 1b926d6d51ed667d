"""CPU seconds of every test, its own and its descendants' (``pytest -p _cputime``).

Wall time says little on a busy machine; CPU time does not depend on the load. For each test
(setup, call and teardown) this records the CPU seconds of the pytest process and of every
process under it (kernels, browsers and their renderers, pool workers): a thread samples the
CPU time of every descendant from ``/proc`` twice a second, so that processes nobody waits for
(Chromium's renderers, reparented when the browser exits) count too; a process that ends
between two samples loses at most half a second. A module-scoped fixture's cost falls on the
test that set it up: sum by file for those. Appends one JSON line per test to
``$LECNOTES_CPU_LOG`` (default ``_build/test-cpu.jsonl``); ``python tests/_cputime.py [LOG]``
prints the costliest files and tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

LOG = Path(os.environ.get("LECNOTES_CPU_LOG",
                          Path(__file__).resolve().parents[1] / "_build" / "test-cpu.jsonl"))


_seen: dict[tuple[int, str], float] = {}  # (pid, start time) -> its last CPU seconds
_lock = threading.Lock()
_TICK = os.sysconf("SC_CLK_TCK")


def _sample() -> None:
    """Record the CPU seconds of every living descendant of this process."""
    stats = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), fields[19],
                                      (int(fields[11]) + int(fields[12])) / _TICK)
    mine, todo = set(), [os.getpid()]
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    while todo:
        for kid in children.get(todo.pop(), []):
            mine.add(kid)
            todo.append(kid)
    with _lock:
        for pid in mine:
            _, start, cpu = stats[pid]
            _seen[(pid, start)] = cpu


def _sampler() -> None:
    while True:
        with contextlib.suppress(Exception):
            _sample()
        time.sleep(0.5)


def _cpu() -> float:
    _sample()
    own = resource.getrusage(resource.RUSAGE_SELF)
    with _lock:
        return own.ru_utime + own.ru_stime + sum(_seen.values())


def pytest_configure(config):
    threading.Thread(target=_sampler, daemon=True, name="cputime").start()


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
