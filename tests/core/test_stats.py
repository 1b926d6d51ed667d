"""Tests of the foundation's statistics over seeds and of the rng convention (_validate)."""

import numpy as np
import pytest

from lecnotes.core import stats
from lecnotes.core import validate as V

CHAPTERS = ()  # foundation used by every chapter; make check runs it


def test_t_factor_matches_tables():
    assert stats.t_factor(5, level=0.99) == pytest.approx(4.604, abs=1e-3)  # t_{4, 0.995}
    assert stats.CLAIM_LEVEL == 0.999  # the book-wide default: 1e-3 false failures per claim
    assert stats.t_factor(5) == pytest.approx(8.610, abs=1e-3)  # t_{4, 0.9995}
    assert stats.t_factor(30, level=0.95) == pytest.approx(2.045, abs=1e-3)
    with pytest.raises(ValueError):
        stats.t_factor(1)
    with pytest.raises(ValueError):
        stats.t_factor(5, level=1.0)


def test_slopes_over_seeds_recovers_each_seeds_exponent():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    values = np.array([3 * x**-0.5, 2 * x**-0.7, x**-0.6])
    m, se = stats.slopes_over_seeds(x, values)
    assert m == pytest.approx(-0.6) and se == pytest.approx(0.1 / np.sqrt(3))


def test_max_abs_z_finds_the_worst_entry():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((400, 3)) + np.array([0.0, 0.0, 0.5])
    z = stats.max_abs_z(s, np.zeros(3))
    assert z > 6  # the shifted entry is ten standard errors away
    assert stats.max_abs_z(s, np.array([0.0, 0.0, 0.5])) < 4
    with pytest.raises(ValueError):
        stats.max_abs_z(s[:1], 0.0)


def test_ks_distance_of_uniform_samples():
    grid = np.linspace(0, 1, 201)
    u = (np.arange(1000) + 0.5) / 1000  # the quantiles of the uniform law
    assert stats.ks_distance(u, grid, np.ones_like(grid)) <= 1e-3 + 1e-12
    assert stats.ks_distance(u**2, grid, np.ones_like(grid)) == pytest.approx(0.25, abs=0.01)
    with pytest.raises(ValueError):
        stats.ks_distance(u, grid[::-1], np.ones_like(grid))


def test_integer_seed_at_root_zero_is_numpys_default_rng(monkeypatch):
    monkeypatch.delenv(V.SEED_ENV, raising=False)
    a = V.generator(7).standard_normal(4)
    assert np.array_equal(a, np.random.default_rng(7).standard_normal(4))
    g = np.random.default_rng(3)
    assert V.generator(g) is g


def test_seed_root_gives_an_independent_book(monkeypatch):
    monkeypatch.setenv(V.SEED_ENV, "3")
    a = V.generator(7).standard_normal(4)
    s = V.stream(7, 2).standard_normal(4)
    monkeypatch.setenv(V.SEED_ENV, "0")
    assert not np.allclose(a, V.generator(7).standard_normal(4))
    assert not np.allclose(s, V.stream(7, 2).standard_normal(4))
    for bad in ("-1", "x"):
        monkeypatch.setenv(V.SEED_ENV, bad)
        with pytest.raises(ValueError):
            V.seed_root()


def test_streams_are_named_by_their_keys():
    one = V.stream(5, 100, 2).standard_normal(3)
    # the stream of (size 100, seed 2) is the same whichever other streams were drawn
    _ = [V.stream(5, d, s).standard_normal(3) for d in (50, 200) for s in range(4)]
    assert np.array_equal(one, V.stream(5, 100, 2).standard_normal(3))
    assert np.array_equal(one, V.stream(np.random.default_rng(5), 100, 2).standard_normal(3))
    assert not np.allclose(one, V.stream(5, 100, 3).standard_normal(3))
    g = V.streams(5, 3)
    assert np.array_equal(g[1].standard_normal(3), V.stream(5, 1).standard_normal(3))
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError):
            V.stream(5, bad)
    with pytest.raises(ValueError):
        V.generator("seed")


def test_list_seeds_follow_numpy_and_the_root(monkeypatch):
    monkeypatch.delenv(V.SEED_ENV, raising=False)
    a = stats.generator([6, 2, 100]).standard_normal(3)
    assert np.array_equal(a, np.random.default_rng([6, 2, 100]).standard_normal(3))
    monkeypatch.setenv(V.SEED_ENV, "4")
    assert not np.allclose(a, stats.generator([6, 2, 100]).standard_normal(3))
    for bad in ([], [1, -2], [1.5]):
        with pytest.raises(ValueError):
            stats.generator(bad)
