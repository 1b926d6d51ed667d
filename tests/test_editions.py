"""Instructor tools: the student edition has no solutions; assignments stop at the first
unanswered exercise; every chapter has a graded coding exercise."""

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("editions", ROOT / "tools" / "editions.py")
editions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(editions)

LECTURES = sorted((ROOT / "lectures").glob("*.ipynb"))


def test_strip_solutions_removes_whole_blocks_only():
    text = "\n".join([
        "before",
        "````{exercise} E",
        ":label: ex-a",
        "Do it.",
        "````",
        "",
        "````{solution} ex-a",
        ":class: dropdown",
        "Secret answer.",
        "```python",
        "print('secret code')",
        "```",
        "````",
        "after",
    ])
    out = editions.strip_solutions(text)
    assert "Secret" not in out and "secret code" not in out
    assert "Do it." in out and "before" in out and "after" in out
    assert editions.exercises(text) == [{"title": "E", "label": "ex-a", "body": "Do it."}]


def _solution_phrases(nb):
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    phrases = []
    for *_, body in editions._blocks(text, "solution"):
        lines = [ln.strip() for ln in body if ln.strip() and not ln.startswith(":")]
        if lines:
            phrases.append(lines[0][:40])
    return phrases


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_every_chapter_has_exercises_solutions_and_a_graded_exercise(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(editions.exercises(text)) >= 3
    assert len(_solution_phrases(nb)) >= 3
    _, stubs = editions.assignment_notebook(path)
    assert stubs, f"{path.name} has no graded coding exercise (a cell tagged 'assignment')"
    from lecnotes.grading import CHECKS

    for label in stubs:
        assert label in CHECKS, f"{label} has no check in lecnotes.grading.CHECKS"


@pytest.mark.slow
@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_assignment_runs_until_the_first_unanswered_exercise(path, tmp_path):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb, stubs = editions.assignment_notebook(path)
    assert not any("{solution}" in c.source for c in nb.cells)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first_stub = next(i for i in code if "# assignment:" in nb.cells[i].source)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError) as err:
        client.execute()
    assert "not written yet" in str(err.value)
    for i in code:
        ran = nb.cells[i].get("execution_count") is not None
        assert ran == (i <= first_stub), f"cell {i} ran={ran}, first stub at {first_stub}"


@pytest.mark.slow
def test_student_edition_contains_no_solution(tmp_path):
    html = editions.student_edition(tmp_path / "student", execute=False)
    pages = list(html.rglob("*.html"))
    assert pages
    phrases = [p for path in LECTURES for p in _solution_phrases(nbformat.read(path, 4))]
    assert phrases
    for page in pages:
        text = page.read_text(errors="replace")
        assert not re.search(r'class="[^"]*\bsolution\b', text), page
        for phrase in phrases:
            assert phrase not in text, (page, phrase)
    assert "(student edition)" in (html / "book" / "intro.html").read_text()
