"""Otter-grader assignments: one master notebook per chapter, generated from the lecture.

Usage (from the repository root, in ``.venv-dev``, which has otter-grader; ``make assignments``
calls it)::

    python tools/otter_assignments.py [--out _build/assignments/otter] [--no-assign] [CH ...]

For every lecture ``lectures/NN_stem.ipynb`` (discovered, not listed) this writes
``<out>/NN_stem/master/NN_stem.ipynb``, an otter-grader master notebook, and then runs
``otter assign`` on it into ``<out>/NN_stem/dist/``: ``dist/student/NN_stem.ipynb`` (no solution)
and ``dist/autograder/`` (the solution notebook, the tests and ``autograder.zip``, which
Gradescope takes as it is and ``otter run -a`` grades with locally, no Docker).

The master holds the chapter's setup code, every exercise statement (plain Markdown, as in the
assignments of ``tools/editions.py``) and, for each *graded* exercise (a code cell tagged
``assignment``), one otter question: the stub of the lecture as the student's prompt, the
function of the lecture's ``solution`` block as the solution (removed from the student
notebook), and two tests that call the check of ``lecnotes.<subject>.grading`` (the one
implementation of each check):

* 1 point: the function runs on the hidden instances and returns finite numbers
  (:func:`lecnotes.book.grading.runs`);
* 3 points: the check passes (:data:`lecnotes.chapters.CHECKS`); its message, which names the
  mistake in words and never the expected values, is the feedback.

Derivation exercises are statements followed by an answer cell, graded by hand. Nothing of this
is committed: the masters follow the lectures, so a chapter edit flows through on the next run.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import colab_cell  # noqa: E402  (tools/ is not a package)
import editions  # noqa: E402
import macros  # noqa: E402
import plain_markdown  # noqa: E402

POINTS = (1, 3)
"""Points of the two tests of a graded exercise: it runs, and the check passes."""

def lectures() -> list[Path]:
    """Every lecture notebook, in reading order (discovered: a new chapter is picked up)."""
    return sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb"))


graded_stubs = editions.graded_stubs  # one definition: the stubs the editions use


def solution_code(text: str, label: str) -> str:
    """The Python code block of the ``solution`` directive of exercise ``label``."""
    for d in plain_markdown.directives(text):
        if d.name == "solution" and d.arg == label:
            m = re.search(r"```python\n(.*?)```", d.body, flags=re.S)
            if m:
                return m.group(1)
    raise SystemExit(f"exercise {label}: its solution block has no ```python code block")


def _function(tree: ast.Module, name: str | None = None) -> ast.FunctionDef:
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    match = [f for f in funcs if name is None or f.name == name]
    if not match:
        raise SystemExit(f"no function {name or ''} found")
    return match[0]


def _body(source: str, func: ast.FunctionDef, skip_docstring: bool = True) -> list[str]:
    lines = source.split("\n")
    body = func.body
    if skip_docstring and body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return lines[body[0].lineno - 1:body[-1].end_lineno]


def solution_cell(stub: str, solution: str) -> tuple[str, str]:
    """The master's solution cell of one graded exercise, and the name of its function.

    The student sees the lecture's stub (its signature, docstring and ``raise
    NotImplementedError``) between otter's ``PROMPT`` markers; the solution's imports and body
    are between ``SOLUTION NO PROMPT`` markers, which ``otter assign`` removes.
    """
    stub_tree, sol_tree = ast.parse(stub), ast.parse(solution)
    stub_func = _function(stub_tree)
    sol_func = _function(sol_tree, stub_func.name)
    stub_lines = stub.split("\n")
    head = stub_lines[stub_func.lineno - 1:stub_func.body[0].end_lineno]  # def + docstring
    prompt = _body(stub, stub_func)
    imports = [ast.get_source_segment(solution, n) for n in sol_tree.body
               if isinstance(n, ast.Import | ast.ImportFrom)]
    indent = " " * (stub_func.body[0].col_offset)
    sol_body = textwrap.dedent("\n".join(_body(solution, sol_func))).split("\n")
    lines = ["# BEGIN SOLUTION NO PROMPT", *imports, "# END SOLUTION", *head,
             f'{indent}""" # BEGIN PROMPT', *prompt, f'{indent}""" # END PROMPT',
             f"{indent}# BEGIN SOLUTION NO PROMPT", *(indent + line if line else line
                                                       for line in sol_body),
             f"{indent}# END SOLUTION"]
    return "\n".join(lines), stub_func.name


def test_cells(label: str, func: str) -> list[str]:
    """The two otter tests of a graded exercise; both call ``lecnotes.chapters.CHECKS``."""
    runs = f'''""" # BEGIN TEST CONFIG
points: {POINTS[0]}
success_message: "{func} runs on the hidden instances"
""" # END TEST CONFIG
def test_runs({func}):
    from lecnotes.chapters import CHECKS
    from lecnotes.book.grading import runs
    runs(CHECKS["{label}"], {func})'''
    right = f'''""" # BEGIN TEST CONFIG
points: {POINTS[1]}
success_message: "{func} passes the check on hidden instances"
""" # END TEST CONFIG
def test_check({func}):
    from lecnotes.chapters import CHECKS
    CHECKS["{label}"]({func})'''
    return [runs, right]


def raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def config_cell(stem: str) -> str:
    return "\n".join([
        "# ASSIGNMENT CONFIG",
        f"name: {stem}",
        "requirements: requirements.txt",
        "overwrite_requirements: true",
        "export_cell: false",
        "check_all_cell: true",
        "run_tests: false      # the slow test grades the solution notebook instead",
        "generate: true        # autograder.zip: Gradescope, and otter run -a locally",
        "tests:",
        "  files: true",
        "  ok_format: false    # exception-based tests: the check's message is the feedback",
    ])


def master_notebook(path: Path, index=None):
    """The otter master notebook of one lecture and the labels of its graded exercises."""
    index = editions.book_index() if index is None else index
    nb = nbformat.read(path, as_version=4)
    stubs = graded_stubs(nb)
    text = "\n\n".join(c.source for c in nb.cells
                       if c.cell_type == "markdown" and not macros.is_macros_cell(c))
    title = next((re.sub(r"^#\s*", "", c.source.split("\n")[0]) for c in nb.cells
                  if c.cell_type == "markdown" and c.source.startswith("# ")), path.stem)
    plain = plain_markdown.PlainMarkdown(index, path)
    cells = [raw(config_cell(path.stem)), macros.macros_cell(),
             nbformat.v4.new_markdown_cell(
                 f"# Assignment: {plain.convert(title)}\n\nSolve the exercises below. "
                 "Derivations go in the Markdown answer cells (graded by hand). For a coding "
                 "exercise, complete the function, run its cell, then the `grader.check` cell "
                 "after it: it runs your function on hidden instances and says what is wrong, "
                 "if anything, without showing the answer. Exercises, equations and figures "
                 "are numbered as in the book.")]
    install = colab_cell.find(nb)
    if install is not None:
        cells.append(nbformat.v4.new_code_cell(install.source))
    cells.append(nbformat.v4.new_code_cell(editions._setup_source(nb)))
    for ex in editions.exercises(text):
        target = index.targets.get(ex["label"] or "")
        number = target.number if target and target.number else ""
        statement = nbformat.v4.new_markdown_cell(
            f"## Exercise {number}: {plain.convert(ex['title'])}\n\n{plain.convert(ex['body'])}")
        if ex["label"] not in stubs:
            cells += [statement, nbformat.v4.new_markdown_cell("*Your answer here.*")]
            continue
        source, func = solution_cell(stubs[ex["label"]], solution_code(text, ex["label"]))
        cells += [raw(f"# BEGIN QUESTION\nname: {ex['label']}\npoints: {list(POINTS)}"),
                  statement, raw("# BEGIN SOLUTION"), nbformat.v4.new_code_cell(source),
                  raw("# END SOLUTION"), raw("# BEGIN TESTS"),
                  *(nbformat.v4.new_code_cell(t) for t in test_cells(ex["label"], func)),
                  raw("# END TESTS"), raw("# END QUESTION")]
    if plain.cited:
        cells.append(nbformat.v4.new_markdown_cell(
            "## References\n\n" + index.references(plain.cited)))
    meta = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return nbformat.v4.new_notebook(cells=cells, metadata=meta), sorted(stubs)


def requirements() -> str:
    """What the Gradescope image installs: lecnotes pinned to the book's version."""
    return (f"# lecnotes {colab_cell.version()} from the book's repository (_config.yml)\n"
            f"{colab_cell.requirement()}\n")


def build(path: Path, out: Path, assign: bool = True, index=None) -> Path:
    """Write the master of one lecture into ``out/<stem>/master`` and run ``otter assign``.

    Returns the folder ``out/<stem>``.
    """
    folder = out / path.stem
    if folder.exists():
        shutil.rmtree(folder)
    master = folder / "master"
    master.mkdir(parents=True)
    nb, labels = master_notebook(path, index)
    nbformat.write(nb, master / f"{path.stem}.ipynb")
    (master / "requirements.txt").write_text(requirements())
    if assign and labels:
        otter_assign(master / f"{path.stem}.ipynb", folder / "dist")
    return folder


def otter_assign(master: Path, dist: Path) -> None:
    """``otter assign --no-pdfs master dist``, in this process (otter imports once per run)."""
    from otter.assign import main as assign  # optional: only .venv-dev has otter-grader

    cwd = Path.cwd()
    try:
        os.chdir(master.parent)  # otter reads the requirements relative to the master
        assign(str(master), str(dist), no_pdfs=True)
    finally:
        os.chdir(cwd)


def autograder_zip(folder: Path) -> Path:
    """The ``autograder.zip`` that ``otter assign`` wrote for the chapter in ``folder``."""
    zips = sorted((folder / "dist" / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise FileNotFoundError(f"no single autograder zip in {folder / 'dist' / 'autograder'}")
    return zips[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("chapters", nargs="*", type=int, help="chapter numbers (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "_build" / "assignments" / "otter")
    ap.add_argument("--no-assign", action="store_true", help="write the masters only")
    args = ap.parse_args(argv)
    out = editions.check_out(args.out, replace=False)
    out.mkdir(parents=True, exist_ok=True)
    (out / editions.MARKER).write_text("written by tools/otter_assignments.py\n")
    index = editions.book_index()
    for path in lectures():
        if args.chapters and int(path.name[:2]) not in args.chapters:
            continue
        folder = build(path, out, assign=not args.no_assign, index=index)
        print(f"{path.stem}: master {folder / 'master'}; student notebook and autograder in "
              f"{folder / 'dist'}")


if __name__ == "__main__":
    main()
