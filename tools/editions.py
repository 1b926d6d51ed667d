"""Instructor tools: a student edition of the book and assignment notebooks.

Usage (from the repository root; ``make student-edition`` and ``make assignments`` call it)::

    python tools/editions.py student [--out _build/student] [--no-execute]
    python tools/editions.py assignments [--out _build/assignments]

* ``student`` copies the book's sources, **removes** every ``solution`` block (from the
  Markdown pages and the notebooks' Markdown cells; not merely folded), and builds the HTML
  book into ``<out>/_build/html``. ``--no-execute`` skips executing the notebooks (faster;
  the pages then have no outputs). It also writes the student notebooks, ``<out>/notebooks/``:
  the lectures without solutions, in plain Markdown (``tools/plain_markdown.py``), to be opened
  where MyST does not render (Colab, a plain Jupyter).
* ``assignments`` writes one notebook per chapter, ``<out>/<chapter>-assignment.ipynb``: the
  chapter's imports, then every exercise statement; a coding exercise is followed by its stub
  and its graded check (a code cell of the chapter tagged ``assignment``, hidden in the book).
  Solutions are not included. Run top to bottom, an assignment stops at the first exercise
  not yet answered (its stub raises ``NotImplementedError``). Assignments are plain Markdown
  (exercises numbered as in the book, citations as author-year text) and start with the
  notation macros cell of ``tools/macros.py``, so they read well in Colab and JupyterLab alike.

Conventions in the chapters: exercises and solutions are ``sphinx-exercise`` directives
(`` ```{exercise} `` with a ``:label:``, `` ```{solution} label ``); an assignment cell is a
code cell tagged ``assignment`` (plus ``remove-cell``, ``skip-execution``, ``nbval-skip``)
whose first line is ``# assignment: <exercise label>``. Directives are found with markdown-it-py
(``plain_markdown.directives``), not by matching lines.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_BOOK = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"
sys.path.insert(0, str(ROOT / "tools"))

import colab_cell  # noqa: E402  (tools/ is not a package)
import macros  # noqa: E402
import plain_markdown  # noqa: E402


def _blocks(text: str, name: str):
    """Yield (start, end, fence, arg, body_lines) of every top-level ``{name}`` directive.

    ``start`` is the line of the opening fence, ``end`` that of the closing fence (0-based);
    ``body_lines`` are the lines between them, options included.
    """
    lines = text.split("\n")
    for d in plain_markdown.directives(text):
        if d.name == name:
            end = d.end - 1
            closed = end > d.start and lines[end].strip().startswith(d.fence[:3])
            end = end if closed else d.end
            yield d.start, end, d.fence, d.arg, lines[d.start + 1:end]


def strip_solutions(text: str) -> str:
    """Remove every ``solution`` directive block (fence to matching fence) from MyST text."""
    lines = text.split("\n")
    drop = set()
    for start, end, *_ in _blocks(text, "solution"):
        drop.update(range(start, min(end, len(lines) - 1) + 1))
    out = [line for k, line in enumerate(lines) if k not in drop]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def exercises(text: str) -> list[dict]:
    """The exercise directives of a MyST text: title, label and statement (MyST source)."""
    return [{"title": d.arg, "label": d.options.get("label"), "body": d.body.strip()}
            for d in plain_markdown.directives(text) if d.name == "exercise"]


# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def book_index() -> plain_markdown.BookIndex:
    """The labels, numbers and bibliography of the book (read once per process)."""
    return plain_markdown.BookIndex.from_book(ROOT)


def _is_macros(cell) -> bool:
    return macros.is_macros_cell(cell)


def student_notebook(path: Path, index: plain_markdown.BookIndex | None = None):
    """A lecture as a student opens it outside the book: no solutions, plain Markdown.

    Code cells are kept as they are; the Markdown cells lose their solutions and their MyST
    (``tools/plain_markdown.py``); the notation macros cell stays first.
    """
    index = book_index() if index is None else index
    nb = macros.with_macros(nbformat.read(path, as_version=4))
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not _is_macros(cell):
            cell.source = strip_solutions(cell.source)
    return plain_markdown.plain_notebook(nb, index, path, skip=_is_macros)


def student_notebooks(out: Path) -> list[Path]:
    """Write :func:`student_notebook` of every lecture to ``out`` and return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    index = book_index()
    written = []
    for path in sorted((ROOT / "lectures").glob("*.ipynb")):
        target = out / path.name
        nbformat.write(student_notebook(path, index), target)
        written.append(target)
    return written


