"""Tests of the first-moment estimators (lecnotes.first_moment.experiments; chapters 0 and 3)."""

import numpy as np
import pytest

from lecnotes.core import overlaps
from lecnotes.core import validate as V
from lecnotes.core.targets import random_orthonormal, single_index
from lecnotes.first_moment import experiments as E

CHAPTERS = (0, 3)  # the chapters whose code these tests cover: make chapter CH=N


def test_first_moment_is_unit_and_matches_formula():
    X, y, w = single_index(100, 5, "relu", rng=0)
    v = E.first_moment(X, y, T=lambda t: t - 1)
    ref = X.T @ (y - 1)
    np.testing.assert_allclose(v, ref / np.linalg.norm(ref))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_first_moment_overlap_matches_the_limit_for_several_seeds(seed):
    # chapter 0 claim "relu-first-moment": rho^2 -> delta/(delta+2) for the ReLU
    d, delta = 800, 4
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(6):
        X, y, w = single_index(delta * d, d, "relu", rng=rng)
        vals.append(overlaps.overlap(E.first_moment(X, y), w) ** 2)
    assert np.mean(vals) == pytest.approx(delta / (delta + 2), abs=0.03)


def test_overlap_properties():
    assert overlaps.overlap([1.0, 0.0], [0.0, 2.0]) == 0.0
    assert overlaps.overlap([-3.0, 0.0], [1.0, 0.0]) == 1.0
    assert overlaps.overlap([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / np.sqrt(2))


def test_subspace_overlap():
    W = random_orthonormal(2, 10, rng=0)
    assert overlaps.subspace_overlap(W, W) == pytest.approx(1.0)
    assert overlaps.subspace_overlap(W[:1], W) == pytest.approx(0.5)
    assert overlaps.subspace_overlap(3 * W[::-1], W) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: E.first_moment(np.zeros((3, 2)), np.zeros(4)),
        lambda: E.first_moment(np.zeros((3, 2)), np.zeros(3)),
        lambda: E.first_moment(np.ones((3, 2)), np.ones(3), T="abs"),
        lambda: E.first_moment(np.ones((3, 2)), np.ones(3), T=lambda y: y[:2]),
        lambda: E.first_moment(np.ones((3, 2)), np.array([1.0, np.nan, 2.0])),
        lambda: overlaps.overlap([0.0, 0.0], [1.0, 0.0]),
        lambda: overlaps.overlap([1.0], [1.0, 0.0]),
        lambda: overlaps.subspace_overlap(np.zeros((1, 3)), np.eye(3)[:1]),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- chapter 3: gradient step = first-moment estimator ------------------------------------
def test_loss_preprocessing_closed_forms():
    y = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(E.loss_preprocessing("square")(y), y)
    np.testing.assert_allclose(E.loss_preprocessing("square", f0=0.5)(y), y - 0.5)
    np.testing.assert_allclose(E.loss_preprocessing("huber")(y), np.clip(y, -1, 1))
    np.testing.assert_allclose(E.loss_preprocessing("correlation")(y), y)
    np.testing.assert_allclose(E.loss_preprocessing("logistic")(np.array([-1.0, 1.0])),
                               [-0.5, 0.5])


@pytest.mark.parametrize("loss", ["square", "huber", "correlation"])
def test_gradient_at_zero_is_the_first_moment_estimator(loss):
    X, y, _ = single_index(500, 20, "he3", rng=1)
    g = E.single_neuron_gradient(X, y, np.zeros(20), activation="tanh", loss=loss)
    # T written out (not through the loss table): -d/df of the loss at f = tanh(0) = 0
    T = {"square": lambda t: t, "huber": lambda t: np.clip(t, -1, 1), "correlation": lambda t: t}
    np.testing.assert_allclose(-g, X.T @ T[loss](y) / 500, atol=1e-12)


def test_single_neuron_gradient_matches_finite_differences():
    X, y, _ = single_index(60, 5, "tanh", rng=2)
    w = np.random.default_rng(3).standard_normal(5) * 0.3

    def risk(w):
        return np.mean(0.5 * (y - np.tanh(X @ w)) ** 2)

    g = E.single_neuron_gradient(X, y, w, activation="tanh", loss="square")
    eps = 1e-6
    fd = np.array([(risk(w + eps * e) - risk(w - eps * e)) / (2 * eps) for e in np.eye(5)])
    np.testing.assert_allclose(g, fd, atol=1e-8)


def test_simulate_first_moment_overlaps_shapes_and_reproducibility():
    pre = {"raw": None, "clip": lambda y: np.clip(y, -1, 1)}
    a = E.simulate_first_moment_overlaps("relu", [20, 40], [1.0, 2.0, 4.0], pre, seeds=3, rng=0)
    b = E.simulate_first_moment_overlaps("relu", [20, 40], [1.0, 2.0, 4.0], pre, seeds=3, rng=0)
    assert a["raw"].shape == (3, 2, 3)  # seeds on axis 0
    np.testing.assert_array_equal(a["clip"], b["clip"])
    assert np.all((a["raw"] >= 0) & (a["raw"] <= 1))


def test_simulate_first_moment_overlaps_streams_are_keyed_by_size_and_seed():
    pre = {"raw": None}
    both = E.simulate_first_moment_overlaps("relu", [20, 40], [1.0, 2.0], pre, seeds=3, rng=7)
    one = E.simulate_first_moment_overlaps("relu", [40], [1.0, 2.0], pre, seeds=2, rng=7)
    np.testing.assert_array_equal(both["raw"][:2, 1], one["raw"][:, 0])
    other = E.simulate_first_moment_overlaps("relu", [40], [1.0, 2.0], pre, seeds=2, rng=8)
    assert not np.array_equal(other["raw"], one["raw"])


def _one_link_by_hand(link, dims, deltas, pre, seeds, noise, rng):
    """The first loop of the book: one data set per (d, delta, seed) from single_index."""
    out = {name: np.empty((seeds, len(dims), len(deltas))) for name in pre}
    for i, d in enumerate(dims):
        for r in range(seeds):
            gen = V.stream(rng, d, r)
            for j, delta in enumerate(deltas):
                X, y, w = single_index(max(1, round(delta * d)), d, link, noise=noise, rng=gen)
                for name, T in pre.items():
                    out[name][r, i, j] = overlaps.overlap(E.first_moment(X, y, T), w) ** 2
    return out


@pytest.mark.parametrize("noise", [0.0, 0.3])
def test_links_on_shared_inputs_give_each_link_its_own_run(noise):
    # one draw of the inputs for every link: number for number what each link gives alone,
    # and what single_index's data give (direction, inputs, then noise from one stream)
    pre = {"raw": None, "clip": lambda y: np.clip(y, -1, 1)}
    dims, deltas = [13, 30], [0.5, 0.77, 2.5, 3.0]  # n = 6.5 -> 6, 10.01, 32.5 -> 32, ...
    links = ["relu", "quadratic", np.tanh]
    runs = E.simulate_first_moment_overlaps_by_link(links, dims, deltas, pre, seeds=3,
                                                    noise=noise, rng=5)
    assert list(runs) == links
    for link in links:
        alone = E.simulate_first_moment_overlaps(link, dims, deltas, pre, seeds=3, noise=noise,
                                                 rng=5)
        by_hand = _one_link_by_hand(link, dims, deltas, pre, 3, noise, 5)
        for name in pre:
            np.testing.assert_array_equal(runs[link][name], alone[name])
            np.testing.assert_array_equal(runs[link][name], by_hand[name])
    for bad in (["relu", "relu"], [], "relu", [["relu"]]):
        with pytest.raises(ValueError):
            E.simulate_first_moment_overlaps_by_link(bad, dims, deltas, pre, rng=0)


def test_a_link_that_writes_into_its_argument_changes_no_other_link():
    def clip_in_place(u):
        return np.clip(u, -0.5, 0.5, out=u)

    pre = {"raw": None}
    both = E.simulate_first_moment_overlaps_by_link([clip_in_place, "quadratic"], [20], [2.0],
                                                    pre, seeds=2, rng=1)
    alone = E.simulate_first_moment_overlaps("quadratic", [20], [2.0], pre, seeds=2, rng=1)
    np.testing.assert_array_equal(both["quadratic"]["raw"], alone["raw"])
    empty = E.simulate_first_moment_overlaps("relu", [], [1.0], pre, seeds=2, rng=1)
    assert empty["raw"].shape == (2, 0, 1)


def test_simulate_first_moment_overlaps_follows_the_relu_limit():
    deltas = np.array([1.0, 4.0])
    sims = E.simulate_first_moment_overlaps("relu", [600], deltas, {"raw": None}, seeds=4, rng=3)
    np.testing.assert_allclose(sims["raw"][:, 0].mean(0), deltas / (deltas + 2), atol=0.05)


def test_step_versus_estimator_at_zero_and_small_init():
    X, y, w_star = single_index(800, 50, "he3", rng=4)
    w0 = np.random.default_rng(5).standard_normal(50) * 1e-3
    rows = E.step_versus_estimator(X, y, w_star, {"zero": np.zeros(50), "small": w0})
    assert [(r.loss, r.init) for r in rows] == [("square", "zero"), ("square", "small"),
                                                ("huber", "zero"), ("huber", "small")]
    assert rows[0].one_minus_cos < 1e-12 and rows[2].one_minus_cos < 1e-12
    assert 0 < rows[1].one_minus_cos < 1e-3
    # the Huber step at w = 0 is the clipped-label estimator: same overlap with w*
    v = X.T @ np.clip(y, -1, 1)
    assert rows[2].overlap == pytest.approx(abs(v @ w_star) / np.linalg.norm(v), rel=1e-10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: E.loss_preprocessing("nope"),
        lambda: E.single_neuron_gradient(np.ones((3, 2)), np.ones(3), np.zeros(3)),
        lambda: E.single_neuron_gradient(np.ones((3, 2)), np.ones(3), np.zeros(2), "nope"),
        lambda: E.simulate_first_moment_overlaps("relu", [10], [0.0], {"raw": None}, rng=0),
        lambda: E.simulate_first_moment_overlaps("relu", [10], [1.0], {}, rng=0),
        lambda: E.simulate_first_moment_overlaps("relu", [0], [1.0], {"raw": None}, rng=0),
    ],
)
def test_chapter3_bad_input(call):
    with pytest.raises(ValueError):
        call()


