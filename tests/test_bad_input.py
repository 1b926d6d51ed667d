"""Every public function of lecnotes rejects a bad size with a ValueError (or a TypeError for a
wrong type), never with a ZeroDivisionError, an IndexError, an empty result or silence.

The probe is generated: for every function in a module's ``__all__`` and every parameter whose
name is a size of the book's notation (``d``, ``n``, ``p``, ``N``, the numbers of seeds, steps,
draws, ...), the function is called with that parameter set to 0, -1, 1.5 and NaN (``k``, an
index or a degree, to -1, 1.5 and NaN), every other required parameter set to a small valid
value of its name (:data:`VALID`) and the optional ones left at their defaults. A function with
a required parameter the table does not know is not probed; :func:`test_most_functions_are_probed`
keeps that set small. A call that runs longer than :data:`SECONDS` with a bad size has not
checked it and fails too.
"""

import importlib
import inspect
import math
import pkgutil
import signal
import warnings

import numpy as np
import pytest

import lecnotes
from lecnotes.mixtures.ridge import means_mixture

CHAPTERS = ()  # the whole package

SIZES = {"d", "n", "p", "N", "seeds", "n_seeds", "steps", "max_steps", "n_steps", "reps",
         "runs", "samples", "n_samples", "draws", "batch", "width", "m_samples", "n_b",
         "n_paths", "largest_n", "tau_max", "n_a"}
"""Parameters that count something: a positive integer."""
INDICES = {"k"}
"""Parameters that index a degree or an exponent: a non-negative integer."""
ZERO_ALLOWED = {
    "lecnotes.models.networks.train:steps",  # zero steps: the network at initialisation
    "lecnotes.mean_field_vs_ntk.theory.population_descent:steps",  # the risk at initialisation
}
"""Sizes for which 0 is a meaningful value (the docstring says so); -1, 1.5, NaN stay bad."""
REAL_ALLOWED = {
    "lecnotes.exponents.theory.low_degree_norm:n",  # a sample size in a formula: any n > 0
    "lecnotes.reusing_batches.sgd.sgd_escape:tau_max",  # a horizon in units of d samples
    "lecnotes.reusing_batches.sgd.median_escape:tau_max",  # the same horizon
    "lecnotes.reusing_batches.sgd.one_pass_escape:tau_max",  # a horizon in units of d^2
    "lecnotes.hierarchical.controls.stage_two_control:width",  # p1 in units of d
    "lecnotes.hierarchical.layerwise.layerwise_gd_sweep:width",  # p1 in units of d
}
"""Sizes that a formula takes as a positive real (the docstring says so): 1.5 is good."""
BAD_SIZE = (0, -1, 1.5, math.nan)
BAD_INDEX = (-1, 1.5, math.nan)
SECONDS = 10