MARKER = ".lecnotes-edition"
"""File written into every output folder; a folder without it is never emptied."""

SOURCES = ("lectures", "book", "src", "tests", "tools", ".git")


def check_out(out: Path, replace: bool) -> Path:
    """Refuse an output folder that would destroy or pollute the sources; return it resolved.

    ``out`` must not be the repository or one of its ancestors (it would contain the sources),
    nor lie inside a source folder (``lectures/``, ``book/``, ...). With ``replace`` (the
    student edition empties its folder first) an existing non-empty folder must carry the
    :data:`MARKER` of an earlier edition.
    """
    out = out.resolve()
    if out == ROOT or out in ROOT.parents:
        raise SystemExit(f"refusing --out {out}: it contains the book's sources ({ROOT})")
    for name in SOURCES:
        folder = ROOT / name
        if out == folder or folder in out.parents:
            raise SystemExit(f"refusing --out {out}: it lies inside the sources ({folder})")
    earlier = (out / MARKER).exists() or (out / "src" / "_config.yml").exists()  # or older
    if replace and out.exists() and any(out.iterdir()) and not earlier:
        raise SystemExit(f"refusing --out {out}: the folder is not empty and was not written by "
                         "this tool (no " + MARKER + "); choose a new folder")
    return out


def student_edition(out: Path, execute: bool = True) -> Path:
    """Build the book without solutions into ``out`` and write its plain notebooks.

    Returns the folder of the HTML book (``out/_build/html``); the notebooks are in
    ``out/notebooks``. ``out`` is emptied first; :func:`check_out` refuses a folder that
    contains the sources or was not written by this tool.
    """
    out = check_out(out, replace=True)
    src = out / "src"
    if out.exists():
        shutil.rmtree(out)
    src.mkdir(parents=True)
    (out / MARKER).write_text("written by tools/editions.py student; emptied on every run\n")
    for name in ["_config.yml", "_toc.yml"]:
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "book", src / "book")
    shutil.copytree(ROOT / "lectures", src / "lectures",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for md in (src / "book").rglob("*.md"):
        md.write_text(strip_solutions(md.read_text()))
    for path in (src / "lectures").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = strip_solutions(cell.source)
        nbformat.write(nb, path)
    notebooks = student_notebooks(out / "notebooks")
    config = (src / "_config.yml").read_text()
    config = re.sub(r'^title: "(.*)"$', r'title: "\1 (student edition)"', config, count=1,
                    flags=re.M)
    if not execute:
        config = config.replace("execute_notebooks: cache", "execute_notebooks: "
                                "\"off\"")
    (src / "_config.yml").write_text(config)
    env_claims = out / "claims"
    subprocess.run(  # jupyter-book of this interpreter (.venv-dev has no script of its own)
        [sys.executable, "-c", JUPYTER_BOOK, "build", str(src), "--path-output", str(out)],
        check=True,
        env={**os.environ, "LECNOTES_CLAIMS_DIR": str(env_claims)},
    )
    html = out / "_build" / "html"
    print(f"student edition: open {html / 'index.html'}; "
          f"notebooks (plain Markdown) in {notebooks[0].parent}")
    return html


# ---------------------------------------------------------------------------------------
def _setup_source(nb) -> str:
    """The chapter's setup cell (the one that starts the chapter), without that call.

    Falls back on the first code cell that is not the install cell of ``tools/colab_cell.py``.
    """
    code = [c for c in nb.cells if c.cell_type == "code" and not colab_cell.is_install_cell(c)]
    setup = [c for c in code if "claims.start_chapter" in c.source]
    for cell in setup or code:
        keep = [line for line in cell.source.split("\n") if "claims.start_chapter" not in line]
        return "\n".join(keep).strip()
    return ""


def graded_stubs(nb) -> dict[str, str]:
    """Exercise label -> source of its stub cell (code cells tagged ``assignment``)."""
    stubs = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "assignment" in cell.metadata.get("tags", []):
            m = re.match(r"#\s*assignment:\s*(\S+)", cell.source)
            if m:
                stubs[m.group(1)] = cell.source
    return stubs



def assignment_notebook(path: Path, index: plain_markdown.BookIndex | None = None):
    """The assignment of one chapter and the labels of its graded exercises.

    Returns
    -------
    (notebook, list of str)
        The assignment (macros cell, instructions, the chapter's setup code, then per exercise
        its statement in plain Markdown and a stub or an answer cell; a reference list when a
        statement cites) and the sorted labels of the exercises that have a graded stub.
    """
    index = book_index() if index is None else index
    nb = nbformat.read(path, as_version=4)
    title = next((re.sub(r"^#\s*", "", c.source.split("\n")[0]) for c in nb.cells
                  if c.cell_type == "markdown" and c.source.startswith("# ")), path.stem)
    stubs = graded_stubs(nb)
    text = "\n\n".join(c.source for c in nb.cells
                       if c.cell_type == "markdown" and not _is_macros(c))
    plain = plain_markdown.PlainMarkdown(index, path)
    cells = [
        macros.macros_cell(),
        nbformat.v4.new_markdown_cell(
            f"# Assignment: {plain.convert(title)}\n\nSolve the exercises below. Derivations "
            "go in Markdown cells; for a coding exercise, complete the function and run the "
            "cell: the graded check runs your function on hidden instances and says what is "
            "wrong, if anything. The notebook stops at the first exercise you have not "
            "answered yet. The chapter itself is your reference; exercises, equations and "
            "figures are numbered as in the book."),
    ]
    install = colab_cell.find(nb)
    if install is not None:  # Colab: the assignment installs lecnotes as the chapter does
        cells.append(nbformat.v4.new_code_cell(install.source))
    cells.append(nbformat.v4.new_code_cell(_setup_source(nb)))
    for ex in exercises(text):
        target = index.targets.get(ex["label"] or "")
        number = target.number if target and target.number else ""
        cells.append(nbformat.v4.new_markdown_cell(
            f"## Exercise {number}: {plain.convert(ex['title'])}\n\n{plain.convert(ex['body'])}"))
        if ex["label"] in stubs:
            cells.append(nbformat.v4.new_code_cell(stubs[ex["label"]]))
        else:
            cells.append(nbformat.v4.new_markdown_cell("*Your answer here.*"))
    if plain.cited:
        cells.append(nbformat.v4.new_markdown_cell(
            "## References\n\n" + index.references(plain.cited)))
    out = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    return out, sorted(stubs)


def assignments(out: Path) -> list[Path]:
    """Write the assignment of every chapter to ``out`` and return the paths."""
    out = check_out(out, replace=False)
    out.mkdir(parents=True, exist_ok=True)
    index = book_index()
    written = []
    for path in sorted((ROOT / "lectures").glob("*.ipynb")):
        nb, _ = assignment_notebook(path, index)
        target = out / f"{path.stem}-assignment.ipynb"
        nbformat.write(nb, target)
        written.append(target)
        print("wrote", target)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description="Student edition and assignments of the book")
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("student", help="build the book without solutions")
    s.add_argument("--out", type=Path, default=ROOT / "_build" / "student")
    s.add_argument("--no-execute", action="store_true", help="do not execute the notebooks")
    a = sub.add_parser("assignments", help="write one assignment notebook per chapter")
    a.add_argument("--out", type=Path, default=ROOT / "_build" / "assignments")
    args = ap.parse_args(argv)
    if args.what == "student":
        student_edition(args.out.resolve(), execute=not args.no_execute)
    else:
        assignments(args.out.resolve())


if __name__ == "__main__":
    main()
