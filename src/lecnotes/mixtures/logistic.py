r"""Sharp asymptotics of logistic regression on the means mixture (chapter 11).

The estimator ({prf:ref}`def-ch11-logistic`) is
:math:`\hat w = \arg\min\frac1n\sum_i\ell(y_i, \ip w{x_i}) + \frac\lambda2\norm w^2` on
:math:`n = \alpha d` samples of the means family ({prf:ref}`def-ch11-means`) with
:math:`y = \sign(x_1)`. As for ridge, :math:`x = (h, z_\perp)` with :math:`h = (x_1, x_2)` and
:math:`z_\perp` an isotropic Gaussian bulk independent of :math:`(h, y)`; write
:math:`\hat w = (a, w_\perp)`, :math:`q = \norm{w_\perp}^2`. Then :math:`(a, q, V)` solve the
fixed point {eq}`eq-ch11-logistic-fp` ({prf:ref}`prop-ch11-logistic`) with the local field
:math:`\omega = \ip ah + \sqrt q\,g` and the training prediction
:math:`t = \mathrm{prox}_{V\ell(y,\cdot)}(\omega)`.

The solver is generic over the loss: with the square loss :math:`\ell = (y-t)^2/2` the same
equations are ridge, and reproduce :func:`lecnotes.mixtures.ridge.ridge_theory` (the unit
tests' oracle). Expectations are Gaussian quadratures conditioned on the cluster and on
:math:`x_1` (the label is a function of :math:`x_1`, discontinuous at 0, so :math:`x_1` is
integrated by Gauss-Legendre on each half-line); given them, :math:`(x_2, \omega)` is
Gaussian and :math:`\omega` is integrated by Gauss-Hermite. The matched Gaussian is the
Cholesky factor of :math:`C = I + m^2vv^\top` on the same grid. The test classification error
of a direction :math:`(a, q)` is a one-dimensional integral of :func:`scipy.special.ndtr`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, ndtr

from lecnotes.core import validate as V
from lecnotes.mixtures.experiments import sample
from lecnotes.mixtures.ridge import Mixture, label_moments, means_mixture

__all__ = ["LOSSES", "prox", "classification_error", "LogisticErrors", "logistic_theory",
           "AlignmentCurve", "alignment_curve", "LogisticRun", "logistic_fit", "LogisticSweep",
           "logistic_sweep"]

LOSSES = ("square", "logistic")
r"""Losses of the solver: :math:`(y-t)^2/2` (ridge, the oracle) and :math:`\log(1+e^{-yt})`."""

_CUT = 10.0  # |g1| <= _CUT: the Gaussian mass beyond is 1.5e-23


def _loss(loss):
    if not isinstance(loss, str):
        raise TypeError(f"loss must be a string, got {type(loss).__name__}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def _value(loss, y, t):
    return 0.5 * (y - t) ** 2 if loss == "square" else np.logaddexp(0.0, -y * t)


def _minus_grad(loss, y, t):
    """f = -l'(y, t)."""
    return y - t if loss == "square" else y * expit(-y * t)


def _hess(loss, y, t):
    return np.ones_like(t) if loss == "square" else expit(y * t) * expit(-y * t)


def prox(omega, y, V_, loss="logistic", tol=1e-13, max_iter=100):
    r"""The proximal map :math:`t = \mathrm{prox}_{V\ell(y,\cdot)}(\omega)`, the root of
    :math:`t - \omega = -V\ell'(y, t)` ({eq}`eq-ch11-logistic-fp`): explicit for the square
    loss, safeguarded Newton (bracket :math:`y t\in[y\omega, y\omega + V]`) for the logistic.

    Parameters
    ----------
    omega, y : array_like
        Local fields and labels (broadcast; labels +-1 for the logistic loss).
    V_ : float
        The prox parameter, > 0.
    loss : str
        A key of :data:`LOSSES`.
    tol : float
        Residual at which Newton stops.
    max_iter : int
        Newton steps (a ``RuntimeError`` if exhausted).

    Returns
    -------
    ndarray
    """
    loss = _loss(loss)
    Vp = V.positive_float(V_, "V")
    omega, y = np.broadcast_arrays(np.asarray(omega, dtype=float), np.asarray(y, dtype=float))
    if loss == "square":
        return (omega + Vp * y) / (1 + Vp)
    if np.any(np.abs(y) != 1):
        raise ValueError("the logistic loss needs labels +-1")
    yo = y * omega                       # in s = y t: s - y omega - V sigmoid(-s) = 0
    lo, hi = yo.copy(), yo + Vp
    s = yo + Vp * expit(-yo)
    dx_old = np.full_like(s, Vp)
    for _ in range(V.positive_int(max_iter, "max_iter")):
        F = s - yo - Vp * expit(-s)
        done = np.abs(F) <= tol * (1 + np.abs(yo) + Vp)
        if np.all(done):
            return y * s
        dF = 1 + Vp * expit(s) * expit(-s)
        lo, hi = np.where(F < 0, s, lo), np.where(F > 0, s, hi)
        # rtsafe: bisect when Newton leaves the bracket or does not halve the step; the
        # points already converged stay where they are
        newton = s - F / dF
        bisect = (newton < lo) | (newton > hi) | (np.abs(2 * F) > np.abs(dx_old * dF))
        new = np.where(bisect, 0.5 * (lo + hi), newton)
        dx_old = np.where(done, dx_old, np.abs(new - s))
        s = np.where(done, s, new)
    raise RuntimeError("Newton's method for the logistic prox did not converge")


