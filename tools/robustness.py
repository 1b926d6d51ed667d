"""Execute the book under several independent seed roots, and at a larger scale, and tabulate
how each claim fares.

Usage (from the repository root, in the development virtualenv, which has Dask; ``make
robustness`` and ``make scale`` call it)::

    python tools/robustness.py [--roots 5] [--first-root 1] [--workers N] [LECTURE ...]
    python tools/robustness.py --scale 2 [LECTURE ...]  # the book at root 0, scales 1 and 2
    python tools/robustness.py --report        # rewrite the page from the last runs
    python tools/robustness.py --resummarise   # recount from the per-root records on disk
    SCHEDULER=tcp://host:8786 python tools/robustness.py ...   # on an existing Dask cluster

Every random stream of the book derives from the seed root ``LECNOTES_SEED`` (the package's
rng convention, ``lecnotes.core.validate.seed_sequence``); the book as published uses root 0
at scale 1. The executions are Dask tasks, one lecture x one root x one scale each
(``tools/sweep.py``: a ``LocalCluster`` of one single-threaded worker per core by default, or
the cluster at ``$SCHEDULER``; ``--serial`` runs them here without Dask), with
``LECNOTES_CLAIMS_NO_RAISE=1`` so that a failing claim is recorded and the execution goes on.
Records go to ``_build/robustness/scale-<s>/root-<r>/``; a re-run skips the tasks already done
for the current sources (``--fresh`` redoes them).

The robustness summary, per claim: passes out of the roots, and the worst measured value (the
one farthest on the failing side of its reference, in units of its tolerance), in
``_build/robustness/summary.json``. The scale summary (``--scale S``), per claim: its distance
from the reference at scale 1 and at scale S in units of the scale-1 tolerance, and whether
it tightens, holds or widens, in ``_build/robustness/scale.json``. Both go to the back-matter
page ``book/robustness.md`` (committed, like ``book/performance.md``). A lecture that raises an
exception (not a claim) is listed as an error; its claims after the error count as not passed.
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
from lecnotes.book import sharpness as sharp_mod  # noqa: E402

OUT = notebooks.ROOT / "_build" / "robustness"
PAGE = notebooks.ROOT / "book" / "robustness.md"
WIDEN = 0.25
"""A claim tightens (widens) with scale when its distance from the reference falls (grows) by
more than this many scale-1 tolerances; in between it holds."""


SCALE_HEADING = "## The claims at scale "


def chapter_title(stem: str) -> str:
    """The lecture's own title (its first ``# `` heading, e.g. "10. Hierarchical targets, and
    what depth buys"), else the stem: a heading of words, which a phone can wrap (the stem
    alone, ``10_hierarchical_targets``, ran past the column)."""
    path = notebooks.ROOT / "lectures" / f"{stem}.ipynb"
    if path.is_file():
        for cell in json.loads(path.read_text())["cells"]:
            for line in "".join(cell["source"]).splitlines():
                if cell["cell_type"] == "markdown" and line.startswith("# "):
                    return line[2:].strip()
    return stem


def folder(root: int, scale: float = 1.0) -> Path:
    """Where the records of one root at one scale are."""
    return OUT / f"scale-{scale:g}" / f"root-{root}"


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


def summarise(roots: list[int], scale: float = 1.0) -> dict:
    """Per claim recorded under any of ``roots`` (at ``scale``): passes, runs, worst value."""
    per_root = {r: claims.load_records(folder(r, scale)) for r in roots}
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


def distance(rec: dict, tol: float | None) -> float | None:
    """``|measured - expected|`` in units of ``tol`` for a claim against a number (an
    ``approx`` claim with a positive tolerance); ``None`` for the others."""
    if rec.get("relation") != "approx" or not tol or not isinstance(rec.get("expected"),
                                                                  (int, float)):
        return None
    m = rec["measured"]
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return math.inf
    return abs(m - rec["expected"]) / tol


def verdict(d1: float | None, d2: float | None) -> str:
    """``tightens``, ``holds`` or ``widens`` (by more than :data:`WIDEN` scale-1
    tolerances), or ``other`` for a claim that is not against a number."""
    if d1 is None or d2 is None:
        return "other"
    if d2 < d1 - WIDEN:
        return "tightens"
    if d2 > d1 + WIDEN:
        return "widens"
    return "holds"


def summarise_scale(root: int, scale: float) -> dict:
    """Every claim at scale 1 and at ``scale`` under ``root``: the distances from the
    reference (in units of the scale-1 tolerance), the margins, the verdict; and per chapter
    the seconds and the kernel's peak memory of each execution."""
    first, second = (claims.load_records(folder(root, s)) for s in (1.0, scale))
    rows = []
    for chapter in sorted(set(first) | set(second)):
        one = {r["label"]: r for r in first.get(chapter, [])}
        two = {r["label"]: r for r in second.get(chapter, [])}
        for label in sorted(set(one) | set(two), key=lambda x: (x not in one, x)):
            r1, r2 = one.get(label), two.get(label)
            tol = r1.get("tol") if r1 else None
            d1 = distance(r1, tol) if r1 else None
            d2 = distance(r2, tol) if r2 else None
            rows.append({
                "chapter": chapter, "label": label,
                "passed_1": bool(r1 and r1["passed"]), "passed_2": bool(r2 and r2["passed"]),
                "missing": [s for s, r in ((1, r1), (scale, r2)) if r is None],
                "distance_1": d1, "distance_2": d2,
                "margin_1": margin(r1) if r1 else None, "margin_2": margin(r2) if r2 else None,
                "verdict": verdict(d1, d2) if r1 and r2 else "missing",
            })
    runs = []
    for s in (1.0, scale):
        base = folder(root, s) / "tasks"
        for meta in sorted(base.glob("*.json")) if base.is_dir() else []:
            info = json.loads(meta.read_text())
            runs.append({"chapter": meta.stem, "scale": s, "seconds": info.get("seconds"),
                         "cpu_seconds": info.get("cpu_seconds"), "peak_mb": info.get("peak_mb"),
                         "returncode": info.get("returncode")})
    from lecnotes.chapters import scale_notes

    return {"root": root, "scale": scale, "claims": rows, "runs": runs, "notes": scale_notes()}


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


