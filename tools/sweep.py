"""Execute lectures under seed roots and scales as Dask tasks, and collect their claim records.

A *task* is one lecture x one seed root x one scale (:class:`Task`). On a Dask worker it runs
the lecture in a fresh kernel (nbclient, BLAS on one thread, ``LECNOTES_SEED``,
``LECNOTES_SCALE``, failing claims recorded rather than raised) in a subprocess of its own, and
returns the lecture's claim record with the task's seconds and the kernel's peak memory. The
client writes each record as it arrives, under ``OUT/scale-<s>/root-<r>/<stem>.json`` (the
format of the book's ledger, so :func:`lecnotes.book.claims.load_records` reads a folder), and
the task's metadata (seconds, peak memory, exit status, sources digest) in ``tasks/<stem>.json``
below it.

Where the tasks run (:func:`connect`):

- by default an embedded ``distributed.LocalCluster``: one single-threaded worker process per
  core (``--workers`` to change it), nothing to start;
- ``SCHEDULER=tcp://host:8786`` (or the path of a scheduler file written by
  ``dask scheduler --scheduler-file``, or by dask-jobqueue) runs the same tasks on an existing
  cluster; its workers need this repository at the same path (a shared file system) and the
  development virtualenv. The README shows a SLURM cluster.

A task lost with its worker is run again on another one (the scheduler's own rescheduling, up
to ``distributed.scheduler.allowed-failures`` times); a task whose record is already written for
the current sources of its lecture (:func:`sources_digest`: the notebook, its chapter's
subpackage and the shared tiers) is skipped, so a re-run after an interruption, or after an
edit of one chapter, does only what is left (``fresh=True`` to redo everything). A progress
line (tasks done, failed, time left) and the dashboard's address are printed.

:func:`run_serial` executes the same tasks one after another in this process, with no Dask:
the reference the cluster's results are tested against (tests/test_sweep.py).

This module is book infrastructure (``tools/``); Dask and distributed are in
``requirements-dev.txt``, not in the reader's requirements.
"""

from __future__ import annotations

import json
import logging
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernel_guard  # noqa: E402
import notebooks  # noqa: E402

from lecnotes.book import claims  # noqa: E402

SCHEDULER_ENV = "SCHEDULER"
CELL_TIMEOUT = 1800
PEAK_TAG = "SWEEP-PEAK-KB"


@dataclass(frozen=True)
class Task:
    """One execution: a lecture (its path) under a seed root at a scale."""

    path: str
    root: int
    scale: float = 1.0

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    @property
    def key(self) -> str:
        """The task's name on the cluster and in the progress output."""
        return f"{self.stem}-root{self.root}-scale{self.scale:g}"

    def folder(self, out: Path) -> Path:
        return Path(out) / f"scale-{self.scale:g}" / f"root-{self.root}"


def tasks(paths, roots, scales=(1.0,)) -> list[Task]:
    """Every lecture x root x scale, the slowest lectures and the largest scales first."""
    ordered = notebooks.slowest_first([Path(p) for p in paths])
    return [Task(str(p), int(r), float(s)) for s in sorted(scales, reverse=True)
            for p in ordered for r in roots]


EXPLORER_CALL = re.compile(r"\bexplorer\.\w+_explorer\(")
"""A cell that shows a chapter's live explorer (ipywidgets sliders)."""


def without_explorers(nb) -> int:
    """Replace the cells that display a live explorer with a comment; return how many.

    nbclient can block for good on a cell that displays ipywidgets (jupyter/nbclient#312: the
    shell reply is never read; seen here on chapters 3 and 9, idle kernel and idle client for
    15 minutes). An explorer holds no claim and its figure is drawn by the chapter's static
    cells, so the sweeps do not run them; nbval and the book build still do.
    """
    count = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and EXPLORER_CALL.search(cell.source):
            if "claims." in cell.source:
                raise ValueError("an explorer cell holds a claim: move the claim out of it")
            cell.source = "# the live explorer is not run in sweeps (tools/sweep.py)"
            count += 1
    return count


