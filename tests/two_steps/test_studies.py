"""Tests of lecnotes.two_steps.studies and the static figures of lecnotes.two_steps.explorer."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lecnotes.core import activations, linalg, rmt  # noqa: E402
from lecnotes.core import validate as V  # noqa: E402
from lecnotes.core.targets import single_index  # noqa: E402
from lecnotes.models import layerwise, networks  # noqa: E402
from lecnotes.two_steps import explorer, studies  # noqa: E402
from lecnotes.two_steps import theory as SP  # noqa: E402

CHAPTERS = (7,)  # the chapters whose code these tests cover: make chapter CH=N


def test_first_step_spectrum_keeps_the_cells_stream():
    """The same draws as the chapter's former cell: data, then W0 and a, from one generator."""
    N, alpha = 60, 0.3
    rng = V.generator(2)
    X, y, _ = single_index(N, N, "linear", rng=rng)
    W0, a = networks.init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    (W1,) = layerwise.multi_step(W0, a, [(X, y)], N**alpha, activations.SINCOS,
                                 "correlation", scaling=N**-0.5)
    got = studies.first_step_spectrum(N, alpha, rng=2)
    np.testing.assert_allclose(got.s, linalg.singular_values(W1))
    assert np.all(np.diff(got.s) <= 0)
    assert got.bulk.edge == pytest.approx(rmt.fit_bulk_edge(got.s).edge)
    assert got.tau == pytest.approx(N ** (2 * alpha - 1) * (1 - np.exp(-1)))


def test_null_spectra_draw_in_turn_from_one_generator():
    rng = V.generator(3)
    want = [linalg.singular_values(networks.init_params(
        40, 40, rng=rng, symmetric=False, second_layer="gaussian")[0]) for _ in range(3)]
    got = studies.null_spectra(40, 3, rng=3)
    assert len(got) == 3
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w)
    assert not np.allclose(got[0], got[1])  # independent draws, not one repeated


@pytest.mark.parametrize("bad", [0, -3, 1.5, float("nan")])
def test_sizes_are_validated(bad):
    with pytest.raises(ValueError, match="N"):
        studies.first_step_spectrum(bad, 0.3)
    with pytest.raises(ValueError, match="count"):
        studies.null_spectra(30, bad)
    with pytest.raises(ValueError, match="seeds"):
        studies.one_step_study([60, 80], [0.2], bad)


def test_exponents_are_validated():
    with pytest.raises(ValueError, match="alpha"):
        studies.first_step_spectrum(30, 0.5)
    with pytest.raises(ValueError, match="alphas"):
        studies.one_step_study([60, 80], [0.2, float("nan")], 1)
    with pytest.raises(ValueError, match="sizes"):
        studies.one_step_study([60], [0.2], 1)


def test_one_step_study_counts_and_table():
    """Counts are those of rmt.outlier_counts with the pooled null margin (the runs' own
    spectra when ``nulls`` equals the seeds, more draws otherwise); the table prints
    the theorem's row; the theorem-agreement mask has one row per size."""
    alphas = np.array([0.35, 0.44])
    st = studies.one_step_study([120, 160], alphas, 2, nulls=2)
    assert list(st.sims) == [120, 160]
    margin = rmt.null_margin([s for n in st.sims for s in st.sims[n].null])
    assert st.margin == pytest.approx(margin)
    more = studies.one_step_study([120, 160], alphas, 2, nulls=5).margin  # 10 nulls pooled
    assert more != pytest.approx(margin)
    for n, r in st.sims.items():
        np.testing.assert_array_equal(st.counts[n], rmt.outlier_counts(r.s, r.edge, r.scale,
                                                                       margin))
    np.testing.assert_array_equal(st.theory, SP.one_step_spike_count(alphas))
    assert st.theorem_agree.shape == (2, 2) and st.theorem_agree.dtype == bool
    table = studies.count_table(st, alphas)
    assert "theorem" in table and table.count("simulated") == 2
    curves = studies.one_step_curves(st, np.linspace(0.05, 0.4, 5), alphas, large_N=10**4)
    assert set(curves.counts) == {120, 160} and curves.positions.shape == (5, 3)
    assert len(curves.large) == 2
    with pytest.raises(TypeError):
        studies.count_table("not a study", alphas)
    with pytest.raises(ValueError, match="large_N"):
        studies.one_step_curves(st, [0.1], alphas, large_N=0)
    fig = explorer.one_step_figure(st, curves, alphas)
    assert len(fig.axes) == 3
    plt.close(fig)


