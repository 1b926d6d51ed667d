"""Kernels side by side (issue 62): ``tools/kernel_guard.py``.

Several kernels started at once on the ipc transport under the start-up lock all run their
notebook; a kernel that stops making progress (here: it stops itself, SIGSTOP, as a lost
request leaves kernel and client idle) is noticed after the stall time, killed, and the notebook
executed once more in a new kernel, saying so; a cell tagged ``waits`` is never a stall; a kernel
that computes without a message is not a stall.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest
from _tools import load_tool

CHAPTERS = ()  # book infrastructure
kernel_guard = load_tool("kernel_guard")


def _nb(*cells: str, tags: dict[int, list[str]] | None = None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    for i, t in (tags or {}).items():
        nb.cells[i].metadata["tags"] = t
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def test_watchdog_tells_a_silent_idle_kernel_from_a_silent_busy_one():
    clock = {"cpu": 0.0}
    stalled = []
    idle = kernel_guard.Watchdog(1, lambda: stalled.append("idle"), seconds=0.3, poll=0.05,
                                 cpu=lambda pid: clock["cpu"])
    busy_cpu = iter(range(10**6))
    busy = kernel_guard.Watchdog(1, lambda: stalled.append("busy"), seconds=0.3, poll=0.05,
                                 cpu=lambda pid: float(next(busy_cpu)))
    waits = kernel_guard.Watchdog(1, lambda: stalled.append("waits"), seconds=0.3, poll=0.05,
                                  cpu=lambda pid: 0.0)
    waits.waiting(True)
    time.sleep(1.0)
    for dog in (idle, busy, waits):
        dog.stop()
    assert stalled == ["idle"] and idle.stalled_for >= 0.3


def test_tree_cpu_counts_this_process():
    import os

    spent = time.process_time()
    counted = kernel_guard.tree_cpu(os.getpid())
    assert counted is None or counted >= spent - 0.05  # None: no /proc (not Linux)


def _run(args):
    nb, stall = args
    kernel_guard.STALL_SECONDS = stall
    retries = kernel_guard.execute(nb, name="t", timeout=120, stall_seconds=stall)
    return retries, [c.outputs for c in nb.cells]


@pytest.mark.slow  # four kernels at once: make test-slow
def test_several_kernels_at_once_all_finish(tmp_path):
    nbs = [_nb(f"import os, numpy as np\nx = np.ones(3) * {k}", "print(int(x.sum()))",
               "os.getpid()") for k in range(4)]
    with ProcessPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_run, [(nb, 60.0) for nb in nbs]))
    assert [r for r, _ in results] == [0, 0, 0, 0]
    printed = [outs[1][0]["text"] for _, outs in results]
    assert printed == [f"{3 * k}\n" for k in range(4)]
    pids = {outs[2][0]["data"]["text/plain"] for _, outs in results}
    assert len(pids) == 4  # four kernels


@pytest.mark.slow  # kernels and a 3 s stall: make test-slow
def test_a_stall_is_retried_once_and_said(tmp_path, capfd):
    mark = tmp_path / "stopped-once"
    stop = (f"import os, signal, pathlib\nm = pathlib.Path({str(mark)!r})\n"
            "if not m.exists():\n    m.touch()\n    os.kill(os.getpid(), signal.SIGSTOP)")
    nb = _nb("x = 1", stop, "print(x + 1)")
    assert kernel_guard.execute(nb, name="stops-once", timeout=120, stall_seconds=3) == 1
    assert nb.cells[2].outputs[0]["text"] == "2\n"
    assert "stops-once stalled at cell 1" in capfd.readouterr().err
    always = _nb("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)")
    with pytest.raises(kernel_guard.StallError, match="giving up"):
        kernel_guard.execute(always, name="stops", timeout=120, stall_seconds=3)


@pytest.mark.slow
def test_a_cell_that_waits_on_purpose_is_not_a_stall():
    nb = _nb("import time\ntime.sleep(4)\n'slept'", tags={0: ["waits"]})
    assert kernel_guard.execute(nb, name="waits", timeout=120, stall_seconds=2) == 0
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "'slept'"


def test_the_runners_use_the_guard():
    root = Path(__file__).resolve().parents[1]
    for tool in ("execute.py", "sweep.py", "run_nbval.py"):
        assert "kernel_guard" in (root / "tools" / tool).read_text(), tool
    assert "kernel_guard" in (root / "benchmarks" / "execute_notebook.py").read_text()


def test_run_parallel_reruns_a_job_that_idles_once_and_reads_long_output(capsys):
    import sys

    notebooks = load_tool("notebooks")
    root = Path(__file__).resolve().parents[1]
    jobs = [("idle", [sys.executable, "-c", "import time; time.sleep(60)"]),
            # more than a pipe's 64 kB: read from a file, not a pipe, so it cannot block
            ("loud", [sys.executable, "-c", "print('x' * 200_000)"])]
    start = time.monotonic()
    done = notebooks.run_parallel(jobs, 2, {}, root, stall=1.0)
    assert time.monotonic() - start < 30
    assert done["loud"][0] == 0 and len(done["loud"][2]) > 200_000
    assert done["idle"][0] == 1 and "stalled" in done["idle"][2]
    said = capsys.readouterr().out
    assert "idle: stalled" in said and "running it once more" in said and "again; failed" in said