def _execute(path: Path) -> int:
    """In the task's subprocess: run the notebook (without its live explorers), going on after
    errors; print the errors and the kernel's peak resident memory and CPU time."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    without_explorers(nb)
    # an ipc kernel started under the start-up lock; executed once more after a stall
    kernel_guard.execute(nb, name=path.stem, timeout=CELL_TIMEOUT, kernel_name="python3",
                         allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    for err in errors:
        print(f"ERROR {err.get('ename')}: {err.get('evalue')}"[:500])
    # the kernel is this process's child, reaped at shutdown: its peak memory and its CPU
    # time are RUSAGE_CHILDREN's (CPU time still grows with contention for caches and memory)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{PEAK_TAG} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime:.1f}", flush=True)
    return 1 if errors else 0


def run_task(task: Task) -> dict:
    """Execute ``task`` (on a worker, or here) and return its record and metadata.

    Returns a dict with ``task`` (the :class:`Task` as a dict), ``record`` (the lecture's claim
    record: ``chapter``, ``provenance``, ``claims``; ``None`` if the lecture recorded nothing),
    ``returncode``, ``seconds`` (wall), ``cpu_seconds`` and ``peak_mb`` (the kernel's CPU time
    and peak resident memory), ``host`` and ``output`` (the last lines).
    """
    path = Path(task.path)
    with tempfile.TemporaryDirectory(prefix="lecnotes-sweep-") as tmp:
        env = notebooks.one_thread_env(
            LECNOTES_SEED=str(task.root), LECNOTES_SCALE=f"{task.scale:g}",
            LECNOTES_CLAIMS_DIR=tmp, LECNOTES_EXECUTOR="sweep", **{claims.NO_RAISE: "1"})
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--execute", str(path)], env=env,
                              cwd=str(path.parent), capture_output=True, text=True)
        seconds = time.perf_counter() - start
        record_path = Path(tmp) / f"{path.stem}.json"
        record = json.loads(record_path.read_text()) if record_path.is_file() else None
    output = proc.stdout + proc.stderr
    usage = [line.split() for line in proc.stdout.splitlines() if line.startswith(PEAK_TAG)]
    return {"task": asdict(task), "record": record, "returncode": proc.returncode,
            "seconds": round(seconds, 1),
            "peak_mb": round(int(usage[-1][1]) / 1024) if usage else None,
            "cpu_seconds": float(usage[-1][2]) if usage else None,
            "host": os.uname().nodename, "output": output[-3000:]}


SHARED = ("core", "models", "book", "__init__.py")
"""The parts of ``lecnotes`` every lecture depends on."""


def sources_digest(path) -> str:
    """A short SHA-256 digest of what a lecture's execution depends on: the notebook, the
    shared tiers of ``lecnotes`` (:data:`SHARED`) and its chapter's subpackage (from
    :data:`lecnotes.chapters.CHAPTERS`; none for a notebook outside the chapter map)."""
    import hashlib

    from lecnotes.chapters import CHAPTERS

    path = Path(path)
    package = Path(claims.__file__).resolve().parents[1]
    parts = list(SHARED) + [ch.subpackage for ch in CHAPTERS if ch.notebook == path.stem]
    files = [path]
    for part in parts:
        target = package / part
        files += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _done(task: Task, out: Path, digest: str) -> bool:
    meta = task.folder(out) / "tasks" / f"{task.stem}.json"
    if not meta.is_file():
        return False
    try:
        info = json.loads(meta.read_text())
    except json.JSONDecodeError:
        return False
    return info.get("digest") == digest and info.get("returncode") == 0


def write(result: dict, out: Path, digest: str) -> None:
    """Store one task's record and metadata (the client does this as results arrive)."""
    task = Task(**result["task"])
    folder = task.folder(out)
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    if result["record"] is not None:
        (folder / f"{task.stem}.json").write_text(json.dumps(result["record"], indent=1))
    else:
        (folder / f"{task.stem}.json").unlink(missing_ok=True)
    meta = {k: v for k, v in result.items() if k != "record"}
    (folder / "tasks" / f"{task.stem}.json").write_text(json.dumps({**meta, "digest": digest},
                                                              indent=1))


