r"""Chapter 1, mean-field vs NTK training: the chapter's experiments.

Sweeps over seeds, widths and sample sizes (seeds on axis 0) on top of
:mod:`lecnotes.models.networks`, :mod:`lecnotes.models.kernels` and the norms and movement
measures of
:mod:`lecnotes.mean_field_vs_ntk.capacity` (re-exported here, where chapter 1 uses them).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lecnotes.core import validate as V
from lecnotes.core.targets import single_index
from lecnotes.mean_field_vs_ntk.capacity import (
    param_distance,
    path_norm,
    path_norm_rademacher_bound,
    relative_movement,
)
from lecnotes.mean_field_vs_ntk.theory import target
from lecnotes.models.kernel_methods import (
    kernel_gd_steps_to_loss,
    kernel_gradient_descent,
    kernel_ridge,
    kernel_ridge_at_loss,
    rademacher_rkhs,
    rademacher_rkhs_bound,
    rkhs_norm,
    single_index_risk,
)
from lecnotes.models.kernels import relu_ntk
from lecnotes.models.networks import (
    empirical_ntk,
    forward,
    init_params,
    step_size,
    train,
)

__all__ = [
    "path_norm",
    "path_norm_rademacher_bound",
    "relative_movement",
    "param_distance",
    "target",
    "MovementResult",
    "movement_sweep",
    "RademacherResult",
    "rademacher_linear_sweep",
    "BUDGET_KEYS",
    "NormBudgetResult",
    "norm_budget_sweep",
    "krr_point",
    "krr_barrier_sweep",
    "with_seeds",
    "c2_scaling_exponent",
    "c2_linear_fits",
    "barrier_window",
    "risk_at_d_squared",
]


def _sweep_dict(barrier, name: str = "barrier") -> dict:
    if not isinstance(barrier, dict) or not barrier:
        raise ValueError(f"{name} must be a non-empty dict d -> (n_list, values) of "
                         "krr_barrier_sweep")
    return barrier


class MovementResult(NamedTuple):
    """Width sweep of :func:`movement_sweep`; arrays have the seeds on axis 0."""

    movement: dict
    r"""scaling -> (seeds, widths): relative first-layer movement :math:`\|W-W_0\|_F/\|W_0\|_F`."""
    gap: dict
    """scaling -> (seeds, widths): relative distance between network and linearised model."""
    reached: np.ndarray
    """(seeds, 2, widths) booleans: the run (scaling ``ntk``, ``mf``) reached its target loss."""
    lazy_prediction: np.ndarray
    r"""(seeds,): the infinite-width prediction :math:`C_t` of movement times :math:`\sqrt m`."""
    halvings: np.ndarray | None = None
    """(seeds, 2, widths) integers: how many times the run's step was halved before it reached
    the target loss (0 for almost every run; see :func:`movement_sweep`)."""


def movement_sweep(d: int, n: int, widths, eps: float, eta0: float, seeds: int,
                   steps: int = 5000, n_test: int = 500, rng=None,
                   max_halvings: int = 2) -> MovementResult:
    r"""How far training to a fixed loss moves the weights, over widths (chapter 1).

    Checks {prf:ref}`prop-ch1-lazy-movement` ({eq}`eq-ch1-lazy-movement`): in the NTK scaling
    ({prf:ref}`def-ch1-scalings`) the relative movement of :math:`W` decays like
    :math:`C_t/\sqrt m`, in the mean-field scaling it stays of order one. For each seed one data
    set of the running :func:`target` (and a test set of ``n_test`` inputs) is drawn; for each
    scaling and width a ReLU network is trained by gradient descent until its training loss
    reaches ``eps``, and compared on the test inputs with its linearisation trained for the same
    number of steps. :math:`C_t = (\alpha^\top K_W\alpha)^{1/2}` for the infinite-width
    linearised model trained to the same loss, :math:`K_W` the first-layer part of the ReLU NTK.

    Parameters
    ----------
    d, n : int
        Dimension and number of samples.
    widths : array_like of int
        Widths :math:`m`.
    eps, eta0 : float
        Target training loss; step size before the factor of
        :func:`lecnotes.models.networks.step_size`.
    seeds : int
        Number of seeds.
    steps, n_test : int
        Step cap of each training run; number of test inputs.
    max_halvings : int
        A run that has not reached ``eps`` within ``steps`` (or that diverges) is started
        again from the same initialisation with half the step, up to this many times. At
        :math:`\eta_0 = 0.5` the mean-field step :math:`\eta_0 m` is at the edge of stability
        at the smallest width: about one run in seventy at :math:`m = 32` oscillates at a
        loss of about 0.15 for any number of steps, and reaches 0.05 in under 100 steps at
        :math:`\eta_0 = 0.25`. The restart draws nothing: the other runs and every random
        stream are unchanged.
    rng : int
        Base seed: seed ``s`` draws its data, test inputs and every initialisation in turn
        from the integer seed ``rng + s`` (the original protocol; with keyed streams per width
        one mean-field run at m = 32 missed the target loss; see ``max_halvings``).

    Returns
    -------
    MovementResult
    """
    widths = [V.positive_int(m, "width") for m in widths]
    seeds = V.positive_int(seeds, "seeds")
    d, n = V.positive_int(d, "d"), V.positive_int(n, "n")
    eps, eta0 = V.positive_float(eps, "eps"), V.positive_float(eta0, "eta0")
    steps, n_test = V.positive_int(steps, "steps"), V.positive_int(n_test, "n_test")
    rng = V.positive_int(rng, "rng", minimum=0)  # an integer base seed (see above)
    max_halvings = V.positive_int(max_halvings, "max_halvings", minimum=0)
    move = {sc: np.empty((seeds, len(widths))) for sc in ("ntk", "mf")}
    gap = {sc: np.empty((seeds, len(widths))) for sc in ("ntk", "mf")}
    reached = np.zeros((seeds, 2, len(widths)), dtype=bool)
    halvings = np.zeros((seeds, 2, len(widths)), dtype=int)
    lazy = np.empty(seeds)
    for s in range(seeds):
        gen = V.generator(rng + s)
        X, y, _ = single_index(n, d, target, rng=gen)
        X_test = gen.standard_normal((n_test, d))
        for i, sc in enumerate(("ntk", "mf")):
            for j, m in enumerate(widths):
                W0, a0 = init_params(m, d, rng=gen)
                eta = step_size(eta0, m, sc)
                for tries in range(max_halvings + 1):  # half the step after a miss
                    try:
                        res = train(W0, a0, X, y, eta=eta, steps=steps, scaling=sc,
                                    target_loss=eps)
                    except FloatingPointError:  # diverged
                        if tries == max_halvings:
                            raise
                        res = None
                    if (res is not None and res.reached) or tries == max_halvings:
                        break
                    eta /= 2
                halvings[s, i, j] = tries
                reached[s, i, j] = res.reached
                move[sc][s, j] = relative_movement(res.W, W0)
                K0 = empirical_ntk(W0, a0, X, scaling=sc)  # linearised model, same steps
                f_lin = empirical_ntk(W0, a0, X_test, X, scaling=sc) @ kernel_gradient_descent(
                    K0, y, eta, res.steps)
                f_net = forward(res.W, res.a, X_test, "relu", sc)
                gap[sc][s, j] = np.sqrt(np.mean((f_net - f_lin) ** 2) / np.mean(f_lin**2))
        K_inf, K_W = relu_ntk(X), relu_ntk(X) - relu_ntk(X, a_var=0.0)
        alpha = kernel_gradient_descent(K_inf, y, eta0,
                                        kernel_gd_steps_to_loss(K_inf, y, eta0, eps))
        lazy[s] = np.sqrt(alpha @ K_W @ alpha)
    return MovementResult(move, gap, reached, lazy, halvings)


class RademacherResult(NamedTuple):
    """Rademacher complexity of the linear class, by Monte Carlo and by its two bounds."""

    values: dict
    """d -> (len(ns), 4): Monte Carlo value, its standard error, Jensen bound, lower bound."""
    inside: np.ndarray
    """(len(dims), len(ns)) booleans: the Monte Carlo value lies between the bounds (z SE)."""


def rademacher_linear_sweep(ns, dims, B: float = 1.0, n_mc: int = 400,
                            rng=None, z: float = 3.0) -> RademacherResult:
    r"""The Rademacher complexity of the linear class of norm ``B`` over (n, d) (chapter 1).

    {prf:ref}`def-ch1-rademacher` by Monte Carlo
    (:func:`lecnotes.models.kernel_methods.rademacher_rkhs`) with the linear kernel
    :math:`G = XX^\top`, against the Jensen upper bound
    :math:`B\sqrt{\operatorname{tr}G}/n` and the second-order lower bound
    :math:`\text{Jensen}\cdot(1-\sum_{i\neq j}G_{ij}^2/(\operatorname{tr}G)^2)`.

    Parameters
    ----------
    ns, dims : sequences of int
        Sample sizes and dimensions.
    B : float
        Norm bound.
    n_mc : int
        Monte Carlo draws of the signs.
    rng : Generator, int or None
        Random source (SPEC 7): the point (n, d) draws its inputs from ``stream(rng, d, n, 0)``
        and its signs from ``stream(rng, d, n, 1)``.
    z : float
        A point is inside when it lies within ``z`` Monte Carlo standard errors of the bounds.

    Returns
    -------
    RademacherResult
    """
    ns, dims = V.sizes(ns, "ns").tolist(), V.sizes(dims, "dims").tolist()
    B, z = V.positive_float(B, "B"), V.positive_float(z, "z")
    n_mc = V.positive_int(n_mc, "n_mc", minimum=2)
    values, inside = {}, np.zeros((len(dims), len(ns)), dtype=bool)
    for i, d in enumerate(dims):
        rows = []
        for j, n in enumerate(ns):
            X = V.stream(rng, d, n, 0).standard_normal((n, d))
            G = X @ X.T
            mc, mc_se = rademacher_rkhs(G, B, n_mc=n_mc, rng=V.stream(rng, d, n, 1))
            bound = rademacher_rkhs_bound(G, B)
            low = bound * (1 - (np.sum(G**2) - np.sum(np.diag(G) ** 2)) / np.trace(G) ** 2)
            inside[i, j] = (low - z * mc_se <= mc) and (mc <= bound + z * mc_se)
            rows.append((mc, mc_se, bound, low))
        values[d] = np.array(rows)
    return RademacherResult(values, inside)


BUDGET_KEYS = ("P", "R", "D", "cap_K", "lo_MF", "up_MF", "corr_MF", "corr_NTK")
"""The quantities of :func:`norm_budget_sweep`, in the order of its result."""


class NormBudgetResult(NamedTuple):
    """The norm-budget experiment of :func:`norm_budget_sweep`; arrays (seeds, kappas)."""

    values: dict
    """key of :data:`BUDGET_KEYS` -> (seeds, len(kappas))."""
    reached_target: np.ndarray
    """(seeds, kappas, 2) booleans: the network (``mf``, ``ntk``) reached the target loss."""
    spent_budget: np.ndarray
    """(seeds, kappas, 2) booleans: the network trained on signs stopped at its budget, or fitted
    the signs (correlation at least 0.999) within it."""


def _budget_point(d, m, kappa, eps, eta0, rng, steps):
    X, y, _ = single_index(kappa * d, d, target, rng=rng)
    s = rng.choice([-1.0, 1.0], size=len(y))
    Kx = relu_ntk(X)  # the NTK of the network's scaling
    _, alpha = kernel_ridge_at_loss(Kx, y, eps)
    R = rkhs_norm(Kx, alpha)
    lin_mc = rademacher_rkhs(X @ X.T, 1.0, n_mc=100, rng=rng)[0]
    out = {"R": R, "cap_K": rademacher_rkhs(Kx, R, n_mc=100, rng=rng)[0]}
    flags = []
    for sc in ("mf", "ntk"):
        W0, a0 = init_params(m, d, rng=rng)
        eta = step_size(eta0, m, sc)
        res = train(W0, a0, X, y, eta=eta, steps=steps, scaling=sc, target_loss=eps)

        def size(W, a, W0=W0, a0=a0, sc=sc):  # the budget each scaling spends
            return path_norm(W, a, "mf") if sc == "mf" else param_distance(W, a, W0, a0)

        B = size(res.W, res.a)
        noise = train(W0, a0, X, s, eta=eta, steps=steps, scaling=sc,
                      stop=lambda W, a, B=B, size=size: size(W, a) >= B)
        corr = float(np.mean(s * forward(noise.W, noise.a, X, "relu", sc)))
        flags.append((res.reached, noise.reached or corr >= 1 - 1e-3))
        out.update({"P": B, "corr_MF": corr} if sc == "mf" else {"D": B, "corr_NTK": corr})
    out["lo_MF"] = out["P"] * lin_mc / 2
    out["up_MF"] = path_norm_rademacher_bound(X, out["P"])
    return out, flags


def norm_budget_sweep(d: int, m: int, kappas, eps: float, eta0: float, seeds: int,
                      steps: int = 5000, rng=None) -> NormBudgetResult:
    r"""The norm each regime spends to fit the data, and the noise it could fit (chapter 1).

    The three balls of {prf:ref}`lem-ch1-three-balls`: for each seed and :math:`n = \kappa d`,
    data of the running :func:`target` and random signs :math:`s_i`; ``R`` is the least norm
    in the RKHS of the ReLU NTK reaching training loss ``eps``, ``cap_K`` the Rademacher
    complexity of that RKHS ball; a mean-field and an NTK-scaled network of width ``m`` are
    trained to ``eps`` (path norm ``P``, distance ``D`` from the initialisation), then trained
    from the same initialisation on the signs until they have spent the same budget
    (correlations ``corr_MF``, ``corr_NTK``). ``lo_MF`` and ``up_MF`` bound the Rademacher
    complexity of the path-norm ball of radius ``P`` from below and above
    (:func:`path_norm_rademacher_bound`).

    Parameters
    ----------
    d, m : int
        Dimension and width.
    kappas : array_like of int
        Sample ratios, ``n = kappa d``.
    eps, eta0 : float
        Target training loss; step size before the scaling's factor.
    seeds, steps : int
        Number of seeds; step cap of each training run.
    rng : Generator, int or None
        Random source (SPEC 7): every point of seed ``s`` draws from a fresh copy of
        ``stream(rng, s)`` (nested data sets: common random numbers for the fits over n).

    Returns
    -------
    NormBudgetResult
    """
    seeds = V.positive_int(seeds, "seeds")
    d, m, steps = V.positive_int(d, "d"), V.positive_int(m, "m", minimum=2), V.positive_int(
        steps, "steps")
    kappas = V.sizes(kappas, "kappas").tolist()
    eps, eta0 = V.positive_float(eps, "eps"), V.positive_float(eta0, "eta0")
    values = {k: np.zeros((seeds, len(kappas))) for k in BUDGET_KEYS}
    flags = np.zeros((seeds, len(kappas), 2, 2), dtype=bool)
    for s in range(seeds):
        for j, kappa in enumerate(kappas):
            out, f = _budget_point(d, m, int(kappa), eps, eta0,
                                   V.stream(rng, s), steps)
            flags[s, j] = f
            for k in BUDGET_KEYS:
                values[k][s, j] = out[k]
    return NormBudgetResult(values, flags[..., 0], flags[..., 1])


def krr_point(d: int, n: int, seed: int, lam: float = 1e-8, rng=None):
    r"""Test risk and learned degree-2 coefficient of kernel ridge regression (chapter 1).

    KRR with the ReLU NTK divided by :math:`d` on :math:`n` samples of the running
    :func:`target`; the risk and the coefficient :math:`c_2` of the predictor along
    :math:`w_\star` by :func:`lecnotes.models.kernel_methods.single_index_risk` (the kernel
    barrier of {prf:ref}`thm-ch1-gmmm`). Draws from ``stream(rng, d, n, seed)`` (the same
    for every ``lam``).

    Parameters
    ----------
    d, n : int
        Dimension and number of samples.
    seed, lam : int, float
        Seed index and ridge.
    rng : Generator, int or None
        Random source (SPEC 7).

    Returns
    -------
    (risk, c2) : tuple of float
    """
    d, n = V.positive_int(d, "d"), V.positive_int(n, "n")
    seed, lam = V.positive_int(seed, "seed", minimum=0), V.positive_float(lam, "lam")
    gen = V.stream(rng, d, n, seed)
    X, y, w_star = single_index(n, d, target, rng=gen)
    alpha = kernel_ridge(relu_ntk(X) / d, y, lam)
    risk, _, c = single_index_risk(lambda Z: (relu_ntk(Z, X) / d) @ alpha, w_star, target,
                                   n_perp=40, n_quad=20, rng=gen)
    return risk, c[2]


def krr_barrier_sweep(largest_n: dict, seeds: int, rng=None, n_min: int = 1,
                      first_seed: int = 0) -> dict:
    r"""KRR risk and :math:`c_2` at :math:`n = k\,n_{\min}d` (k = 1, 2, ...) up to ``largest_n[d]``.

    The sweep behind {prf:ref}`thm-ch1-gmmm` (:func:`krr_point` at each point).

    Parameters
    ----------
    largest_n : dict
        d -> the largest n (a power-of-two multiple of d).
    seeds, n_min, first_seed : int
        Number of seeds; smallest n/d (a power of two); first seed index (streams keyed by seed).
    rng : Generator, int or None
        Random source (SPEC 7), passed to :func:`krr_point`.

    Returns
    -------
    dict
        d -> (n_list, values) with values of shape (seeds, len(n_list), 2): risk, c2.
    """
    if not isinstance(largest_n, dict) or not largest_n:
        raise ValueError("largest_n must be a non-empty dict d -> largest n")
    seeds, first_seed = V.positive_int(seeds, "seeds"), V.positive_int(first_seed, "first_seed",
                                                                       minimum=0)
    n_min = V.positive_int(n_min, "n_min")
    out = {}
    for d, n_max in largest_n.items():
        d, n_max = V.positive_int(d, "largest_n keys"), V.positive_int(n_max, "largest_n values")
        n_list = d * 2 ** np.arange(int(np.log2(n_min)), int(np.log2(n_max // d)) + 1)
        out[d] = (n_list, np.array([[krr_point(d, n, s, rng=rng) for n in n_list]
                                     for s in range(first_seed, first_seed + seeds)]))
    return out


def with_seeds(barrier: dict, extra: dict) -> dict:
    """The points of ``extra`` (a sweep on later seeds) with the seeds of ``barrier`` first.

    Parameters
    ----------
    barrier, extra : dict
        Results of :func:`krr_barrier_sweep` (``{d: (n_list, values)}``, seeds on axis 0),
        ``extra`` on other seeds and on a subset of ``barrier``'s sample sizes.

    Returns
    -------
    dict
        ``{d: (n_list, values)}`` at ``extra``'s sizes, ``barrier``'s seeds first.
    """
    barrier, extra = _sweep_dict(barrier), _sweep_dict(extra, "extra")
    if not set(extra) <= set(barrier):
        raise ValueError("extra must hold only dimensions of barrier")
    return {d: (nl, np.concatenate([barrier[d][1][:, np.isin(barrier[d][0], nl)], v]))
            for d, (nl, v) in extra.items()}


def c2_scaling_exponent(barrier: dict, d_lo: int, d_hi: int, max_ratio: float = 0.25,
                        n_min: int = 4) -> np.ndarray:
    r"""Per seed, the exponent :math:`\gamma` of a law :math:`c_2 = g(n/d^\gamma)`.

    {prf:ref}`thm-ch1-gmmm` predicts :math:`\gamma = 2`. For every point of dimension ``d_lo``
    with :math:`n_{\min}d\le n\le` ``max_ratio`` :math:`d^2`, the sample size :math:`n^*` at
    which dimension ``d_hi`` reaches the same :math:`c_2` is interpolated linearly in
    :math:`(\log n,\log c_2)` between the two points of the ``d_hi`` curve that bracket it (the
    nearest two at an end); then :math:`\gamma = \log(n^*/n)/\log(d_{hi}/d_{lo})`, averaged over
    the points of each seed.

    Parameters
    ----------
    barrier : dict
        Result of :func:`krr_barrier_sweep` (or :func:`with_seeds`) with the same seeds at
        both dimensions and positive :math:`c_2`.
    d_lo, d_hi : int
        The two dimensions compared.
    max_ratio, n_min : float, int
        Largest :math:`n/d^2` and smallest :math:`n/d` of the ``d_lo`` points used.

    Returns
    -------
    ndarray (seeds,)
    """
    barrier = _sweep_dict(barrier)
    if d_lo not in barrier or d_hi not in barrier or d_hi <= d_lo:
        raise ValueError(f"d_lo < d_hi must be dimensions of barrier, got {d_lo}, {d_hi}")
    max_ratio, n_min = V.positive_float(max_ratio, "max_ratio"), V.positive_int(n_min, "n_min")
    (n_lo, v_lo), (n_hi, v_hi) = barrier[d_lo], barrier[d_hi]
    if v_lo.shape[0] != v_hi.shape[0]:
        raise ValueError("both dimensions need the same seeds")
    keep = (n_lo >= n_min * d_lo) & (n_lo <= max_ratio * d_lo**2)
    if not keep.any() or n_hi.size < 2:
        raise ValueError("no point of d_lo in the window, or fewer than two points of d_hi")
    if np.any(v_lo[:, keep, 1] <= 0) or np.any(v_hi[..., 1] <= 0):
        raise ValueError("c2 must be positive for a log-log interpolation")
    ln_hi = np.log(n_hi)
    out = []
    for s in range(v_lo.shape[0]):
        lc = np.log(v_hi[s, :, 1])
        gam = []
        for n, c2 in zip(n_lo[keep], v_lo[s, keep, 1], strict=True):
            i = int(np.clip(np.searchsorted(lc, np.log(c2)), 1, lc.size - 1))
            ln_star = ln_hi[i - 1] + (np.log(c2) - lc[i - 1]) * (ln_hi[i] - ln_hi[i - 1]) / (
                lc[i] - lc[i - 1])
            gam.append((ln_star - np.log(n)) / np.log(d_hi / d_lo))
        out.append(np.mean(gam))
    return np.array(out)


def c2_linear_fits(barrier: dict, max_ratio: float = 0.25, n_min: int = 4) -> np.ndarray:
    r"""Per seed, the line fitted to :math:`c_2` against :math:`n/d^2` (chapter 1).

    Points of a :func:`krr_barrier_sweep` with :math:`n/d^2\le` ``max_ratio`` and
    :math:`n\ge` ``n_min`` :math:`d`, all dimensions pooled; the intercept is the degree-2 part
    learned as :math:`n/d^2\to0` ({prf:ref}`thm-ch1-gmmm`).

    Parameters
    ----------
    barrier : dict
        Result of :func:`krr_barrier_sweep`.
    max_ratio, n_min : float, int
        Largest :math:`n/d^2`, smallest :math:`n/d`.

    Returns
    -------
    ndarray (seeds, 2)
        Slope and intercept of each seed.
    """
    barrier = _sweep_dict(barrier)
    max_ratio, n_min = V.positive_float(max_ratio, "max_ratio"), V.positive_int(n_min, "n_min")
    seeds = next(iter(barrier.values()))[1].shape[0]
    x = np.concatenate([n_list / d**2 for d, (n_list, v) in barrier.items()])
    ratio_nd = np.concatenate([n_list / d for d, (n_list, v) in barrier.items()])
    keep = (x <= max_ratio) & (ratio_nd >= n_min)
    fits = []
    for s in range(seeds):
        y = np.concatenate([v[s, :, 1] for d, (n_list, v) in barrier.items()])
        fits.append(np.polyfit(x[keep], y[keep], 1))
    return np.array(fits)


def barrier_window(barrier: dict, index: int, max_ratio: float = 1 / 16,
                   n_min: int = 4) -> np.ndarray:
    r"""Per-seed values of a :func:`krr_barrier_sweep` in a window of sample sizes.

    The window :math:`n_{\min}d\le n\le` ``max_ratio`` :math:`d^2`, where {prf:ref}`thm-ch1-gmmm`
    predicts that the degree-2 part is not learned.

    Parameters
    ----------
    barrier : dict
        Result of :func:`krr_barrier_sweep`, the same seeds at every dimension in the window.
    index : int
        0 for the risk, 1 for :math:`c_2`.
    max_ratio, n_min : float, int
        Largest :math:`n/d^2`, smallest :math:`n/d`.

    Returns
    -------
    ndarray (seeds, points)
        Every point of the window, all dimensions concatenated.
    """
    barrier = _sweep_dict(barrier)
    if index not in (0, 1) or isinstance(index, bool):
        raise ValueError(f"index must be 0 (risk) or 1 (c2), got {index!r}")
    max_ratio, n_min = V.positive_float(max_ratio, "max_ratio"), V.positive_int(n_min, "n_min")
    parts = []
    for d, (n_list, v) in barrier.items():
        keep = (n_list / d**2 <= max_ratio) & (n_list >= n_min * d)
        if keep.any():
            parts.append(v[:, keep, index])
    if len({p.shape[0] for p in parts}) > 1:
        raise ValueError("the dimensions of the window have different numbers of seeds")
    return np.concatenate(parts, axis=1)


def risk_at_d_squared(barrier: dict) -> np.ndarray:
    r"""Seed-mean KRR risk at :math:`n = d^2`, for the dimensions of the sweep that reach it.

    Parameters
    ----------
    barrier : dict
        Result of :func:`krr_barrier_sweep`.

    Returns
    -------
    ndarray
        One value per dimension with :math:`d^2` in its grid ({prf:ref}`thm-ch1-gmmm`).
    """
    barrier = _sweep_dict(barrier)
    return np.array([v[..., 0].mean(0)[n_list == d**2][0] for d, (n_list, v) in barrier.items()
                     if d**2 in n_list])
