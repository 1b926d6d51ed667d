"""The two-feature target of chapter 10 (def-ch10-might) and its second stage."""

import numpy as np
import pytest

from lecnotes.hierarchical import multi_index as MI


def test_form_coordinates_are_orthonormal_and_carry_the_features():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200_000, 4))
    U = MI.form_coordinates(Z)
    assert U.shape == (200_000, 10)
    np.testing.assert_allclose(np.cov(U.T), np.eye(10), atol=0.03)
    E = MI.feature_directions(4)
    np.testing.assert_allclose(E.T @ E, np.eye(2), atol=1e-12)
    s = np.sum(Z * Z, axis=1)
    np.testing.assert_allclose(U @ E[:, 0], (s - 4) / np.sqrt(8), atol=1e-9)
    signed = (Z[:, 0] ** 2 - Z[:, 1] ** 2 + Z[:, 2] ** 2 - Z[:, 3] ** 2) / np.sqrt(8)
    np.testing.assert_allclose(U @ E[:, 1], signed, atol=1e-9)


def test_the_first_moment_does_not_see_the_second_feature():
    """E[y h_2] = 0 by the swap of odd and even latent coordinates."""
    Z, y = MI.sample_might(6, 200_000, 0.5, rng=1)
    h = MI.form_coordinates(Z) @ MI.feature_directions(6)
    assert abs(np.mean(y * h[:, 1])) < 4 * np.std(y * h[:, 1]) / np.sqrt(len(y))
    assert np.mean(y * h[:, 0]) > 1.0


def test_law_and_formulas():
    law = MI.might_law(8, 0.5, samples=20_000, bins=50)
    assert np.isclose(np.sum(law.w), 1.0) and np.all(np.diff(law.t) >= 0)
    q = MI.spectral_overlap([0.1, 4.0, 32.0], law)
    assert q[0] == 0.0 and 0 < q[1] < q[2] < 1
    f = MI.first_moment_overlap([1.0, 32.0], law, 8)
    assert 0 < f[0] < f[1] < 1
    dc = MI.spectral_crossing(1e-3, law)
    assert MI.spectral_overlap(0.9 * dc, law)[0] == 0.0
    assert MI.spectral_overlap(1.2 * dc, law)[0] > 0.0
    gauss = MI.might_law(8, 0.5, samples=20_000, bins=50, gaussian=True)
    assert MI.spectral_crossing(1e-3, gauss) < dc  # finite r: a later threshold


def test_sweep_is_nested_and_bounded():
    sw = MI.might_sweep([4, 6], [2.0, 8.0], 2, 0.5, rng=3)
    for a in (sw.first, sw.first_e2, sw.spectral, sw.span, sw.span_first,
              sw.spectral_est[..., ::2]):
        assert a.shape[:2] == (2, 2) and np.all((a >= 0) & (a <= 1 + 1e-12))
    assert np.all(sw.span_first <= 0.5 + 1e-12)
    again = MI.might_sweep([6], [8.0], 2, 0.5, rng=3)
    np.testing.assert_allclose(again.spectral[:, 0, 0], sw.spectral[:, 1, 1], rtol=1e-9)


@pytest.mark.parametrize("bad", [3, 1, 0])
def test_bad_ranks(bad):
    with pytest.raises(ValueError):
        MI.feature_directions(bad)
    with pytest.raises(ValueError):
        MI.might_sweep([bad], [1.0], 2, 0.5)


def test_bad_arguments():
    with pytest.raises(ValueError):
        MI.might_sweep([4], [2.0, 1.0], 2, 0.5)
    law = MI.might_law(4, 0.5, samples=2000, bins=10)
    with pytest.raises(ValueError):
        MI.spectral_overlap([-1.0], law)
    with pytest.raises(ValueError):
        MI.spectral_crossing(0.99, law)
    with pytest.raises(ValueError):
        MI.sample_might(4, 10, np.nan)