_rng = np.random.default_rng(0)  # the probe's own data: not a book stream
VALID = {
    "d": 8, "n": 16, "p": 4, "N": 4, "seeds": 2, "n_seeds": 2, "steps": 2, "max_steps": 4,
    "n_steps": 2, "reps": 2, "runs": 2, "samples": 16, "n_samples": 16, "draws": 16,
    "batch": 4, "width": 4, "k": 2, "kmax": 4, "degree": 2, "n_a": 4, "se_a": 0.1,
    "se_b": 0.2, "b": 1.0, "n_b": 4,
    "link": "he3", "activation": "relu", "loss": "square", "target": "he3",
    "X": _rng.standard_normal((16, 8)), "y": _rng.standard_normal(16),
    "x": _rng.standard_normal(16), "z": _rng.standard_normal(16),
    "W": _rng.standard_normal((4, 8)) / np.sqrt(8), "W0": _rng.standard_normal((4, 8)) / np.sqrt(8),
    "w_star": np.eye(8)[0], "W_star": np.eye(8)[:2], "a": np.ones(4) / 4, "a0": np.ones(4) / 4,
    "delta": 1.0, "alpha": 2.0, "alpha1": 2.0, "alpha2": 2.0, "eta": 0.5, "eta0": 0.5,
    "eta_bar": 0.5, "c": 1.0, "lam": 0.1, "t": 1.0, "theta": 0.1, "eps": 0.1, "q0": 0.1,
    "dims": [8, 16], "ns": [16, 32], "deltas": [0.5, 1.0], "alphas": [1.0, 2.0],
    "widths": [4, 8], "sizes": [8, 16], "ratios": [1.0, 2.0], "n_list": [16, 32],
    "func": np.cos, "f": np.cos, "g": np.cos, "T": np.tanh, "rng": 0, "seed": 0,
    "m": 4, "n_paths": 4, "tau_max": 2, "largest_n": 32, "s": 0.5, "q": 0.1, "edge": 2.0,
    "lo": 0.1, "hi": 5.0, "limit": 1.0, "exponent": 1.0, "remove_linear": True,
    "inits": [0.1, 0.2], "kappas": [0.5, 1.0], "zeta_norms": [1.0, 0.5], "taus": [0.1, 0.2],
    "factors": [1.0, 2.0], "alphas1": [1.0, 2.0], "alphas2": [1.0, 2.0],
    "xx": np.linspace(-2, 2, 16), "v": _rng.standard_normal(8),
    "rho": 0.2, "lams": [0.5, 1.0], "mu": 0.1, "mv": 0.1, "r": 2, "betas": [0.5, 1.0],
    "rhos": [0.01, 0.05],
    "model": means_mixture(1.0, 0.0, "sign"),
}


def _public_functions():
    seen = []
    for info in pkgutil.walk_packages(lecnotes.__path__, "lecnotes."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            f = getattr(module, name, None)
            if inspect.isfunction(f) and f.__module__ == info.name:
                seen.append((f"{info.name}.{name}", f))
    return seen


FUNCTIONS = _public_functions()


def _probes():
    out, unprobed = [], []
    for qualname, f in FUNCTIONS:
        params = inspect.signature(f).parameters
        probed = [p for p in params if p in SIZES | INDICES]
        required = [p.name for p in params.values() if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if not probed:
            continue
        if any(p not in VALID for p in required):
            unprobed.append(qualname)
            continue
        out += [(qualname, f, p, required) for p in probed]
    return out, unprobed


PROBES, UNPROBED = _probes()


class _TooLong(Exception):
    pass


def _alarm(signum, frame):
    raise _TooLong


def test_most_functions_are_probed():
    """The table of valid values covers all but a few functions that take a size."""
    taking_a_size = {q for q, _, _, _ in PROBES} | set(UNPROBED)
    assert len(PROBES) > 100
    assert len(UNPROBED) <= 0.2 * len(taking_a_size), f"not probed: {sorted(UNPROBED)}"


@pytest.mark.parametrize("qualname, f, param, required", PROBES,
                         ids=[f"{q}:{p}" for q, _, p, _ in PROBES])
def test_a_bad_size_is_a_value_error(qualname, f, param, required):
    kwargs = {p: VALID[p] for p in required}
    name = f"{qualname}:{param}"
    bad_values = BAD_INDEX if param in INDICES or name in ZERO_ALLOWED else BAD_SIZE
    if name in REAL_ALLOWED:
        bad_values = tuple(b for b in bad_values if b != 1.5)
    wrong = []
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for bad in bad_values:
            signal.alarm(SECONDS)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    f(**{**kwargs, param: bad})
            except (ValueError, TypeError):
                pass
            except _TooLong:
                wrong.append(f"{param}={bad!r}: still running after {SECONDS} s")
            except Exception as err:  # noqa: BLE001 - the point of the probe
                wrong.append(f"{param}={bad!r}: {type(err).__name__}: {err}"[:200])
            else:
                wrong.append(f"{param}={bad!r}: accepted without an error")
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not wrong, f"{qualname}: " + "; ".join(wrong)
