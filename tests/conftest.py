"""Shared fixtures: claims are recorded in a temporary folder, never in the book's _build."""

import pytest


@pytest.fixture(autouse=True)
def _claims_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("LECNOTES_CLAIMS_DIR", str(tmp_path / "claims"))


def pytest_configure(config):
    """The test helpers of tests/ (_tools, _browser, ...) import from every test folder."""
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)


# CPU seconds by test file (measured with ``pytest -p _cputime``; make test-slow records them in
# _build/test-cpu.jsonl and keeps the previous run's as test-cpu.last.jsonl, read here): the
# costliest files start first (make test-slow passes --no-loadscope-reorder, without which
# xdist orders the files by their number of tests), so that on two workers the longest file is
# not the one left running alone at the end. (Splitting the page survey into two files, one
# per worker, was measured on a loaded machine: 124 + 128 CPU s in two browsers against 212 in
# one with two tabs, and no shorter wall time; it stays one file.)
COST = {"test_pages.py": 210, "test_otter.py": 115, "test_jupyterlab.py": 95,
        "test_editions.py": 55, "test_sweep.py": 45, "test_solutions.py": 30}


def _measured() -> tuple[dict[str, float], dict[str, float]]:
    """CPU seconds and wall seconds by test file in the last run's record (empty if none)."""
    import json
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "_build" / "test-cpu.last.jsonl"
    cpu: dict[str, float] = {}
    wall: dict[str, float] = {}
    try:
        for line in log.read_text().splitlines():
            row = json.loads(line)
            name = row["test"].split("::")[0].rsplit("/", 1)[-1]
            cpu[name] = cpu.get(name, 0.0) + row["cpu"]
            wall[name] = wall.get(name, 0.0) + row["wall"]
    except (OSError, ValueError, KeyError):
        return {}, {}
    return cpu, wall


# The JupyterLab test reads 24 notebooks in a third browser (72 CPU s in 113 s of wall time
# beside the survey): it starts at once beside the page survey rather than last and alone. A
# worker with at most two tests pending is handed the next file at once (xdist's prefetch): the
# file handed to it with the JupyterLab test is the one that waits most for the CPU it uses
# (the kernel guard's stall tests: 26 s of wall time for 4 CPU s), so that its waits fall
# beside the survey's two tabs and not at the end, where they left the other core idle (22 s
# in a run), and the next costly file (the autograders, two processes) stays for whichever
# worker is free first.
BESIDE_THE_COSTLIEST = "test_jupyterlab.py"
WAITS = {"test_kernel_guard.py": 18}  # wall seconds beyond twice the CPU's, without a record


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected: the files that run
def pytest_collection_modifyitems(config, items):
    """Costliest test files first (a stable sort: each file keeps its own order), but for
    :data:`BESIDE_THE_COSTLIEST` and the file that waits most, second and third."""
    cpu, wall = _measured()
    cost = {**COST, **cpu}
    # waiting: wall time beyond twice the CPU time (sharing two busy cores alone can double
    # a file's wall time; the kernel guard's 26 s for 4 CPU s is waiting, not sharing)
    waits = {**WAITS, **{f: wall[f] - 2 * cpu[f] for f in cpu}}
    # files in collection order (not a set: its order changes with each process's string
    # hashing, and xdist's workers must collect the same order), then stably by cost
    files = sorted(dict.fromkeys(item.path.name for item in items),
                   key=lambda f: -cost.get(f, 0.0))
    if BESIDE_THE_COSTLIEST in files[1:] and len(files) > 3:
        files.remove(BESIDE_THE_COSTLIEST)
        waiting = max(files[2:], key=lambda f: (waits.get(f, 0.0), -cost.get(f, 0.0)))
        files.remove(waiting)
        files[1:1] = [BESIDE_THE_COSTLIEST, waiting]
    rank = {f: i for i, f in enumerate(files)}
    items.sort(key=lambda item: rank[item.path.name])
