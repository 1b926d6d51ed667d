"""How the lectures are executed and tested: scheduling, the execution cache, nbval's outputs.

The tools under test are ``tools/notebooks.py`` (which lectures, in which order),
``book/_ext/execution_cache.py`` (the cache is emptied when the ``lecnotes`` sources change)
and ``tools/nbval_cache.py`` (the outputs nbval produced are what the book build renders).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from _tools import load_tool

ROOT = Path(__file__).resolve().parents[1]


notebooks = load_tool("notebooks")
execution_cache = load_tool("execution_cache", ROOT / "book" / "_ext")


def test_lectures_are_selected_by_number_stem_or_path():
    every = notebooks.lectures()
    assert every and all(p.suffix == ".ipynb" for p in every)
    six = notebooks.lectures(["6"])
    assert [p.stem[:2] for p in six] == ["06"]
    assert notebooks.lectures([six[0].stem]) == six
    assert notebooks.lectures([str(six[0])]) == six
    with pytest.raises(SystemExit):
        notebooks.lectures(["99"])


def test_slowest_lecture_starts_first(tmp_path, monkeypatch):
    monkeypatch.setattr(notebooks, "BENCHMARKED", tmp_path / "bench.json")
    monkeypatch.setattr(notebooks, "RECORDED", tmp_path / "recorded.json")
    (tmp_path / "bench.json").write_text(json.dumps({"a": 10.0, "b": 50.0, "c": 30.0}))
    paths = [Path(f"{x}.ipynb") for x in "abcd"]
    # d has no known duration: it goes first, then b, c, a
    assert [p.stem for p in notebooks.slowest_first(paths)] == ["d", "b", "c", "a"]
    notebooks.record({"a": 99.0})  # a measured time overrides the benchmarked one
    assert [p.stem for p in notebooks.slowest_first(paths)] == ["d", "a", "b", "c"]


def test_cache_is_emptied_when_the_sources_change(tmp_path):
    cache = tmp_path / "cache"
    assert execution_cache.ensure_fresh(cache, "abc")  # new: created and stamped
    (cache / "global.db").write_text("outputs")
    assert not execution_cache.ensure_fresh(cache, "abc")  # same sources: kept
    assert (cache / "global.db").exists()
    assert execution_cache.ensure_fresh(cache, "def")  # other sources: emptied
    assert not (cache / "global.db").exists()
    assert (cache / execution_cache.STAMP).read_text().strip() == "def"


def _notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny lecture")]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    skipped = nbformat.v4.new_code_cell("raise RuntimeError('a stub, never run')")
    skipped.metadata["tags"] = ["nbval-skip", "skip-execution"]
    nb.cells.append(skipped)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def test_workers_never_empty_a_cache_in_use(tmp_path, monkeypatch):
    # nbval's workers add to the cache; only the runner (or tools/execute.py) may empty it
    execute = load_tool("execute")
    monkeypatch.setattr(execute, "CACHE", tmp_path / "cache")
    assert execute.open_cache(empty_if_stale=False) is None  # not prepared: not opened
    execution_cache.ensure_fresh(tmp_path / "cache", "other sources")
    assert execute.open_cache(empty_if_stale=False) is None  # stamped with other sources
    assert execute.open_cache() is not None  # the runner empties and re-stamps it
    assert execute.open_cache(empty_if_stale=False) is not None


@pytest.mark.slow  # executes two notebooks: make test-slow, not make check
def test_nbval_outputs_become_the_cached_execution(tmp_path):
    good = _notebook(tmp_path / "good.ipynb", ["x = 6 * 7\nprint(x)", "x + 1"])
    bad = _notebook(tmp_path / "bad.ipynb", ["print('before')", "1 / 0"])
    env = {**os.environ, "LECNOTES_EXECUTION_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT / "tools")}
    from lecnotes.book import claims

    execution_cache.ensure_fresh(tmp_path / "cache", claims.package_digest())
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
         "-p", "no:cacheprovider", "-p", "nbval_cache", "--nbval-cache", "-q",
         "-o", "addopts=", str(good), str(bad)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    assert proc.returncode == 1, proc.stdout[-3000:]  # bad.ipynb fails
    assert "good cached for the book build" in proc.stdout
    assert "bad not cached" in proc.stdout
    from jupyter_cache import get_cache

    cache = get_cache(str(tmp_path / "cache"))
    record = cache.match_cache_notebook(nbformat.read(good, as_version=4))
    cells = [c for c in cache.get_cache_bundle(record.pk).nb.cells if c.cell_type == "code"]
    assert cells[0].outputs[0]["text"] == "42\n"
    assert cells[1].outputs[0]["data"]["text/plain"] == "43"
    assert cells[2].outputs == []  # the skipped stub
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(bad, as_version=4))
