"""Running the lectures two at a time, slowest first: shared by ``execute.py`` and ``run_nbval.py``.

Both runners execute each lecture in its own process with BLAS and OpenMP pinned to one thread
(two lectures on a 2-core machine must not each start two BLAS threads). The order is the
longest processing time first, from the durations the runners record in
``_build/durations.json`` (falling back to ``benchmarks/lecture-seconds.json``, the one-thread
times of ``make benchmarks``), so the slowest lecture starts at once and sets the wall time
instead of waiting in a queue. Only the standard library: this runs in the reader's
virtualenv.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LECTURES = ROOT / "lectures"
RECORDED = ROOT / "_build" / "durations.json"
BENCHMARKED = ROOT / "benchmarks" / "lecture-seconds.json"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def lectures(names: list[str] | None = None) -> list[Path]:
    """The lecture notebooks: all of ``lectures/``, or those named (path, stem or number)."""
    every = sorted(LECTURES.glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return every
    chosen = []
    for name in names:
        path = Path(name)
        if path.suffix == ".ipynb" and path.is_file():
            chosen.append(path.resolve())
            continue
        match = [p for p in every if p.stem == name or p.stem.split("_", 1)[0] == name.zfill(2)]
        if not match:
            raise SystemExit(f"no lecture {name!r} in {LECTURES} (give a number, stem or path)")
        chosen.extend(match)
    return chosen


def _durations() -> dict[str, float]:
    out = {}
    for path in (BENCHMARKED, RECORDED):  # recorded times override the benchmarked ones
        if path.is_file():
            try:
                out.update(json.loads(path.read_text()))
            except (json.JSONDecodeError, TypeError):
                pass
    return out


def slowest_first(paths: list[Path]) -> list[Path]:
    """Order ``paths`` by expected duration, longest first (unknown ones first of all)."""
    known = _durations()
    return sorted(paths, key=lambda p: -known.get(p.stem, float("inf")))


def record(durations: dict[str, float]) -> None:
    """Remember measured durations (seconds by lecture stem) for the next schedule."""
    known = {}
    if RECORDED.is_file():
        try:
            known = json.loads(RECORDED.read_text())
        except json.JSONDecodeError:
            known = {}
    known.update({k: round(v, 1) for k, v in durations.items()})
    RECORDED.parent.mkdir(parents=True, exist_ok=True)
    RECORDED.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")


def one_thread_env(**extra: str) -> dict[str, str]:
    """The current environment with BLAS / OpenMP pinned to one thread, plus ``extra``."""
    env = dict(os.environ)
    env.update({k: "1" for k in THREAD_VARIABLES})
    env.update(extra)
    return env


def run_parallel(jobs: list[tuple[str, list[str]]], workers: int, env: dict, cwd: Path,
                 stall: float | None = None):
    """Run ``(name, argv)`` jobs, ``workers`` at a time in the given order.

    Returns ``{name: (returncode, seconds, output)}``; prints one line per finished job. The
    output goes to a temporary file, not a pipe (a pipe read only at the end blocks a job that
    writes more than its 64 kB buffer). A job whose process tree (the runner and its kernel)
    used no CPU for ``stall`` seconds (default ``LECNOTES_STALL_SECONDS``, 60) is stalled
    (``kernel_guard``): it is killed and run once more, saying so; a second stall fails it.
    """
    import kernel_guard

    stall = kernel_guard.STALL_SECONDS if stall is None else stall
    pending, running, done = [(name, argv, 0) for name, argv in jobs], {}, {}
    try:
        _run_jobs(pending, running, done, workers, env, cwd, stall, kernel_guard)
    finally:  # interrupted (Ctrl-C, or SIGTERM under run_nbval.py): no job outlives us
        for job in running.values():
            kernel_guard.kill_tree(job[0])
            job[2].close()
    return done


def _run_jobs(pending, running, done, workers, env, cwd, stall, kernel_guard) -> None:
    import tempfile

    while pending or running:
        while pending and len(running) < workers:
            name, argv, attempt = pending.pop(0)
            out = tempfile.TemporaryFile(mode="w+")
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, text=True, start_new_session=True)
            now = time.perf_counter()
            # [process, start, output, argv, attempt, last sample, CPU at the last progress,
            #  time of the last progress]
            running[name] = [proc, now, out, argv, attempt, now, 0.0, now]
        time.sleep(0.2)
        for name, job in list(running.items()):
            proc, start, out, argv, attempt, sampled, cpu, progress = job
            now = time.perf_counter()
            if proc.poll() is None:
                if now - sampled < min(5.0, stall / 4):
                    continue
                job[5] = now
                used = kernel_guard.tree_cpu(proc.pid)
                if used is None or used - cpu > kernel_guard.IDLE_CPU:
                    job[6], job[7] = (used or 0.0), now
                    continue
                if now - progress < stall:
                    continue
                kernel_guard.kill_tree(proc)
                out.close()
                del running[name]
                said = (f"  {name}: stalled (no CPU used by its runner and kernel for "
                        f"{now - progress:.0f} s)")
                if attempt == 0:
                    print(said + "; killed, running it once more", flush=True)
                    pending.insert(0, (name, argv, 1))
                else:
                    print(said + " again; failed", flush=True)
                    done[name] = (1, now - start, said.strip())
                continue
            out.seek(0)
            output = out.read()
            out.close()
            seconds = now - start
            done[name] = (proc.returncode, seconds, output)
            del running[name]
            status = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            print(f"  {name}: {status} in {seconds:.0f} s", flush=True)
