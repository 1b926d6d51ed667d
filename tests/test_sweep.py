"""tools/sweep.py on Dask: a sweep on a two-worker LocalCluster gives the serial path's summary,
and a sweep whose worker is killed during a task still completes with every record once.

The fixtures are two short notebooks (tests/fixtures/sweep/) that draw from the seed root and
record two claims each; a LocalCluster and four kernels take some 30 s, hence ``slow``.
"""

import json
import math
import os
import signal
import threading
import time
from pathlib import Path

import psutil
import pytest
from _tools import load_tool

CHAPTERS = ()  # book infrastructure

pytest.importorskip("distributed")
sweep = load_tool("sweep")
robustness = load_tool("robustness")
FIXTURES = sorted((Path(__file__).parent / "fixtures" / "sweep").glob("*.ipynb"))


def _summary(out, monkeypatch, roots):
    monkeypatch.setattr(robustness, "OUT", out)
    return robustness.summarise(roots)


def _same(a, b):
    """Equal summaries: the same claims and passes, measured values equal to rounding."""
    assert [(r["chapter"], r["label"], r["passes"], r["runs"]) for r in a["claims"]] == \
        [(r["chapter"], r["label"], r["passes"], r["runs"]) for r in b["claims"]]
    for x, y in zip(a["claims"], b["claims"], strict=True):
        assert math.isclose(x["worst_measured"], y["worst_measured"], rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.slow
def test_local_cluster_gives_the_serial_summary(tmp_path, monkeypatch):
    todo = sweep.tasks(FIXTURES, [0, 1])
    serial = sweep.run_serial(todo, tmp_path / "serial")
    client = sweep.connect(workers=2)
    try:
        assert len(client.scheduler_info()["workers"]) == 2
        dask = sweep.sweep(todo, tmp_path / "dask", client)
        again = sweep.sweep(todo, tmp_path / "dask", client)  # a re-run skips what is done
    finally:
        client.close()
    assert again == []
    assert sorted(r["task"]["path"] + str(r["task"]["root"]) for r in dask) == \
        sorted(r["task"]["path"] + str(r["task"]["root"]) for r in serial)
    assert all(r["returncode"] == 0 and r["peak_mb"] > 0 for r in serial + dask)
    one = _summary(tmp_path / "serial", monkeypatch, [0, 1])
    two = _summary(tmp_path / "dask", monkeypatch, [0, 1])
    assert len(one["claims"]) == 4 and all(r["passes"] == 2 for r in one["claims"])
    _same(one, two)
    # the roots are independent draws: root 0 and root 1 measure different means
    recs = [json.loads((tmp_path / "serial" / "scale-1" / f"root-{r}" / "01_fast.json")
                       .read_text())["claims"][0]["measured"] for r in (0, 1)]
    assert recs[0] != recs[1]


@pytest.mark.slow
def test_a_killed_worker_costs_a_retry_not_a_record(tmp_path, monkeypatch):
    marker = tmp_path / "started"
    monkeypatch.setenv("SWEEP_TEST_MARKER", str(marker))
    monkeypatch.setenv("SWEEP_TEST_SLEEP", "600")
    todo = sweep.tasks(FIXTURES, [0])
    slow = next(t for t in todo if t.stem == "02_slow")
    client = sweep.connect(workers=2)  # the workers inherit the marker's variables
    killed = []

    def kill_when_started():
        deadline = time.time() + 120
        while not marker.exists() and time.time() < deadline:
            time.sleep(0.2)
        where = [w for w, keys in client.processing().items() if slow.key in keys]
        pids = client.run(os.getpid, workers=where)
        for pid in pids.values():
            # the worker and the attempt it runs (its subprocess and kernel), as a crash would
            doomed = psutil.Process(pid).children(recursive=True)
            os.kill(pid, signal.SIGKILL)
            for child in doomed:
                child.kill()
            killed.append(pid)

    killer = threading.Thread(target=kill_when_started, daemon=True)
    killer.start()
    try:
        start = time.perf_counter()
        results = sweep.sweep(todo, tmp_path / "out", client)
        seconds = time.perf_counter() - start
    finally:
        killer.join(timeout=5)
        client.close()
    assert killed, "the worker running the slow task was not found"
    assert marker.read_text().count("started") == 2  # the task ran again after the kill
    assert seconds < 600  # the sweep did not wait for the killed attempt's sleep
    keys = [sweep.Task(**r["task"]).key for r in results]
    assert sorted(keys) == sorted(t.key for t in todo)  # every task once
    for task in todo:
        record = json.loads((task.folder(tmp_path / "out") / f"{task.stem}.json").read_text())
        assert [c["label"] for c in record["claims"]] == ["mean-zero", "dimension"]
        assert all(c["passed"] for c in record["claims"])
