"""Speed, scale and budgets of the book, measured on this machine (not tests).

Usage (from the repository root, with the book's virtualenv; ``make benchmarks``)::

    .venv/bin/python benchmarks/run.py                 # everything, writes book/performance.md
    .venv/bin/python benchmarks/run.py --kernels       # only the kernel ratios and scaling
    .venv/bin/python benchmarks/run.py --lectures      # only the lectures
    .venv/bin/python benchmarks/run.py --lecture 0 --lecture 6   # re-measure these two only
    .venv/bin/python benchmarks/run.py --ci-log ci.log # the CI's steps from a .ci/run log

It prints one table per section and regenerates the book page ``book/performance.md`` with
the machine it ran on:

* **Lectures:** every lecture of ``_toc.yml``, executed alone in a fresh kernel with BLAS on
  one thread (``--threads 1 2`` adds two threads): wall time, the kernel's CPU time and peak
  memory. Results are kept in ``_build/benchmarks/lectures.json``, so ``--lecture`` re-measures
  a few and takes the others from the last run; ``benchmarks/lecture-seconds.json`` (the
  runners' schedule: slowest first) is rewritten from the one-thread times.
* **Where the time goes:** the per-cell profile of the three slowest lectures (each cell's
  time from nbclient's timestamps, and the call it makes); with ``--functions`` (``make
  benchmarks`` gives it) also their ``lecnotes`` functions under cProfile.
* **Kernels** against their BLAS bound (``benchmarks/kernels.py``).
* **The CI's steps** and their times, from a ``.ci/run`` log (``--ci-log``) or else from the
  step markers the last ``make test`` wrote to ``_build/test-steps.log``; and the CPU time of
  the slow tests by file when ``_build/test-cpu.jsonl`` exists (``pytest -p _cputime``).

Budgets (shared/DESIGN.md): each lecture within 60 s alone on one core (90 s is the limit of
the first edition) and 2 GB; the whole book within 10 minutes of CPU; a first-layer gradient
step within 1.5x of the two matrix products it needs. ``tests/test_docs.py`` fails when a
lecture of the table of contents is missing from the page or from the schedule.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
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
        "reference workload": _reference_text(reference_seconds()),
    }


# A fixed mix of what the lectures spend their time on, on one thread: a matrix product (BLAS),
# Gaussian draws (NumPy's generator), tanh (elementwise), a Python loop (the interpreter).
_REFERENCE = """
import time, numpy as np
g = np.random.default_rng(0)
A = g.standard_normal((1000, 1000))
def work():
    A @ A
    x = g.standard_normal(8_000_000)
    np.tanh(x, out=x)
    s = 0
    for i in range(1_000_000):
        s += i
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    work()
    best = min(best, time.perf_counter() - t)
print(best)
"""


def _reference_text(seconds: float) -> str:
    if seconds != seconds:
        return "not measured (the reference workload failed)"
    return f"{seconds:.2f} s on one thread (see Lectures)"


def reference_seconds() -> float:
    """Seconds of a fixed reference workload on one thread (best of 3; 1-2.5 s in all).

    The hosts of this workplace differ: the same lectures took 1.4-2.1x as long on one as on
    another (2026-12-07). Each lecture's row records the reference measured just before it, so
    that rows measured on hosts far apart can be told apart. It is rough: on one host it varied
    by up to 1.5x over a run (0.31-0.46 s), more than the reviewer's repeats (+-4 %).
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    try:
        out = subprocess.run([sys.executable, "-c", _REFERENCE], capture_output=True,
                             text=True, env=env, timeout=300, check=True).stdout
        return round(float(out.strip().splitlines()[-1]), 3)
    except (subprocess.SubprocessError, ValueError, IndexError):
        return float("nan")


CACHE = ROOT / "_build" / "benchmarks" / "lectures.json"
SCHEDULE = ROOT / "benchmarks" / "lecture-seconds.json"
PAGE = ROOT / "book" / "performance.md"
STEPS_LOG = ROOT / "_build" / "test-steps.log"
CPU_LOG = ROOT / "_build" / "test-cpu.jsonl"
TARGET, LIMIT, MEMORY_MB, BOOK_CPU = 60.0, 90.0, 2048.0, 600.0
SAME_HOST = 1.5  # the largest spread of the reference seen on one host over a run


