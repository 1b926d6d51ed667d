r"""Chapter 1, mean-field vs NTK: closed forms and the mean-field experiments.

The odd part of bias-free ReLU kernels ({prf:ref}`thm-ch1-gmmm`), the best fit of the running
target by neurons aligned with :math:`w_\star` ({prf:ref}`prop-ch1-aligned-bound`), the payoff
experiment with the alignment of the trained neurons, the finite-width fluctuation of the
mean-field dynamics ({prf:ref}`thm-ch1-chaos`), and the symmetry-reduced particle system
against the full network on the population loss ({prf:ref}`prop-ch1-reduced-particles`).
Sweeps put the seeds on axis 0 and draw seed ``s`` from ``stream(rng, s)`` of
:mod:`lecnotes.core.validate`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import ndtr

from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation, he
from lecnotes.core.targets import single_index
from lecnotes.models.kernel_methods import kernel_ridge, single_index_risk
from lecnotes.models.kernels import relu_ntk
from lecnotes.models.networks import forward, init_params, step_size, train

__all__ = [
    "target",
    "odd_part",
    "with_bias",
    "aligned_fit_error",
    "smoothed_relu",
    "smoothed_fit_error",
    "PayoffResult",
    "payoff_runs",
    "chaos_sweep",
    "spread_slope",
    "width_correction",
    "population_gradients",
    "reduced_start",
    "population_descent",
    "reduction_sweep",
]


def target(u) -> np.ndarray:
    r"""The running single-index link of chapter 1, :math:`\varphi = h_1 + h_2`.

    {eq}`eq-ch1-target`: :math:`\varphi(u) = \mathrm{He}_1(u) + \mathrm{He}_2(u)/\sqrt2`,
    unit-norm degree-1 and degree-2 parts.

    Parameters
    ----------
    u : array_like
        Points.

    Returns
    -------
    ndarray
        :math:`\varphi(u)`, shaped like ``u``.
    """
    return he(1, u) + he(2, u) / np.sqrt(2)


def odd_part(kernel, X, Z):
    r"""The odd part :math:`K(x,z) - K(x,-z)` of a kernel, against :math:`\langle x,z\rangle`.

    For the bias-free ReLU NTK, :math:`K(x,z)-K(x,-z) = (\frac1{2d}+\frac12)\langle x,z\rangle`
    exactly, because :math:`\arccos(-t) = \pi - \arccos t` ({prf:ref}`thm-ch1-gmmm`): its RKHS
    has no odd component of degree :math:`\ge3`.

    Parameters
    ----------
    kernel : callable
        ``kernel(X, Z)`` returns the (n_X, n_Z) kernel matrix.
    X, Z : array_like (n, d)
        Inputs.

    Returns
    -------
    (slope, residual) : tuple of float
        The least-squares coefficient ``c`` of the odd part on :math:`\langle x,z\rangle`, and
        the largest residual relative to the largest odd part.
    """
    X = V.finite_array(X, "X", ndim=2)
    Z = V.finite_array(Z, "Z", ndim=2)
    odd = kernel(X, Z) - kernel(X, -Z)
    G = X @ Z.T
    c = float(np.sum(odd * G) / np.sum(G * G))
    return c, float(np.max(np.abs(odd - c * G)) / np.max(np.abs(odd)))


def with_bias(b: float = 1.0):
    r"""The ReLU NTK of a network with a bias: inputs augmented by a constant coordinate ``b``.

    A bias restores the odd coefficients of degree :math:`\ge3` ({prf:ref}`thm-ch1-gmmm`).
    The constant coordinate is not flipped by :math:`z\mapsto-z` in :func:`odd_part`.

    Parameters
    ----------
    b : float
        The constant input coordinate (the bias of a neuron is its weight on it).

    Returns
    -------
    callable
        ``kernel(X, Z)``.
    """
    b = V.positive_float(b, "b")

    def kernel(X, Z):
        def aug(A):
            return np.c_[A, np.full(len(A), b)]

        return relu_ntk(aug(X), aug(Z))

    return kernel


def aligned_fit_error() -> float:
    r"""Best :math:`L^2` error of :math:`h_1+h_2` in the span of :math:`\relu(G), \relu(-G)`.

    {prf:ref}`prop-ch1-aligned-bound`: bias-free neurons aligned with :math:`\pm w_\star`
    compute :math:`a\relu(G) + b\relu(-G)`; the best such fit of the running :func:`target`
    has error :math:`1 - 1/\pi`. Computed by quadrature (a least-squares problem in the Gram
    matrix of the two functions).

    Returns
    -------
    float
    """
    return smoothed_fit_error(np.array([-1.0, 1.0]), constant=False)


def smoothed_relu(c, g) -> np.ndarray:
    r"""The mean of :math:`\relu(cG + \sqrt{1-c^2}\,\xi)` over :math:`\xi\sim N(0,1)`, given G.

    What a unit neuron with :math:`\cos(w, w_\star) = c` computes on average over the inputs
    orthogonal to :math:`w_\star` ({prf:ref}`prop-ch1-aligned-bound`):
    :math:`cg\,\Phi(cg/s) + s\,\phi(cg/s)` with :math:`s = \sqrt{1-c^2}`; at :math:`c = 0` a
    constant :math:`1/\sqrt{2\pi}`, an effective bias.

    Parameters
    ----------
    c : float
        Cosine with :math:`w_\star`, in [-1, 1].
    g : array_like
        Values of :math:`G`.

    Returns
    -------
    ndarray
    """
    g = np.asarray(g, dtype=float)
    c = float(c)
    if not -1.0 <= c <= 1.0:
        raise ValueError(f"c must lie in [-1, 1], got {c}")
    s = np.sqrt(max(1.0 - c * c, 0.0))
    if s < 1e-12:
        return np.maximum(c * g, 0.0)
    t = c * g / s
    return c * g * ndtr(t) + s * np.exp(-t * t / 2) / np.sqrt(2 * np.pi)


def smoothed_fit_error(cosines, constant: bool = False) -> float:
    r"""Best :math:`L^2` error of :math:`h_1+h_2` by the :func:`smoothed_relu` at ``cosines``.

    {prf:ref}`prop-ch1-aligned-bound`: the span of the averaged neurons with the given cosines
    (plus a constant if ``constant``). With cosines :math:`\pm1` only, :math:`1-1/\pi`.

    Parameters
    ----------
    cosines : array_like
        Cosines with :math:`w_\star`.
    constant : bool
        Add the constant function.

    Returns
    -------
    float
    """
    cos = V.finite_array(cosines, "cosines", ndim=1)

    def feats(g):
        rows = [smoothed_relu(c, g) for c in cos] + ([np.ones_like(g)] if constant else [])
        return np.array(rows)

    def gram(g):
        F = feats(g)
        return np.einsum("in,jn->nij", F, F)

    M = gaussian_expectation(gram, breakpoints=(0.0,))
    r = gaussian_expectation(lambda g: (feats(g) * target(g)).T, breakpoints=(0.0,))
    coef = np.linalg.lstsq(M, r, rcond=None)[0]
    return float(2.0 - r @ coef)


class PayoffResult(NamedTuple):
    """The payoff experiment of :func:`payoff_runs` (seeds on axis 0)."""

    risk: np.ndarray
    """(seeds, dims, 3): test risks of KRR, the NTK-scaled and the mean-field network."""
    cosines: list
    r"""For each dimension, (seeds, m): :math:`|\cos(w_k, w_\star)|` of the mean-field neurons."""
    parts: np.ndarray
    r"""(seeds, dims, 2, 3): :math:`c_0, c_1, c_2` of the mean-field network's output restricted
    to its aligned (:math:`|\cos|>` ``aligned``) and its other neurons."""


def payoff_runs(dims, seeds: int, ratio: int = 8, m: int = 256, steps: int = 300,
                lam: float = 1e-8, aligned: float = 0.9, rng=None) -> PayoffResult:
    r"""KRR, an NTK-scaled and a mean-field network at ``n = ratio * d``, and the neurons.

    What feature learning buys ({prf:ref}`thm-ch1-gmmm`, {prf:ref}`prop-ch1-aligned-bound`):
    the test risks of the three predictors on the running :func:`target`, the alignment of
    the mean-field neurons with :math:`w_\star`, and the Hermite coefficients (along
    :math:`w_\star`) of the parts of the mean-field output made by aligned and by unaligned
    neurons.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    seeds : int
        Number of seeds.
    ratio, m, steps : int
        n/d, width of the networks, training steps.
    lam : float
        Ridge of KRR.
    aligned : float
        Threshold on :math:`|\cos(w_k, w_\star)|` for an aligned neuron.
    rng : Generator, int or None
        Random source (SPEC 7): the point (seed, d) draws everything from ``stream(rng, s)``,
        the test inputs of the parts of the mean-field output from ``stream(rng, s, 1)``.

    Returns
    -------
    PayoffResult
    """
    seeds, ratio, m = (V.positive_int(v, k) for v, k in ((seeds, "seeds"), (ratio, "ratio"),
                                                          (m, "m")))
    dims, steps = [V.positive_int(v, "dims") for v in dims], V.positive_int(steps, "steps")
    lam, aligned = V.positive_float(lam, "lam"), V.positive_float(aligned, "aligned")
    risk = np.zeros((seeds, len(dims), 3))
    parts = np.zeros((seeds, len(dims), 2, 3))
    cosines = [np.zeros((seeds, m)) for _ in dims]
    for s in range(seeds):
        for j, d in enumerate(dims):
            gen = V.stream(rng, s)
            X, y, w_star = single_index(ratio * d, d, target, rng=gen)
            alpha = kernel_ridge(relu_ntk(X) / d, y, lam)
            preds = [lambda Z, X=X, alpha=alpha, d=d: (relu_ntk(Z, X) / d) @ alpha]
            for sc in ("ntk", "mf"):
                W0, a0 = init_params(m, d, rng=gen)
                r = train(W0, a0, X, y, eta=step_size(0.5, m, sc), steps=steps, scaling=sc)
                preds.append(lambda Z, r=r, sc=sc: forward(r.W, r.a, Z, "relu", sc))
            risk[s, j] = [single_index_risk(p, w_star, target, n_perp=40, n_quad=20, rng=gen)[0]
                          for p in preds]
            cos = np.abs(r.W @ w_star) / np.linalg.norm(r.W, axis=1)
            cosines[j][s] = cos
            for k, keep in enumerate((cos > aligned, cos <= aligned)):
                a_k = np.where(keep, r.a, 0.0)

                def part(Z, W=r.W, a_k=a_k):
                    return forward(W, a_k, Z, "relu", "mf")

                parts[s, j, k] = single_index_risk(part, w_star, target, n_perp=40, n_quad=20,
                                                   rng=V.stream(rng, s, 1))[2]
    return PayoffResult(risk, cosines, parts)


def chaos_sweep(d: int, n: int, widths, inits: int, steps: int, eta0: float = 0.5,
                rng=None) -> np.ndarray:
    r"""Finite-width fluctuation of mean-field training on one data set (propagation of chaos).

    {prf:ref}`thm-ch1-chaos`: on fixed data of the running :func:`target`, mean-field networks
    of each width are trained from ``inits`` independent initialisations for ``steps`` steps,
    and the statistic :math:`\frac1m\sum_k a_k\langle w_k, w_\star\rangle`, an integral of the
    empirical distribution of the neurons, is recorded. Its spread over initialisations decays
    like :math:`m^{-1/2}`; its mean does not depend on :math:`m`.

    Parameters
    ----------
    d, n : int
        Dimension and number of samples.
    widths : sequence of int
        Even widths.
    inits : int
        Initialisations per width.
    steps : int
        Gradient steps (a fixed time :math:`t = \eta_0\cdot` ``steps``).
    eta0 : float
        Step size before the factor m.
    rng : Generator, int or None
        Random source (SPEC 7): the data from ``stream(rng, 0)``, initialisation ``i`` at
        width ``m`` from ``stream(rng, 1, m, i)``.

    Returns
    -------
    ndarray (inits, len(widths))
    """
    inits = V.positive_int(inits, "inits", minimum=2)
    d, n, steps = V.positive_int(d, "d"), V.positive_int(n, "n"), V.positive_int(steps, "steps")
    widths, eta0 = [V.positive_int(v, "widths") for v in widths], V.positive_float(eta0, "eta0")
    X, y, w_star = single_index(n, d, target, rng=V.stream(rng, 0))
    out = np.zeros((inits, len(widths)))
    for j, m in enumerate(widths):
        for i in range(inits):
            W0, a0 = init_params(int(m), d, rng=V.stream(rng, 1, int(m), i))
            r = train(W0, a0, X, y, eta=step_size(eta0, int(m), "mf"), steps=steps, scaling="mf")
            out[i, j] = float(np.mean(r.a * (r.W @ w_star)))
    return out


def spread_slope(widths, values, n_boot: int = 400, rng=None):
    r"""Log-log slope of the spread over initialisations against the width, with a bootstrap SE.

    For :func:`chaos_sweep`: the standard deviation over initialisations at each width, its
    least-squares slope in :math:`\log m` ({prf:ref}`thm-ch1-chaos` predicts :math:`-1/2`),
    and the standard error of that slope from ``n_boot`` resamplings of the initialisations
    (independently at each width).

    Parameters
    ----------
    widths : array_like (p,)
        Widths.
    values : array_like (inits, p)
        One statistic per initialisation and width.
    n_boot : int
        Bootstrap resamples.
    rng : Generator, int or None
        Random source (SPEC 7) of the resampling.

    Returns
    -------
    (slope, se) : tuple of float
    """
    values = V.finite_array(values, "values", ndim=2)
    lx = np.log(V.finite_array(widths, "widths", ndim=1))
    if values.shape[1] != lx.size or values.shape[0] < 3:
        raise ValueError("values must be (inits >= 3, len(widths))")

    def slope(v):
        return float(np.polyfit(lx, np.log(v.std(0, ddof=1)), 1)[0])

    g = V.generator(rng)
    k = values.shape[0]
    boot = [slope(np.take_along_axis(values, g.integers(0, k, values.shape), 0))
            for _ in range(V.positive_int(n_boot, "n_boot", minimum=2))]
    return slope(values), float(np.std(boot, ddof=1))


def width_correction(widths, values):
    r"""Fit :math:`A + B/\sqrt m` per seed; the fitted correction and the slope tilt it causes.

    {prf:ref}`prop-ch1-lazy-movement` is an :math:`m\to\infty` statement with corrections of
    relative order :math:`m^{-1/2}`. For each seed the curve is fitted by
    :math:`A(1 - c/\sqrt m)`; the tilt is the mean over seeds of the least-squares slope of
    :math:`\log(1 - c/\sqrt m)` against :math:`\log m` over ``widths``, what the correction adds
    to a fitted log-log slope.

    Parameters
    ----------
    widths : array_like (p,)
        Widths.
    values : array_like (seeds, p)
        One positive curve per seed.

    Returns
    -------
    (c, tilt) : (ndarray (seeds,), float)
    """
    widths = V.finite_array(widths, "widths", ndim=1)
    values = V.finite_array(values, "values", ndim=2)
    u = 1 / np.sqrt(widths)
    lx = np.log(widths)
    cs, tilts = [], []
    for row in values:
        B, A = np.polyfit(u, row, 1)
        c = -B / A
        cs.append(c)
        factor = np.clip(1 - c * u, 1e-12, None)
        tilts.append(np.polyfit(lx, np.log(factor), 1)[0])
    return np.array(cs), float(np.mean(tilts))


def population_gradients(W, a, w_star):
    r"""Population risk of the mean-field ReLU network on the running target, and its gradients.

    {prf:ref}`prop-ch1-reduced-particles`: for :math:`x\sim N(0,I_d)`, :math:`y = h_1(G)+h_2(G)`,
    :math:`G = \langle w_\star,x\rangle` and :math:`f = \frac1m\sum_ka_k\,\mathrm{relu}(\langle
    w_k,x\rangle)`, the risk :math:`R = \frac12\E(f-y)^2` is
    :math:`\frac12(a^\top Ka/m^2 - 2a^\top F/m + 2)` with the arc-cosine kernel
    :math:`K_{jk} = \frac{r_jr_k}{2\pi}(\sin\theta_{jk} + (\pi-\theta_{jk})\cos\theta_{jk})` and
    :math:`F_k = \frac{\alpha_k}2 + \frac{\alpha_k^2}{2\sqrt\pi\,r_k}`
    (:math:`r_k = \|w_k\|`, :math:`\alpha_k = \langle w_k,w_\star\rangle`, :math:`\theta_{jk}`
    the angle of :math:`w_j,w_k`). The gradient of :math:`K_{jk}` in :math:`w_j` is
    :math:`\frac1{2\pi}((\pi-\theta_{jk})w_k + r_k\sin\theta_{jk}\,w_j/r_j)`.

    Parameters
    ----------
    W : array_like (m, D)
        First layer (no zero row).
    a : array_like (m,)
        Second layer.
    w_star : array_like (D,)
        Unit direction of the target.

    Returns
    -------
    (gW, ga, risk) : (ndarray (m, D), ndarray (m,), float)
    """
    W = V.finite_array(W, "W", ndim=2)
    a = V.finite_array(a, "a", ndim=1)
    w_star = V.finite_array(w_star, "w_star", ndim=1)
    if a.size != W.shape[0] or w_star.size != W.shape[1]:
        raise ValueError("W must be (m, D) with a of size m and w_star of size D")
    m = a.size
    r = np.linalg.norm(W, axis=1)
    if np.any(r == 0):
        raise ValueError("the rows of W must be non-zero")
    C = np.clip((W @ W.T) / np.outer(r, r), -1.0, 1.0)
    theta, S = np.arccos(C), np.sqrt(1.0 - C**2)
    K = np.outer(r, r) * (S + (np.pi - theta) * C) / (2 * np.pi)
    al = W @ w_star
    F = al / 2 + al**2 / (2 * np.sqrt(np.pi) * r)
    risk = 0.5 * (a @ K @ a / m**2 - 2 * a @ F / m + 2.0)
    ga = (K @ a / m - F) / m
    own = a * ((S * r[None, :]) @ a) / (2 * np.pi * r)
    gF = (0.5 + al / (np.sqrt(np.pi) * r))[:, None] * w_star[None, :] \
        - (al**2 / (2 * np.sqrt(np.pi) * r**3))[:, None] * W
    gW = (((np.pi - theta) * np.outer(a, a)) @ W / (2 * np.pi) + own[:, None] * W) / m**2 \
        - (a / m)[:, None] * gF
    return gW, ga, float(risk)


def reduced_start(W, a, w_star):
    r"""The reduced particles of {prf:ref}`prop-ch1-reduced-particles` coupled to a network.

    Each neuron keeps :math:`\alpha_k = \langle w_k,w_\star\rangle` and
    :math:`\beta_k = \|w_k-\alpha_kw_\star\|`; its perpendicular direction is replaced by a
    coordinate vector of its own, shared by the two neurons of a symmetric pair (neurons ``k``
    and ``k + m/2`` of :func:`lecnotes.models.networks.init_params`).

    Parameters
    ----------
    W : array_like (m, d)
        First layer (symmetric pairs, ``m`` even).
    a : array_like (m,)
        Second layer.
    w_star : array_like (d,)
        Unit direction of the target.

    Returns
    -------
    (Wr, e0, mask) : rows :math:`\alpha_ke_0+\beta_ke_{p(k)}` in dimension :math:`m/2+1`, the
    direction :math:`e_0`, and the 0/1 mask of the two coordinates each neuron may use.
    """
    W = V.finite_array(W, "W", ndim=2)
    w_star = V.finite_array(w_star, "w_star", ndim=1)
    m = W.shape[0]
    if m % 2 or len(a) != m:
        raise ValueError("the reduction pairs neurons k and k + m/2: m must be even, a of size m")
    al = W @ w_star
    be = np.linalg.norm(W - np.outer(al, w_star), axis=1)
    pair = np.arange(m) % (m // 2) + 1
    Wr = np.zeros((m, m // 2 + 1))
    Wr[:, 0] = al
    Wr[np.arange(m), pair] = be
    mask = np.zeros_like(Wr)
    mask[:, 0], mask[np.arange(m), pair] = 1.0, 1.0
    e0 = np.zeros(m // 2 + 1)
    e0[0] = 1.0
    return Wr, e0, mask


def population_descent(W, a, w_star, eta0: float, steps: int, mask=None) -> np.ndarray:
    r"""Mean-field gradient descent (step :math:`\eta_0m`) on the population risk; the risks.

    With ``mask`` (from :func:`reduced_start`) the first-layer gradient is projected on each
    neuron's two coordinates: the descent of the reduced risk of
    {prf:ref}`prop-ch1-reduced-particles` in the variables :math:`(a_k,\alpha_k,\beta_k)`.

    Parameters
    ----------
    W, a, w_star
        As in :func:`population_gradients` (not modified).
    eta0 : float
        Step size before the factor m.
    steps : int
        Number of steps.
    mask : array_like, optional
        Same shape as ``W``.

    Returns
    -------
    ndarray (steps + 1,)
        The population risk after 0, 1, ..., ``steps`` steps.
    """
    eta = V.positive_float(eta0, "eta0") * len(a)
    steps = V.positive_int(steps, "steps", minimum=0)
    W, a = np.array(W, dtype=float), np.array(a, dtype=float)
    out = np.zeros(steps + 1)
    for t in range(steps + 1):
        gW, ga, out[t] = population_gradients(W, a, w_star)
        W -= eta * (gW if mask is None else gW * mask)
        a -= eta * ga
    return out


def reduction_sweep(widths, seeds: int, steps: int, eta0: float = 0.5, d_ratio: int = 2,
                    rng=None) -> np.ndarray:
    r"""Full network against its reduced particles, same initialisation, several widths.

    {prf:ref}`prop-ch1-reduced-particles`: for each width ``m`` (input dimension
    ``d_ratio * m``) and seed, the symmetric initialisation of
    :func:`lecnotes.models.networks.init_params` is trained by :func:`population_descent` in
    dimension :math:`d` and, from the same :math:`(a_k,\alpha_k,\beta_k)`, as reduced particles.

    Parameters
    ----------
    widths : sequence of int
        Even widths.
    seeds : int
        Initialisations per width.
    steps : int
        Gradient steps (time :math:`t = \eta_0\cdot` ``steps``).
    eta0 : float
        Step size before the factor m.
    d_ratio : int
        Input dimension over width.
    rng : Generator, int or None
        Random source (SPEC 7): seed ``s`` at width ``m`` from ``stream(rng, s, m)``.

    Returns
    -------
    ndarray (seeds, len(widths), 2, steps + 1)
        Risk curves of the full network (index 0) and of the reduced particles (index 1).
    """
    seeds = V.positive_int(seeds, "seeds")
    d_ratio = V.positive_int(d_ratio, "d_ratio")
    widths = [V.positive_int(v, "widths", minimum=2) for v in widths]
    steps = V.positive_int(steps, "steps")
    eta0 = V.positive_float(eta0, "eta0")
    out = np.zeros((seeds, len(widths), 2, steps + 1))
    for j, m in enumerate(widths):
        d = d_ratio * int(m)
        w_star = np.eye(d)[0]
        for s in range(seeds):
            W0, a0 = init_params(int(m), d, rng=V.stream(rng, s, int(m)))
            out[s, j, 0] = population_descent(W0, a0, w_star, eta0, steps)
            Wr, e0, mask = reduced_start(W0, a0, w_star)
            out[s, j, 1] = population_descent(Wr, a0, e0, eta0, steps, mask)
    return out
