"""tools/robustness.py: the summary counts passes per claim and finds the worst root."""

import json
import math

import pytest
from _tools import load_tool

CHAPTERS = ()  # book infrastructure; make check runs it

robustness = load_tool("robustness")


def _record(folder, chapter, claims):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{chapter}.json").write_text(json.dumps(
        {"chapter": chapter, "provenance": {}, "claims": claims}))


def _claim(label, measured, passed, expected=0.0, tol=1.0, relation="approx"):
    return {"label": label, "statement": "s", "measured": measured, "expected": expected,
            "relation": relation, "tol": tol, "passed": passed}


def test_margin_is_in_units_of_the_tolerance():
    assert robustness.margin(_claim("a", 0.0, True)) == -1.0
    assert robustness.margin(_claim("a", 2.0, False)) == 1.0
    assert robustness.margin(_claim("a", 0.5, True, expected=1.0, tol=None, relation="<=")) < 0
    assert robustness.margin(_claim("a", 3.0, True, expected=(0, 2), relation="between")) == 1.0
    assert robustness.margin(_claim("a", float("nan"), False)) == math.inf


def test_summary_counts_passes_and_missing_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(robustness, "OUT", tmp_path)
    _record(robustness.folder(1), "00_x", [_claim("a", 0.1, True), _claim("b", 0.2, True)])
    _record(robustness.folder(2), "00_x", [_claim("a", 1.5, False)])  # b missing: the cell crashed
    _record(robustness.folder(3), "00_x", [_claim("a", 0.9, True), _claim("b", 0.1, True)])
    summary = robustness.summarise([1, 2, 3])
    rows = {r["label"]: r for r in summary["claims"]}
    assert rows["a"]["passes"] == 2 and rows["a"]["failed_roots"] == [2]
    assert rows["a"]["worst_root"] == 2 and rows["a"]["worst_measured"] == 1.5
    assert rows["b"]["passes"] == 2 and rows["b"]["missing"] == [2]
    text = robustness.page({**summary, "meta": {"seconds": 12}})
    assert "6 claim evaluations" not in text and "claim evaluations**: 6, of which 4 passed" in text
    assert "`00_x:a` | 2/3 | 2 |" in text and "`00_x:b` | 2/3 | 2 |" in text


def test_distance_and_verdict_in_units_of_the_scale_one_tolerance():
    assert robustness.distance(_claim("a", 0.3, True, expected=0.1, tol=0.1), 0.1) == \
        pytest.approx(2.0)
    assert robustness.distance(_claim("a", 0.3, True, relation="<="), 0.1) is None
    assert robustness.distance(_claim("a", float("nan"), False), 0.1) == math.inf
    assert robustness.verdict(1.0, 0.5) == "tightens"
    assert robustness.verdict(1.0, 1.2) == "holds"
    assert robustness.verdict(0.2, 0.6) == "widens"
    assert robustness.verdict(None, 0.6) == "other"


def test_scale_summary_compares_each_claim_and_lists_the_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(robustness, "OUT", tmp_path)
    s1, s2 = tmp_path / "scale-1" / "root-0", tmp_path / "scale-2" / "root-0"
    _record(s1, "00_x", [_claim("limit", 0.10, True, tol=0.2), _claim("bound", 0.5, True,
                                                                       expected=1.0, tol=None,
                                                                       relation="<="),
                         _claim("drift", 0.02, True, tol=0.2), _claim("gone", 0.0, True)])
    _record(s2, "00_x", [_claim("limit", 0.01, True, tol=0.1), _claim("bound", 0.7, True,
                                                                       expected=1.0, tol=None,
                                                                       relation="<="),
                         _claim("drift", 0.3, False, tol=0.1)])
    (s2 / "tasks").mkdir()
    (s2 / "tasks" / "00_x.json").write_text(json.dumps({"seconds": 61.0, "peak_mb": 900,
                                                        "returncode": 0}))
    summary = robustness.summarise_scale(0, 2.0)
    rows = {r["label"]: r for r in summary["claims"]}
    assert rows["limit"]["verdict"] == "tightens"  # 0.5 -> 0.05 tolerances of scale 1
    assert rows["drift"]["verdict"] == "widens" and not rows["drift"]["passed_2"]
    assert rows["bound"]["verdict"] == "other" and rows["gone"]["verdict"] == "missing"
    assert summary["runs"] == [{"chapter": "00_x", "scale": 2.0, "seconds": 61.0,
                                "cpu_seconds": None, "peak_mb": 900, "returncode": 0}]
    text = "\n".join(robustness.scale_section({**summary, "notes": {"00_x:drift": "a 1/d term"}}))
    assert "1 tighten, 0 hold, 1 widen" in text
    assert "| `00_x:drift` | 0.1 | 1.5 | no | a 1/d term |" in text
    assert "| 00_x | 2 | - | 61 | 900 | ok |" in text