def toc_lectures(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """The stems of the lectures in the table of contents, in its order."""
    import yaml

    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("file"), str):
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(toc.read_text()))
    return [Path(f).stem for f in files if f.startswith("lectures/")]


def measure(stem: str, threads: int, attempts: int = 3) -> dict:
    """Execute one lecture alone in a fresh kernel (benchmarks/execute_notebook.py).

    An execution in which the kernel guard retried a stall (``retries > 0``) counts the CPU of
    the stalled attempt too, and its wall time the stall's wait: it is measured again, up to
    ``attempts`` times; ``stalls`` says how many stalled executions were set aside.
    """
    stalls, where = 0, []
    for _ in range(attempts):
        row = _measure_once(stem, threads)
        if not row.get("retries"):
            break
        stalls += 1
        where += row.pop("stall_messages", [])
    return {**row, "stalls": stalls, **({"stall_messages": where} if where else {})}


def _measure_once(stem: str, threads: int) -> dict:
    nb = ROOT / "lectures" / f"{stem}.ipynb"
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads),
           "LECNOTES_CLAIMS_DIR": str(ROOT / "_build" / "benchmark-claims")}
    reference = reference_seconds()  # the host's speed, just before the lecture
    reference = "" if reference != reference else reference  # failed: a blank cell
    load = os.getloadavg()[0]  # the machine's load when the lecture starts and ends
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "execute_notebook.py"), str(nb)],
        capture_output=True, text=True, env=env, cwd=nb.parent, timeout=3600,
    )
    row = {"lecture": stem, "threads": threads, "date": time.strftime("%Y-%m-%d"),
           "load": round((load + os.getloadavg()[0]) / 2, 1), "reference": reference}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {**row, "seconds": float("nan"), "cpu_seconds": float("nan"),
                "peak_mb": float("nan"), "error": (proc.stderr or proc.stdout)[-300:]}
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("kernel_guard:")]
    return {**row, **json.loads(lines[-1]), **({"stall_messages": said} if said else {})}


def lecture_budgets(only: list[str] | None = None, threads_list=(1,)) -> list[dict]:
    """Measure the lectures of ``_toc.yml`` (or those of ``only``); every toc lecture's row.

    Results are merged into ``_build/benchmarks/lectures.json`` by lecture and thread count;
    lectures no longer in the table of contents are dropped.
    """
    lectures = toc_lectures()
    todo = [s for s in lectures if not only or s in only or s.split("_", 1)[0] in only]
    rows = []
    for stem in todo:
        for threads in threads_list:
            rows.append(measure(stem, threads))
            r = rows[-1]
            print(f"  {stem} ({threads} thread): {r['seconds']:.1f} s, kernel CPU "
                  f"{r['cpu_seconds']:.1f} s, {r['peak_mb']:.0f} MB", flush=True)
    old = json.loads(CACHE.read_text()) if CACHE.exists() else []
    new_keys = {(r["lecture"], r["threads"]) for r in rows}
    merged = [r for r in old if (r["lecture"], r["threads"]) not in new_keys
              and r["lecture"] in lectures] + rows
    merged.sort(key=lambda r: (lectures.index(r["lecture"]), r["threads"]))
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps(merged, indent=1))
    # the one-thread times are the schedule of tools/notebooks.py (slowest lecture first)
    # (merged into the file: a lecture measured before this machine's first run keeps its time)
    one = json.loads(SCHEDULE.read_text()) if SCHEDULE.exists() else {}
    one = {k: v for k, v in one.items() if k in lectures}
    one.update({r["lecture"]: round(r["seconds"], 1) for r in merged
                if r["threads"] == 1 and r["seconds"] == r["seconds"]})
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
            text = format(v, f) if isinstance(v, (int, float)) and f else str(v)
            cells.append(text.replace("|", "\\|"))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


