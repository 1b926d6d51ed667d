"""The package leads to the text in one hop, and the notebooks keep their cells short (issue 15).

* Every label a docstring of ``src/lecnotes`` cites, as ``{eq}`label```, ``{prf:ref}`label```,
  ``{ref}`label``` or ``{numref}`label```, exists in ``lectures/`` (a MyST target ``(label)=``,
  a directive's ``:label: label`` or an equation's ``$$ ... $$ (label)``).
* Every public function and method of the foundation and chapter tiers has a numpydoc
  docstring: a ``Parameters`` section when it takes arguments, a ``Returns`` (or ``Yields``)
  section unless it is annotated ``-> None``.
* No notebook code cell is longer than 25 lines and at least 85% of each notebook's code cells
  have at most 15 lines: loops over seeds and sizes live in the chapter modules. A line here is
  a logical line (a statement, or the header of a compound statement), not a printed line: the
  code is wrapped at 88 columns (``tools/format_notebooks.py``), and a call wrapped over eight
  printed lines is still one statement.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest
from _tools import load_tool

CHAPTERS = ()  # the book as a whole; make check runs it

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "lecnotes"
LECTURES = sorted((ROOT / "lectures").glob("*.ipynb"))
BOOK_TIER = {"claims", "plotting", "grading"}  # book infrastructure and graded checks

ROLE = re.compile(r"\{(?:eq|prf:ref|ref|numref)\}`([^`]+)`")
TARGETS = (
    re.compile(r"^\(([A-Za-z0-9_:.-]+)\)=\s*$", re.M),
    re.compile(r"^\s*:label:\s*([A-Za-z0-9_:.-]+)\s*$", re.M),
    re.compile(r"\$\$\s*\(([A-Za-z0-9_:.-]+)\)"),
)


def _cells(path: Path, kind: str) -> list[str]:
    nb = json.loads(path.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def text_labels() -> set[str]:
    """Every label defined in the lectures' Markdown cells."""
    out: set[str] = set()
    for path in LECTURES:
        for src in _cells(path, "markdown"):
            for pattern in TARGETS:
                out.update(pattern.findall(src))
    return out


def cited_labels() -> dict[str, list[str]]:
    """label -> the modules whose docstrings (or comments) cite it."""
    out: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for ref in ROLE.findall(path.read_text()):
            label = ref.split("<")[-1].rstrip(">").strip()
            out.setdefault(label, []).append(path.stem)
    return out


def test_role_and_target_patterns():
    assert ROLE.findall("see {eq}`eq-mp` and {prf:ref}`the theorem <thm-bbp>`") == [
        "eq-mp",
        "the theorem <thm-bbp>",
    ]
    md = "(sec-x)=\n# X\n```{prf:theorem}\n:label: thm-y\n```\n$$ a = b $$ (eq-z)\n"
    found = set().union(*(p.findall(md) for p in TARGETS))
    assert found == {"sec-x", "thm-y", "eq-z"}


def test_every_cited_label_exists_in_the_text():
    labels = text_labels()
    missing = {k: v for k, v in cited_labels().items() if k not in labels}
    assert not missing, f"labels cited in src/ but defined in no lecture: {missing}"


def _modules():
    return sorted(
        p
        for p in SRC.rglob("*.py")
        if p.stem not in BOOK_TIER and not p.stem.startswith("_")
        and p.parent.name != "grading"
    )


def _public_functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and not sub.name.startswith("_"):
                    yield f"{node.name}.{sub.name}", sub


def _arguments(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def _is_property(fn: ast.FunctionDef) -> bool:
    return any(getattr(d, "id", getattr(d, "attr", "")) in ("property", "cached_property")
               for d in fn.decorator_list)


def numpydoc_gaps(path: Path) -> list[str]:
    """Public functions of a module without the numpydoc sections they need."""
    gaps = []
    for name, fn in _public_functions(ast.parse(path.read_text())):
        doc = ast.get_docstring(fn) or ""
        if not doc:
            gaps.append(f"{name}: no docstring")
            continue
        if _is_property(fn):
            continue
        if _arguments(fn) and not re.search(r"^Parameters\n-{3,}", doc, re.M):
            gaps.append(f"{name}: no Parameters section")
        returns_none = isinstance(fn.returns, ast.Constant) and fn.returns.value is None
        if not returns_none and not re.search(r"^(Returns|Yields)\n-{3,}", doc, re.M):
            gaps.append(f"{name}: no Returns section")
    return gaps


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.stem)
def test_public_functions_have_numpydoc_sections(path):
    gaps = numpydoc_gaps(path)
    assert not gaps, f"{path.name}: " + "; ".join(gaps)