FAR = 30
"""An alternative more than this many tolerances from the reference is a distant competitor:
the sharpness section lists it, asking whether a closer one exists."""

NEAR = 2
"""A claim "approximately equal" whose alternative lies closer than this many tolerances to
its reference passes often when the competitor is true (at 1.5 tolerances, about a twentieth
of the time): the sharpness section lists it, for any reference, zero included (review 10,
finding 5). A bracket (``between``) is not listed: its bounds are placed past the alternative
by t standard errors, so passing rejects it."""


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if not n else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def summarise_sharpness(records: dict[str, list[dict]], findings: list | None = None) -> dict:
    """How sharp the book's claims are (DESIGN.md, *Sharpness*), from one execution's records.

    Parameters
    ----------
    records : dict
        ``{chapter: [claim dicts]}`` (``claims.load_records``).
    findings : list of claim_rules.Finding, optional
        Alternatives computed from their claim's tolerance or margin.

    Returns
    -------
    dict
        ``two_sided``: the number of two-sided claims against a non-zero reference, their
        median resolution and how many are wider than ``claims.WIDE``; ``alternatives``:
        how many of those name a numerical alternative, its median distance in tolerances and
        how many lie further than :data:`FAR`; ``one_sided``: count and median margin relative
        to the bound; ``kinds``: counts per kind (stated or inferred); ``wide``, ``far``,
        ``near``, ``degenerate``: the rows to list (``near``: two-sided claims whose
        alternative lies within :data:`NEAR` tolerances, zero references included).
    """
    two, alts, one, kinds = [], [], [], {}
    wide, far, near = [], [], []
    for chapter, recs in records.items():
        for rec in recs:
            s = claims.sharpness(rec["relation"], rec["measured"], rec["expected"],
                                 rec.get("tol"), rec.get("alternative"))
            kind = rec.get("kind") or sharp_mod._infer_kind(rec["relation"], rec["expected"],
                                                          rec.get("tol"))
            key = kind + ("" if rec.get("kind") else " (inferred)")
            kinds[key] = kinds.get(key, 0) + 1
            row = {"chapter": chapter, "label": rec["label"], "resolution": s.resolution,
                   "alt_distance": s.alt_distance, "why_wide": rec.get("why_wide"),
                   "kind": kind, "text": claims.sharpness_text(rec)}
            if rec["relation"] in ("approx", "between"):
                if (rec["relation"] == "approx" and s.alt_distance is not None
                        and s.alt_distance < NEAR):
                    near.append(row)  # a bracket's bound is already past its alternative
                if s.resolution is None or s.resolution <= 1e-6:
                    continue  # against zero, or exact to rounding
                two.append(s.resolution)
                if s.resolution > claims.WIDE:
                    wide.append(row)
                if s.alt_distance is not None:
                    alts.append(s.alt_distance)
                    if s.alt_distance > FAR:
                        far.append(row)
            elif s.resolution is not None:
                one.append(s.resolution)
    return {
        "two_sided": {"count": len(two), "median_resolution": _median(two),
                      "over_wide": len(wide)},
        "alternatives": {"count": len(alts), "median_distance": _median(alts),
                         "over_far": len(far)},
        "one_sided": {"count": len(one), "median_margin": _median(one)},
        "kinds": dict(sorted(kinds.items())),
        "wide": wide, "far": far, "near": near,
        "degenerate": [{"notebook": f.notebook, "label": f.label, "expression": f.expression,
                        "reason": f.reason} for f in (findings or [])],
    }


