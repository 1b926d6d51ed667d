"""Chapter 8: Online SGD: the information exponent as a clock.

The notebook ``lectures/08_online_sgd.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.online_sgd.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.online_sgd.grading`;
* :mod:`lecnotes.online_sgd.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``online_sgd.theory``, ...).
"""

from lecnotes.online_sgd import grading, theory
from lecnotes.online_sgd.experiments import (
    EscapeResult,
    dlink,
    escape_runs,
    init_sphere,
    link,
    overlap_after,
    overlap_chain,
    reuse_sweep,
    sgd_step,
    smoothed_dlink,
    smoothed_escape,
    student_pair,
)
from lecnotes.online_sgd.grading import (
    check_sgd_step,
)

__all__ = [
    "experiments",
    "grading",
    "theory",
    "link",
    "dlink",
    "student_pair",
    "sgd_step",
    "init_sphere",
    "EscapeResult",
    "escape_runs",
    "overlap_chain",
    "overlap_after",
    "reuse_sweep",
    "smoothed_dlink",
    "smoothed_escape",
    "check_sgd_step",
]
