"""Tests of the chapter-6 additions to lecnotes.networks (giant steps, overlaps, theory)."""

import math

import numpy as np
import pytest

from lecnotes import activations as ACT
from lecnotes import giant_steps as GS
from lecnotes import giant_steps_theory as GT
from lecnotes import linalg, overlaps, rmt
from lecnotes import networks as N
from lecnotes.targets import random_orthonormal, single_index

CHAPTERS = (6,)  # the chapters whose code these tests cover: make chapter CH=N


def _relu_pair(shift):
    return (lambda u: np.maximum(u + shift, 0.0), lambda u: (u + shift > 0).astype(float))


def _net(p, d, seed, second_layer="sign"):
    return N.init_params(p, d, rng=seed, symmetric=False, second_layer=second_layer,
                         a_scale=p**-0.5)


# --- step size, preprocessing -----------------------------------------------------------------
def test_giant_step_size_and_reference_convention():
    assert N.giant_step_size(1024, 2048, 512) == pytest.approx(1024 * 2.0)
    # the reference code's eta = 10 sqrt(n p) is eta0 = 10 sqrt(d / p)
    assert N.giant_step_size(1024, 3326, 512, 10 * math.sqrt(512 / 1024)) == pytest.approx(
        10 * math.sqrt(3326 * 1024))
    for bad in [(0, 4, 4), (4, 0, 4), (4, 4, 0), (4, 4, 4, -1.0), (4.5, 4, 4)]:
        with pytest.raises(ValueError):
            N.giant_step_size(*bad)


def test_remove_linear_part_formula():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y = rng.standard_normal(50) + 3.0
    res, A, B = N.remove_linear_part(X, y)
    assert A == pytest.approx(y.mean())
    np.testing.assert_allclose(B, np.mean(y[:, None] * X, axis=0))
    np.testing.assert_allclose(res, y - A - X @ B)
    with pytest.raises(ValueError):
        N.remove_linear_part(X, y[:-1])


# --- overlap measures ------------------------------------------------------------------------
def test_neuron_overlaps_and_gram():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((7, 5))
    S = rng.standard_normal((2, 5))
    C = overlaps.neuron_overlaps(W, S)
    explicit = np.array([[w @ s / np.linalg.norm(w) / np.linalg.norm(s) for s in S] for w in W])
    np.testing.assert_allclose(C, explicit)
    # scale invariance, 1-d W_star
    np.testing.assert_allclose(overlaps.neuron_overlaps(3.0 * W, S[0]), explicit[:, 0])
    Q = overlaps.overlap_gram(W, S)
    np.testing.assert_allclose(Q, explicit.T @ explicit / 7)
    assert np.all(np.linalg.eigvalsh(Q) >= -1e-12)
    aligned = np.outer(rng.choice([-1.0, 1.0], 6), np.eye(5)[0])  # every neuron along e_1
    np.testing.assert_allclose(overlaps.overlap_gram(aligned, np.eye(5)[:2]), np.diag([1.0, 0.0]))
    for bad in [(W, S[:, :4]), (np.zeros((3, 5)), S), (W, np.zeros(5)), (W[None], S)]:
        with pytest.raises(ValueError):
            overlaps.neuron_overlaps(*bad)


def test_subspace_energy():
    S = random_orthonormal(2, 6, rng=0)
    inside = np.array([[2.0, -1.0], [0.3, 0.0]]) @ S
    np.testing.assert_allclose(overlaps.subspace_energy(inside, S), 1.0)
    outside = np.linalg.qr(np.vstack([S, np.eye(6)]).T)[0][:, 2:4].T
    np.testing.assert_allclose(overlaps.subspace_energy(outside, S), 0.0, atol=1e-12)
    # a non-orthonormal basis of the same plane gives the same energies
    W = np.random.default_rng(3).standard_normal((5, 6))
    np.testing.assert_allclose(overlaps.subspace_energy(W, np.array([[1.0, 2.0], [0.0, 3.0]]) @ S),
                               overlaps.subspace_energy(W, S))
    with pytest.raises(ValueError):
        overlaps.subspace_energy(W, np.zeros((2, 6)))


@pytest.mark.parametrize("shape", [(40, 30), (700, 300)])
def test_top_singular_matches_lapack(shape):
    W = np.random.default_rng(4).standard_normal(shape)
    W[:, 0] += 5.0  # a clear top singular value
    s, Vt = linalg.top_singular(W, 2)
    _, s_ref, Vt_ref = np.linalg.svd(W, full_matrices=False)
    np.testing.assert_allclose(s, s_ref[:2], rtol=1e-8)
    np.testing.assert_allclose(np.abs(Vt @ Vt_ref[:2].T), np.eye(2), atol=1e-6)
    assert np.all(Vt[np.arange(2), np.argmax(np.abs(Vt), axis=1)] > 0)  # sign convention
    with pytest.raises(ValueError):
        linalg.top_singular(W, 0)
    with pytest.raises(ValueError):
        linalg.top_singular(W[:3, :3], 4)