def test_numpydoc_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        'def f(x):\n    """Nothing."""\n\n\ndef g() -> None:\n    """Fine."""\n\n\n'
        'def h(x):\n    """Doc.\n\n    Parameters\n    ----------\n    x : int\n\n'
        '    Returns\n    -------\n    int\n    """\n'
    )
    assert numpydoc_gaps(bad) == ["f: no Parameters section", "f: no Returns section"]


def logical_lines(src: str) -> int:
    """The statements of ``src`` (tokenizer NEWLINE tokens), whatever its line wrapping."""
    tokens = tokenize.generate_tokens(io.StringIO(src).readline)
    return sum(t.type == tokenize.NEWLINE for t in tokens)


def physical_lines(src: str) -> int:
    """The non-blank lines of ``src``: what a reader scrolls past, comments included."""
    return sum(1 for line in src.splitlines() if line.strip())


def cell_lengths(path: Path) -> list[int]:
    return [physical_lines(src) for src in _cells(path, "code")]


def test_cell_length_counts_every_written_line():
    assert logical_lines("f(\n    1,\n    2,\n)\nx = 1  # c\n# only a comment\n") == 2
    assert physical_lines("f(\n    1,\n    2,\n)\n\nx = 1  # c\n# only a comment\n") == 6


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_notebook_cells_are_short(path):
    """No code cell over 25 non-blank lines (hidden cells too), at least 85% at most 15."""
    lengths = cell_lengths(path)
    long = [i for i, n in enumerate(lengths) if n > 25]
    short = sum(n <= 15 for n in lengths) / len(lengths)
    assert not long, f"{path.name}: code cells {long} have more than 25 lines"
    assert short >= 0.85, f"{path.name}: only {short:.0%} of code cells have at most 15 lines"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_notebooks_draw_through_the_seed_root(path):
    """Random numbers come from lecnotes (stats.generator / stream), never from numpy directly,
    so that LECNOTES_SEED reaches every stream of the book (make robustness)."""
    bad = [line.strip() for src in _cells(path, "code") for line in src.splitlines()
           if re.search(r"\bnp\.random\.|\bnumpy\.random\.|default_rng\(", line)]
    assert not bad, f"{path.name} draws outside the seed root: {bad}"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_every_cell_has_a_unique_id(path):
    """nbformat 4.5 requires cell ids (a notebook without them warns on every read)."""
    cells = json.loads(path.read_text())["cells"]
    ids = [c.get("id") for c in cells]
    assert None not in ids, f"{path.name}: {ids.count(None)} cell(s) without an id"
    assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_cells_carry_their_display_tags(path):
    """Claim-only cells remove their code from the page, setup and figure cells hide it behind
    a toggle (tools/cell_tags.py; run it after editing a lecture)."""
    cell_tags = load_tool("cell_tags")
    changes = cell_tags.retag(json.loads(path.read_text()))
    assert not changes, (f"{path.name}: display tags differ, run tools/cell_tags.py "
                         f"(cell, tag, expected): {changes}")


def test_display_tag_rules():
    cell_tags = load_tool("cell_tags")
    assert cell_tags.display_tag('claims.claim("a", "b", measured=1, expected=1, tol=0)') == \
        "remove-input"
    assert cell_tags.display_tag("for k in ks:\n    m = k\n    claims.claim_mean('a', 'b', v, m)") \
        == "remove-input"
    assert cell_tags.display_tag("x = sweep()\nclaims.claim('a', 'b', x, 1, tol=1)") is None
    assert cell_tags.display_tag("fig, ax = plt.subplots()\nax.plot(x)") == "hide-input"
    assert cell_tags.display_tag("from lecnotes import claims\nclaims.start_chapter('00_x')") \
        == "hide-input"
    assert cell_tags.display_tag("%timeit f()") is None
    colab_cell = load_tool("colab_cell")  # plumbing that prints nothing in the book
    assert cell_tags.display_tag(colab_cell.source()) == "remove-input"


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_chapter_mentions_are_links(path):
    """Every "chapter N" of the prose links to that chapter (tools/chapter_links.py)."""
    links = load_tool("chapter_links")
    src = path.read_text()
    files = links.chapter_files()
    own = int(path.name[:2])
    for cell in json.loads(src)["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            assert links.link_mentions(text, files, own=own) == text, (
                f"{path.name}: a chapter mention is not a link; run tools/chapter_links.py")