def _toy_two_step():
    theory = np.array([[1, 1], [1, 2]])
    counts = {"gaussian": np.array([[[1, 1], [2, 2]], [[1, 1], [1, 2]]]),
              "uniform": np.array([[[1, 1], [1, 2]], [[1, 2], [1, 2]]])}
    counts_W1 = {"gaussian": np.array([[1, 1], [0, 1]]), "uniform": np.array([[1, 1], [1, 1]])}
    mean = {k: c.mean(0) for k, c in counts.items()}
    return studies.TwoStepStudy({k: None for k in counts}, 0.01, counts, counts_W1, theory,
                                mean, {k: float(np.mean(m == theory)) for k, m in mean.items()})


def test_added_outliers_subtracts_at_least_one_outlier_of_W1():
    st = _toy_two_step()
    cells = np.array([[True, True], [True, False]])
    got = studies.added_outliers(st, cells)
    # gaussian: seed 0 (alpha_1 row 1 has W1 count 0 -> 1): [0, 0, 1], seed 1: [0, 0, 0]
    # uniform: seed 0 [0, 0, 0], seed 1 [0, 1, 0]
    np.testing.assert_array_equal(got, [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0])
    with pytest.raises(ValueError, match="cells"):
        studies.added_outliers(st, np.ones((3, 2), bool))


def test_match_fraction_against_hand_counts():
    theory = np.array([1, 2, 2, 3])
    counts = np.array([[1, 2, 2, 3], [1, 2, 3, 3]])
    got = studies.match_fraction(counts, theory)
    assert got.hit == pytest.approx(7 / 8)
    # every simulated count against every cell: (1: 1, 2: 2, 3: 1 matches out of 4) per value
    vals = counts.ravel()
    chance = np.mean(vals[:, None] == theory[None, :])
    assert got.chance == pytest.approx(chance)
    assert got.bound > got.chance
    with pytest.raises(ValueError, match="counts"):
        studies.match_fraction(counts[:, :3], theory)


def test_fresh_decay_ratio_is_one_for_inverse_root_overlaps():
    dims = np.array([100, 400, 1600])
    rng = V.generator(0)
    noise = 1 + 0.05 * rng.standard_normal((50, 1))
    fresh = noise * dims**-0.5
    r, se = studies.fresh_decay_ratio(fresh, dims)
    assert r == pytest.approx(1.0) and se < 0.05
    r_flat, _ = studies.fresh_decay_ratio(np.ones((5, 3)) + 0.01 * np.arange(5)[:, None], dims)
    assert r_flat == pytest.approx(16.0)
    with pytest.raises(ValueError, match="fresh"):
        studies.fresh_decay_ratio(np.ones((5, 2)), dims)


def test_fresh_learned_part_recovers_a_learned_component_on_a_floor():
    dims = np.array([250, 500, 1000])
    rng = V.generator(1)
    floors = (7.0, 4.0)  # d q^2 of the noise floor, two configurations
    fresh, reused = [], []
    for f0 in floors:
        q2 = f0 * rng.chisquare(1, (4000, 3)) / dims + 0.01  # kappa^2 = 0.01 on the floor
        fresh.append(np.sqrt(q2))
        reused.append(np.full((10, 3), 0.6))
    k2, se, alt = studies.fresh_learned_part(fresh, reused, dims)
    assert abs(k2 - 0.01) < 4 * se and se < 0.003
    assert alt == pytest.approx(0.04)  # (0.6 / 3)^2
    floor_only = [np.sqrt(f0 * rng.chisquare(1, (4000, 3)) / dims) for f0 in floors]
    k0, se0, _ = studies.fresh_learned_part(floor_only, reused, dims)
    assert abs(k0) < 4 * se0
    with pytest.raises(ValueError):
        studies.fresh_learned_part(fresh, reused[:1], dims)


def test_stein_curves_are_the_theory_functions():
    cs, y = np.array([0.5, 1.0]), np.linspace(-2, 2, 9)
    got = studies.stein_curves(cs, y, 2.0, activations=("tanh",))
    assert set(got.mu) == {("tanh", True), ("tanh", False)}
    from lecnotes.core.targets import HE3
    want = SP.reuse_stein_coefficient(HE3, "tanh", 1.0, 2.0, self_factor=True)
    assert got.mu[("tanh", True)][1] == pytest.approx(want)
    np.testing.assert_allclose(got.T[("tanh", False)],
                               SP.reuse_preprocessing("tanh", 1.0, 2.0, self_factor=False)(y))
    with pytest.raises(ValueError, match="cs"):
        studies.stein_curves([0.0, 1.0], y, 2.0)
    with pytest.raises(ValueError, match="delta"):
        studies.stein_curves(cs, y, -1.0)


