"""The single-page HTML build (``--builder singlehtml``), from which ``make pdf`` prints the book.

Several extensions register their nodes' HTML visitors for the ``html`` builder only (myst-nb's
folded ``hide-input`` cell, sphinx-proof's and sphinx-exercise's boxes), so ``singlehtml`` stops
with "departing unknown node type". When the builder is ``singlehtml``, this gives it every
``html`` visitor it lacks: the single page renders each node exactly as the web pages do.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _borrow_html_visitors(app: Sphinx) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node_name, visitors in handlers.get("html", {}).items():
        single.setdefault(node_name, visitors)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _borrow_html_visitors)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