def test_the_sources_of_a_lecture_are_its_notebook_its_chapter_and_the_shared_tiers(tmp_path):
    sweep = load_tool("sweep")
    lectures = sorted((robustness.notebooks.ROOT / "lectures").glob("0[0-9]_*.ipynb"))
    digests = {p.stem: sweep.sources_digest(p) for p in lectures[:3]}
    assert len(set(digests.values())) == 3  # each lecture has its own sources
    copy = tmp_path / lectures[0].name
    copy.write_text(lectures[0].read_text())
    assert sweep.sources_digest(copy) == digests[lectures[0].stem]
    copy.write_text(lectures[0].read_text().replace("import", "import ", 1))
    assert sweep.sources_digest(copy) != digests[lectures[0].stem]


def test_a_written_task_is_done_until_the_sources_change(tmp_path):
    sweep = load_tool("sweep")
    task = sweep.Task("/x/lectures/03_y.ipynb", root=2, scale=2.0)
    assert task.key == "03_y-root2-scale2" and task.folder(tmp_path).name == "root-2"
    result = {"task": {"path": task.path, "root": 2, "scale": 2.0}, "returncode": 0,
              "record": {"chapter": "03_y", "provenance": {}, "claims": []}, "seconds": 1.0,
              "peak_mb": 10, "host": "h", "output": ""}
    assert not sweep._done(task, tmp_path, "abc")
    sweep.write(result, tmp_path, "abc")
    assert sweep._done(task, tmp_path, "abc") and not sweep._done(task, tmp_path, "new")
    assert (tmp_path / "scale-2" / "root-2" / "03_y.json").is_file()
    sweep.write({**result, "returncode": 1}, tmp_path, "abc")
    assert not sweep._done(task, tmp_path, "abc")  # a failed task runs again


def test_progress_counts_done_failed_and_time_left():
    import io

    sweep = load_tool("sweep")
    out = io.StringIO()
    bar = sweep.Progress(4, out)
    for rc in (0, 1):
        bar.update({"task": {"path": "a/01_z.ipynb", "root": 0, "scale": 1.0},
                    "returncode": rc, "seconds": 3.0})
    lines = out.getvalue().splitlines()
    assert "2/4 done, 1 failed" in lines[-1] and "left" in lines[-1]
    assert "01_z-root0-scale1: FAILED" in lines[-1]


def test_the_sweeps_leave_out_the_live_explorers():
    import nbformat

    sweep = load_tool("sweep")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("explorer.width_explorer(state)"),
        nbformat.v4.new_code_cell("fig = explorer.panels(state)"),
        nbformat.v4.new_markdown_cell("explorer.width_explorer(state)")])
    assert sweep.without_explorers(nb) == 1
    assert nb.cells[0].source.startswith("#") and nb.cells[1].source.startswith("fig")
    every = sorted((robustness.notebooks.ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))
    counts = [sweep.without_explorers(nbformat.read(p, as_version=4)) for p in every]
    assert sum(counts) >= 6  # the chapters whose Explore section runs a widget; no claim there


def test_the_sharpness_section_lists_wide_far_and_degenerate_claims():
    recs = {"00_x": [
        {**_claim("sharp", 1.01, True, expected=1.0, tol=0.05), "alternative": 0.8,
         "kind": "limit"},
        {**_claim("wide", 1.0, True, expected=1.0, tol=0.4), "alternative": 0.0,
         "why_wide": "only the sign matters"},
        {**_claim("far", 1.0, True, expected=1.0, tol=0.01), "alternative": 0.0},
        {**_claim("bound", 1.5, True, expected=1.2, tol=None, relation=">="),
         "alternative": 1.0},
        _claim("exact", 1.0, True, expected=1.0, tol=1e-12),
        {**_claim("near", 0.01, True, expected=0.0, tol=0.1), "alternative": 0.15},
    ]}

    class Finding:  # the fields of claim_rules.Finding the summary reads
        notebook, label, expression, reason = "00_x.ipynb", "deg", "-t10 * se", "t-factor"

    sh = robustness.summarise_sharpness(recs, [Finding()])
    assert sh["two_sided"] == {"count": 3, "median_resolution": 0.05, "over_wide": 1}
    assert sh["alternatives"]["count"] == 3 and sh["alternatives"]["over_far"] == 1
    assert sh["one_sided"]["median_margin"] == pytest.approx(0.25)
    assert sh["kinds"]["limit"] == 1 and sh["kinds"]["identity (inferred)"] == 1
    text = "\n".join(robustness.sharpness_section(sh))
    assert "`00_x:wide` | 40% | finite-size | only the sign matters" in text
    assert "`00_x:far`" in text and "rejects 0 at 100 tolerances" in text
    assert "`-t10 * se`" in text
    assert [r["label"] for r in sh["near"]] == ["near"]  # 1.5 tolerances, zero reference
    assert "### Alternatives closer than 2 tolerances" in text and "`00_x:near`" in text
    page = robustness.page({"roots": [1], "claims": []}, None, sh)
    assert "## How sharp the claims are" in page


def test_the_sharpness_section_is_spliced_into_a_page_without_a_new_run():
    page = "# R\n\nintro\n\n## Claims that failed under some root\n\nnone\n"
    one = robustness.splice_sharpness(page, ["", "## How sharp the claims are", "", "v1"])
    assert one.index("v1") < one.index("## Claims that failed") and "intro" in one
    two = robustness.splice_sharpness(one, ["## How sharp the claims are", "", "v2"])
    assert "v1" not in two and "v2" in two and two.count("## How sharp") == 1
    assert two.endswith("none\n")
