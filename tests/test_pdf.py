"""The printed book (``make pdf``): one PDF with every chapter, no raw TeX, figures embedded.

``make test`` prints it from the lectures' nbval execution (``make pdf-print``, about 3 minutes,
in the background while the strict HTML build, which links it, and the first slow tests run;
these tests wait for it); ``make test-pdf`` builds and tests it alone.
Skipped where there is no PDF (no Chromium: the HTML then links none) or no poppler-utils.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT / "_build" / "pdf" / "book.pdf"
print_pdf = load_tool("print_pdf")

pytestmark = [
    pytest.mark.slow,
    # a print under way, failed or killed is not skipped: the fixture below says what happened
    pytest.mark.skipif(not any(p.exists() for p in (PDF, print_pdf.pending(PDF),
                                                    print_pdf.failed(PDF))),
                       reason="no _build/pdf/book.pdf: run make test-pdf"),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed"),
]

# MathJax's delimiters left in the text mean a formula was not typeset (\\mathbb and friends
# also occur in the code the page shows, so they are not a sign)
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{")


@pytest.fixture(autouse=True, scope="module")
def printed():
    """The PDF, once a background print (make test) has ended; fails if that print failed."""
    assert print_pdf.wait(PDF) is not None, "the print ended without a PDF"


def _chapter_titles() -> list[str]:
    titles = []
    for nb in sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            heading = next((x for x in "".join(cell["source"]).splitlines()
                            if x.startswith("# ")), None)
            if cell["cell_type"] == "markdown" and heading:
                titles.append(heading[2:].strip())
                break
    return titles


def test_the_pdf_holds_every_chapter_and_no_raw_tex():
    page = print_pdf.SINGLE_PAGE
    assert page.exists(), f"no single-page build at {page}: run make pdf"
    assert PDF.stat().st_mtime >= page.stat().st_mtime, (
        "the PDF is older than the single-page build it prints: run make pdf")
    text = subprocess.run(["pdftotext", "-layout", str(PDF), "-"], capture_output=True,
                          text=True, check=True).stdout
    flat = " ".join(text.split())
    for title in _chapter_titles():   # "6. Giant steps: ..." as numbered in the book
        words = " ".join(title.split()[:4])
        assert words in flat, f"chapter missing from the PDF: {title}"
    m = RAW_TEX.search(text)
    assert m is None, f"raw TeX in the PDF: ...{text[max(m.start() - 60, 0):m.end() + 40]!r}"


def test_the_pdf_embeds_the_figures():
    listing = subprocess.run(["pdfimages", "-list", str(PDF)], capture_output=True, text=True,
                             check=True).stdout.splitlines()[2:]
    # figures are colour images (RGB, or ICC-based with 3 components) at least 600 px wide;
    # Chromium also embeds grey shadows
    large = [row.split() for row in listing if len(row.split()) > 6]
    large = [r for r in large if (r[5] == "rgb" or (r[5] == "icc" and r[6] == "3"))
             and int(r[3]) >= 600]
    # every figure output of the page that was printed (the single-page HTML)
    page = print_pdf.SINGLE_PAGE
    figures = len(re.findall(r'<img [^>]*src="[^"]*_images/[0-9a-f]{64}\.png"',
                             page.read_text(encoding="utf-8")))
    assert figures >= 40, f"only {figures} figures in {page}"
    assert len(large) >= figures, (
        f"{len(large)} figure-sized images in the PDF, {figures} figures on the printed page")


def test_the_front_page_and_the_download_menu_link_the_pdf():
    site = ROOT / "_build" / "html"
    if not (site / "book" / "intro.html").exists():
        pytest.skip("no HTML build")
    assert (site / "book.pdf").read_bytes() == PDF.read_bytes(), "the site's PDF is stale"
    front = (site / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="../book.pdf"' in front                 # the sentence of the front page
    chapter = (site / "lectures" / "06_giant_steps.html").read_text(encoding="utf-8")
    assert "download-book-pdf-button" in chapter and "../book.pdf" in chapter
