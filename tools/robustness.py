"""Execute the book under several independent seed roots and tabulate how each claim fares.

Usage (from the repository root, in the reader's virtualenv; ``make robustness`` calls it)::

    python tools/robustness.py [--roots 5] [--first-root 1] [--jobs 2] [LECTURE ...]
    python tools/robustness.py --report        # rewrite the page from the last run
    python tools/robustness.py --resummarise   # recount from the per-root records (after
                                               # re-running some lectures), then the page

Every random stream of the book derives from the seed root ``LECNOTES_SEED`` (the package's
rng convention, ``lecnotes.core.validate.seed_sequence``); the book as published uses root 0. This
script executes every lecture (nbclient, a fresh kernel, BLAS on one thread, ``--jobs`` at a
time, slowest first) under the roots ``first_root, ..., first_root + roots - 1``, with
``LECNOTES_CLAIMS_NO_RAISE=1`` so that a failing claim is recorded and the execution goes on
to the next one. Each root's claims go to ``_build/robustness/root-<r>/``.

The summary, per claim: passes out of the roots, and the worst measured value (the one
farthest on the failing side of its reference, in units of its tolerance). It is written to
``_build/robustness/summary.json`` and to the back-matter page ``book/robustness.md`` (committed,
like ``book/performance.md``), which also says which sources it was run with. A lecture that
raises an exception (not a claim) is listed as an error; its claims after the error count as
not passed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notebooks  # noqa: E402

from lecnotes.book import claims  # noqa: E402

OUT = notebooks.ROOT / "_build" / "robustness"
PAGE = notebooks.ROOT / "book" / "robustness.md"
CELL_TIMEOUT = 900


def execute(path: Path) -> int:
    """Execute one notebook in a fresh kernel, going on after errors; print the errors."""
    import nbclient  # the reader's venv has it (jupyter-book depends on it)
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    for err in errors:
        print(f"ERROR {err.get('ename')}: {err.get('evalue')}"[:500])
    return 1 if errors else 0


def margin(rec: dict) -> float:
    """How far the measured value lies on the failing side, in units of the tolerance.

    Negative inside the tolerance (``-1`` at the reference of an ``approx`` claim), ``0`` on
    the boundary, positive outside; ``inf`` for NaN.
    """
    m, e, tol, rel = rec["measured"], rec["expected"], rec.get("tol"), rec["relation"]
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return math.inf
    if rel == "approx":
        scale = tol if tol else max(abs(e), 1e-300)
        return (abs(m - e) - tol) / scale
    if rel == "between":
        lo, hi = e
        half = (hi - lo) / 2 or max(abs(lo), abs(hi), 1e-300)
        return (abs(m - (lo + hi) / 2) - half) / half
    scale = max(abs(e), 1e-12)
    return (m - e) / scale if rel == "<=" else (e - m) / scale


def summarise(roots: list[int]) -> dict:
    """Per claim of the root-0 ledger (or of any root): passes, runs, worst value."""
    per_root = {r: claims.load_records(OUT / f"root-{r}") for r in roots}
    keys: dict[tuple[str, str], dict] = {}
    for records in per_root.values():
        for chapter, recs in records.items():
            for rec in recs:
                keys.setdefault((chapter, rec["label"]), rec)
    rows = []
    for (chapter, label), first in sorted(keys.items()):
        seen = []
        for r in roots:
            rec = next((x for x in per_root[r].get(chapter, []) if x["label"] == label), None)
            seen.append((r, rec))
        ran = [(r, rec) for r, rec in seen if rec is not None]
        passes = sum(bool(rec["passed"]) for _, rec in ran)
        worst_root, worst = max(ran, key=lambda x: margin(x[1]))
        rows.append({
            "chapter": chapter, "label": label, "statement": first["statement"],
            "passes": passes, "runs": len(roots), "missing": [r for r, rec in seen if rec is None],
            "failed_roots": [r for r, rec in ran if not rec["passed"]],
            "powerless_roots": [r for r, rec in ran if rec.get("powerless")],
            "worst_root": worst_root, "worst_measured": worst["measured"],
            "expected": worst["expected"], "relation": worst["relation"], "tol": worst.get("tol"),
        })
    return {"roots": roots, "claims": rows}


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    v = float(x)
    if v == 0:
        return "0"
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return f"{v:.4g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.3e}"


def _reference(row: dict) -> str:
    if row["relation"] == "approx":
        return f"{_fmt(row['expected'])} ± {_fmt(row['tol'])}"
    if row["relation"] == "between":
        return f"in {_fmt(row['expected'])}"
    return f"{row['relation']} {_fmt(row['expected'])}"


def page(summary: dict) -> str:
    """The Markdown of ``book/robustness.md``."""
    rows, roots = summary["claims"], summary["roots"]
    k = len(roots)
    evaluations = len(rows) * k
    passed = sum(r["passes"] for r in rows)
    failing = [r for r in rows if r["passes"] < k]
    meta = summary.get("meta", {})
    lines = [
        "# Robustness of the claims",
        "",
        "The book as published draws every random number from one seed root, 0. Executed "
        "under other roots, it is a new book with independent random streams everywhere "
        "(the package's rng convention). This page is generated by `make robustness` "
        "(`tools/robustness.py`), not by the book build: it runs every lecture under "
        f"{k} other roots ({', '.join(map(str, roots))}) and counts, for each claim, how "
        "many of them it passed. A claim whose tolerance is honest (a Student-t interval at the "
        "book's level 0.999, say) fails about once in a thousand evaluations; a claim that "
        "fails often has a protocol problem.",
        "",
        f"- **roots**: {', '.join(map(str, roots))}",
        f"- **claim evaluations**: {evaluations}, of which {passed} passed "
        f"({100 * passed / max(evaluations, 1):.2f}%)",
        f"- **claims**: {len(rows)}, of which {len(rows) - len(failing)} passed under every "
        f"root; the weakest passed {min((r['passes'] for r in rows), default=k)} of {k}",
    ]
    for key, words in [("date", "run"), ("seconds", "wall time (s)"), ("digest", "sources"),
                       ("jobs", "lectures at once")]:
        if key in meta:
            lines.append(f"- **{words}**: {meta[key]}")
    if meta.get("errors"):
        lines.append("- **lectures that raised an error**: " + ", ".join(meta["errors"]))
    lines += ["", "## Claims that failed under some root", ""]
    if failing:
        lines += ["| claim | passed | failed under roots | worst measured | reference |",
                  "|---|---|---|---|---|"]
        for r in failing:
            roots_text = ", ".join(map(str, r["failed_roots"] + r["missing"]))
            if r["powerless_roots"]:
                roots_text += " (no power under " + ", ".join(map(str, r["powerless_roots"])) + ")"
            lines.append(f"| `{r['chapter']}:{r['label']}` | {r['passes']}/{k} | {roots_text} | "
                         f"{_fmt(r['worst_measured'])} | {_reference(r)} |")
    else:
        lines.append("None: every claim passed under every root.")
    lines += ["", "## Every claim", "",
              "Worst measured: the value farthest on the failing side of the reference, over the "
              "roots.", ""]
    chapter = None
    for r in rows:
        if r["chapter"] != chapter:
            chapter = r["chapter"]
            lines += ["", f"### {chapter}", "", "| claim | passed | worst measured | reference |",
                      "|---|---|---|---|"]
        lines.append(f"| `{r['label']}` | {r['passes']}/{k} | {_fmt(r['worst_measured'])} | "
                     f"{_reference(r)} |")
    return "\n".join(lines) + "\n"


def run(paths: list[Path], roots: list[int], jobs: int) -> dict:
    """Execute ``paths`` under every root; return the run's metadata."""
    jobs_list = []
    for path in notebooks.slowest_first(paths):
        for r in roots:
            folder = OUT / f"root-{r}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{path.stem}.json").unlink(missing_ok=True)
            argv = ["env", f"LECNOTES_SEED={r}", f"LECNOTES_CLAIMS_DIR={folder}",
                    f"{claims.NO_RAISE}=1", "LECNOTES_EXECUTOR=robustness",
                    sys.executable, __file__, "--execute", str(path)]
            jobs_list.append((f"{path.stem} root {r}", argv))
    print(f"robustness: {len(paths)} lecture(s) x {len(roots)} root(s), {jobs} at a time",
          flush=True)
    start = time.perf_counter()
    done = notebooks.run_parallel(jobs_list, jobs, notebooks.one_thread_env(), notebooks.ROOT)
    errors = sorted(name for name, (rc, _, _) in done.items() if rc != 0)
    for name in errors:
        print(f"\n===== {name} =====\n{done[name][2][-3000:]}")
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "seconds": round(time.perf_counter() - start), "digest": claims.package_digest(),
            "jobs": jobs, "errors": errors}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lectures", nargs="*", help="numbers, stems or paths (default: all)")
    ap.add_argument("--roots", type=int, default=5, help="number of seed roots")
    ap.add_argument("--first-root", type=int, default=1, help="the first root (0 is the book)")
    ap.add_argument("--jobs", type=int, default=2, help="executions at once")
    ap.add_argument("--report", action="store_true", help="only rewrite the page")
    ap.add_argument("--resummarise", action="store_true",
                    help="recount the per-root records of the last run's roots, then the page")
    ap.add_argument("--execute", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.execute:
        return execute(args.execute)
    roots = list(range(args.first_root, args.first_root + args.roots))
    summary_path = OUT / "summary.json"
    if args.report:
        summary = json.loads(summary_path.read_text())
    elif args.resummarise:
        old = json.loads(summary_path.read_text())
        digests = sorted({prov.get("digest", "?") for r in old["roots"]
                          for prov in claims.load_provenance(OUT / f"root-{r}").values()})
        meta = {**old.get("meta", {}), "digest": ", ".join(digests) + " (per chapter)",
                "date": old.get("meta", {}).get("date", "?") + " (some lectures re-run since)"}
        summary = {**summarise(old["roots"]), "meta": meta}
        summary_path.write_text(json.dumps(summary, indent=1))
    else:
        meta = run(notebooks.lectures(args.lectures), roots, args.jobs)
        summary = {**summarise(roots), "meta": meta}
        summary_path.write_text(json.dumps(summary, indent=1))
    PAGE.write_text(page(summary))
    rows, k = summary["claims"], len(summary["roots"])
    weak = [r for r in rows if r["passes"] < k - 1]
    total = len(rows) * k
    ok = sum(r["passes"] for r in rows)
    print(f"robustness: {ok}/{total} claim evaluations passed ({100 * ok / max(total, 1):.2f}%); "
          f"{len(weak)} claim(s) passed fewer than {k - 1} of {k} roots; page {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
