"""Tests of lecnotes.partial_trace.theory: the large-d collapse sweep and the noise of M_4
(chapter 5)."""

import numpy as np
import pytest

from lecnotes import partial_trace as S
from lecnotes.core.hermite import gaussian_expectation
from lecnotes.core.targets import LINKS
from lecnotes.partial_trace import theory as PT

CHAPTERS = (5,)  # the chapters whose code these tests cover: make chapter CH=N

LINK = LINKS["gen4"]
P = float(gaussian_expectation(LINK, breakpoints=LINK.breakpoints))


def test_collapse_sweep_shapes_and_reproducibility():
    out = PT.collapse_sweep([1.0, 2.0], [20], 3, mean=P, rng=0, chunk=100)
    run = out[20]
    assert run.rho2.shape == (3, 2) and np.all((run.rho2 >= 0) & (run.rho2 <= 1))
    again = PT.collapse_sweep([1.0, 2.0], [20], 3, mean=P, rng=0, chunk=100)
    np.testing.assert_array_equal(run.rho2, again[20].rho2)
    with pytest.raises(ValueError):
        PT.collapse_sweep([2.0, 1.0], [20], 2)


def test_entry_variance_against_monte_carlo():
    d, n, reps = 6, 400, 3000
    rng = np.random.default_rng(0)
    vals = []
    for _ in range(reps):
        X = rng.standard_normal((n, d))
        t = LINK(X[:, 0]) - P
        s = np.sum(X * X, axis=1) - d
        vals.append(np.mean(t * (s - 4) * X[:, 1] * X[:, 2]))
    assert np.var(vals) == pytest.approx(PT.entry_variance(d, n, mean=P), rel=0.08)


def test_noise_structure_ratios():
    out = PT.noise_structure(30, 1.0, 4, mean=P, rng=0)
    assert out.variance_ratio.shape == (4,) and 0.5 < out.variance_ratio.mean() < 1.5
    assert 0 < out.wigner_ratio < 1
    assert np.all(out.bottom < 0) and np.all(out.top > 0)


def test_drift_exponent_of_an_exact_one_over_d_drift():
    alpha_c = 0.5
    runs = {}
    for d in (50, 100, 200):
        half = (2 * alpha_c + 20 / d) * d * d          # n_1/2 / d^2 = 1 + 20/d
        ns = np.array([0.5 * half, 2 * half])
        runs[d] = (ns, np.tile([0.25, 0.75], (4, 1)))   # crosses 1/2 at the geometric mean
    fit = PT.drift_exponent(runs, 2 * alpha_c, n_boot=20, rng=0)
    assert fit.p == pytest.approx(1.0, abs=1e-9)
    assert S.critical_alpha(1.0, 0.25) == pytest.approx(0.5)
