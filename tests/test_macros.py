"""The notation macros reach every notebook from one source, ``_config.yml``.

Every lecture starts with the macros cell that ``tools/macros.py`` generates from the config (so
a macro added to the config and not to the notebooks fails here), the cell is removed from the
HTML book by its tag, and its two halves (front matter for jupyterlab-myst, ``\\def`` formula for
MathJax) define exactly the config's macros.
"""

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from _tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
macros = load_tool("macros")

LECTURES = sorted((ROOT / "lectures").glob("*.ipynb"))


def test_macros_come_from_the_book_config():
    found = macros.load_macros()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    raw = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    assert list(found) == list(raw)
    assert found["ip"] == ("\\langle #1, #2 \\rangle", 2)
    assert found["wstar"] == ("w_\\star", 0)


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_every_lecture_starts_with_the_current_macros_cell(path):
    nb = nbformat.read(path, as_version=4)
    assert macros.in_sync(nb), f"{path.name}: run `python tools/macros.py`"
    first = nb.cells[0]
    assert "remove-cell" in first.metadata["tags"], "the HTML book must not show the cell"
    assert nb.cells[1].source.startswith("# "), "the chapter title stays the first heading"


def test_the_cell_defines_every_macro_for_both_renderers():
    table = macros.load_macros()
    source = macros.cell_source(table)
    front = re.match(r"^---\n(.*?)\n---\n", source, re.S)
    assert front, "the front matter must open the cell (jupyterlab-myst reads it only there)"
    math = yaml.safe_load(front.group(1))["math"]
    assert math == {f"\\{name}": body for name, (body, _) in table.items()}
    formula = re.search(r"^\$(\\def.*)\$$", source, re.M).group(1)
    defs = re.findall(r"\\def\\(\w+)((?:#\d)*)\{", formula)
    assert [(name, len(args) // 2) for name, args in defs] == [
        (name, nargs) for name, (_, nargs) in table.items()]


def test_check_mode_reports_a_stale_notebook(tmp_path):
    nb = nbformat.read(LECTURES[0], as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace("\\mathbb{E}", "E")
    stale = tmp_path / "stale.ipynb"
    nbformat.write(nb, stale)
    assert macros.main(["--check", str(stale)]) == 1
    assert macros.main([str(stale)]) == 0
    assert macros.main(["--check", str(stale)]) == 0
    fixed = nbformat.read(stale, as_version=4)
    assert macros.in_sync(fixed) and len(fixed.cells) == len(nb.cells)


def test_the_cell_holds_no_code_block():
    """Plain JupyterLab typesets a cell with a code block after the cells without one; the
    definitions must come first, or the cells typeset before them show red macros."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    tokens = MarkdownIt("commonmark").parse(macros.cell_source())
    assert not [t.type for t in tokens if t.type in ("fence", "code_block")]
    with_front_matter = MarkdownIt("commonmark").use(front_matter_plugin)
    assert with_front_matter.parse(macros.cell_source())[0].type == "front_matter"