# --- moments and one-step theory -----------------------------------------------------------------
def test_activation_moments_closed_forms():
    m = ACT.activation_moments("relu")
    assert (m.mu1, m.m2, m.var) == pytest.approx((0.5, 0.5, 0.25), abs=1e-10)
    assert m.beta1 == pytest.approx(1 / math.sqrt(2 * math.pi), abs=1e-10)
    assert m.lambda3 == pytest.approx(0.0, abs=1e-10)  # bias-free ReLU: no third coefficient
    lin = ACT.activation_moments("linear")
    assert (lin.mu1, lin.beta1, lin.m2, lin.var, lin.lambda3) == pytest.approx((1, 0, 1, 0, 0),
                                                                              abs=1e-10)
    # ReLU with bias c: mu1 = Phi(c), beta1 = phi(c), lambda_3 = E[1{G > -c} He_2(G)] = -c phi(c)
    c = 0.7
    mb = ACT.activation_moments(_relu_pair(c), breakpoints=(-c,))
    phi = math.exp(-c * c / 2) / math.sqrt(2 * math.pi)
    assert mb.mu1 == pytest.approx(0.5 * (1 + math.erf(c / math.sqrt(2))), abs=1e-10)
    assert mb.beta1 == pytest.approx(phi, abs=1e-10)
    assert mb.lambda3 == pytest.approx(-c * phi, abs=1e-10)
    with pytest.raises(ValueError):
        ACT.activation_moments("softplus")


def test_one_step_neuron_overlap_closed_form_and_bad_input():
    # linear link: c1 = 1, E y^2 = 1, E y = 0; ReLU: mu1 = 1/2, m2 = 1/2
    eb, delta = 1.5, 3.0
    expected = eb * 0.5 / math.sqrt(1 + eb**2 * (0.25 + 0.5 / delta))
    assert GT.one_step_neuron_overlap("linear", eb, delta) == pytest.approx(expected, rel=1e-9)
    assert GT.one_step_neuron_overlap("linear", eb, delta, b=-1.0) == pytest.approx(expected)
    # the overlap grows with the batch size
    vals = [GT.one_step_neuron_overlap("linear", eb, dl) for dl in (1, 4, 16, 64)]
    assert np.all(np.diff(vals) > 0)
    for bad in [dict(eta_bar=0.0), dict(eta_bar=1.0, delta=-1.0), dict(eta_bar=1.0, b=0.0)]:
        kw = {"delta": 2.0, **bad}
        with pytest.raises(ValueError):
            GT.one_step_neuron_overlap("linear", **kw)


def test_one_step_overlap_and_spike_match_simulation():
    """The chapter's claims neuron-overlap-theory and spike-location, on other seeds."""
    def link(u):
        return np.tanh(2 * u)

    d, p, delta, eb = 256, 512, 4, 2.0
    cos, s1, rho = [], [], []
    for seed in (101, 102, 103):
        rng = np.random.default_rng(seed)
        X, y, w = single_index(delta * d, d, link, rng=rng)
        W0, a0 = _net(p, d, rng)
        W1 = N.giant_step(W0, a0, X, y, eb * p, scaling=p**-0.5)
        s, Vt = linalg.top_singular(W1, 1)
        cos.append(np.abs(overlaps.neuron_overlaps(W1, w)).mean())
        s1.append(s[0])
        rho.append(abs(Vt[0] @ w))
    th = GT.one_step_spike(link, eb, delta, p, d)
    assert np.mean(cos) == pytest.approx(GT.one_step_neuron_overlap(link, eb, delta), abs=0.02)
    assert np.mean(s1) == pytest.approx(th["s1"], rel=0.03)
    assert np.mean(rho) == pytest.approx(th["rho"], abs=0.03)


