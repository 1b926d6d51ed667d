"""Root pytest configuration (applies to tests/ and to lectures/ run under nbval).

* BLAS and OpenMP run one thread per process unless the caller set otherwise: the suite runs
  two pytest workers (or two notebook kernels) on a 2-core machine, and two BLAS threads in
  each would make chapter 1 four times slower. Set before any test module imports numpy;
  notebook kernels inherit the environment.
* In ``.venv-dev``, the reader's virtualenv ``.venv`` is found (``LECNOTES_READER_PYTHON``)
  and its Jupyter data files are put on ``JUPYTER_PATH``.
* ``--chapter N`` (repeatable) keeps only the unit tests of chapter N: a test module declares
  the chapters whose code it covers in a module-level ``CHAPTERS`` tuple. ``make chapter CH=N``
  runs these and then chapter N's notebook.
"""

import os
import sysconfig
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# In .venv-dev, which sees .venv's packages through a .pth file (see the Makefile), the
# reader's data files (share/jupyter: JupyterLab extensions, nbconvert templates) and its
# interpreter are not on the usual paths: point Jupyter and the tests at them.
_layer = Path(sysconfig.get_paths()["purelib"]) / "_reader_venv.pth"
if _layer.is_file():
    _reader = Path(_layer.read_text().strip()).parents[2]
    os.environ.setdefault("LECNOTES_READER_PYTHON", str(_reader / "bin" / "python"))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(_reader / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")) if p)


def pytest_addoption(parser):
    parser.addoption("--chapter", action="append", default=[], metavar="N",
                     help="only the unit tests of chapter N (module-level CHAPTERS)")


def pytest_collection_modifyitems(config, items):
    wanted = {int(c) for c in config.getoption("chapter")}
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        chapters = set(getattr(getattr(item, "module", None), "CHAPTERS", ()))
        (keep if chapters & wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