def _check_model(model, loss="logistic"):
    if not isinstance(model, Mixture):
        raise TypeError(f"model must be a Mixture, got {type(model).__name__}")
    if model.kind != "means":
        raise ValueError("logistic regression is set up for the means family")
    if model.noise != 0:
        raise ValueError(f"the label must be noiseless (noise = 0), got {model.noise}")
    if loss == "logistic" and model.target != "sign":
        raise ValueError("the logistic loss needs the sign target (labels +-1)")
    return model


def _grid(model, nodes, hermite):
    r"""Quadrature of the law of (h, y, u): per cluster, h1 = mu1 + s1 g1 (Gauss-Legendre on
    the half-lines h1 < 0 and h1 > 0), h2 = m2(g1) + r g2, and u ~ N(0, 1) for the field."""
    th, m = model.theta, model.m
    if model.gaussian:                   # Cholesky factor of C = I + m^2 v v^T
        C = np.eye(2) + m * m * np.outer([math.cos(th), math.sin(th)],
                                         [math.cos(th), math.sin(th)])
        L = np.linalg.cholesky(C)
        comps = [(1.0, 0.0, L[0, 0], 0.0, L[1, 0], L[1, 1])]
    else:                                # cluster c = +-1, identity covariance
        comps = [(0.5, c * m * math.cos(th), 1.0, c * m * math.sin(th), 0.0, 1.0)
                 for c in (-1.0, 1.0)]
    xl, wl = np.polynomial.legendre.leggauss(nodes)
    P, H1, M2, R = [], [], [], []
    for p, mu1, s1, mu2, b2, r in comps:
        jump = min(max(-mu1 / s1, -_CUT), _CUT)
        for lo, hi in ((-_CUT, jump), (jump, _CUT)):
            g1 = lo + (hi - lo) * (xl + 1) / 2
            P.append(p * wl * (hi - lo) / 2 * np.exp(-g1 * g1 / 2) / math.sqrt(2 * math.pi))
            H1.append(mu1 + s1 * g1)
            M2.append(mu2 + b2 * g1)
            R.append(np.full(nodes, r))
    P, H1, M2, R = (np.concatenate(z) for z in (P, H1, M2, R))
    u, wu = np.polynomial.hermite_e.hermegauss(hermite)
    y = np.sign(H1) if model.target == "sign" else H1
    return P, H1, M2, R, y, u, wu / math.sqrt(2 * math.pi)


def _field(a, q, H1, M2, R):
    """Conditional mean and standard deviation of omega = <a, h> + sqrt(q) g given (c, h1)."""
    return a[0] * H1 + a[1] * M2, np.sqrt(a[1] ** 2 * R**2 + q)