def test_leap2_overlap_scalings_and_checks():
    def h2(u):
        return (u * u - 1) / math.sqrt(2)

    # n = 4d, eta_bar fixed: C / d with C independent of d
    c = [d * GT.leap2_neuron_overlap(h2, 2.0, 4 * d, d) for d in (256, 1024, 4096)]
    assert c[1] == pytest.approx(c[2], rel=0.02) and c[0] == pytest.approx(c[2], rel=0.05)
    # closed form of the n = 4d limit: (1 + eta^2 a^2 + eta^2 E[y^2 G^2] m2 / delta) /
    # (1 + eta^2 E[y^2] m2 / delta) with a = sqrt(2) c2 beta1, c2 = 1, E[y^2 G^2] = 5
    a = math.sqrt(2) / math.sqrt(2 * math.pi)
    limit = (1 + 4 * a * a + 4 * 5 * 0.5 / 4) / (1 + 4 * 0.5 / 4)
    assert c[2] == pytest.approx(limit, rel=0.01)
    # n = d^2 and eta_bar = sqrt(n / d): a d-independent constant of order one
    v = [GT.leap2_neuron_overlap(h2, math.sqrt(d), d * d, d) for d in (100, 400, 1600)]
    assert v[1] == pytest.approx(v[2], rel=0.1) and 0.05 < v[2] < 1
    with pytest.raises(ValueError):  # a linear part is not leap 2
        GT.leap2_neuron_overlap("relu", 1.0, 100, 10)
    with pytest.raises(ValueError):
        GT.leap2_neuron_overlap(h2, -1.0, 100, 10)


def test_bulk_variance_and_gaussian_singular_values():
    assert GT.one_step_bulk_variance("linear", 2.0, 4.0) == pytest.approx(1 + 4 * 1 * 0.25 / 4)
    with pytest.raises(ValueError):
        GT.one_step_bulk_variance("relu", 1.0, 2.0)  # not centred
    rng = np.random.default_rng(5)
    for p, d in [(600, 300), (300, 600), (400, 400)]:
        lo, hi = rmt.gaussian_singular_value_edges(p, d, 1.7)
        grid = np.linspace(lo, hi, 200001)
        dens = rmt.gaussian_singular_value_density(grid, p, d, 1.7)
        assert np.sum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid)) == pytest.approx(1, abs=2e-3)
        s = np.sort(np.linalg.svd(rng.standard_normal((p, d)) * np.sqrt(1.7 / d),
                                  compute_uv=False))
        cdf = rmt.gaussian_singular_value_cdf(s, p, d, 1.7)
        assert np.all(np.diff(cdf) >= 0)
        assert np.max(np.abs(np.arange(1, len(s) + 1) / len(s) - cdf)) < 0.02
        assert s[-1] == pytest.approx(hi, rel=0.03)
    assert rmt.gaussian_singular_value_cdf(np.array([-1.0, 100.0]), 6, 3) == pytest.approx([0, 1])
    with pytest.raises(ValueError):
        rmt.gaussian_singular_value_density([1.0], 10, 5, variance=0.0)


def test_spiked_rectangular_matches_simulation():
    rng = np.random.default_rng(6)
    p, d, v, theta = 900, 300, 1.3, 4.0
    out = []
    for _ in range(3):
        u = rng.standard_normal(p)
        u /= np.linalg.norm(u)
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        M = rng.standard_normal((p, d)) * np.sqrt(v / d) + theta * np.outer(u, w)
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        out.append([s[0], (Vt[0] @ w) ** 2, (U[:, 0] @ u) ** 2])
    s1, r_right, r_left = rmt.spiked_rectangular(theta, p, d, v)
    np.testing.assert_allclose(np.mean(out, axis=0), [s1, r_right, r_left], rtol=0.03)
    # transposing the problem swaps the roles of the two overlaps
    s1t, rr, rl = rmt.spiked_rectangular(theta, d, p, v * p / d)  # the same matrix, transposed
    assert s1t == pytest.approx(s1, rel=1e-12)
    assert (rr, rl) == pytest.approx((r_left, r_right))
    # below the threshold: the edge, no overlap
    lo, hi = rmt.gaussian_singular_value_edges(p, d, v)
    assert rmt.spiked_rectangular(0.1, p, d, v) == pytest.approx((hi, 0.0, 0.0))


# --- chunks and the two-phase procedure ---------------------------------------------------------
def test_chunked_gradient_and_ridge_agree():
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((103, 6)), rng.standard_normal(103)
    W, a = _net(8, 6, 0, "gaussian")
    for loss in ("square", "correlation"):
        np.testing.assert_allclose(
            N.first_layer_gradient(W, a, X, y, scaling=8**-0.5, loss=loss, chunk=10),
            N.first_layer_gradient(W, a, X, y, scaling=8**-0.5, loss=loss), rtol=1e-10,
            atol=1e-14)
    np.testing.assert_allclose(N.giant_step(W, a, X, y, 3.0, chunk=17),
                               N.giant_step(W, a, X, y, 3.0))
    np.testing.assert_allclose(N.ridge_second_layer(W, X, y, 0.1, scaling=0.5, chunk=20),
                               N.ridge_second_layer(W, X, y, 0.1, scaling=0.5), rtol=1e-9)
    with pytest.raises(ValueError):
        N.first_layer_gradient(W, a, X, y, chunk=0)
    with pytest.raises(ValueError):
        N.ridge_second_layer(W, X, y, 0.1, chunk=-3)