SHARP_HEADING = "## How sharp the claims are"
FAILED_HEADING = "## Claims that failed under some root"


def splice_sharpness(page_text: str, section: list[str]) -> str:
    """``page_text`` with its sharpness section replaced by ``section`` (or inserted before
    the list of failed claims), the rest of the page kept as the last runs wrote it."""
    new = "\n".join(section).strip("\n") + "\n\n"
    if SHARP_HEADING in page_text:
        head, rest = page_text.split(SHARP_HEADING, 1)
        tail = rest[rest.index(FAILED_HEADING):] if FAILED_HEADING in rest else ""
        return head.rstrip("\n") + "\n\n" + new + tail
    if FAILED_HEADING in page_text:
        head, tail = page_text.split(FAILED_HEADING, 1)
        return head.rstrip("\n") + "\n\n" + new + FAILED_HEADING + tail
    return page_text.rstrip("\n") + "\n\n" + new


def sharpness_of_the_book() -> dict:
    """:func:`summarise_sharpness` of the book's execution (``_build/claims``, root 0 at scale
    1) and of the lectures' source (:mod:`lecnotes.book.claim_rules`)."""
    from lecnotes.book import claim_rules

    book = notebooks.ROOT / "_build" / "claims"
    records = claims.load_records(book)
    provenance = claims.load_provenance(book)
    findings = [f for path in notebooks.lectures([])
                for f in claim_rules.degenerate_alternatives(path)]
    dates = sorted({p.get("executed", "?") for p in provenance.values()})
    out = summarise_sharpness(records, findings)
    out["source"] = (f"root 0, scale 1, {sum(map(len, records.values()))} claims of "
                     f"{len(records)} lectures, executed {dates[0]} to {dates[-1]}"
                     if dates else "no execution recorded")
    return out


