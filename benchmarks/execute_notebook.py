"""Execute one notebook in a fresh kernel; print its times, the kernel's peak memory and cells.

Used by benchmarks/run.py: ``python benchmarks/execute_notebook.py lectures/NN.ipynb`` prints
one JSON line ``{"seconds", "cpu_seconds", "peak_mb", "retries", "cells"}``: the wall time, the
kernel's CPU time and maximum resident set size (the kernel is a child of this process, so
after it exits ``RUSAGE_CHILDREN`` holds them), the stalls retried (``tools/kernel_guard.py``)
and per code cell its index, its seconds (nbclient's timestamps: from the kernel starting the
cell to its reply) and its source.
"""

import json
import resource
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import kernel_guard  # noqa: E402  (an ipc kernel under the start-up lock; a stall retried once)


def cell_seconds(cell) -> float | None:
    """The execution time nbclient recorded in a cell's metadata (None if it has none)."""
    times = cell.get("metadata", {}).get("execution", {})
    try:
        start = times.get("iopub.execute_input") or times["iopub.status.busy"]
        end = times["shell.execute_reply"]
    except KeyError:
        return None
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def main(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    retries = kernel_guard.execute(nb, name=Path(path).stem, timeout=1200, kernel_name="python3",
                                   record_timing=True)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cells = [{"index": i, "seconds": cell_seconds(c), "source": c.source[:400]}
             for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    print(json.dumps({"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                      "peak_mb": usage.ru_maxrss / 1024, "retries": retries, "cells": cells}))


if __name__ == "__main__":
    main(sys.argv[1])