def _error_given(mean, S, y):
    """P(sign(mean + S u) != y), u standard Gaussian, y = +-1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(S > 0, ndtr(-y * mean / np.where(S > 0, S, 1.0)),
                        (y * mean < 0) + 0.5 * (mean == 0))


def classification_error(model, w, nodes=40):
    r"""Exact population test classification error :math:`\P(\sign\ip wx\neq y)` of a direction
    under the means mixture ({prf:ref}`def-ch11-logistic`): given the cluster and :math:`x_1`,
    :math:`\ip wx` is Gaussian of mean :math:`w_1x_1 + w_2\E[x_2\mid c, x_1]` and variance
    :math:`w_2^2\Var(x_2\mid c, x_1) + \norm{w_{3:}}^2`.

    Parameters
    ----------
    model : Mixture
        A means mixture with the sign target.
    w : array_like (d,)
        The direction (d >= 2); only ``w[:2]`` and ``|w[2:]|^2`` matter.
    nodes : int
        Gauss-Legendre nodes per half-line of :math:`x_1`.

    Returns
    -------
    float
    """
    model = _check_model(model)
    w = V.finite_array(w, "w", ndim=1)
    if w.size < 2:
        raise ValueError(f"w must have at least 2 entries, got {w.size}")
    return _test_error(model, w[:2], float(w[2:] @ w[2:]), V.positive_int(nodes, "nodes"))


def _test_error(model, a, q, nodes):
    P, H1, M2, R, y, _, _ = _grid(model, nodes, 1)
    mean, S = _field(a, q, H1, M2, R)
    return float(P @ _error_given(mean, S, y))


class LogisticErrors(NamedTuple):
    """Limits of the estimator of {prf:ref}`def-ch11-logistic` ({prf:ref}`prop-ch11-logistic`)."""

    test: float
    r"""Test classification error :math:`\P(\sign\ip{\hat w}x\neq y)` (NaN for a linear
    target)."""
    train: float
    r"""Training classification error :math:`\P(\sign t\neq y)` (NaN for a linear target)."""
    train_loss: float
    r""":math:`\E\,\ell(y, t)`, without the penalty."""
    test_mse: float
    r""":math:`\E(y - \ip{\hat w}x)^2`: the ridge test error for the square loss."""
    a: np.ndarray
    r"""Coefficients of :math:`\hat w` on :math:`h = (x_1, x_2)`."""
    q: float
    r""":math:`\norm{\hat w_\perp}^2`."""
    V: float
    """The prox parameter."""


def logistic_theory(model, lam, alpha, loss="logistic", nodes=40, hermite=32, damping=0.2,
                    tol=1e-12, max_iter=5000) -> LogisticErrors:
    r"""The fixed point {eq}`eq-ch11-logistic-fp` ({prf:ref}`prop-ch11-logistic`)

    .. math::
        \lambda a = \E[f h],\quad q = \alpha V^2\E[f^2],\quad
        V = \frac1{\alpha(\lambda + \E[\ell''(t)/(1 + V\ell''(t))])},

    :math:`f = (t - \omega)/V = -\ell'(y, t)`, solved by damped iteration, and the errors.

    Parameters
    ----------
    model : Mixture
        A noiseless means mixture (sign target for the logistic loss) or its matched Gaussian.
    lam : float
        Ridge, > 0.
    alpha : float
        Samples per dimension, > 0.
    loss : str
        A key of :data:`LOSSES` (``"square"``: ridge, the oracle).
    nodes : int
        Gauss-Legendre nodes per half-line of :math:`x_1` (per cluster).
    hermite : int
        Gauss-Hermite nodes for the field :math:`\omega` given :math:`x_1`.
    damping : float
        Weight of the old iterate, in [0, 1).
    tol : float
        Relative change at which the iteration stops.
    max_iter : int
        Iteration budget (a ``RuntimeError`` if exhausted).

    Returns
    -------
    LogisticErrors
    """
    loss = _loss(loss)
    model = _check_model(model, loss)
    lam, alpha = V.positive_float(lam, "lam"), V.positive_float(alpha, "alpha")
    nodes, hermite = V.positive_int(nodes, "nodes", 2), V.positive_int(hermite, "hermite", 2)
    damping = V.nonneg_float(damping, "damping")
    if damping >= 1:
        raise ValueError(f"damping must lie in [0, 1), got {damping}")
    P, H1, M2, R, y, u, wu = _grid(model, nodes, hermite)
    W = P[:, None] * wu[None, :]
    Y = y[:, None]

    def moments(a, q, Vp):
        mean, S = _field(a, q, H1, M2, R)
        omega = mean[:, None] + S[:, None] * u[None, :]
        t = prox(omega, Y, Vp, loss)
        f, l2 = _minus_grad(loss, Y, t), _hess(loss, Y, t)
        k = W * l2 / (1 + Vp * l2)      # -d f / d omega, weighted
        beta = np.divide(a[1] * R**2, S, out=np.zeros_like(S), where=S > 0)[:, None]
        h2 = M2[:, None] + beta * u      # E[x2 | c, x1, omega]
        var2 = (R**2)[:, None] - beta**2  # Var(x2 | c, x1, omega)
        A = np.array([[np.sum(k * H1[:, None] ** 2), np.sum(k * H1[:, None] * h2)],
                      [0.0, np.sum(k * (h2**2 + var2))]])
        A[1, 0] = A[0, 1]
        fh = np.array([np.sum(W * f * H1[:, None]), np.sum(W * f * h2)])
        return t, fh, np.sum(W * f * f), np.sum(k), A

    # lam a = E[f h] is solved by one Newton step in a per sweep, d E[f h] / da = -A (for the
    # square loss it is then exact given V); q and V by damped iteration
    a, q, Vp = np.zeros(2), 1.0, 1.0 / (alpha * (lam + 1.0))
    for _ in range(V.positive_int(max_iter, "max_iter")):
        _, fh, f2, g, A = moments(a, q, Vp)
        new = (np.linalg.solve(lam * np.eye(2) + A, fh + A @ a), alpha * Vp**2 * f2,
               1.0 / (alpha * (lam + g)))
        change = max(np.max(np.abs(new[0] - a)) / (1 + np.max(np.abs(a))),
                     abs(new[1] - q) / q, abs(new[2] - Vp) / Vp)
        a = new[0]
        q = damping * q + (1 - damping) * new[1]
        Vp = damping * Vp + (1 - damping) * new[2]
        if change <= tol:
            break
    else:
        raise RuntimeError("the fixed point eq-ch11-logistic-fp did not converge")
    t, *_ = moments(a, q, Vp)
    C, b, y2 = label_moments(model)
    mse = float(y2 - 2 * a @ b + a @ C @ a + q)
    if model.target == "sign":
        mean, S = _field(a, q, H1, M2, R)
        yw0 = -Vp * y * _minus_grad(loss, y, 0.0)  # sign(t) = y  iff  y omega > y omega0
        train = float(P @ ndtr(-(y * mean - yw0) / S))
        test = _test_error(model, a, q, nodes)
    else:
        train = test = float("nan")
    return LogisticErrors(test, train, float(np.sum(W * _value(loss, Y, t))), mse, a, float(q),
                          float(Vp))


class AlignmentCurve(NamedTuple):
    r"""Limits of logistic regression against the alignment :math:`\theta` of the means with
    :math:`\wstar` ({prf:ref}`prop-ch11-logistic`), for the mixture and its matched Gaussian."""

    thetas: np.ndarray
    mixture: np.ndarray
    """Test classification error of the mixture at each angle."""
    gaussian: np.ndarray
    """Test classification error of the matched Gaussian at each angle."""
    mixture_loss: np.ndarray
    """Training loss of the mixture at each angle."""
    gaussian_loss: np.ndarray
    """Training loss of the matched Gaussian at each angle."""


def alignment_curve(m, lam, alpha, thetas) -> AlignmentCurve:
    r"""{prf:ref}`prop-ch11-logistic` for the means mixture of norm ``m`` with the sign label
    ({prf:ref}`def-ch11-means`) and for its matched Gaussian, at each angle of ``thetas``.

    Parameters
    ----------
    m : float
        Norm of the cluster means.
    lam : float
        Ridge, > 0.
    alpha : float
        Samples per dimension.
    thetas : sequence of float
        Angles between :math:`v` and :math:`\wstar`, in [0, pi/2].

    Returns
    -------
    AlignmentCurve
    """
    m = V.nonneg_float(m, "m")
    thetas = V.finite_array(thetas, "thetas", ndim=1)
    if thetas.size == 0 or np.any(thetas < 0) or np.any(thetas > math.pi / 2 + 1e-12):
        raise ValueError("thetas must be a non-empty sequence of angles in [0, pi/2]")
    out = np.zeros((4, thetas.size))
    for j, th in enumerate(thetas):
        model = means_mixture(m, float(th), "sign")
        mix, gau = (logistic_theory(x, lam, alpha) for x in (model, model.matched_gaussian()))
        out[:, j] = mix.test, gau.test, mix.train_loss, gau.train_loss
    return AlignmentCurve(thetas, *out)


class LogisticRun(NamedTuple):
    """One fit of {prf:ref}`def-ch11-logistic` and its errors."""

    w: np.ndarray
    """The estimator."""
    test: float
    """Exact population test classification error under the model."""
    train: float
    """Training classification error."""
    train_loss: float
    """Training loss, without the penalty."""


def _objective(X, y, w, lam):
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * lam * (w @ w)


def logistic_fit(X, y, lam, model, tol=1e-10, max_iter=100) -> LogisticRun:
    r"""Logistic regression {prf:ref}`def-ch11-logistic` by Newton's method with a
    backtracking line search and Cholesky solves (the :math:`n\times n` Woodbury form when
    :math:`n < d`), from :math:`w = 0`, until the gradient norm is below ``tol``.

    Parameters
    ----------
    X : ndarray (n, d)
    y : ndarray (n,)
        Labels +-1.
    lam : float
        Ridge, > 0.
    model : Mixture
        The law of the data, for the exact test error.
    tol : float
        Gradient norm at which Newton stops.
    max_iter : int
        Newton steps (a ``RuntimeError`` if exhausted).

    Returns
    -------
    LogisticRun
    """
    X, y = V.data_pair(X, y)
    lam = V.positive_float(lam, "lam")
    model = _check_model(model)
    tol = V.positive_float(tol, "tol")
    if np.any(np.abs(y) != 1):
        raise ValueError("labels must be +-1")
    n, d = X.shape
    dual = n < d
    K = X @ X.T if dual else None
    w = np.zeros(d)
    J = _objective(X, y, w, lam)
    for _ in range(V.positive_int(max_iter, "max_iter")):
        s = y * (X @ w)
        grad = -X.T @ (y * expit(-s)) / n + lam * w
        if np.linalg.norm(grad) <= tol:
            break
        D = expit(s) * expit(-s)
        if dual:                          # (lam + X^T D X / n)^{-1} by Woodbury
            r = np.sqrt(D)
            M = cho_factor(lam * n * np.eye(n) + r[:, None] * K * r[None, :])
            step = -(grad - X.T @ (r * cho_solve(M, r * (X @ grad)))) / lam
        else:
            H = X.T @ (D[:, None] * X) / n + lam * np.eye(d)
            step = -cho_solve(cho_factor(H), grad)
        slope, tt = grad @ step, 1.0
        if -slope <= 1e-12 * (1 + J):     # a decrease below rounding: the full Newton step
            w = w + step
            J = _objective(X, y, w, lam)
            continue
        while True:
            J_new = _objective(X, y, w + tt * step, lam)
            if J_new <= J + 1e-4 * tt * slope or tt < 1e-10:
                break
            tt /= 2
        w, J = w + tt * step, J_new
    else:
        raise RuntimeError(f"Newton's method did not reach |grad| <= {tol} in {max_iter} steps")
    s = y * (X @ w)
    return LogisticRun(w, _test_error(model, w[:2], float(w[2:] @ w[2:]), 40),
                       float(np.mean(s <= 0)), float(np.mean(np.logaddexp(0.0, -s))))


class LogisticSweep(NamedTuple):
    """Errors of {prf:ref}`def-ch11-logistic` over seeds and sizes: arrays (seeds, dims)."""

    dims: np.ndarray
    test: np.ndarray
    train: np.ndarray
    train_loss: np.ndarray


def logistic_sweep(model, dims, alpha, lam, seeds, rng=None) -> LogisticSweep:
    r"""Logistic regression {prf:ref}`def-ch11-logistic` at :math:`n = \alpha d` over ``seeds``
    and ``dims``; the data of size ``d`` and seed ``s`` come from stream ``(d, s)`` of ``rng``
    through :func:`lecnotes.mixtures.experiments.sample`, so a mixture and its matched
    Gaussian are paired.

    Parameters
    ----------
    model : Mixture
        A noiseless means mixture with the sign target, or its matched Gaussian.
    dims : sequence of int
        Dimensions (>= 3).
    alpha : float
        Samples per dimension.
    lam : float
        Ridge, > 0.
    seeds : int
        Number of seeds.
    rng : Generator, int or None
        Parent random state.

    Returns
    -------
    LogisticSweep
    """
    model = _check_model(model)
    dims = np.array([V.positive_int(int(d) if float(d).is_integer() else d, "dims", minimum=3)
                     for d in np.atleast_1d(dims)])
    alpha = V.positive_float(alpha, "alpha")
    lam = V.positive_float(lam, "lam")
    seeds = V.positive_int(seeds, "seeds")
    out = np.zeros((3, seeds, dims.size))
    for j, d in enumerate(dims):
        n = max(1, int(round(alpha * d)))
        for s in range(seeds):
            X, y = sample(model, n, int(d), rng=V.stream(rng, int(d), s))
            out[:, s, j] = logistic_fit(X, y, lam, model)[1:]
    return LogisticSweep(dims, *out)