def sharpness_section(sh: dict) -> list[str]:
    """The page's section on how sharp the claims are: the distribution, then every claim
    wider than a quarter of its reference, every alternative built from its claim's
    tolerance, and every alternative further than :data:`FAR` tolerances."""
    t, a, o = sh["two_sided"], sh["alternatives"], sh["one_sided"]

    def pct(x):
        return "-" if x is None else sharp_mod.format_percent(x)

    lines = [
        "", "## How sharp the claims are", "",
        "Passing is not the whole story: a claim whose tolerance is half its value, or whose "
        "alternative lies a hundred tolerances away, passes easily and shows little. Each claim "
        "records its resolution (the deviation from its reference it can detect, relative to "
        "the reference; for a bound, how far inside it the measurement lies), the distance of "
        "its alternative in tolerances, and its kind (a limit, a finite-size statement, an "
        "exact identity, an illustration); the claims ledger shows them claim by claim. From "
        f"the book's own execution ({sh.get('source', 'root 0, scale 1')}):", "",
        f"- **two-sided claims against a non-zero reference**: {t['count']}; median "
        f"resolution {pct(t['median_resolution'])}; wider than {claims.WIDE:.0%}: "
        f"{t['over_wide']} (each says why, listed below)",
        f"- **their numerical alternatives**: {a['count']}; median distance "
        f"{'-' if a['median_distance'] is None else format(a['median_distance'], '.3g')} "
        f"tolerances; further than {FAR}: {a['over_far']}",
        f"- **one-sided claims against a non-zero bound**: {o['count']}; median margin "
        f"{pct(o['median_margin'])} of the bound",
        "- **kinds**: " + ", ".join(f"{k} {v}" for k, v in sh["kinds"].items()),
        f"- **alternatives of \"approximately\" claims closer than {NEAR} tolerances** (any "
        "reference): "
        f"{len(sh.get('near', []))} (listed below)",
        f"- **alternatives computed from their claim's own tolerance or margin**: "
        f"{len(sh['degenerate'])} (the strict build fails on any)",
        "", f"### Claims wider than {claims.WIDE:.0%} of their reference", "",
    ]
    if sh["wide"]:
        lines += ["| claim | resolution | kind | why it is still stated |", "|---|---|---|---|"]
        for r in sh["wide"]:
            why = (r["why_wide"] or "NOT STATED").replace("|", "/")
            lines.append(f"| `{r['chapter']}:{r['label']}` | {pct(r['resolution'])} | "
                         f"{r['kind']} | {why} |")
    else:
        lines.append("None.")
    lines += ["", "### Alternatives built from the claim's own tolerance or margin", ""]
    if sh["degenerate"]:
        lines += ["| notebook | claim | alternative | why flagged |", "|---|---|---|---|"]
        for r in sh["degenerate"]:
            lines.append(f"| {r['notebook']} | `{r['label']}` | `{r['expression']}` | "
                         f"{r['reason']} |")
    else:
        lines.append("None: every alternative is a value a competing explanation predicts, "
                     "or the claim says why none applies.")
    lines += ["", f"### Alternatives closer than {NEAR} tolerances", "",
              "A claim \"approximately equal\" whose alternative lies this close to its "
              "reference would often pass if the competitor were true, so it is not what "
              "rejects the competitor: each is listed so that a reader can ask whether it is "
              "stated as a consistency check, or which other claim carries the rejection.",
              ""]
    if sh.get("near"):
        lines += ["| claim | sharpness |", "|---|---|"]
        for r in sh["near"]:
            lines.append(f"| `{r['chapter']}:{r['label']}` | {r['text'].replace('|', '/')} |")
    else:
        lines.append("None.")
    lines += ["", f"### Alternatives further than {FAR} tolerances", "",
              "A distant alternative is rejected by construction; each of these is listed so "
              "that a reader can ask whether a closer competitor exists.", ""]
    if sh["far"]:
        lines += ["| claim | sharpness |", "|---|---|"]
        for r in sh["far"]:
            lines.append(f"| `{r['chapter']}:{r['label']}` | {r['text'].replace('|', '/')} |")
    else:
        lines.append("None.")
    return lines


