"""Each chapter page offers its executed notebook, with outputs, beside the source notebook.

The lectures are committed without outputs, so the theme's ``.ipynb`` download button serves a
notebook with none. This extension writes, at the end of an HTML build, every lecture merged
with its outputs from the build's own execution cache (the one the pages were rendered from)
into ``_downloads/executed/<stem>.ipynb``, and adds an entry "executed .ipynb" to the download
menu of each chapter page. A lecture with no cached execution is a build warning (an error
under ``-W``): its page would otherwise link to a missing file.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from execution_cache import cache_path
from sphinx.util import logging

from lecnotes.book.plotting import PHONE_MIME

logger = logging.getLogger(__name__)

FOLDER = "_downloads/executed"


def _lectures(app):
    return sorted(d for d in app.env.found_docs if d.startswith("lectures/"))


def _add_button(app, pagename, templatename, context, doctree):
    if not pagename.startswith("lectures/"):
        return
    stem = pagename.split("/", 1)[1]
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].insert(1, {
                "type": "link",
                "url": f"{context['pathto'](FOLDER, 1)}/{stem}.ipynb",
                "text": "executed .ipynb",
                "tooltip": "Download the notebook with its outputs (this page's execution)",
                "icon": "fas fa-file-code",
                "label": "download-executed-notebook-button",
            })


def _write(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_path(app)))
    out = Path(app.outdir) / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    for doc in _lectures(app):
        src = Path(app.srcdir) / f"{doc}.ipynb"
        nb = nbformat.read(src, as_version=4)
        try:
            _, merged = cache.merge_match_into_notebook(nb)
        except KeyError:
            logger.warning("executed notebooks: %s has no cached execution; its page links to "
                           "a missing executed notebook", doc)
            continue
        for cell in merged.cells:    # the phone variants of the figures are the book's
            for output in cell.get("outputs", []):
                output.get("data", {}).pop(PHONE_MIME, None)
        nbformat.write(merged, out / f"{src.stem}.ipynb")


def setup(app):
    app.connect("html-page-context", _add_button, priority=502)
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
