"""Every exercise solution's code runs (issue 45).

The solutions of the lectures are ``{solution}`` directives in Markdown cells; those that give
code hold it in fenced ``python`` blocks. Each such solution is extracted and executed, its
blocks in order, in a namespace prepared as the notebook prepares its own: every top-level
``import`` of the lecture's code cells (the setup cells and the imports of later cells; the
assignment cells, which hold the students' stubs, are left out), with matplotlib drawing to
no screen. Any exception fails the test, so a solution that calls the package wrongly (an
unknown name, a wrong argument) is caught when the package or the text changes.

Solutions that take more than 10 s on one core are marked ``slow`` (``make test-slow``).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

CHAPTERS = (0, 1, 2, 3, 4, 5, 6, 7, 8)

ROOT = Path(__file__).resolve().parents[1]
LECTURES = sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))

SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}\s*(?P<label>\S+)[^\n]*\n"
                      r"(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)
CODE = re.compile(r"^(?P<fence>`{3,})(?:python|py|python3|ipython3)\s*\n"
                  r"(?P<code>.*?)^(?P=fence)\s*$", re.M | re.S)

SLOW = {  # solutions over 10 s on one core (measured): label -> reason
    "ex-ch1-rbf": "kernel ridge on up to n = d^2 = 4096 points (about 15 s)",
    "ex-ch6-reference": "the reference sweep at n = 29532 (about 160 s on a loaded core)",
}


def _notebook(path: Path) -> dict:
    return json.loads(path.read_text())


def solutions(path: Path) -> list[tuple[str, str]]:
    """(exercise label, code) for every solution of the lecture that holds code."""
    out = []
    for cell in _notebook(path)["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for m in SOLUTION.finditer("".join(cell["source"])):
            blocks = [b.group("code") for b in CODE.finditer(m.group("body"))]
            if blocks:
                out.append((m.group("label"), "\n".join(blocks)))
    return out


def setup_code(path: Path) -> str:
    """The top-level imports of the lecture's code cells (not the assignment stubs)."""
    lines = []
    for cell in _notebook(path)["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "code" or "assignment" in tags:
            continue
        tree = ast.parse("".join(cell["source"]))
        lines += [ast.unparse(node) for node in tree.body
                  if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(lines)


CASES = [pytest.param(path, label, code, id=f"{path.stem}:{label}",
                      marks=[pytest.mark.slow] if label in SLOW else [])
         for path in LECTURES for label, code in solutions(path)]


def test_the_solutions_are_found():
    """The extraction sees the solutions with code of every chapter that has them."""
    labels = {label for _, label, _ in (c.values for c in CASES)}
    assert {"ex-ch3-coding", "ex-ch4-trimming", "ex-ch4-lal-top"} <= labels
    assert all(label in labels for label in SLOW), "a SLOW entry names no solution"
    assert solutions(LECTURES[0]) and setup_code(LECTURES[0])


def test_extraction_of_a_solution():
    text = ("````{solution} ex-x\n:class: dropdown\n\nText.\n```python\nx = 1\n```\nMore.\n"
            "```python\ny = x + 1\n```\n````\n")
    m = SOLUTION.search(text)
    assert m and m.group("label") == "ex-x"
    assert [b.group("code") for b in CODE.finditer(m.group("body"))] == ["x = 1\n", "y = x + 1\n"]


@pytest.mark.parametrize("path, label, code", CASES)
def test_solution_runs(path, label, code):
    namespace = {"__name__": f"solution_{label.replace('-', '_')}"}
    exec(compile(setup_code(path), f"{path.name}:imports", "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Agg cannot show: plt.show() warns
        exec(compile(code, f"{path.name}:{label}", "exec"), namespace)
    plt.close("all")
