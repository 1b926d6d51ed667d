"""Execute one notebook in a fresh kernel; print its wall time and the kernel's peak memory.

Used by benchmarks/run.py: ``python benchmarks/execute_notebook.py lectures/NN.ipynb``
prints ``{"seconds": ..., "peak_mb": ...}``. The kernel is a child of this process, so after
it exits ``RUSAGE_CHILDREN`` holds its maximum resident set size.
"""

import json
import resource
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import kernel_guard  # noqa: E402  (an ipc kernel under the start-up lock; a stall retried once)


def main(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    kernel_guard.execute(nb, name=Path(path).stem, timeout=1200, kernel_name="python3")
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024}))


if __name__ == "__main__":
    main(sys.argv[1])