def lectures_section(rows: list[dict]) -> tuple[str, str, str]:
    """The table of every toc lecture (a lecture not measured says so)."""
    by = {(r["lecture"], r["threads"]): r for r in rows}
    table_rows = []
    for stem in toc_lectures():
        threads = sorted({t for (s, t) in by if s == stem}) or [1]
        for t in threads:
            r = dict(by.get((stem, t), {"lecture": stem, "threads": t}))
            if "seconds" not in r or r["seconds"] != r["seconds"]:
                r.update(seconds="not measured", cpu_seconds="", peak_mb="", budget="",
                         date=r.get("date", ""))
            elif t == 1:  # judged on the kernel's CPU time, which a busy machine inflates less
                cpu = r.get("cpu_seconds", r["seconds"])
                over = cpu > LIMIT or r["peak_mb"] > MEMORY_MB
                r["budget"] = ("OVER" if over else
                               "ok" if cpu <= TARGET else "over the 60 s target")
            else:
                r["budget"] = "-"
            table_rows.append(r)
    table = fmt_table(table_rows, [
        ("lecture", "lecture", ""), ("threads", "BLAS threads", "d"),
        ("seconds", "time alone (s)", ".1f"), ("cpu_seconds", "kernel CPU (s)", ".1f"),
        ("peak_mb", "peak memory (MB)", ".0f"), ("budget", "60 s (90 s) / 2 GB", ""),
        ("load", "load", ""), ("reference", "reference (s)", ".2f"),
        ("date", "measured", "")])
    one = [r for r in rows if r["threads"] == 1 and r["seconds"] == r["seconds"]]
    total = sum(r["seconds"] for r in one)
    cpu = sum(r.get("cpu_seconds", 0.0) for r in one)
    table += (f"\n\nAll {len(one)} measured lectures one after the other on one core: "
              f"{total:.0f} s ({cpu:.0f} s of kernel CPU; budget for the book: "
              f"{BOOK_CPU:.0f} s of CPU). The time alone is the wall time of the lecture; it is "
              "its own cost only on an otherwise idle machine (load: the mean of the one-minute "
              "load average at its start and end, near 1 when idle on these two cores; blank "
              "when not recorded). The budget column is judged on the kernel's CPU time, which "
              "a busy machine inflates much less. Reference: the seconds of a fixed workload "
              "on one thread (a matrix product, Gaussian draws, tanh, a Python loop; "
              "`reference_seconds` in `benchmarks/run.py`) just before the lecture, a rough "
              "measure of the host (blank: measured before it was recorded). On one host it "
              f"varied by up to {SAME_HOST:.1f}x over a run (0.31-0.46 s on 2026-12-07, before "
              "one lecture or another); hosts of this workplace have differed by 1.4-2.1x in "
              "the lectures' times (the same day).")
    refs = [r["reference"] for r in one if isinstance(r.get("reference"), float)
            and r["reference"] == r["reference"]]
    if refs and max(refs) > SAME_HOST * min(refs):
        table += (f" The references of these rows differ by more than that "
                  f"({min(refs):.2f}-{max(refs):.2f} s): they were probably measured on hosts "
                  f"of different speeds; compare them after dividing by it.")
    stalled = [r["lecture"] for r in one if r.get("stalls")]
    if stalled:
        table += (f" An execution whose kernel stalled (tools/kernel_guard.py retried it) was "
                  f"measured again, since it counts the stalled attempt too: "
                  f"{', '.join(stalled)}.")
    return ("Lectures", "Every lecture of the table of contents, executed alone in a fresh "
            "kernel (nbclient) with BLAS limited to one thread; peak memory is the kernel's "
            "maximum resident set size.", table)


COMMON = re.compile(r"^(?:[\w.]+\s*=\s*)?(?:np|numpy|plt|math)\.|^(?:print|display|len|range)\(")


def _call(source: str) -> str:
    """What a cell runs: its first line that calls something other than NumPy, pyplot or a
    builtin (comments and imports skipped); else its first line that calls anything."""
    lines = [ln.strip() for ln in source.splitlines()]
    calls = [t for t in lines if "(" in t and not t.startswith(("#", "import ", "from "))]
    text = next((t for t in calls if not COMMON.match(t)), calls[0] if calls else
                next((t for t in lines if t), ""))
    return text if len(text) <= 70 else text[:67] + "..."