def page(summary: dict, scale_summary: dict | None = None,
         sharp: dict | None = None) -> str:
    """The Markdown of ``book/robustness.md`` (with the scale section when there is a scale run)."""
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
    for key, words in [("date", "last run"), ("lectures", "lectures of the last run"),
                       ("seconds", "wall time of the last run (s)"), ("digest", "sources"),
                       ("jobs", "lectures at once")]:
        if key in meta:
            lines.append(f"- **{words}**: {meta[key]}")
    if meta.get("errors"):
        lines.append("- **lectures that raised an error**: " + ", ".join(meta["errors"]))
    if sharp:
        lines += sharpness_section(sharp)
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
            lines += ["", f"### {chapter_title(chapter)}", "",
                      "| claim | passed | worst measured | reference |", "|---|---|---|---|"]
        lines.append(f"| `{r['label']}` | {r['passes']}/{k} | {_fmt(r['worst_measured'])} | "
                     f"{_reference(r)} |")
    if scale_summary:
        lines += scale_section(scale_summary)
    return "\n".join(lines) + "\n"


def scale_section(summary: dict) -> list[str]:
    """The page's section on the scale run: the counts, the widening claims, every claim."""
    rows, scale = summary["claims"], summary["scale"]
    counts = {v: sum(r["verdict"] == v for r in rows)
              for v in ("tightens", "holds", "widens", "other", "missing")}
    asymptotic = counts["tightens"] + counts["holds"] + counts["widens"]
    lines = [
        "", f"{SCALE_HEADING}{scale:g}", "",
        f"`make scale` executes the book (root {summary['root']}) at scale 1 and at scale "
        f"{scale:g}: every chapter's dimensions, and the sizes tied to them, grow by "
        f"{scale:g} (`lecnotes.core.scale`, except where a chapter caps a size and says so), "
        "while the number of seeds and the rules of the tolerances stay. For a claim against "
        "a number (an `approx` claim), the distance is the absolute difference of the measured "
        "and the expected value in units of its tolerance at scale 1, at both scales: it "
        "*tightens* if the distance falls by more "
        f"than {WIDEN:g}, *widens* if it grows by more than {WIDEN:g}, and *holds* otherwise. "
        "A statement about the limit should tighten or hold; one that widens is either a "
        "finite-size effect its chapter names or a finding.",
        "",
        f"- **claims against a number**: {asymptotic}: {counts['tightens']} tighten, "
        f"{counts['holds']} hold, {counts['widens']} widen",
        f"- **other claims** (bounds, ranges, exact statements): {counts['other']}",
        f"- **passed at scale 1**: {sum(r['passed_1'] for r in rows)} of "
        f"{sum(1.0 not in r['missing'] for r in rows)}; **at scale {scale:g}**: "
        f"{sum(r['passed_2'] for r in rows)} of {sum(scale not in r['missing'] for r in rows)}",
    ]
    if counts["missing"]:
        lines.append(f"- **recorded at one scale only**: {counts['missing']}")
    runs = summary.get("runs", [])
    if runs:
        lines += ["", "Per execution: the kernel's CPU time, the wall time of the task, and the "
                  "kernel's peak memory. The CPU time is less sensitive to the load than the "
                  "wall time but not immune to it (shared caches and memory bandwidth): "
                  "chapter 1 at scale 1 took 53 s of CPU alone and 108-118 s beside a second "
                  "worker and other jobs on this 2-core machine. The budget (60 s per "
                  "lecture, 90 s at most, 2 GB) is measured alone on one core "
                  "(`make benchmarks`, the performance page).", "",
                  "| chapter | scale | CPU (s) | wall (s) | peak memory (MB) | status |",
                  "|---|---|---|---|---|---|"]
        for run in sorted(runs, key=lambda x: (x["chapter"], x["scale"])):
            status = "ok" if run["returncode"] == 0 else "error"
            lines.append(f"| {run['chapter']} | {run['scale']:g} | "
                         f"{_fmt(run.get('cpu_seconds'))} | {_fmt(run['seconds'])} | "
                         f"{_fmt(run['peak_mb'])} | {status} |")
    notes = summary.get("notes", {})
    widening = [r for r in rows if r["verdict"] == "widens" or (
        r["passed_1"] and not r["passed_2"] and not r["missing"])]
    lines += ["", f"### Claims that widen or fail at scale {scale:g}", ""]
    if widening:
        lines += ["| claim | distance at 1 | distance at " + f"{scale:g} | passed at "
                  f"{scale:g} | explanation |", "|---|---|---|---|---|"]
        for r in widening:
            why = notes.get(f"{r['chapter']}:{r['label']}", "not explained yet (a finding)")
            lines.append(f"| `{r['chapter']}:{r['label']}` | {_fmt(r['distance_1'])} | "
                         f"{_fmt(r['distance_2'])} | {'yes' if r['passed_2'] else 'no'} | "
                         f"{why} |")
    else:
        lines.append("None.")
    lines += ["", f"### Every claim at scales 1 and {scale:g}", "",
              "Distance: in units of the scale-1 tolerance; margin (for the other claims): "
              "how far on the failing side of the reference, in units of the tolerance "
              "(negative inside).", "",
              f"| claim | distance at 1 | distance at {scale:g} | margin at 1 | margin at "
              f"{scale:g} | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r['chapter']}:{r['label']}` | {_fmt(r['distance_1'])} | "
                     f"{_fmt(r['distance_2'])} | {_fmt(r['margin_1'])} | "
                     f"{_fmt(r['margin_2'])} | {r['verdict']} |")
    return lines