class Progress:
    """One line: tasks done and failed out of all, elapsed and estimated time left."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.failed = total, 0, 0
        self.start = time.perf_counter()
        self.stream = stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        left_text = "?" if left != left else f"{left / 60:.1f} min"
        return (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} done, "
                f"{self.failed} failed, {elapsed / 60:.1f} min elapsed, ~{left_text} left")

    def update(self, result: dict) -> None:
        self.done += 1
        self.failed += result["returncode"] != 0
        name = Task(**result["task"]).key
        status = "ok" if result["returncode"] == 0 else "FAILED"
        text = f"{self.line()}  ({name}: {status}, {result['seconds']:.0f} s)"
        if self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def connect(workers: int | None = None, scheduler: str | None = None):
    """A ``distributed.Client``: on ``scheduler`` (an address or a scheduler file; default
    ``$SCHEDULER``), else on a new ``LocalCluster`` of ``workers`` single-threaded worker
    processes (default: one per core)."""
    import cloudpickle
    from distributed import Client, LocalCluster

    # the workers need not import tools/: the task's code travels with it
    for module in (sys.modules[__name__], notebooks):
        cloudpickle.register_pickle_by_value(module)
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        if Path(scheduler).is_file():
            return Client(scheduler_file=scheduler)
        return Client(scheduler)
    n = workers or os.cpu_count() or 1
    import dask

    # one task per worker at a time, the rest queued on the scheduler: a task lasts minutes,
    # and a worker given two at once (the default saturation 1.1 rounds up) idles its peer
    dask.config.set({"distributed.scheduler.worker-saturation": 1.0})
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    return Client(cluster)


def sweep(todo: list[Task], out: Path, client, *, fresh: bool = False, stream=None) -> list[dict]:
    """Run ``todo`` on ``client``'s cluster, writing each result under ``out`` as it arrives.

    Returns the results of the tasks that ran (a skipped task is not run again; its record is
    on disk). Each task's result is written once, whatever workers were lost on the way.
    """
    from distributed import as_completed

    out = Path(out)
    digests = {t.path: sources_digest(t.path) for t in todo}
    pending = [t for t in todo if fresh or not _done(t, out, digests[t.path])]
    stream = stream or sys.stdout
    stream.write(f"sweep: {len(pending)} task(s) to run, {len(todo) - len(pending)} already done; "
                 f"dashboard {client.dashboard_link}\n")
    stream.flush()
    futures = [client.submit(run_task, t, key=t.key, pure=False) for t in pending]
    progress = Progress(len(futures), stream)
    results = []
    for future in as_completed(futures):
        result = future.result()
        write(result, out, digests[result["task"]["path"]])
        results.append(result)
        progress.update(result)
        future.release()
    progress.close()
    return results


def run_serial(todo: list[Task], out: Path, *, fresh: bool = False, stream=None) -> list[dict]:
    """The same tasks one after another in this process (no Dask): the reference path."""
    out = Path(out)
    digests = {t.path: sources_digest(t.path) for t in todo}
    pending = [t for t in todo if fresh or not _done(t, out, digests[t.path])]
    progress = Progress(len(pending), stream)
    results = []
    for task in pending:
        result = run_task(task)
        write(result, out, digests[task.path])
        results.append(result)
        progress.update(result)
    progress.close()
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--execute":
        sys.exit(_execute(Path(sys.argv[2])))
    sys.exit("usage: tools/robustness.py runs the sweeps (this module is its engine)")
