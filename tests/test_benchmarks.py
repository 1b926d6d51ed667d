"""The performance page (``benchmarks/run.py``, ``make benchmarks``) is complete and true.

Every lecture of the table of contents has a measured row on ``book/performance.md`` and a time
in ``benchmarks/lecture-seconds.json`` (the runners' schedule); the page's sections are built
right from measurements (no lecture is executed here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from _tools import load_tool

CHAPTERS = ()  # book infrastructure
ROOT = Path(__file__).resolve().parents[1]
run = load_tool("run", ROOT / "benchmarks")


def test_the_table_of_contents_lists_every_lecture():
    stems = run.toc_lectures()
    assert stems == sorted(p.stem for p in (ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))


def test_every_lecture_is_on_the_performance_page_and_in_the_schedule():
    page = (ROOT / "book" / "performance.md").read_text()
    schedule = json.loads((ROOT / "benchmarks" / "lecture-seconds.json").read_text())
    stems = run.toc_lectures()
    # a row "| 06_giant_steps | 1 | 51.2 | ...": measured on one thread
    off_page = [s for s in stems if not re.search(rf"^\| {s} \| 1 \| \d", page, re.M)]
    off_schedule = [s for s in stems if not isinstance(schedule.get(s), (int, float))]
    assert not off_page and not off_schedule, (
        f"not on book/performance.md: {off_page}; not in benchmarks/lecture-seconds.json: "
        f"{off_schedule} (run make benchmarks)")


def test_a_lecture_not_measured_says_so(monkeypatch):
    monkeypatch.setattr(run, "toc_lectures", lambda: ["00_a", "01_b"])
    rows = [{"lecture": "00_a", "threads": 1, "seconds": 70.0, "cpu_seconds": 65.0,
             "peak_mb": 300.0, "date": "2026-12-06"}]
    _, _, table = run.lectures_section(rows)
    assert re.search(r"^\| 00_a \| 1 \| 70\.0 \| 65\.0 \| 300 \| over the 60 s target", table,
                     re.M)
    assert re.search(r"^\| 01_b \| 1 \| not measured", table, re.M)


def test_the_profile_shows_the_costliest_cells_of_the_slowest_lectures():
    def row(stem, secs):
        cells = [{"index": i, "seconds": s, "source": f"# cell {i}\nx = lib.f{i}(a, b)"}
                 for i, s in enumerate(secs)]
        return {"lecture": stem, "threads": 1, "seconds": sum(secs), "cells": cells}

    rows = [row("00_a", [1, 1]), row("01_b", [30, 1, 9]), row("02_c", [5, 5]),
            row("03_d", [20, 20, 1])]
    _, _, text = run.profile_section(rows)
    assert text.index("**03_d**") < text.index("**01_b**") < text.index("**02_c**")
    assert "00_a" not in text
    assert "| 0 | 30.0 | 75 | `x = lib.f0(a, b)` |" in text and "| 2 | 9.0 |" in text


def test_the_ci_steps_come_from_the_step_markers():
    log = "\n".join([
        "=== .ci/run: Chromium, poppler-utils and npm (t = 0s)", "chromium 120",
        "=== .ci/run: make test (the README's test command) (t = 12s)",
        "=== make test: lint and unit tests (make check) (t = 0s)", "....",
        "=== make test: every lecture under nbval (t = 55s)",
        "=== make test: the built book (make test-slow) (t = 400s)",
        "=== make test: all passed (t = 700s)",
        "=== .ci/run: done (t = 713s)"])
    rows = run.ci_steps(log)
    assert [(r["level"], r["seconds"]) for r in rows] == [
        (".ci/run", 12), (".ci/run", 701), ("make test", 55), ("make test", 345),
        ("make test", 300)]
    cut = run.ci_steps(log.rsplit("\n", 2)[0])  # a run that stopped in the slow tests
    assert cut[1] == {"level": ".ci/run", "step": "make test (the README's test command)",
                      "seconds": "did not finish"}
    assert cut[-1]["step"] == "the built book (make test-slow)"
    assert cut[-1]["seconds"] == "did not finish"


def test_the_reference_column_flags_rows_only_beyond_one_hosts_spread(monkeypatch):
    monkeypatch.setattr(run, "toc_lectures", lambda: ["00_a", "01_b", "02_c"])

    def rows(*refs):
        return [{"lecture": s, "threads": 1, "seconds": 50.0, "cpu_seconds": 49.0,
                 "peak_mb": 300.0, "date": "2026-12-07", "reference": r}
                for s, r in zip(["00_a", "01_b", "02_c"], refs, strict=True)]

    flag = "probably measured on hosts of different speeds"
    # one host's drift (0.31-0.46 s, 1.48x): no flag; a blank (failed or older) row is ignored
    _, _, table = run.lectures_section(rows(0.31, 0.46, ""))
    assert flag not in table
    assert re.search(r"^\| 00_a \| 1 \| 50\.0 \| 49\.0 \| 300 \| ok \|  \| 0\.31 \|", table, re.M)
    # a host about twice as slow: flagged, with the range
    _, _, table = run.lectures_section(rows(0.2, 0.42, 0.3))
    assert flag in table and "(0.20-0.42 s)" in table
