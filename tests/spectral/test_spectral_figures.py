"""Tests of the sweeps' helpers and the static figures of chapter 4 (lecnotes.spectral)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes import spectral as S  # noqa: E402
from lecnotes.core import preprocessing as PP  # noqa: E402
from lecnotes.core import stats  # noqa: E402
from lecnotes.spectral import figures  # noqa: E402
from lecnotes.spectral import theory as TH  # noqa: E402

CHAPTERS = (4,)
T = PP.get_preprocessing("trimmed")


def test_mean_loglog_slope_recovers_a_power_law_and_its_error():
    dims = np.array([100, 200, 400, 800])
    rng = stats.generator(5)
    values = dims[None, :] ** -0.5 * (1 + 0.01 * rng.standard_normal((40, 4)))
    fit = S.mean_loglog_slope(dims, values)
    assert fit.slope == pytest.approx(-0.5, abs=6 * fit.se)
    assert 0 < fit.se < 0.01
    m, se = stats.mean_and_error(values)
    np.testing.assert_allclose(fit.means, m)
    np.testing.assert_allclose(fit.errors, se)
    # the slope is the least-squares slope of log means
    assert fit.slope == pytest.approx(np.polyfit(np.log(dims), np.log(m), 1)[0])


@pytest.mark.parametrize("dims, values", [
    ([100, 100], np.ones((3, 2))),             # one distinct size
    ([100, 200], np.ones((1, 2))),             # one seed
    ([100, 200], np.ones((3, 3))),             # shape mismatch
    ([100, 200], -np.ones((3, 2))),            # no log of a negative mean
    ([0, 200], np.ones((3, 2))),               # size 0
    ([np.nan, 200], np.ones((3, 2))),          # NaN
])
def test_mean_loglog_slope_bad_input(dims, values):
    with pytest.raises(ValueError):
        S.mean_loglog_slope(dims, values)


@pytest.fixture(scope="module")
def spectra_setting():
    deltas, d = [1.25, 3.0], 40
    spectra = S.spectra_over_seeds(deltas, d, 3, T, rng=1)
    sol = {x: TH.spectral_functions("quadratic", x, T) for x in deltas}
    grids = {x: np.linspace(-0.2, sol[x].edge, 200) for x in deltas}
    dens = {x: TH.bulk_density(grids[x], "quadratic", x, T) for x in deltas}
    return spectra, sol, grids, dens


def test_bulk_distances_counts_and_scale(spectra_setting):
    spectra, _, grids, dens = spectra_setting
    mean_T, _ = TH.mean_matrix_coefficients("quadratic", T)
    res = S.bulk_distances(spectra, {3.0: grids[3.0]}, {3.0: dens[3.0]}, mean_T)
    assert res.limit.shape == res.plain.shape == (3,)
    assert res.pairs.shape == (3,)  # 3 pairs of seeds
    assert np.all(res.limit >= 0) and np.all(res.pairs >= 0)
    # the plain Marchenko-Pastur law is the wrong law: farther than the right one
    assert res.plain.mean() > res.limit.mean()


def test_bulk_distances_bad_input(spectra_setting):
    spectra, _, grids, dens = spectra_setting
    with pytest.raises(ValueError, match="not among"):
        S.bulk_distances(spectra, {2.0: grids[3.0]}, {2.0: dens[3.0]}, 1.0)
    with pytest.raises(ValueError, match="mean_T"):
        S.bulk_distances(spectra, {3.0: grids[3.0]}, {3.0: dens[3.0]}, -1.0)
    with pytest.raises(ValueError, match="same delta keys"):
        S.bulk_distances(spectra, {3.0: grids[3.0]}, {}, 1.0)
    with pytest.raises(TypeError):
        S.bulk_distances(spectra.eigenvalues, grids, dens, 1.0)


def test_spectra_figure_one_panel_per_delta(spectra_setting):
    spectra, sol, grids, dens = spectra_setting
    fig = figures.spectra_figure(spectra, sol, grids, dens)
    assert len(fig.axes) == 2 and fig.legends
    with pytest.raises(ValueError):
        figures.spectra_figure(spectra, {}, grids, dens)
    plt.close(fig)


def test_sweep_figure_both_quantities():
    pre = {k: PP.get_preprocessing(k) for k in
           ("trimmed", "trimmed-centred", "mondelli-montanari", "luo-alghamdi-lu")}
    sims = S.spectral_sweep(pre, [0.75, 2.0], [30], 2, rng=0)
    grid = {k: np.array([0.6, 1.0, 2.0]) for k in pre}
    theory = {k: [TH.spectral_functions("quadratic", x, pre[k]) for x in grid[k]] for k in pre}
    thr = {k: TH.spectral_threshold("quadratic", pre[k]) for k in pre}
    for q in ("rho2", "top"):
        fig = figures.sweep_figure(sims, grid, theory, thr, quantity=q)
        assert len(fig.axes) == 4
        plt.close(fig)
    with pytest.raises(ValueError, match="quantity"):
        figures.sweep_figure(sims, grid, theory, thr, quantity="edge")
    with pytest.raises(ValueError):
        figures.sweep_figure({}, grid, theory, thr)


def test_raw_label_relu_and_davis_kahan_figures():
    res = S.raw_label_sweep(2.0, [20, 40], 2, rng=0)
    fig = figures.raw_label_figure(res, 2.0, 0.5)
    assert len(fig.axes) == 3
    plt.close(fig)
    with pytest.raises(ValueError, match="delta"):
        figures.raw_label_figure(res, 0.0, 0.5)
    tc = PP.get_preprocessing("trimmed-centred")
    dk = S.davis_kahan_sweep(np.array([2, 4]), 20, 2, tc, rng=0)
    fig = figures.davis_kahan_figure(dk, (np.array([2.0, 4.0]), [0.3, 0.6]), 1.5)
    assert len(fig.axes) == 2
    plt.close(fig)
    sims = S.simulate_spectral({"a": tc}, [2.0, 4.0], 20, 2, rng=0)
    fig = figures.relu_figure(sims, {"a": ([2.0, 4.0], [0.2, 0.5])}, {"a": "T"}, 1.0, 20)
    assert len(fig.axes) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="same keys"):
        figures.relu_figure(sims, {}, {"a": "T"}, 1.0, 20)


def test_inverse_d_limits_recovers_the_intercept_of_an_exact_law():
    from lecnotes.spectral.estimators import SpectralSimulation

    deltas = np.array([1.0, 2.0])
    sims = {d: {"a": SpectralSimulation(deltas, np.tile(0.5 + 3.0 / d * deltas, (4, 1)),
                                        np.zeros((4, 2)))} for d in (100, 200, 400)}
    C = S.inverse_d_limits(sims, "a", [2.0])
    assert C.shape == (4, 1)
    np.testing.assert_allclose(C, 0.5)
    with pytest.raises(ValueError, match="simulated"):
        S.inverse_d_limits(sims, "a", [3.0])
    with pytest.raises(ValueError, match="every dimension"):
        S.inverse_d_limits(sims, "b", [1.0])
    with pytest.raises(ValueError, match=">= 2 sizes"):
        S.inverse_d_limits({100: sims[100]}, "a", [1.0])


def test_spectral_threshold_rejects_a_preprocessing_as_the_link():
    with pytest.raises(ValueError, match="link comes first"):
        TH.spectral_threshold(PP.trimmed(7.0), None)
    with pytest.raises(TypeError):
        TH.spectral_threshold(PP.trimmed(7.0))  # T is required
    with pytest.raises(ValueError, match="link comes first"):
        TH.spectral_overlap(PP.trimmed(7.0), 2.0)
