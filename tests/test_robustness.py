"""tools/robustness.py: the summary counts passes per claim and finds the worst root."""

import json
import math

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
    _record(tmp_path / "root-1", "00_x", [_claim("a", 0.1, True), _claim("b", 0.2, True)])
    _record(tmp_path / "root-2", "00_x", [_claim("a", 1.5, False)])  # b missing: the cell crashed
    _record(tmp_path / "root-3", "00_x", [_claim("a", 0.9, True), _claim("b", 0.1, True)])
    summary = robustness.summarise([1, 2, 3])
    rows = {r["label"]: r for r in summary["claims"]}
    assert rows["a"]["passes"] == 2 and rows["a"]["failed_roots"] == [2]
    assert rows["a"]["worst_root"] == 2 and rows["a"]["worst_measured"] == 1.5
    assert rows["b"]["passes"] == 2 and rows["b"]["missing"] == [2]
    text = robustness.page({**summary, "meta": {"seconds": 12}})
    assert "6 claim evaluations" not in text and "claim evaluations**: 6, of which 4 passed" in text
    assert "`00_x:a` | 2/3 | 2 |" in text and "`00_x:b` | 2/3 | 2 |" in text