def test_two_phase_matches_its_parts():
    rng = np.random.default_rng(8)
    d, p = 10, 16
    batches = [(rng.standard_normal((40, d)), rng.standard_normal(40) + 1.0) for _ in range(2)]
    Xr, yr = rng.standard_normal((30, d)), rng.standard_normal(30) + 1.0
    W0, a0 = _net(p, d, 1)
    res = GS.two_phase(W0, a0, batches, (Xr, yr), 5.0, 0.01, scaling=p**-0.5)
    Ws = N.multi_step(W0, a0, batches, 5.0, scaling=p**-0.5)
    np.testing.assert_allclose(res.W, Ws[-1])
    a = N.ridge_second_layer(Ws[-1], Xr, yr, 0.01, scaling=p**-0.5)
    np.testing.assert_allclose(res.a, a)
    Xt = rng.standard_normal((5, d))
    np.testing.assert_allclose(res.predict(Xt), N.forward(Ws[-1], a, Xt, "relu", p**-0.5))
    # with the linear part removed: steps on residual labels, offset and slope added back
    res2 = GS.two_phase(W0, a0, batches, (Xr, yr), 5.0, 0.01, scaling=p**-0.5,
                       remove_linear=True)
    W1 = N.giant_step(W0, a0, batches[0][0], N.remove_linear_part(*batches[0])[0], 5.0,
                      scaling=p**-0.5)
    np.testing.assert_allclose(res2.Ws[0], W1)
    r, A, B = N.remove_linear_part(Xr, yr)
    a2 = N.ridge_second_layer(res2.W, Xr, r, 0.01, scaling=p**-0.5)
    np.testing.assert_allclose(res2.predict(Xt), A + Xt @ B + N.forward(res2.W, a2, Xt, "relu",
                                                                         p**-0.5))
    with pytest.raises(ValueError):
        GS.two_phase(W0, a0, [], (Xr, yr), 1.0, 0.1)
    with pytest.raises(ValueError):
        GS.two_phase(W0, a0, batches, (Xr, yr[:-1]), 1.0, 0.1)


def test_leap2_claim_on_other_seeds():
    """The chapter's claim leap2-one-over-d-constant (d E[cos^2] at n = 4d) on other seeds.

    Per seed the mean over neurons has a heavy right tail (the part of the gradient shared by
    all neurons is a single chi-square variable), hence 24 seeds; 400 seeds at d = 128 put the
    mean 4.5% below the d -> infinity formula, the finite-d bias allowed here.
    """
    def h2(u):
        return (u * u - 1) / math.sqrt(2)

    d, p = 128, 128
    vals = []
    for seed in range(24):
        rng = np.random.default_rng(1000 + seed)
        X, y, w = single_index(4 * d, d, h2, rng=rng)
        W0, a0 = _net(p, d, rng)
        W1 = N.giant_step(W0, a0, X, y, 2.0 * p, scaling=p**-0.5)
        vals.append(d * np.mean(overlaps.neuron_overlaps(W1, w) ** 2))
    m, se = np.mean(vals), np.std(vals, ddof=1) / np.sqrt(len(vals))
    theory = d * GT.leap2_neuron_overlap(h2, 2.0, 4 * d, d)
    assert abs(m - theory) <= 3 * se + 0.05 * theory


@pytest.mark.parametrize("n,p", [(40, 12), (12, 40)])
def test_ridge_path_matches_single_ridges(n, p):
    rng = np.random.default_rng(9)
    X, y = rng.standard_normal((n, 5)), rng.standard_normal(n)
    W = rng.standard_normal((p, 5))
    lams = [1e-3, 0.1, 2.0]
    A = N.ridge_second_layer_path(W, X, y, lams, scaling=0.3)
    for a, lam in zip(A, lams, strict=True):
        np.testing.assert_allclose(a, N.ridge_second_layer(W, X, y, lam, scaling=0.3),
                                   rtol=1e-7, atol=1e-10)
    for bad in ([], [0.0], [-1.0, 1.0]):
        with pytest.raises(ValueError):
            N.ridge_second_layer_path(W, X, y, bad)
    with pytest.raises(ValueError):
        N.ridge_second_layer_path(W[:, :4], X, y, lams)
