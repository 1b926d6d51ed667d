"""The book as one PDF, linked from the front page and every page's download menu, when built.

``make pdf`` (and ``make book``, when Chromium is installed) prints the single-page HTML build
to ``_build/pdf/book.pdf`` (``tools/print_pdf.py``). When that file exists as an HTML build
starts, this extension copies it into the HTML output as ``book.pdf``, sets the Sphinx tag
``lecnotes_pdf`` (the front page's ``{only} lecnotes_pdf`` paragraph links to it) and adds
"PDF" to each page's download menu. Without it neither link is written, so no page links to
a missing file. ``make test`` prints the PDF in the background while it builds the HTML: the
marker ``book.pdf.pending`` next to it, naming the live printing process, promises the file,
so the pages link it, and the print
copies it into the HTML output when it ends (``tools/print_pdf.py``; the tests that follow
wait for it and fail if it did not come).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)
NAME = "book.pdf"
TAG = "lecnotes_pdf"


def printed_pdf(outdir: str | Path) -> Path:
    """Where ``tools/print_pdf.py`` writes the PDF, next to the HTML output folder."""
    return Path(outdir).parent / "pdf" / NAME


def _printing(pdf: Path) -> bool:
    """A background print of ``pdf`` is under way: ``<pdf>.pending`` names a live process
    (the check of ``tools/print_pdf.py:printing``, which writes the marker)."""
    try:
        os.kill(int(pdf.with_name(NAME + ".pending").read_text().split()[0]), 0)
    except (OSError, ValueError, IndexError):
        return False
    return True


def _inited(app):
    if app.builder.name != "html":
        return
    pdf = printed_pdf(app.outdir)
    if pdf.is_file() or _printing(pdf):
        app.tags.add(TAG)
    else:
        logger.info("pdf link: no %s (make pdf prints it); the pages do not link a PDF",
                    printed_pdf(app.outdir))


def _add_button(app, pagename, templatename, context, doctree):
    if not app.tags.has(TAG):
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append({
                "type": "link",
                "url": context["pathto"](NAME, 1),
                "text": "PDF (whole book)",
                "tooltip": "Download the whole book as one PDF",
                "icon": "fas fa-file-pdf",
                "label": "download-book-pdf-button",
            })


def _copy(app, exception):
    pdf = printed_pdf(app.outdir)
    if exception is None and app.builder.name == "html" and app.tags.has(TAG) and pdf.is_file():
        shutil.copy(pdf, Path(app.outdir) / NAME)   # (a background print copies it itself)


def setup(app):
    app.connect("builder-inited", _inited)
    app.connect("html-page-context", _add_button, priority=503)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