def profile_section(rows: list[dict], lectures: int = 3, share: float = 0.8,
                    most: int = 8) -> tuple[str, str, str] | None:
    """The costliest cells of the ``lectures`` slowest lectures (one thread)."""
    one = sorted((r for r in rows if r["threads"] == 1 and r.get("cells")
                  and r["seconds"] == r["seconds"]), key=lambda r: -r["seconds"])[:lectures]
    if not one:
        return None
    parts = []
    for r in one:
        cells = sorted((c for c in r["cells"] if c.get("seconds") is not None),
                       key=lambda c: -c["seconds"])
        total = sum(c["seconds"] for c in cells) or 1.0
        shown, acc = [], 0.0
        for c in cells:
            if len(shown) >= most or acc >= share * total:
                break
            acc += c["seconds"]
            shown.append({"cell": c["index"], "seconds": c["seconds"],
                          "share": 100 * c["seconds"] / total, "call": f"`{_call(c['source'])}`"})
        parts.append(f"**{r['lecture']}** ({r['seconds']:.1f} s; {len(cells)} code cells, "
                     f"these {len(shown)} take {100 * acc / total:.0f}% of the cells' time)\n\n"
                     + fmt_table(shown, [("cell", "code cell", "d"), ("seconds", "seconds",
                                                                       ".1f"),
                                         ("share", "share (%)", ".0f"), ("call", "what it runs",
                                                                         "")]))
    return ("Where the time goes", "The costliest code cells of the three slowest lectures "
            "(one thread), from nbclient's timestamps (the kernel starting the cell to its "
            "reply), until they make up 80% of the lecture's cell time.", "\n\n".join(parts))


def function_profiles(rows: list[dict], lectures: int = 3, run: bool = True):
    """Execute the ``lectures`` slowest lectures under cProfile (execute_notebook.py
    --profile); the ``lecnotes`` functions of each, by cumulative time. With ``run=False``
    the profiles of the last run that profiled them (``_build/benchmarks/functions-*.json``)."""
    one = sorted((r for r in rows if r["threads"] == 1 and r["seconds"] == r["seconds"]),
                 key=lambda r: -r["seconds"])[:lectures]
    out = {}
    for r in one:
        nb = ROOT / "lectures" / f"{r['lecture']}.ipynb"
        target = CACHE.parent / f"functions-{r['lecture']}.json"
        if not run:
            if target.is_file():
                out[r["lecture"]] = json.loads(target.read_text())
            continue
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1",
               "LECNOTES_CLAIMS_DIR": str(ROOT / "_build" / "benchmark-claims")}
        proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "execute_notebook.py"),
                               str(nb), "--profile", str(target)], capture_output=True,
                              text=True, env=env, cwd=nb.parent, timeout=7200)
        if proc.returncode == 0 and target.is_file():
            out[r["lecture"]] = json.loads(target.read_text())
        else:
            print(f"  {r['lecture']}: profile failed\n{proc.stderr[-500:]}", flush=True)
    return out


def functions_section(profiles: dict[str, list[dict]], most: int = 10):
    if not profiles:
        return None
    parts = []
    for stem, funcs in profiles.items():
        rows = [{**f, "function": f"`{f['function']}`"} for f in funcs[:most]]
        parts.append(f"**{stem}**\n\n" + fmt_table(rows, [
            ("function", "lecnotes function", ""), ("calls", "calls", "d"),
            ("own", "own time (s)", ".1f"), ("cumulative", "with what it calls (s)", ".1f")]))
    return ("Where the time goes, by function", "The same three lectures executed under "
            "cProfile: the `lecnotes` functions with the most time, including the functions "
            "they call (nested functions count in both). The profiler slows Python code down; "
            "the times rank the functions, the budget uses the lectures' times above.",
            "\n\n".join(parts))


STEP = re.compile(r"^=== (\.ci/run|make test): (.+) \(t = (\d+)s\)\s*$")


def ci_steps(text: str) -> list[dict]:
    """The steps of a ``.ci/run`` or ``make test`` log with their seconds (from the markers)."""
    marks = [(m.group(1), m.group(2), int(m.group(3)))
             for m in map(STEP.match, text.splitlines()) if m]
    rows = []
    for i, (level, step, t) in enumerate(marks):
        after = next((u for lv, _, u in marks[i + 1:] if lv == level), None)
        if after is None:  # the last marker: the end, or a step that did not finish
            if step not in ("done", "all passed"):
                rows.append({"level": level, "step": step, "seconds": "did not finish"})
            continue
        rows.append({"level": level, "step": step, "seconds": after - t})
    return rows


