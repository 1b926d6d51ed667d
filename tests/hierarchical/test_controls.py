import numpy as np
import pytest

from lecnotes.hierarchical import controls as C
from lecnotes.hierarchical.layerwise import _stage_two, quadratic_corr


def test_feature_matrix_is_normalised_and_signed():
    B = C.feature_matrix(5, True)
    assert np.linalg.norm(B) == pytest.approx(1.0)
    assert np.allclose(np.diag(B) * np.sqrt(5), [1, -1, 1, -1, 1])
    assert np.allclose(C.feature_matrix(4, False), np.eye(4) / 2)


def test_closed_form_gd_matches_the_loop():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((7, 3))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    Z = rng.standard_normal((40, 3))
    y = rng.standard_normal(40)
    loop = _stage_two(W, Z, y, [40], 50)[0]
    F = ((Z @ W.T) ** 2 - 1) / np.sqrt(2)
    G, m = F.T @ F / 40, F.T @ (y - y.mean()) / 40
    np.testing.assert_allclose(C._gd_from_zero(G, m[:, None], 50)[:, 0], loop, rtol=1e-8,
                               atol=1e-10)


def test_radial_correlation_agrees_with_quadratic_corr():
    rng = np.random.default_rng(1)
    Wl = rng.standard_normal((6, 4))
    Wl /= np.linalg.norm(Wl, axis=1, keepdims=True)
    v = rng.standard_normal(6)
    W = np.concatenate([Wl, np.zeros((6, 5))], axis=1)  # latent space = first 4 coordinates
    got = C._corr(Wl, v, C.feature_matrix(4, False))
    assert got == pytest.approx(quadratic_corr(W, v, 4))


def test_stage_two_control_shapes_and_signal():
    ctl = C.stage_two_control([16, 25], [1.0, 8.0], 3, 0.5, rng=3)
    assert ctl.corr.shape == (2, 3, 2, 2) and ctl.corr_sum.shape == (2, 3, 2)
    assert np.all(ctl.corr_sum[0] > 0.8)  # the uniform layer is close to h
    assert np.all(np.abs(ctl.corr_sum[1, :, 0]) < 0.3)  # and far from h_pm (r = 4)
    assert np.all(ctl.corr[1, :, :, -1] > ctl.corr[1, :, :, 0] - 0.2)
    with pytest.raises(ValueError):
        C.stage_two_control([16], [2.0, 1.0], 1, 0.5)


def test_running_crossing_censors_at_both_ends():
    x = np.array([1.0, 2.0, 4.0])
    vals = np.array([[0.9, 0.8, 0.95], [0.1, 0.5, 0.9], [0.1, 0.2, 0.3]])
    cross, cens = C.running_crossing(x, vals, 0.7)
    assert cens == (1, 1)
    assert cross[0] == pytest.approx(1.0, rel=1e-6) and cross[2] == pytest.approx(4.0)
    assert 2.0 < cross[1] < 4.0


def test_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    from lecnotes.hierarchical import explorer

    ctl = C.stage_two_control([16], [1.0, 2.0], 2, 0.5, rng=0)
    assert explorer.control_figure(ctl) is not None
    e = np.full((2, 1, 3), 0.5)
    assert explorer.wide_rf_figure([16], [1, 2, 4], e, [1, 4], e[:, :, :2], [10], [0.2])
    with pytest.raises(ValueError):
        explorer.wide_rf_figure([16], [1, 2], e, [1, 4], e[:, :, :2], [10], [0.2])