# --- chapter 3: identities of the code (the former claims step-equals-estimator-*) ---------
@pytest.mark.parametrize("loss", ["square", "huber"])
def test_step_from_zero_is_parallel_to_the_estimator(loss):
    X, y, w_star = single_index(3200, 400, "he3", rng=11)
    (row,) = E.step_versus_estimator(X, y, w_star, {"zero": np.zeros(400)}, losses=[loss])
    assert abs(row.one_minus_cos) < 1e-12


def test_hessian_at_zero_is_the_second_moment_matrix():
    # eq-ch3-hessian: square loss, sigma(u) = u + u^2/2 (sigma(0) = 0, sigma'(0) = sigma''(0) = 1)
    # gives T_2(y) = 1 - y; the Hessian is checked by central differences of the gradient
    X, y, _ = single_index(300, 6, "he3", rng=3)
    act = (lambda u: u + u**2 / 2, lambda u: 1 + u)
    h = 1e-6
    H = np.column_stack([
        (E.single_neuron_gradient(X, y, h * e, activation=act)
         - E.single_neuron_gradient(X, y, -h * e, activation=act)) / (2 * h)
        for e in np.eye(6)])
    D = (X * (1 - y)[:, None]).T @ X / 300
    np.testing.assert_allclose(H, D, atol=1e-7)