def test_reuse_runs_seed_by_configuration_and_figures():
    dims = [40, 60]
    configs = [("tanh", None), ("relu", None), ("tanh", "two-direction"),
               ("relu", "two-direction")]
    runs = studies.reuse_runs(dims, 2.0, 20, 1.0, configs, {None: 2, "two-direction": 2}, rng=5)
    assert set(runs) == set(configs)
    assert runs[("tanh", None)].reuse.new.shape == (2, 2)
    with pytest.raises(ValueError, match="seeds"):
        studies.reuse_runs(dims, 2.0, 20, 1.0, configs, {None: 2})
    curves = studies.stein_curves([0.5, 1.0], np.linspace(-2, 2, 9), 2.0)
    for fig in (explorer.stein_figure(curves, runs), explorer.reuse_figure(dims, runs)):
        assert len(fig.axes) == 2
        plt.close(fig)


def test_taylor_exponents_rows_and_first_step_figure():
    sizes = np.array([40, 60, 80])
    tx = studies.taylor_exponents(sizes, 3, 2, rng=7)
    kinds = [(kind, k) for kind, k, _, _ in tx.rows]
    assert kinds == [("features", 1), ("features", 2), ("second step", 0), ("second step", 1),
                     ("second step", 2)]
    assert set(tx.slopes) == set(kinds)
    fig = explorer.taylor_figure(sizes, tx)
    plt.close(fig)
    step = studies.first_step_spectrum(60, 0.3, rng=1)
    ratio = np.abs(V.generator(0).standard_normal((3, 3))) + 0.1
    fig = explorer.first_step_figure(sizes, ratio, -0.4, step, 60)
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="ratio"):
        explorer.first_step_figure(sizes, ratio[:, :2], -0.4, step, 60)


def test_edge_attribution_iid_surrogate_is_first_order():
    """The iid residual of the step's norm widens the bulk by about sqrt(1 + tau); the parts
    are finite, one value per seed; bad sizes and ranks are ValueErrors."""
    N, alpha = 200, 0.35
    got = studies.edge_attribution(N, alpha, 3, rng=1)
    assert got.iid.shape == got.rows.shape == got.actual.shape == (3,)
    tau = N ** (2 * alpha - 1) * (1 - np.exp(-1))
    assert got.first_order == pytest.approx(np.sqrt(1 + tau))
    assert np.all(got.iid > 1) and np.all(got.actual > 1)
    assert abs(got.iid.mean() - got.first_order) < 0.3 * (got.first_order - 1)
    with pytest.raises(ValueError, match="seeds"):
        studies.edge_attribution(N, alpha, 1)
    with pytest.raises(ValueError, match="ranks"):
        studies.edge_attribution(N, alpha, 2, ranks=(50, 10))
    with pytest.raises(ValueError, match="N"):
        studies.edge_attribution(1.5, alpha, 2)


def test_power_localisation_against_direct_and_limits():
    """Participation ratios of a^(k+1) as the direct formula; for k = 1 the mean of 1/PR is
    close to the ratio of expectations' 105/(9N) (law of large numbers: E a^8 / N (E a^4)^2)."""
    got = studies.power_localisation(2000, 40, 2, rng=3)
    assert got.gaussian.shape == got.bounded.shape == (40, 2)
    a = V.stream(V.generator(3), 0).standard_normal((40, 2000))[0]
    assert got.gaussian[0, 0] == pytest.approx(rmt.localisation(a**2))
    assert np.mean(1 / got.gaussian[:, 0]) == pytest.approx(105 / (9 * 2000), rel=0.1)
    np.testing.assert_allclose(got.expectation, [SP.effective_neurons(k, 2000) for k in (2, 3)])
    assert np.all(np.median(got.bounded, 0) > np.median(got.gaussian, 0))  # light tails
    with pytest.raises(ValueError, match="draws"):
        studies.power_localisation(100, 0)


def test_outlier_localisation_reuses_the_simulations_layers():
    """Seed r's second layer is that of simulate_two_step_counts (same stream): the overlaps of
    the power basis are those of the simulation's vectors."""
    from lecnotes.two_steps import phase

    N = 120
    loc = phase.outlier_localisation(N, 0.25, [0.4], 2, rng=11)
    assert loc.powers.shape == (2, 3) and loc.vectors.shape == (2, 1, 6)
    root = V.generator(11)
    rng = V.stream(root, 0)
    single_index(N, N, "linear", rng=rng)
    _, a = networks.init_params(N, N, rng=rng, symmetric=False, second_layer="gaussian")
    assert loc.powers[0, 0] == pytest.approx(rmt.localisation(a**2))
    assert np.all((loc.vectors >= 1) & (loc.vectors <= N))
    with pytest.raises(ValueError, match="alphas2"):
        phase.outlier_localisation(N, 0.25, [0.6], 1)
