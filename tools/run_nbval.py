"""Test every lecture with nbval, two at a time, slowest first.

Usage (from the repository root; ``make test-notebooks`` and ``make chapter`` call it)::

    .venv/bin/python tools/run_nbval.py [--jobs 2] [LECTURE ...]

Each lecture runs in its own ``pytest --nbval-lax`` process with the interpreter that runs
this script, so that under ``make`` the notebooks execute in the reader's virtualenv, the
one installed from ``requirements.txt`` alone (what Binder installs): a lecture that needs a
package missing from ``requirements.txt`` fails here. BLAS is pinned to one thread per kernel.
Exit status 1 if any lecture fails; the output of a failing lecture is printed in full.

With ``--cache`` (what ``make test`` uses) this execution is also the book's: the claims are
recorded in the book's ``_build/claims`` and every lecture that passes is stored in the
book's execution cache (``tools/nbval_cache.py``), so the build that follows renders it
instead of executing it again. Without it the claims go to a temporary folder and the book's
records are left alone.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notebooks  # noqa: E402


def _stop(signum, frame):
    # a second SIGTERM (a job runner signals the whole process group, and make passes it on)
    # must not cut the clean-up short: run_parallel's finally kills the lectures' trees
    signal.signal(signum, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, _stop)  # make test stops it so when make check fails
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lectures", nargs="*", help="numbers, stems or paths (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="lectures tested at once")
    ap.add_argument("--cache", action="store_true",
                    help="record the claims and cache the outputs for the book build")
    args = ap.parse_args(argv)
    paths = notebooks.slowest_first(notebooks.lectures(args.lectures))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lecnotes-claims-") as tmp:
        env = notebooks.one_thread_env(LECNOTES_EXECUTOR="nbval")
        env.pop("LECNOTES_CLAIMS_DIR", None)
        # tools/ on the path: kernel_guard (ipc kernels started one at a time) and nbval_cache
        here = str(Path(__file__).resolve().parent)
        env["PYTHONPATH"] = here + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        extra = ["-p", "kernel_guard"]
        if args.cache:
            from execute import open_cache  # jupyter-cache: the reader's venv has it

            open_cache()  # emptied here, once, if the sources changed; the workers only add
            extra += ["-p", "nbval_cache", "--nbval-cache"]
        else:
            env["LECNOTES_CLAIMS_DIR"] = tmp
        jobs = [(p.stem, [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                          "-p", "no:cacheprovider", *extra, "-q", "-rfE", str(p)])
                for p in paths]
        print(f"nbval: {len(jobs)} lecture(s), {args.jobs} at a time, slowest first, "
              f"in {sys.prefix}", flush=True)
        done = notebooks.run_parallel(jobs, args.jobs, env, notebooks.ROOT)
    failed = [name for name, (rc, _, _) in done.items() if rc != 0]
    for name in failed:
        print(f"\n===== {name} =====\n{done[name][2]}")
    notebooks.record({name: secs for name, (rc, secs, _) in done.items() if rc == 0})
    print(f"nbval: wall time {time.perf_counter() - start:.0f} s")
    print(f"lectures: {len(done) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