@pytest.mark.parametrize("link,T", [("he3", None), ("relu", lambda t: t - 0.3)])
def test_reduction_has_the_law_of_the_full_simulation(link, T):
    # prop-ch3-reduction: same law of rho^2 (two-sample Kolmogorov-Smirnov test)
    from scipy.stats import ks_2samp

    full = E.simulate_first_moment_overlaps(link, [20], [2.0], {"t": T}, seeds=300, rng=1)["t"]
    red = E.reduced_first_moment_overlaps(link, [20], [2.0], {"t": T}, replicates=3000, rng=2)
    assert ks_2samp(full.ravel(), red["t"].ravel()).pvalue > 1e-3


def test_reduction_draws_are_keyed_and_validated():
    a = E.reduced_first_moment_overlaps("relu", [10, 20], [1.0], {"y": None}, replicates=5,
                                        rng=0)["y"]
    b = E.reduced_first_moment_overlaps("relu", [20], [1.0], {"y": None}, replicates=5,
                                        rng=0)["y"]
    np.testing.assert_allclose(a[:, 1], b[:, 0])
    with pytest.raises(ValueError):
        E.reduced_first_moment_overlaps("relu", [1], [1.0], {"y": None})
    with pytest.raises(ValueError):
        E.reduced_first_moment_overlaps("relu", [5], [-1.0], {"y": None})


def test_gradient_step_sweep_shapes_and_square_step_at_noise_level():
    r = E.gradient_step_sweep("he3", 50, 400, 3, rng=0)
    assert r.overlap.shape == r.small_init_ratio.shape == (3, 2)
    assert np.all(r.overlap[:, 1] > 0.5) and np.all(r.small_init_ratio[:, 0] > 0)
