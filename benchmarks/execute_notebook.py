"""Execute one notebook in a fresh kernel; print its times, the kernel's peak memory and cells.

Used by benchmarks/run.py: ``python benchmarks/execute_notebook.py lectures/NN.ipynb`` prints
one JSON line ``{"seconds", "cpu_seconds", "peak_mb", "retries", "cells"}``: the wall time, the
kernel's CPU time and maximum resident set size (the kernel is a child of this process, so
after it exits ``RUSAGE_CHILDREN`` holds them), the stalls retried (``tools/kernel_guard.py``)
and per code cell its index, its seconds (nbclient's timestamps: from the kernel starting the
cell to its reply) and its source.

``--profile OUT.json`` runs the notebook under cProfile instead (a first cell starts it in the
kernel, a last cell stops it) and writes, for every function of ``lecnotes``, its calls, own
time and cumulative time to ``OUT.json``: where a lecture's time goes by function. The profiler
slows Python code down, so these times are for ranking, not for the budget (``run.py`` times
the lectures without it).
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


START = """import cProfile as _lecnotes_cprofile
_lecnotes_profile = _lecnotes_cprofile.Profile()
_lecnotes_profile.enable()"""

STOP = """_lecnotes_profile.disable()
import json as _json, pstats as _pstats
_rows = [{"function": f"{k[0].split('lecnotes/', 1)[-1]}:{k[2]}", "calls": v[1],
          "own": v[2], "cumulative": v[3]}
         for k, v in _pstats.Stats(_lecnotes_profile).stats.items()
         if "/lecnotes/" in k[0].replace(chr(92), "/")]
with open(OUT, "w") as _f:
    _json.dump(sorted(_rows, key=lambda r: -r["cumulative"]), _f)"""


def profile(path: str, out: str) -> None:
    """Execute ``path`` under cProfile; the ``lecnotes`` functions' times go to ``out``."""
    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first = code[0] if code else 0
    # after the first code cell (the install cell of Colab), before every other
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(START))
    nb.cells.append(nbformat.v4.new_code_cell(STOP.replace("OUT", repr(str(Path(out).resolve())))))
    kernel_guard.execute(nb, name=Path(path).stem, timeout=3600, kernel_name="python3")


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
    if len(sys.argv) == 4 and sys.argv[2] == "--profile":
        profile(sys.argv[1], sys.argv[3])
    else:
        main(sys.argv[1])