def ci_section(log: Path | None) -> tuple[str, str, str]:
    source = log if log is not None else STEPS_LOG
    if not source.is_file():
        return ("The CI's steps", "No log: run `.ci/run > ci.log` and then "
                "`benchmarks/run.py --ci-log ci.log`, or `make test` (which writes its step "
                "markers to `_build/test-steps.log`).", "")
    rows = ci_steps(source.read_text(errors="replace"))
    what = ("a `.ci/run` log" if any(r["level"] == ".ci/run" for r in rows)
            else "the step markers of the last `make test`")
    table = fmt_table(rows, [("level", "run", ""), ("step", "step", ""),
                             ("seconds", "seconds", "d")])
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(source.stat().st_mtime))
    table += (f"\n\nFrom {what} (`{source.name}`, {stamp}); the budget of `.ci/run` is 12 "
              "minutes on a quiet 2-core machine, the page tests' 3 minutes.")
    if CPU_LOG.is_file():
        files: dict[str, float] = {}
        for line in CPU_LOG.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                name = r["test"].split("::")[0]
                files[name] = files.get(name, 0.0) + r["cpu"]
        table += "\n\nCPU seconds of the tests by file (`_build/test-cpu.jsonl`, "
        table += "`pytest -p _cputime`):\n\n" + fmt_table(
            [{"file": f"`{k}`", "cpu": v} for k, v in sorted(files.items(),
                                                             key=lambda kv: -kv[1])],
            [("file", "test file", ""), ("cpu", "CPU (s)", ".0f")])
    return ("The CI's steps", "How long each step of the test suite takes (wall time).",
            table)


def write_page(info: dict, sections: list[tuple[str, str, str]], path: Path = PAGE) -> Path:
    lines = [
        "# Performance",
        "",
        "How long the book takes and how close its kernels run to the machine's limit. This page",
        "is generated by `benchmarks/run.py` (`make benchmarks`); the numbers are those of the",
        "machine below, so expect differences on yours. Budgets: each lecture within 60 s alone",
        "on one core (90 s at most) and 2 GB of memory; the whole book within 10 minutes of CPU.",
        "",
        "## Machine",
        "",
        *[f"- **{k}**: {v}" for k, v in info.items()],
        "",
    ]
    for title, intro, table in sections:
        lines += [f"## {title}", "", intro, ""] + ([table, ""] if table else [])
    path.write_text("\n".join(lines))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", action="store_true", help="only kernel ratios and scaling")
    ap.add_argument("--lectures", action="store_true", help="only the lectures")
    ap.add_argument("--lecture", action="append", default=[], metavar="NN",
                    help="measure only this lecture (number or stem; repeatable); the others "
                    "are taken from the last run")
    ap.add_argument("--cached", action="store_true",
                    help="measure no lecture: the page from the last run's lectures")
    ap.add_argument("--threads", type=int, nargs="+", default=[1],
                    help="BLAS threads per lecture (default 1; the budget is for one core)")
    ap.add_argument("--functions", action="store_true",
                    help="also profile the three slowest lectures by lecnotes function")
    ap.add_argument("--ci-log", type=Path, help="a .ci/run (or make test) log")
    ap.add_argument("--no-page", action="store_true", help="do not rewrite the page")
    ap.add_argument("--page", type=Path, default=PAGE, help="where to write the page")
    args = ap.parse_args(argv)
    do_k = args.kernels or not args.lectures
    do_l = args.lectures or not args.kernels
    info = machine()
    print("machine:", json.dumps(info, indent=1))
    sections = []
    if do_l:
        if args.cached:
            rows = json.loads(CACHE.read_text()) if CACHE.exists() else []
        else:
            only = [s.zfill(2) if s.isdigit() else s for s in args.lecture] or None
            rows = lecture_budgets(only, tuple(args.threads))
        functions = functions_section(function_profiles(rows, run=args.functions))
        for section in (lectures_section(rows), profile_section(rows), functions):
            if section is not None:
                print(f"\n{section[0]}\n{section[2]}")
                sections.append(section)
    if do_k:
        for title, intro, rows, cols in kernels.all_benchmarks():
            table = fmt_table(rows, cols)
            print(f"\n{title}\n{table}")
            sections.append((title, intro, table))
    sections.append(ci_section(args.ci_log))
    print(f"\n{sections[-1][0]}\n{sections[-1][2]}")
    if not args.no_page:
        print("wrote", write_page(info, sections, args.page))


if __name__ == "__main__":
    main()