def run(paths: list[Path], roots: list[int], scales: list[float], *, workers: int | None,
        serial: bool, fresh: bool) -> dict:
    """Execute ``paths`` under every root and scale (Dask tasks); return the run's metadata."""
    import sweep

    todo = sweep.tasks(paths, roots, scales)
    print(f"robustness: {len(paths)} lecture(s) x {len(roots)} root(s) x {len(scales)} "
          f"scale(s)", flush=True)
    start = time.perf_counter()
    if serial:
        results = sweep.run_serial(todo, OUT, fresh=fresh)
        where = "serial"
    else:
        client = sweep.connect(workers=workers)
        where = f"{len(client.scheduler_info()['workers'])} Dask worker(s)"
        try:
            results = sweep.sweep(todo, OUT, client, fresh=fresh)
        finally:
            client.close()
    errors = sorted(sweep.Task(**r["task"]).key for r in results if r["returncode"] != 0)
    for r in results:
        if r["returncode"] != 0:
            print(f"\n===== {sweep.Task(**r['task']).key} =====\n{r['output']}")
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "lectures": ", ".join(Path(p).stem[:2] for p in paths) + " (the other lectures' "
                        "records come from earlier runs)",
            "seconds": round(time.perf_counter() - start), "digest": claims.package_digest(),
            "jobs": where, "errors": errors}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lectures", nargs="*", help="numbers, stems or paths (default: all)")
    ap.add_argument("--roots", type=int, default=5, help="number of seed roots")
    ap.add_argument("--first-root", type=int, default=1, help="the first root (0 is the book)")
    ap.add_argument("--scale", type=float, default=None,
                    help="run root 0 at scales 1 and SCALE instead of the robustness roots")
    ap.add_argument("--reference", type=Path, default=None,
                    help="with --scale: take the scale-1 records from this ledger folder (the "
                         "book's _build/claims of the same sources) instead of running them")
    ap.add_argument("--workers", type=int, default=None,
                    help="local Dask workers (default: one per core); ignored with $SCHEDULER")
    ap.add_argument("--serial", action="store_true", help="no Dask: one task after another")
    ap.add_argument("--fresh", action="store_true", help="redo tasks already done")
    ap.add_argument("--jobs", type=int, default=None, help=argparse.SUPPRESS)  # old spelling
    ap.add_argument("--report", action="store_true", help="only rewrite the page")
    ap.add_argument("--sharpness", action="store_true",
                    help="recompute the sharpness section from the book's execution "
                         "(_build/claims) and the lectures' source, then the page")
    ap.add_argument("--resummarise", action="store_true",
                    help="recount the per-root records of the last run's roots, then the page")
    args = ap.parse_args(argv)
    workers = args.workers or args.jobs
    summary_path, scale_path = OUT / "summary.json", OUT / "scale.json"
    sharp_path = OUT / "sharpness.json"
    if args.sharpness:
        sharp = sharpness_of_the_book()
        OUT.mkdir(parents=True, exist_ok=True)
        sharp_path.write_text(json.dumps(sharp, indent=1))
        t = sharp["two_sided"]
        print(f"sharpness: {t['count']} two-sided claims, median resolution "
              f"{t['median_resolution']:.3g}, {t['over_wide']} wider than {claims.WIDE}; "
              f"{len(sharp['degenerate'])} alternatives built from a tolerance")
        if not summary_path.is_file():  # no robustness run here: splice into the page
            text = PAGE.read_text() if PAGE.is_file() else ""
            PAGE.write_text(splice_sharpness(text, sharpness_section(sharp)))
            print(f"sharpness: section written into {PAGE}")
            return 0
        args.report = True
    if args.scale is not None:
        if not args.scale > 0:
            ap.error("--scale must be positive")
        scales = [1.0, args.scale]
        if args.reference is not None:  # the book's own execution is the scale-1 reference
            target = folder(0, 1.0)
            target.mkdir(parents=True, exist_ok=True)
            for record in sorted(Path(args.reference).glob("*.json")):
                (target / record.name).write_text(record.read_text())
            scales = [args.scale]
        if not (args.report or args.resummarise):
            meta = run(notebooks.lectures(args.lectures), [0], scales,
                       workers=workers, serial=args.serial, fresh=args.fresh)
        else:
            meta = (json.loads(scale_path.read_text()).get("meta", {})
                    if scale_path.is_file() else {})  # a run still going: its records so far
        scale_summary = {**summarise_scale(0, args.scale), "meta": meta}
        scale_path.write_text(json.dumps(scale_summary, indent=1))
        summary = json.loads(summary_path.read_text()) if summary_path.is_file() else None
    else:
        roots = list(range(args.first_root, args.first_root + args.roots))
        scale_summary = json.loads(scale_path.read_text()) if scale_path.is_file() else None
        if args.report:
            summary = json.loads(summary_path.read_text())
        elif args.resummarise:
            old = json.loads(summary_path.read_text())
            digests = sorted({prov.get("digest", "?") for r in old["roots"]
                              for prov in claims.load_provenance(folder(r)).values()})
            meta = {**old.get("meta", {}), "digest": ", ".join(digests) + " (per chapter)",
                    "date": old.get("meta", {}).get("date", "?") + " (some lectures re-run since)"}
            summary = {**summarise(old["roots"]), "meta": meta}
            summary_path.write_text(json.dumps(summary, indent=1))
        else:
            meta = run(notebooks.lectures(args.lectures), roots, [1.0], workers=workers,
                       serial=args.serial, fresh=args.fresh)
            summary = {**summarise(roots), "meta": meta}
            summary_path.write_text(json.dumps(summary, indent=1))
    if summary is None:  # a scale run alone: keep the page's robustness part as it is
        kept = PAGE.read_text().split(SCALE_HEADING)[0].rstrip("\n") if PAGE.is_file() else ""
        PAGE.write_text(kept + "\n" + "\n".join(scale_section(scale_summary)) + "\n")
        print(f"scale: page {PAGE} (its robustness part kept from the last robustness run)")
        return 0
    sharp = json.loads(sharp_path.read_text()) if sharp_path.is_file() else None
    PAGE.write_text(page(summary, scale_summary, sharp))
    rows, k = summary["claims"], len(summary["roots"])
    weak = [r for r in rows if r["passes"] < k - 1]
    total = len(rows) * k
    ok = sum(r["passes"] for r in rows)
    print(f"robustness: {ok}/{total} claim evaluations passed ({100 * ok / max(total, 1):.2f}%); "
          f"{len(weak)} claim(s) passed fewer than {k - 1} of {k} roots; page {PAGE}")
    if scale_summary:
        verdicts = [r["verdict"] for r in scale_summary["claims"]]
        print("scale {:g}: {} tighten, {} hold, {} widen, {} other".format(
            scale_summary["scale"], *(verdicts.count(v) for v in
                                      ("tightens", "holds", "widens", "other"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
