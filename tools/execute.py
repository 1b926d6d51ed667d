"""Execute the lectures into the book's execution cache, two at a time, before a build.

Usage (from the repository root, in the reader's virtualenv; ``make book`` calls it)::

    python tools/execute.py [--jobs 2] [--force] [LECTURE ...]

Jupyter Book 1.x executes notebooks one after the other. This script fills the same
jupyter-cache folder that the build reads (``_build/.jupyter_cache``, with
``execute_notebooks: cache``) in parallel, slowest lecture first, with BLAS pinned to one
thread per kernel; the build then renders the cached outputs and executes nothing. It
executes exactly what the build would (same notebook, working directory ``lectures/``, the
per-cell timeout of ``_config.yml``, errors not allowed), skips lectures whose cached outputs
match, and empties the cache first when the ``lecnotes`` sources changed (the rule of
``book/_ext/execution_cache.py``). A lecture that fails is reported with its traceback and not
cached, so the build executes it again and fails on it as well.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))

import kernel_guard  # noqa: E402
import notebooks  # noqa: E402
from execution_cache import STAMP, ensure_fresh  # noqa: E402

from lecnotes.book import claims  # noqa: E402

# the folder jupyter-book's build reads; LECNOTES_EXECUTION_CACHE moves it (for tests)
CACHE = Path(os.environ.get("LECNOTES_EXECUTION_CACHE",
                           notebooks.ROOT / "_build" / ".jupyter_cache"))


def open_cache(empty_if_stale: bool = True):
    """The book's execution cache, emptied first if the ``lecnotes`` sources changed.

    With ``empty_if_stale=False`` (several processes writing at once must not empty it under
    each other) a cache stamped with other sources is not opened: returns ``None``.
    """
    digest = claims.package_digest()
    if empty_if_stale:
        if ensure_fresh(CACHE, digest):
            print(f"execution cache: new lecnotes sources {digest}, emptied")
    elif not (CACHE / STAMP).is_file() or (CACHE / STAMP).read_text().strip() != digest:
        return None
    return get_cache(str(CACHE))


def is_cached(cache, path: Path) -> bool:
    """Whether the cache holds outputs for the notebook's current code cells."""
    try:
        cache.match_cache_notebook(nbformat.read(path, as_version=4))
    except KeyError:
        return False
    return True


def store(cache, path: Path, nb, seconds: float) -> None:
    """Cache an executed notebook ``nb`` (the file ``path`` with outputs) for the book build."""
    record = cache.add_nb_to_project(str(path))
    cache.cache_notebook_bundle(
        CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
        check_validity=False, overwrite=True)


def _timeout() -> int:
    config = yaml.safe_load((notebooks.ROOT / "_config.yml").read_text())
    return int(config.get("execute", {}).get("timeout", 300))


def _execute(path: str, timeout: int):
    """Execute one notebook as myst-nb would; runs in a worker process.

    As jupyter-cache's ``single_nb_execution`` does (the notebook's ``execution`` metadata may
    override the timeout and ``allow_errors``), but through ``kernel_guard``: an ipc kernel
    started under the start-up lock, and one more execution after a stall.
    """
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata.get("execution", {})
    start, error = time.perf_counter(), None
    try:
        kernel_guard.execute(nb, name=Path(path).stem, timeout=meta.get("timeout", timeout),
                             allow_errors=meta.get("allow_errors", False), record_timing=False,
                             resources={"metadata": {"path": str(Path(path).parent)}})
    except (CellExecutionError, CellTimeoutError, kernel_guard.StallError):
        error = traceback.format_exc()
    return path, nb, time.perf_counter() - start, error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lectures", nargs="*", help="numbers, stems or paths (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="lectures executed at once")
    ap.add_argument("--force", action="store_true", help="execute even if cached")
    args = ap.parse_args(argv)
    os.environ.update({k: "1" for k in notebooks.THREAD_VARIABLES})  # kernels inherit it
    os.environ.setdefault("LECNOTES_EXECUTOR", "tools/execute.py")
    cache = open_cache()
    todo = []
    for path in notebooks.slowest_first(notebooks.lectures(args.lectures)):
        if is_cached(cache, path) and not args.force:
            print(f"  {path.stem}: cached")
        else:
            todo.append(path)
    if not todo:
        return 0
    print(f"executing {len(todo)} lecture(s), {args.jobs} at a time, slowest first", flush=True)
    start, failed, seconds = time.perf_counter(), [], {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_execute, str(p), _timeout()) for p in todo]
        for future in as_completed(futures):
            path, nb, secs, error = future.result()
            stem = Path(path).stem
            seconds[stem] = secs
            if error:
                failed.append(stem)
                print(f"  {stem}: FAILED after {secs:.0f} s\n{error}", flush=True)
                continue
            store(cache, Path(path), nb, secs)
            print(f"  {stem}: executed in {secs:.0f} s, cached", flush=True)
    notebooks.record(seconds)
    print(f"executed in {time.perf_counter() - start:.0f} s; {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
