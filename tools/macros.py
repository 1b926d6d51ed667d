"""The book's notation macros in every notebook, from one source: ``_config.yml``.

The HTML book (and the PDF) gets its TeX macros from ``_config.yml``
(``sphinx.config.mathjax3_config.tex.macros``). A notebook opened anywhere else knows nothing of
that file, so every lecture starts with one Markdown cell, generated here, that defines the same
macros for the places a notebook is read:

* **JupyterLab with jupyterlab-myst** renders math with KaTeX, one formula at a time: a
  definition made inside one formula is forgotten by the next, and ``\\newcommand`` of a name
  KaTeX already knows (``\\P``, ``\\R``, ``\\N``) is an error. What it does read is the
  notebook's *front matter*, a YAML block at the top of the first Markdown cell, whose ``math``
  key maps each macro to its definition. The cell therefore opens with that block.
* **JupyterLab without it, Jupyter Notebook, Colab and nbconvert** render math with MathJax, one
  engine for the whole page: a macro defined in one formula stays defined for the rest of the
  page. The cell therefore ends with one formula of ``\\def`` definitions (``\\def`` rather
  than ``\\newcommand``: it may redefine a name, which matters in jupyterlab-myst where the front
  matter has already defined it, and in KaTeX, which predefines some names).
* **The HTML book and the PDF** remove the cell (tag ``remove-cell``) and keep their macros from
  ``_config.yml``, so the pages do not change.

Where there is no MyST renderer the YAML block shows as a short paragraph listing the macros,
which is readable. ``tools/editions.py`` puts the same cell first in every assignment notebook,
and ``tests/test_macros.py`` fails when a lecture's cell is out of date.

Usage (from the repository root)::

    python tools/macros.py            # insert or update the cell in every lecture
    python tools/macros.py --check    # exit 1, naming the notebooks whose cell is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
LECTURES = ROOT / "lectures"
TAG = "notation-macros"
CELL_ID = "notation-macros"
NOTE = ("*The notation macros of the book, for Jupyter and Colab: the `math` block for "
        "jupyterlab-myst, the formula below for MathJax. Generated from `_config.yml` by "
        "`tools/macros.py`; do not edit. The HTML book does not show this cell.*")


def load_macros(config: Path = CONFIG) -> dict[str, tuple[str, int]]:
    """The TeX macros of the book's ``_config.yml``.

    Parameters
    ----------
    config : Path
        A Jupyter Book configuration file.

    Returns
    -------
    dict
        Macro name (without the backslash) -> (definition, number of arguments), in the order
        of the file.
    """
    data = yaml.safe_load(config.read_text())
    try:
        raw = data["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    except (KeyError, TypeError) as err:
        raise ValueError(f"{config}: no sphinx.config.mathjax3_config.tex.macros") from err
    macros = {}
    for name, value in raw.items():
        if isinstance(value, str):
            macros[name] = (value, 0)
        elif isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            macros[name] = (value[0], value[1])
        else:
            raise ValueError(f"{config}: macro {name!r} is neither a string nor [body, nargs]")
        if "'" in macros[name][0]:
            raise ValueError(f"{config}: macro {name!r} contains a quote, which the front "
                             "matter cannot hold")
    return macros


def front_matter(macros: dict[str, tuple[str, int]], width: int = 92) -> str:
    """The YAML front matter that jupyterlab-myst reads (``math``: name -> definition).

    The mapping is written in YAML's flow style, a few macros per line, and a blank line ends
    it: plain Markdown shows it as a short paragraph between two rules (without the blank line
    the closing ``---`` would make it a heading). It is deliberately *not* a code block: plain
    JupyterLab typesets a cell that holds a code block later than the cells that do not, and
    the definitions must be typeset first.
    """
    items = [f"'\\{name}': '{body}'" for name, (body, _) in macros.items()]
    lines, line = [], "math: {"
    for k, item in enumerate(items):
        piece = item + ("}" if k == len(items) - 1 else ",")
        if len(line) + len(piece) + 1 > width and not line.endswith("{"):
            lines.append(line)
            line = "  " + piece
        else:
            line += ("" if line.endswith("{") else " ") + piece
    lines.append(line)
    return "---\n" + "\n".join(lines) + "\n\n---"


def tex_definitions(macros: dict[str, tuple[str, int]]) -> str:
    """One inline formula of ``\\def`` definitions, for MathJax (it keeps them page-wide)."""
    defs = "".join(f"\\def\\{name}" + "".join(f"#{k}" for k in range(1, nargs + 1))
                   + f"{{{body}}}" for name, (body, nargs) in macros.items())
    return f"${defs}$"


def cell_source(macros: dict[str, tuple[str, int]] | None = None) -> str:
    """The Markdown source of the macros cell (front matter, a note, the definitions)."""
    macros = load_macros() if macros is None else macros
    return f"{front_matter(macros)}\n\n{NOTE}\n\n{tex_definitions(macros)}"


def macros_cell(macros: dict[str, tuple[str, int]] | None = None):
    """The macros cell as a notebook cell, tagged ``remove-cell`` (and ``notation-macros``)."""
    cell = nbformat.v4.new_markdown_cell(cell_source(macros))
    cell.id = CELL_ID
    cell.metadata = {"tags": ["remove-cell", TAG]}
    return cell


def is_macros_cell(cell) -> bool:
    """Whether ``cell`` is a macros cell (of any version)."""
    return cell.cell_type == "markdown" and TAG in cell.metadata.get("tags", [])


def with_macros(nb, macros: dict[str, tuple[str, int]] | None = None):
    """``nb`` with the current macros cell first (an older one replaced); changes ``nb``."""
    cells = [c for c in nb.cells if not is_macros_cell(c)]
    nb.cells = [macros_cell(macros), *cells]
    return nb


def in_sync(nb, macros: dict[str, tuple[str, int]] | None = None) -> bool:
    """Whether the first cell of ``nb`` is the current macros cell, and the only one."""
    expected = macros_cell(macros)
    first = nb.cells[0] if nb.cells else None
    return (first is not None and is_macros_cell(first) and first.source == expected.source
            and first.metadata == expected.metadata
            and sum(is_macros_cell(c) for c in nb.cells) == 1)


def sync(paths: list[Path], check: bool = False) -> list[Path]:
    """Insert or update the macros cell of each notebook; return those that were out of date.

    With ``check=True`` nothing is written.
    """
    macros = load_macros()
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if in_sync(nb, macros):
            continue
        stale.append(path)
        if not check:
            nbformat.write(with_macros(nb, macros), path)
    return stale


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Notation macros cell of every lecture notebook")
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="notebooks to update (default: lectures/*.ipynb)")
    ap.add_argument("--check", action="store_true",
                    help="only check; exit 1 if a notebook's macros cell is out of date")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted(LECTURES.glob("*.ipynb"))
    stale = sync(paths, check=args.check)
    for path in stale:
        verb = "out of date" if args.check else "updated"
        print(f"{path}: macros cell {verb}")
    if args.check and stale:
        print("run: python tools/macros.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
