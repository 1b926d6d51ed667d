"""The execution cache of the lectures is keyed on the ``lecnotes`` sources, not only on them.

With ``execute_notebooks: cache`` (``_config.yml``), jupyter-cache matches a notebook by the
hash of its code cells, so after a change to ``src/lecnotes`` a local build would serve the
pages of the old package. This extension stamps the cache folder with
:func:`lecnotes.book.claims.package_digest`; when the stamp differs from the current sources it
empties the cache, so every lecture is executed again, and it marks every notebook page
outdated in Sphinx's environment (whose own check looks only at the notebook files).
``tools/execute.py``, which fills the same cache in parallel before a build, uses the same
rule (:func:`ensure_fresh`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.util import logging

from lecnotes.book import claims

logger = logging.getLogger(__name__)
STAMP = "lecnotes-digest"


def ensure_fresh(cache: Path, digest: str) -> bool:
    """Empty ``cache`` unless it is stamped with ``digest``; stamp it. True if it was emptied."""
    stamp = cache / STAMP
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return False
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    stamp.write_text(digest + "\n")
    return True


def cache_path(app) -> Path:
    """Where myst-nb caches: ``nb_execution_cache_path``, or ``<_build>/.jupyter_cache``."""
    configured = app.config.nb_execution_cache_path
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else Path(app.srcdir) / path
    return (Path(app.outdir).parent / ".jupyter_cache").resolve()   # as myst-nb resolves it


def _builder_inited(app):
    if app.config.nb_execution_mode != "cache":
        return
    digest = claims.package_digest()
    if ensure_fresh(cache_path(app), digest):
        logger.info("execution cache: lecnotes sources %s are new, every lecture re-executes",
                    digest)


def _outdated(app, env, added, changed, removed):
    digest = claims.package_digest()
    if getattr(env, "lecnotes_digest", None) == digest:
        return []
    env.lecnotes_digest = digest
    return [d for d in env.found_docs if env.doc2path(d).endswith(".ipynb")]


def setup(app):
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
