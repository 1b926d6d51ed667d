"""Serve MathJax from the built site, so that math renders with no network.

The PyPI package ``django-static-mathjax`` ships the MathJax 3 distribution (import name
``mathjax``; Django is not needed). At ``build-finished`` this extension copies its ``es5``
folder to ``<outdir>/_static/mathjax``; ``_config.yml`` sets
``mathjax_path: mathjax/tex-chtml.js`` (relative to ``_static``). The files are copied after
the build rather than placed in a root ``_static/`` folder, whose scripts Jupyter Book would add
to every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)


def _mathjax_source() -> Path | None:
    try:
        import mathjax
    except ImportError:
        return None
    src = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    return src if (src / "tex-chtml.js").is_file() else None


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    src = _mathjax_source()
    if src is None:
        logger.warning(
            "offline_mathjax: the package django-static-mathjax is not installed; pages will "
            "load MathJax from %s, which fails offline",
            app.config.mathjax_path,
        )
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    if (dest / "tex-chtml.js").is_file():
        return
    shutil.copytree(src, dest, dirs_exist_ok=True)


def setup(app):
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