def test_chapter_links_rules():
    links = load_tool("chapter_links")
    files = {0: "00_a.ipynb", 3: "03_b.ipynb", 6: "06_c.ipynb", 11: "11_d.ipynb"}
    text = ("see chapter 3, chapters 0-3 and `chapter 6` or $chapter 6$; "
            "[chapter 3](x.ipynb) stays; chapter 6 is this one; chapter 11 and chapters 3 "
            "and 11; chapter 1 does not exist")
    assert links.link_mentions(text, files, own=6) == (
        "see [chapter 3](03_b.ipynb), chapters [0](00_a.ipynb)-[3](03_b.ipynb) and "
        "`chapter 6` or $chapter 6$; [chapter 3](x.ipynb) stays; chapter 6 is this one; "
        "[chapter 11](11_d.ipynb) and chapters [3](03_b.ipynb) and [11](11_d.ipynb); "
        "chapter 1 does not exist")


def test_book_pages_chapter_mentions_are_links():
    """The prose pages of book/ link their chapter mentions too (`chapter_links.py --check`)."""
    links = load_tool("chapter_links")
    files = links.chapter_files()
    for path in sorted(links.PAGES.glob("*.md")):
        if path.name in links.GENERATED:
            continue
        text = path.read_text()
        assert links.link_mentions(text, files, prefix="../lectures/") == text, (
            f"{path.name}: a chapter mention is not a link; run tools/chapter_links.py")


FIGSIZE = re.compile(r"figsize=\(\s*([0-9.]+)\s*,")
FONTSIZE = re.compile(r"fontsize=([0-9.]+)")


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_figures_fit_the_column_and_their_text_is_legible(path):
    """Figures at most plotting.MAX_WIDTH wide (shown 1:1 in the text column), no text set
    below plotting.MIN_FONT_PT (issue 27; the page test measures the result in a browser)."""
    from lecnotes.book import plotting

    code = "\n".join(_cells(path, "code"))
    wide = [float(w) for w in FIGSIZE.findall(code) if float(w) > plotting.MAX_WIDTH]
    small = [float(s) for s in FONTSIZE.findall(code) if float(s) < plotting.MIN_FONT_PT]
    assert not wide, f"{path.name}: figures wider than {plotting.MAX_WIDTH} in: {wide}"
    assert not small, f"{path.name}: text smaller than {plotting.MIN_FONT_PT} pt: {small}"


FIGSIZE_ANY = re.compile(r"figsize=\(\s*([^,]+?)\s*,")
SUBPLOTS_SIZE = re.compile(r"_subplots\([^()]*?\(\s*([0-9.]+)\s*,")


def test_package_figures_have_a_literal_width_within_the_column():
    """Every figure the package draws states its width as a number at most
    plotting.MAX_WIDTH (a computed width such as ``2.6 * ncols`` grows past the column and
    the browser then shrinks the figure, which only the slow page test would see)."""
    from lecnotes.book import plotting

    problems = []
    for path in sorted(SRC.rglob("*.py")):
        code = path.read_text()
        for width in FIGSIZE_ANY.findall(code) + SUBPLOTS_SIZE.findall(code):
            try:
                ok = float(width) <= plotting.MAX_WIDTH
            except ValueError:
                ok = False
            if not ok:
                problems.append(f"{path.relative_to(SRC)}: figure width {width!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_lectures_declare_their_sizes_through_the_scale_knob(path):
    """Every lecture imports lecnotes.core.scale.scaled and declares its dimensions with it
    (make scale grows them; README, "Sizes and scale")."""
    code = "\n".join(_cells(path, "code"))
    assert re.search(r"from lecnotes\.core\.scale import [^\n]*\bscaled\b", code), \
        f"{path.name} does not import lecnotes.core.scale.scaled"
    assert len(re.findall(r"\bscaled\(", code)) >= 1, f"{path.name} declares no size with scaled()"


def test_no_control_characters_in_the_text():
    """A control character in a notebook's or a page's text (``\\b`` of ``\\binom`` written in a
    non-raw Python string becomes a backspace) breaks the math in the page and in JupyterLab."""
    root = Path(__file__).resolve().parents[1]
    bad = []
    for path in sorted((root / "lectures").glob("*.ipynb")) + sorted((root / "book").glob("*.md")):
        text = path.read_text()
        if path.suffix == ".ipynb":
            text = "".join("".join(c["source"]) for c in json.loads(text)["cells"])
        bad += [f"{path.name}: {text[max(0, m.start() - 20):m.start() + 20]!r}"
                for m in re.finditer(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", text)]
    assert not bad, bad
