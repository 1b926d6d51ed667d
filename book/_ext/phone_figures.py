"""A phone gets each figure's phone variant: the same panels stacked in a narrow column.

A figure of the book is at most 7.5 in wide, shown 1:1 in the desktop column. In the 340 px
column of a phone it would be shown at less than half its size, its 9 pt text at 5 px. So the
notebook kernel sends every figure twice (``lecnotes.book.plotting``): the usual PNG, and a phone
variant under the MIME type ``plotting.PHONE_MIME``, laid out again with its panels one below
the other, 3.4 in wide. myst-nb renders the usual PNG and ignores the other type.

At the end of an HTML build this extension takes the phone variants from the build's own
execution cache (the one the pages were rendered from), writes them to ``_images/phone/``, and
wraps each figure's ``<img>`` in a ``<picture>`` whose ``<source>`` serves the variant below
:data:`BREAKPOINT`. myst-nb names a figure's file by the SHA-256 of its PNG, which is how an
``<img>`` is matched with its output. Only the ``html`` builder: the single-page HTML printed
as the PDF keeps the wide figures.
"""

from __future__ import annotations

import hashlib
import re
from binascii import a2b_base64
from pathlib import Path

import nbformat
from execution_cache import cache_path
from sphinx.util import logging

from lecnotes.book.plotting import PHONE_MIME

logger = logging.getLogger(__name__)

FOLDER = "_images/phone"
BREAKPOINT = "(max-width: 760px)"
"""Below this viewport width the phone variant is shown (the theme's single-column layout)."""


def phone_variants(nb) -> dict[str, bytes]:
    """Map the file name myst-nb gives each figure of ``nb`` to its phone variant's PNG."""
    found = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data and PHONE_MIME in data:
                wide = hashlib.sha256(a2b_base64(data["image/png"])).hexdigest() + ".png"
                found[wide] = a2b_base64(data[PHONE_MIME])
    return found


def wrap_images(html: str, names: dict[str, str]) -> tuple[str, int]:
    """Wrap every ``<img>`` of a figure in ``names`` in a ``<picture>`` with its phone source.

    ``names`` maps a figure's file name to its phone variant's path relative to the page.
    Returns the new page and the number of figures wrapped.
    """
    count = 0

    def wrap(match):
        nonlocal count
        phone = names.get(match.group("name"))
        if phone is None:
            return match.group(0)
        count += 1
        return (f'<picture class="lecnotes-phone"><source media="{BREAKPOINT}" '
                f'srcset="{phone} 2x" />{match.group(0)}</picture>')

    pattern = r'<img [^>]*src="[^"]*_images/(?P<name>[0-9a-f]{64}\.png)"[^>]*>'
    return re.sub(pattern, wrap, html), count


def _write(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_path(app)))
    out = Path(app.outdir)
    (out / FOLDER).mkdir(parents=True, exist_ok=True)
    for doc in sorted(d for d in app.env.found_docs if d.startswith("lectures/")):
        nb = nbformat.read(Path(app.srcdir) / f"{doc}.ipynb", as_version=4)
        try:
            _, merged = cache.merge_match_into_notebook(nb)
        except KeyError:
            continue        # executed_notebooks warns about it
        names = {}
        for wide, png in phone_variants(merged).items():
            name = hashlib.sha256(png).hexdigest()[:32] + ".png"
            (out / FOLDER / name).write_bytes(png)
            names[wide] = f"../{FOLDER}/{name}"
        page = out / f"{doc}.html"
        html, count = wrap_images(page.read_text(encoding="utf-8"), names)
        if count < len(names):
            logger.warning("phone figures: %s shows %d of its %d figures with a phone "
                           "variant", doc, count, len(names))
        page.write_text(html, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
