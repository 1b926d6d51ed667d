"""Many small notebook executions side by side: does any of them stall? (issue 62)

Usage (from the repository root, in the reader's virtualenv)::

    python tools/stress_kernels.py [--executions 40] [--jobs 2] [--mode plain|guarded|both]
                                   [--stall 30] [--bound 300] [--minutes 20]

Each execution is a new process with a new kernel (BLAS on one thread), ``--jobs`` at a time,
as ``tools/execute.py`` and the Dask sweeps run lectures. The notebooks are small and varied
(imports, short NumPy loops, prints, a figure, a cell that raises inside a ``try``) so that
kernels start, exchange many messages and stop often: the moments a start-up race or a lost
message would show. ``plain`` is nbclient as the runners used it (TCP ports chosen by
jupyter_client, no lock); ``guarded`` is ``tools/kernel_guard.py`` (ipc transport, start-up
lock, retry after a stall). Both watch every execution with the same stall detector: no kernel
message for ``--stall`` seconds while the kernel is idle counts as a stall (the kernel is then
killed, so that no execution waits for the 900 s cell timeout); ``--bound`` ends an execution
whatever it does. Prints one line per execution and a summary; writes the rows as JSON lines
to ``_build/stress/<mode>.jsonl``. Stops starting new executions after ``--minutes``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kernel_guard  # noqa: E402
import notebooks  # noqa: E402

OUT = notebooks.ROOT / "_build" / "stress"

CELLS = [
    "import numpy as np\nimport matplotlib\n"
    "matplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\nrng = np.random.default_rng({seed})",
    "x = rng.standard_normal((200, 200))\nfor _ in range({loops}):\n"
    "    x = np.tanh(x @ x.T / 200)\nfloat(x.mean())",
    "for i in range({prints}):\n    print(i, end=' ')",
    "fig, ax = plt.subplots(figsize=(3, 2))\nax.plot(np.sort(rng.standard_normal(100)))\n"
    "plt.show()",
    "try:\n    1 / 0\nexcept ZeroDivisionError as err:\n    print('caught', err)",
    "s = 0.0\nfor k in range({spin}):\n    s += k ** 0.5\ns",
    "from IPython.display import display, Markdown\ndisplay(Markdown('**done {seed}**'))",
]


def make_notebooks(folder: Path, count: int = 6) -> list[Path]:
    """``count`` small notebooks with different amounts of work and output."""
    import nbformat

    paths = []
    for k in range(count):
        params = {"seed": k, "loops": 5 + 10 * k, "prints": 20 + 200 * k, "spin": 20000 * (k + 1)}
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c.format(**params)) for c in CELLS + CELLS]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        path = folder / f"stress_{k}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


def one(path: str, mode: str, stall: float) -> dict:
    """In the execution's own process: execute ``path`` once; the row of the result."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    start, row = time.perf_counter(), {"notebook": Path(path).stem, "mode": mode}
    try:
        if mode == "guarded":
            row["retries"] = kernel_guard.execute(nb, name=Path(path).stem, timeout=600,
                                                  stall_seconds=stall, kernel_name="python3")
            row["status"] = "ok" if not row["retries"] else "ok after a stall"
        else:
            from nbclient.exceptions import DeadKernelError

            c = kernel_guard.client(nb, startup_guard=False, stall_seconds=stall, timeout=600,
                                    kernel_name="python3")
            try:
                c.execute()
                row["status"] = "ok"
            except DeadKernelError:
                dog = c.watchdog
                if dog is None or dog.stalled_for is None:
                    raise
                row["status"] = "stalled"
                row["cell"] = getattr(dog, "current", None)
    except kernel_guard.StallError as err:
        row["status"], row["error"] = "stalled twice", str(err)
    except Exception as err:  # noqa: BLE001 - a row, whatever happened
        row["status"], row["error"] = "error", f"{type(err).__name__}: {err}"[:400]
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def run(mode: str, paths: list[Path], executions: int, jobs: int, stall: float, bound: float,
        minutes: float) -> list[dict]:
    env = notebooks.one_thread_env(PYTHONUNBUFFERED="1")
    pending = [paths[i % len(paths)] for i in range(executions)]
    running, rows, started = [], [], time.monotonic()
    OUT.mkdir(parents=True, exist_ok=True)
    log = (OUT / f"{mode}.jsonl").open("w")
    while pending or running:
        while pending and len(running) < jobs and time.monotonic() - started < minutes * 60:
            path = pending.pop(0)
            out = tempfile.TemporaryFile(mode="w+")
            proc = subprocess.Popen([sys.executable, __file__, "--one", str(path), "--mode", mode,
                                     "--stall", str(stall)], stdout=out, stderr=subprocess.STDOUT,
                                    text=True, env=env, start_new_session=True)
            running.append((proc, out, time.monotonic(), path))
        if time.monotonic() - started >= minutes * 60:
            pending.clear()
        time.sleep(0.2)
        for item in list(running):
            proc, out, t0, path = item
            over = time.monotonic() - t0 > bound
            if proc.poll() is None and not over:
                continue
            if over and proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
            out.seek(0)
            text = out.read()
            out.close()
            lines = [ln for ln in text.splitlines() if ln.startswith("{")]
            row = json.loads(lines[-1]) if lines else {
                "notebook": path.stem, "mode": mode,
                "status": "bound reached" if over else f"exit {proc.returncode}",
                "seconds": round(time.monotonic() - t0, 1), "error": text[-300:]}
            if "kernel_guard:" in text:
                row["said"] = [ln for ln in text.splitlines() if "kernel_guard:" in ln]
            row["index"] = len(rows)
            rows.append(row)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(f"  [{mode} {len(rows):3d}] {row['notebook']}: {row['status']} in "
                  f"{row['seconds']} s" + (f" ({row.get('error', '')[:120]})"
                                           if "error" in row else ""), flush=True)
            running.remove(item)
    log.close()
    return rows


def summary(rows: list[dict]) -> str:
    from collections import Counter

    counts = Counter(r["status"] for r in rows)
    secs = sorted(r["seconds"] for r in rows)
    median = secs[len(secs) // 2] if secs else float("nan")
    return (f"{len(rows)} executions: " + ", ".join(f"{v} {k}" for k, v in counts.items())
            + f"; median {median} s, longest {secs[-1] if secs else 'nan'} s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--executions", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mode", choices=["plain", "guarded", "both"], default="both")
    ap.add_argument("--stall", type=float, default=30.0, help="seconds without a message")
    ap.add_argument("--bound", type=float, default=300.0, help="seconds per execution at most")
    ap.add_argument("--minutes", type=float, default=20.0, help="start no execution after")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.mode, args.stall)), flush=True)
        return 0
    modes = ["plain", "guarded"] if args.mode == "both" else [args.mode]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="lecnotes-stress-") as tmp:
        paths = make_notebooks(Path(tmp))
        for mode in modes:
            print(f"{mode}: {args.executions} executions, {args.jobs} at a time", flush=True)
            rows = run(mode, paths, args.executions, args.jobs, args.stall, args.bound,
                       args.minutes)
            print(f"{mode}: {summary(rows)}", flush=True)
            bad += sum(r["status"] not in ("ok", "ok after a stall") for r in rows
                       if mode == "guarded")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
