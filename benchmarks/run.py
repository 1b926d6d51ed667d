"""Speed, scale and budgets of the book, measured on this machine (not tests).

Usage (from the repository root, with the book's virtualenv)::

    .venv/bin/python benchmarks/run.py              # everything, writes book/performance.md
    .venv/bin/python benchmarks/run.py --kernels    # only the kernel ratios and scaling
    .venv/bin/python benchmarks/run.py --lectures   # only the lecture budgets

It prints one table per section and regenerates the book page ``book/performance.md`` with
the machine it ran on. Budgets (shared/DESIGN.md): each lecture within 90 s on one core and
2 GB; the whole book within 8 minutes; a first-layer gradient step within 1.5x of the two
matrix products it needs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import kernels  # noqa: E402  (benchmarks/kernels.py)


def machine() -> dict:
    import numpy as np
    import scipy

    try:
        b = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{b.get('name')} {b.get('version')}"
        core = os.environ.get("OPENBLAS_CORETYPE")
        if core:
            blas += f" (OPENBLAS_CORETYPE={core})"
    except Exception:  # noqa: BLE001 - informative only
        blas = "unknown"
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "date": time.strftime("%Y-%m-%d"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "blas": blas,
    }


CACHE = ROOT / "_build" / "benchmarks" / "lectures.json"
SCHEDULE = ROOT / "benchmarks" / "lecture-seconds.json"


def lecture_budgets(pattern: str = "*.ipynb", threads_list=(1, 2)) -> list[dict]:
    """Execute the lectures in fresh kernels; wall time and peak memory of the kernel.

    Results are merged into ``_build/benchmarks/lectures.json`` (by lecture and thread count),
    so that a subset can be re-measured with ``--lecture-glob``; lectures no longer in
    ``lectures/`` are dropped.
    """
    rows = []
    for nb in sorted((ROOT / "lectures").glob(pattern)):
        for threads in threads_list:
            env = {**os.environ, "OMP_NUM_THREADS": str(threads),
                   "OPENBLAS_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                   "LECNOTES_CLAIMS_DIR": str(ROOT / "_build" / "benchmark-claims")}
            proc = subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / "execute_notebook.py"), str(nb)],
                capture_output=True, text=True, env=env, cwd=nb.parent, timeout=1800,
            )
            if proc.returncode != 0:
                rows.append({"lecture": nb.stem, "threads": threads, "seconds": float("nan"),
                             "peak_mb": float("nan"), "error": proc.stderr[-300:]})
                continue
            rows.append({"lecture": nb.stem, "threads": threads, **json.loads(proc.stdout)})
    old = json.loads(CACHE.read_text()) if CACHE.exists() else []
    present = {p.stem for p in (ROOT / "lectures").glob("*.ipynb")}
    new_keys = {(r["lecture"], r["threads"]) for r in rows}
    merged = [r for r in old if (r["lecture"], r["threads"]) not in new_keys
              and r["lecture"] in present] + rows
    merged.sort(key=lambda r: (r["lecture"], r["threads"]))
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps(merged, indent=1))
    # the one-thread times are the schedule hint of tools/notebooks.py (slowest lecture first)
    one = {r["lecture"]: round(r["seconds"], 1) for r in merged
           if r["threads"] == 1 and r["seconds"] == r["seconds"]}
    if one:
        SCHEDULE.write_text(json.dumps(one, indent=1, sort_keys=True) + "\n")
    return merged


def fmt_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """Markdown table: columns are (key, header, format)."""
    head = "| " + " | ".join(h for _, h, _ in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = []
    for r in rows:
        cells = []
        for key, _, f in columns:
            v = r.get(key, "")
            cells.append(format(v, f) if isinstance(v, (int, float)) and f else str(v))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


def write_page(info: dict, sections: list[tuple[str, str, str]]) -> Path:
    lines = [
        "# Performance",
        "",
        "How long the book takes and how close its kernels run to the machine's limit. This page",
        "is generated by `benchmarks/run.py` (see the README); the numbers are those of the",
        "machine below, so expect differences on yours. Budgets: each lecture within 90 s on one",
        "core and 2 GB of memory; the whole book within 8 minutes.",
        "",
        "## Machine",
        "",
        *[f"- **{k}**: {v}" for k, v in info.items()],
        "",
    ]
    for title, intro, table in sections:
        lines += [f"## {title}", "", intro, "", table, ""]
    path = ROOT / "book" / "performance.md"
    path.write_text("\n".join(lines))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", action="store_true", help="only kernel ratios and scaling")
    ap.add_argument("--lectures", action="store_true", help="only lecture budgets")
    ap.add_argument("--no-page", action="store_true", help="do not rewrite book/performance.md")
    ap.add_argument("--lecture-glob", default="*.ipynb",
                    help="measure only these lectures (others are taken from the last run; "
                    "a pattern matching nothing, e.g. 'cached', re-uses the last run)")
    args = ap.parse_args(argv)
    do_k = args.kernels or not args.lectures
    do_l = args.lectures or not args.kernels
    info = machine()
    print("machine:", json.dumps(info, indent=1))
    sections = []
    if do_l:
        rows = lecture_budgets(args.lecture_glob)
        one = [r for r in rows if r["threads"] == 1]
        total1 = sum(r["seconds"] for r in one)
        for r in rows:  # the budget is for one core; two-thread rows are informative
            ok = r["seconds"] <= 90 and r["peak_mb"] <= 2048
            r["budget"] = ("ok" if ok else "OVER") if r["threads"] == 1 else "-"
        table = fmt_table(rows, [("lecture", "lecture", ""), ("threads", "BLAS threads", "d"),
                                 ("seconds", "time (s)", ".1f"), ("peak_mb", "peak memory (MB)",
                                                                   ".0f"),
                                 ("budget", "90 s / 2 GB", "")])
        table += (f"\n\nAll lectures on one core: {total1:.0f} s (budget for the book: 480 s). "
                  "With two BLAS threads some chapters are slower than with one: their "
                  "matrices are small, and OpenBLAS threads then cost more than they bring "
                  "(more so when the machine is busy); the budget is for one core.")
        print(table)
        sections.append(("Lectures", "Each lecture executed in a fresh kernel (nbclient), with "
                         "BLAS limited to one thread and with two threads; peak memory is the "
                         "kernel's maximum resident set size.", table))
    if do_k:
        for title, intro, rows, cols in kernels.all_benchmarks():
            table = fmt_table(rows, cols)
            print(f"\n{title}\n{table}")
            sections.append((title, intro, table))
    if not args.no_page:
        print("wrote", write_page(info, sections))


if __name__ == "__main__":
    main()
