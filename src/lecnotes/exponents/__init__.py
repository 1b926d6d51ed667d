"""Chapter 2: Information and generative exponents.

The notebook ``lectures/02_exponents.ipynb`` imports this subpackage. Its modules:

* :mod:`lecnotes.exponents.experiments` - the chapter's simulations and sweeps;
* :mod:`lecnotes.exponents.figures` - its multi-panel figures;
* :mod:`lecnotes.exponents.sgd` - the overlap ODE of online SGD with the link's constants;
* :mod:`lecnotes.exponents.grading`;
* :mod:`lecnotes.exponents.theory`;

The names of ``experiments`` and the graded checks are exported here; the other
modules are reached as attributes (``exponents.theory``, ...).
"""

from lecnotes.exponents import figures, grading, sgd, theory
from lecnotes.exponents.experiments import (
    GEN4_A,
    GEN_TOL,
    INFO_RTOL,
    ExponentNotFound,
    ExponentTable,
    FloorConstant,
    FloorRatio,
    Gen4Stats,
    NoiseAsymptotics,
    NoiseCurves,
    annulus_link,
    exponent_table,
    format_number,
    gen4_interval,
    gen4_partner,
    gen4_stats,
    generative_exponent,
    information_exponent,
    large_noise_asymptotics,
    log_slopes,
    markdown_table,
    noise_curves,
    noise_decay,
    random_polynomial_links,
    raw_floor_constant,
    raw_floor_ratio,
)
from lecnotes.exponents.grading import (
    check_gen4_partner,
)

__all__ = [
    "experiments",
    "grading",
    "theory",
    "figures",
    "sgd",
    "ExponentTable",
    "exponent_table",
    "annulus_link",
    "NoiseCurves",
    "noise_curves",
    "FloorConstant",
    "raw_floor_constant",
    "FloorRatio",
    "raw_floor_ratio",
    "log_slopes",
    "INFO_RTOL",
    "GEN_TOL",
    "GEN4_A",
    "ExponentNotFound",
    "information_exponent",
    "generative_exponent",
    "NoiseAsymptotics",
    "large_noise_asymptotics",
    "gen4_partner",
    "Gen4Stats",
    "gen4_stats",
    "gen4_interval",
    "format_number",
    "markdown_table",
    "random_polynomial_links",
    "noise_decay",
    "check_gen4_partner",
]
