"""Instructor tools: a student edition of the book and assignment notebooks.

Usage (from the repository root; ``make student-edition`` and ``make assignments`` call it)::

    python tools/editions.py student [--out _build/student] [--no-execute]
    python tools/editions.py assignments [--out _build/assignments]

* ``student`` copies the book's sources, **removes** every ``solution`` block (from the
  Markdown pages and the notebooks' Markdown cells; not merely folded), and builds the HTML
  book into ``<out>/_build/html``. ``--no-execute`` skips executing the notebooks (faster;
  the pages then have no outputs).
* ``assignments`` writes one notebook per chapter, ``<out>/<chapter>-assignment.ipynb``: the
  chapter's imports, then every exercise statement; a coding exercise is followed by its stub
  and its graded check (a code cell of the chapter tagged ``assignment``, hidden in the book).
  Solutions are not included. Run top to bottom, an assignment stops at the first exercise
  not yet answered (its stub raises ``NotImplementedError``).

Conventions in the chapters: exercises and solutions are ``sphinx-exercise`` directives
(`` ```{exercise} `` with a ``:label:``, `` ```{solution} label ``); an assignment cell is a
code cell tagged ``assignment`` (plus ``remove-cell``, ``skip-execution``, ``nbval-skip``)
whose first line is ``# assignment: <exercise label>``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_BOOK = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")


def _blocks(text: str, name: str):
    """Yield (start, end, fence, arg, body_lines) of every top-level ``{name}`` directive."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if m and m.group("name") == name:
            fence = m.group(2)
            close = re.compile(r"^\s*" + re.escape(fence) + r"\s*$")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            yield i, j, fence, m.group("arg").strip(), lines[i + 1:j]
            i = j + 1
        else:
            i += 1


def strip_solutions(text: str) -> str:
    """Remove every ``solution`` directive block (fence to matching fence) from MyST text."""
    lines = text.split("\n")
    drop = set()
    for start, end, *_ in _blocks(text, "solution"):
        drop.update(range(start, min(end, len(lines) - 1) + 1))
    out = [line for k, line in enumerate(lines) if k not in drop]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def exercises(text: str) -> list[dict]:
    """The exercise directives of a MyST text: title, label and statement."""
    found = []
    for _start, _end, _fence, title, body in _blocks(text, "exercise"):
        label, content = None, []
        for line in body:
            m = re.match(r"^:label:\s*(\S+)", line)
            if m:
                label = m.group(1)
            elif not re.match(r"^:\w+:", line):
                content.append(line)
        found.append({"title": title, "label": label, "body": "\n".join(content).strip()})
    return found


# ---------------------------------------------------------------------------------------
def student_edition(out: Path, execute: bool = True) -> Path:
    src = out / "src"
    if out.exists():
        shutil.rmtree(out)
    src.mkdir(parents=True)
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
        env={**__import__("os").environ, "LECNOTES_CLAIMS_DIR": str(env_claims)},
    )
    html = out / "_build" / "html"
    print(f"student edition: open {html / 'index.html'}")
    return html


# ---------------------------------------------------------------------------------------
def _setup_source(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "code":
            keep = [line for line in cell.source.split("\n")
                    if "claims.start_chapter" not in line]
            return "\n".join(keep).strip()
    return ""


def assignment_notebook(path: Path):
    nb = nbformat.read(path, as_version=4)
    title = next((re.sub(r"^#\s*", "", c.source.split("\n")[0]) for c in nb.cells
                  if c.cell_type == "markdown" and c.source.startswith("# ")), path.stem)
    stubs = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "assignment" in cell.metadata.get("tags", []):
            m = re.match(r"#\s*assignment:\s*(\S+)", cell.source)
            if m:
                stubs[m.group(1)] = cell.source
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# Assignment: {title}\n\nSolve the exercises below. Derivations go in Markdown "
            "cells; for a coding exercise, complete the function and run the cell: the graded "
            "check runs your function on hidden instances and says what is wrong, if anything. "
            "The notebook stops at the first exercise you have not answered yet. The chapter "
            "itself is your reference."),
        nbformat.v4.new_code_cell(_setup_source(nb)),
    ]
    for k, ex in enumerate(exercises(text), start=1):
        cells.append(nbformat.v4.new_markdown_cell(f"## Exercise {k}: {ex['title']}\n\n"
                                                   f"{ex['body']}"))
        if ex["label"] in stubs:
            cells.append(nbformat.v4.new_code_cell(stubs[ex["label"]]))
        else:
            cells.append(nbformat.v4.new_markdown_cell("*Your answer here.*"))
    out = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    return out, sorted(stubs)


def assignments(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted((ROOT / "lectures").glob("*.ipynb")):
        nb, _ = assignment_notebook(path)
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
