"""Instructor tools: the student edition has no solutions; assignments stop at the first
unanswered exercise; every chapter has a graded coding exercise."""

import re
from pathlib import Path

import nbformat
import pytest
from _tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
editions = load_tool("editions")

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
        # the first line of prose (not "$$", "\begin{aligned}" or a fence opening a display,
        # which other displays of the page share)
        lines = [ln.strip() for ln in body if ln.strip() and not ln.startswith(":")
                 and not ln.strip().startswith(("$", "\\", "&"))
                 and sum(ch.isalpha() for ch in ln) >= 12]
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
    from lecnotes.chapters import CHECKS

    for label in stubs:
        assert label in CHECKS, f"{label} has no check in lecnotes.chapters.CHECKS"


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


# ---------------------------------------------------------------------------------------
# Plain Markdown where MyST does not render (Colab, a plain Jupyter)
import plain_markdown  # noqa: E402  (tools/ is on sys.path once editions is loaded)

MYST_ROLE = re.compile(r"\{[\w:+-]+\}`")


def _leftover_myst(source: str) -> list[str]:
    """Directive fences and roles still in a Markdown text (empty when it is plain)."""
    left = [f"directive {d.name}" for d in plain_markdown.directives(source)]
    left += [f"role {m.group(0)}" for m in MYST_ROLE.finditer(source)]
    left += [f"target {m.group(0)}" for m in re.finditer(r"^\([\w-]+\)=$", source, re.M)]
    return left


def test_plain_markdown_turns_directives_roles_and_labels_into_text():
    index = editions.book_index()
    here = ROOT / "lectures" / "00_setting.ipynb"
    text = "\n".join([
        "(sec-demo)=",
        "## Demo",
        "",
        "````{prf:definition} Overlap",
        ":label: def-demo",
        "",
        "As in {footcite:p}`stein1981estimation,cho2009kernel`; see {footcite:t}`cho2009kernel`.",
        "",
        "```{prf:remark}",
        "Nested.",
        "```",
        "````",
        "",
        "```{prf:proof}",
        "Trivial, by {prf:ref}`def-overlap` and {eq}`eq-ch6-update`.",
        "```",
        "",
        ":::{note}",
        "A colon fence, with `{code}` left alone.",
        ":::",
        "",
        "$$",
        "",
        "a = b",
        "",
        "$$ (eq-ch6-update)",
        "",
        "```python",
        "print('{footcite:p}`not-a-citation`')",
        "```",
        "",
        "Text cites {footcite:t}`davis1970rotation` just before the list.",
        "",
        "```{footbibliography}",
        "```",
    ])
    out = plain_markdown.PlainMarkdown(index, here).convert(text)
    assert "**Definition (Overlap).**" in out  # no :label:, so no number
    assert "(Stein, 1981; Cho and Saul, 2009)" in out and "Cho and Saul (2009)" in out
    assert "**Remark.**\n\nNested." in out and "**Proof.**" in out and "**Note.**" in out
    d, e = index.targets["def-overlap"].number, index.targets["eq-ch6-update"].number
    assert f"by Definition {d} and ({e})." in out  # the book's numbers of the two labels
    assert f"$$\na = b\n\\tag{{{e}}}\n$$" in out  # numbered as in the book, no blank lines
    assert "`{code}`" in out and "print('{footcite:p}`not-a-citation`')" in out
    listing = out[out.index("just before the list."):]
    assert "- Charles M\\. Stein\\." in listing and "Davis" in listing  # every key cited above
    assert "(sec-demo)=" not in out
    assert _leftover_myst(out.replace("`{code}`", "").replace("{footcite:p}`not-", "")) == []


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_assignment_is_plain_markdown_with_the_macros_cell(path):
    import macros

    nb, _ = editions.assignment_notebook(path)
    assert macros.in_sync(nb), "an assignment starts with the current notation macros cell"
    index = editions.book_index()
    labels = [ex["label"] for ex in editions.exercises(
        "\n\n".join(c.source for c in nbformat.read(path, 4).cells if c.cell_type == "markdown"))]
    headings = [c.source.split("\n")[0] for c in nb.cells if c.source.startswith("## Exercise")]
    assert headings and len(headings) == len(labels)
    for label, heading in zip(labels, headings, strict=True):
        assert heading.startswith(f"## Exercise {index.targets[label].number}: "), heading
    for cell in nb.cells[1:]:
        if cell.cell_type == "markdown":
            assert _leftover_myst(cell.source) == [], cell.source[:200]


def test_student_notebooks_are_plain_and_keep_every_code_cell(tmp_path):
    written = editions.student_notebooks(tmp_path)
    assert [p.name for p in written] == [p.name for p in LECTURES]
    phrases = [p for path in LECTURES for p in _solution_phrases(nbformat.read(path, 4))
               if not p.startswith("`")]  # a solution that opens with a code fence
    for path, target in zip(LECTURES, written, strict=True):
        lecture, student = nbformat.read(path, 4), nbformat.read(target, 4)
        assert [c.source for c in lecture.cells if c.cell_type == "code"] == \
            [c.source for c in student.cells if c.cell_type == "code"]
        text = "\n\n".join(c.source for c in student.cells[1:] if c.cell_type == "markdown")
        assert _leftover_myst(text) == [], target.name
        assert not any(phrase in text for phrase in phrases), target.name
        assert "**Exercise " in text and re.search(r"## References\n(.*\n)*- \S", text)
    setting = nbformat.read(written[0], 4)
    assert "(Stein, 1981)" in "\n".join(c.source for c in setting.cells)


def test_out_folders_that_hold_the_sources_are_refused(tmp_path):
    for bad in (ROOT, ROOT.parent, ROOT / "lectures", ROOT / "book" / "x", ROOT / ".git"):
        with pytest.raises(SystemExit, match="refusing"):
            editions.check_out(bad, replace=True)
    with pytest.raises(SystemExit, match="refusing"):
        editions.check_out(ROOT / "lectures" / "out", replace=False)
    other = tmp_path / "someone-elses-folder"
    other.mkdir()
    (other / "thesis.tex").write_text("precious")
    with pytest.raises(SystemExit, match="not empty"):
        editions.student_edition(other, execute=False)
    assert (other / "thesis.tex").exists()
    assert editions.check_out(other, replace=False) == other.resolve()  # assignments only add
    (other / editions.MARKER).write_text("")
    assert editions.check_out(other, replace=True) == other.resolve()
    assert editions.check_out(tmp_path / "new", replace=True) == (tmp_path / "new").resolve()
