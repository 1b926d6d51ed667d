"""A pytest plugin: the notebooks nbval executes become the book's cached outputs.

Loaded by ``tools/run_nbval.py`` (``-p nbval_cache --nbval-cache``). nbval executes every code
cell of a lecture in one kernel and keeps each cell's outputs (``IPyNbCell.test_outputs``);
when every cell of a lecture passed (or was skipped by its ``nbval-skip`` tag, which the
assignment stubs also carry as ``skip-execution`` for the build), this plugin writes the
lecture with those outputs into the book's execution cache, keyed exactly as the build keys
it. ``jupyter-book build`` then renders that execution instead of executing the lecture a
second time. A lecture with any failing cell is not cached: the build executes it and fails
on it too.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

_cells: dict[str, list] = {}  # notebook path -> [(item, outcome)]
_started: dict[str, float] = {}


def pytest_addoption(parser):
    parser.addoption("--nbval-cache", action="store_true",
                     help="store the executed lectures in the book's execution cache")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not hasattr(item, "test_outputs") or not item.config.getoption("nbval_cache"):
        return
    path = str(item.path)
    _started.setdefault(path, time.perf_counter())
    if report.when == "call" or (report.when == "setup" and not report.passed):
        state = "skipped" if report.skipped else ("passed" if report.passed else "failed")
        _cells.setdefault(path, []).append((item, state))


def pytest_sessionfinish(session, exitstatus):
    if not session.config.getoption("nbval_cache") or not _cells:
        return
    from execute import open_cache, store  # the reader's venv has jupyter-cache

    cache = open_cache(empty_if_stale=False)  # tools/run_nbval.py --cache prepared it
    if cache is None:
        print("\nnbval-cache: the execution cache is missing or stamped with other lecnotes "
              "sources; nothing cached (run through tools/run_nbval.py --cache)")
        return
    for path, results in _cells.items():
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        states = {item.cell_num: (item, state) for item, state in results}
        complete = len(states) == len(code) and all(
            state == "passed" or (state == "skipped" and item.options.get("skip"))
            for item, state in states.values())
        if not complete:
            print(f"\nnbval-cache: {Path(path).stem} not cached (a cell failed or did not run)")
            continue
        count = 0
        for num, cell in enumerate(code):
            item, state = states[num]
            if state == "passed":
                count += 1
                cell.outputs = [nbformat.from_dict(o) for o in item.test_outputs]
                cell.execution_count = count
                for out in cell.outputs:
                    if out.output_type == "execute_result":
                        out.execution_count = count
        nbformat.validate(nb)
        store(cache, Path(path), nb, time.perf_counter() - _started[path])
        print(f"\nnbval-cache: {Path(path).stem} cached for the book build")
