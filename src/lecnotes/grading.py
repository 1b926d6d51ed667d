r"""Graded checks for the coding exercises (every chapter; instructors' assignments).

Each ``check_*`` function takes the student's function, runs it on instances the student
does not see (drawn inside the check), compares with a reference implementation kept in this
module, and reports in words what is wrong: the shape or type of the answer, a normalisation
or sign convention, or the accuracy. It never prints the expected values. A passing check
returns a :class:`Report` with ``passed=True``; a failing one raises :class:`GradingError`
(an ``AssertionError``) carrying the same report, so that an assignment notebook stops there.

The assignment notebook of a chapter (``make assignments``) calls these checks after the
stub the student completes.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .exponents import gen4_interval
from .hermite import gaussian_expectation
from .hermite_tensors import he4_partial_trace
from .kernels import relu_ntk
from .targets import get_link

__all__ = [
    "Report",
    "GradingError",
    "CHECKS",
    "check_noise_level",
    "check_relu_ntk",
    "check_gen4_partner",
    "check_optimal_q",
    "check_top_eigenvector",
    "check_partial_trace_matvec",
    "check_giant_step",
    "check_self_term",
]


class GradingError(AssertionError):
    """The student's function does not pass the check; the message says why in words."""


@dataclass
class Report:
    """Outcome of a check: what passed, and the first problem found (if any)."""

    exercise: str
    passed: bool
    instances: int
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = (f"{self.exercise}: all {self.instances} hidden instances pass"
                if self.passed else f"{self.exercise}: not yet")
        return "\n".join([head, *(f"  - {m}" for m in self.messages)])

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.passed else "#cf222e"
        items = "".join(f"<li>{m}</li>" for m in self.messages)
        verdict = f"all {self.instances} hidden instances pass" if self.passed else "not yet"
        return (f'<div style="border-left:4px solid {color};padding:0.3em 0.8em">'
                f"<strong>{self.exercise}</strong>: {verdict}<ul>{items}</ul></div>")


def _call(func: Callable, *args):
    try:
        return func(*args), None
    except NotImplementedError:
        return None, "the function is not written yet (it raises NotImplementedError)"
    except Exception as err:  # noqa: BLE001 - any failure of the student's code is reported
        return None, f"the function raised {type(err).__name__}: {err}"


def _as_scalar(value):
    arr = np.asarray(value, dtype=float) if value is not None else None
    if arr is None or arr.shape not in ((), (1,)):
        shape = None if value is None else np.shape(value)
        return None, f"expected a single number, got an object of shape {shape}"
    v = float(arr.reshape(()))
    if not np.isfinite(v):
        return None, "the function returned NaN or infinity"
    return v, None


def _finish(name, problems, n):
    report = Report(name, not problems, n, problems[:3])
    if problems:
        raise GradingError(str(report))
    return report


def _diagnose_ratio(ratio: float, d: int | None = None) -> str | None:
    """Name common convention mistakes from the ratio student / reference."""
    if np.isclose(ratio, -1.0, rtol=1e-3):
        return "the sign is reversed"
    if d is not None and np.isclose(ratio, (d - 1) / d, rtol=1e-4):
        return "the normalisation looks off by a factor (d-1)/d: divide by d-1, not d"
    if d is not None and np.isclose(ratio, d / (d - 1), rtol=1e-4):
        return "the normalisation looks off by a factor d/(d-1): divide by d-1, not d"
    for k, name in [(2, "2"), (np.sqrt(2), "sqrt(2)"), (np.sqrt(2 * np.pi), "sqrt(2 pi)")]:
        if np.isclose(ratio, k, rtol=1e-3) or np.isclose(ratio, 1 / k, rtol=1e-3):
            return f"off by a factor {name}: check the Hermite normalisation (He_k vs h_k)"
    return None


# ---------------------------------------------------------------------------------------
# Chapter 0: the noise level of the first-moment estimator
# ---------------------------------------------------------------------------------------
def _ref_noise_level(link, d):

    f = get_link(link)
    bp = getattr(f, "breakpoints", ())
    along = gaussian_expectation(lambda g: (f(g) * g) ** 2, breakpoints=bp)
    energy = gaussian_expectation(lambda g: f(g) ** 2, breakpoints=bp)
    return float(along / ((d - 1) * energy))


def check_noise_level(func: Callable) -> Report:
    r"""Exercise ``ex-ch0-noise-level``: ``func(link, d)`` returns
    :math:`\mathrm{Var}(\varphi(G)G)/((d-1)\mathbb E[\varphi(G)^2])` for links with
    :math:`c_1 = 0`."""
    rng = np.random.default_rng()
    cases = [("abs", int(rng.integers(50, 900))), ("quadratic", int(rng.integers(50, 900))),
             ("he4", int(rng.integers(50, 900))), ("he2", int(rng.integers(50, 900)))]
    problems = []
    for link, d in cases:
        out, err = _call(func, link, d)
        if err:
            problems.append(err)
            break
        val, err = _as_scalar(out)
        if err:
            problems.append(err)
            break
        ref = _ref_noise_level(link, d)
        if not np.isclose(val, ref, rtol=1e-6):
            hint = _diagnose_ratio(val / ref, d) if ref else None
            problems.append(hint or f"the value for one hidden link is off by "
                            f"{abs(val / ref - 1):.1%} (relative); it must be accurate to 1e-6")
            break
    return _finish("noise level (chapter 0)", problems, len(cases))


# ---------------------------------------------------------------------------------------
# Chapter 3: the optimal first-moment preprocessing for the noisy sign
# ---------------------------------------------------------------------------------------
def _ref_optimal_q(tau):

    return float(2 / np.pi * gaussian_expectation(lambda z: np.tanh((1 + tau * z) / tau**2)
                                                  ** 2))


def check_optimal_q(func: Callable) -> Report:
    r"""Exercise ``ex-ch3-coding``: ``func(tau)`` returns :math:`q = \mathbb E[\mathbb E[G|Y]^2]`
    for :math:`Y = \mathrm{sign}(G) + \tau Z`."""
    rng = np.random.default_rng()
    taus = np.sort(rng.uniform(0.2, 3.0, size=4))
    problems = []
    for tau in taus:
        out, err = _call(func, float(tau))
        if err:
            problems.append(err)
            break
        val, err = _as_scalar(out)
        if err:
            problems.append(err)
            break
        ref = _ref_optimal_q(tau)
        if not 0 <= val <= 1:
            problems.append("q is a squared correlation and must lie in [0, 1]")
            break
        if not np.isclose(val, ref, rtol=1e-6, atol=1e-9):
            if np.isclose(val, ref * np.pi / 2, rtol=1e-4):
                problems.append("missing the factor 2/pi = E|G|^2: E[G | sign G] = sqrt(2/pi) "
                                "sign G")
            elif np.isclose(val, 2 / np.pi / (1 + tau**2), rtol=1e-4):
                problems.append("this is mu^2/E[T^2] for the raw labels T(y) = y, not for the "
                                "optimal preprocessing")
            else:
                problems.append(f"the value for one hidden noise level is off by "
                                f"{abs(val / ref - 1):.2%} (relative); it must be accurate to "
                                "1e-6")
            break
    return _finish("optimal q for the noisy sign (chapter 3)", problems, len(taus))


CHECKS = {"ex-ch0-noise-level": check_noise_level, "ex-ch3-coding": check_optimal_q}
"""Exercise label -> check function (used by the assignment builder and its tests)."""


# ---------------------------------------------------------------------------------------
# Chapter 1: the ReLU NTK in closed form
# ---------------------------------------------------------------------------------------
def check_relu_ntk(func: Callable) -> Report:
    r"""Exercise ``ex-ch1-ntk``: ``func(X, Z)`` returns the infinite-width ReLU NTK matrix
    :math:`\frac1{2d}k_1 + \frac12\langle x,z\rangle k_0` (shape ``(n_X, n_Z)``)."""

    rng = np.random.default_rng()
    d = int(rng.integers(5, 40))
    X = rng.standard_normal((int(rng.integers(3, 6)), d))
    Z = rng.standard_normal((int(rng.integers(6, 10)), d))  # n_X != n_Z: shapes are telling
    Z[0] = 2.5 * X[0]  # parallel pair: arccos(1 + rounding) must not give NaN
    Z[1] = -X[1]  # antiparallel pair
    problems = []
    out, err = _call(func, X, Z)
    if err:
        problems.append(err)
    else:
        K = np.asarray(out, dtype=float) if out is not None else None
        ref = relu_ntk(X, Z)
        if K is None or K.shape != ref.shape:
            shape = None if K is None else K.shape
            hint = " (transposed?)" if shape == ref.shape[::-1] else ""
            problems.append(f"expected an array of shape (n_X, n_Z) = {ref.shape}, got {shape}"
                            f"{hint}")
        elif not np.all(np.isfinite(K)):
            problems.append("the matrix has NaN entries: clip the cosine to [-1, 1] before "
                            "arccos (parallel inputs)")
        # arccos is ill-conditioned at antiparallel inputs: absolute tolerance on the scale
        elif not np.allclose(K, ref, rtol=1e-6, atol=(tol := 1e-6 * np.abs(ref).max())):
            first = 0.5 * (X @ Z.T) * (1 - np.arccos(np.clip(
                (X @ Z.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Z, axis=1)),
                -1, 1)) / np.pi)
            big = np.abs(ref) > tol
            ratio = np.median(K[big] / ref[big])
            if np.allclose(K, first, rtol=1e-6, atol=tol):
                problems.append("only the first-layer part <x,z> k_0 / 2 is there: add the "
                                "second-layer part k_1 / (2d)")
            elif np.allclose(K, ref - first, rtol=1e-6, atol=tol):
                problems.append("only the second-layer part k_1 / (2d) is there: add the "
                                "first-layer part <x,z> k_0 / 2")
            else:
                hint = _diagnose_ratio(ratio)
                problems.append(hint or "the entries differ from the NTK on hidden inputs by "
                                f"up to {np.max(np.abs(K - ref) / (np.abs(ref) + 1e-12)):.1%} "
                                "(relative)")
    return _finish("ReLU NTK (chapter 1)", problems, 1)


CHECKS["ex-ch1-ntk"] = check_relu_ntk


# ---------------------------------------------------------------------------------------
# Chapter 2: the partner b(a) of the generative-exponent-4 family
# ---------------------------------------------------------------------------------------
def check_gen4_partner(func: Callable) -> Report:
    r"""Exercise ``ex-ch2-partner``: ``func(a)`` returns the :math:`b>1` with
    :math:`a e^{-a^2/2} = b e^{-b^2/2}`, for :math:`0<a<1`."""

    rng = np.random.default_rng()
    alist = np.sort(rng.uniform(0.05, 0.95, size=5))
    problems = []
    for a in alist:
        out, err = _call(func, float(a))
        if err:
            problems.append(err)
            break
        val, err = _as_scalar(out)
        if err:
            problems.append(err)
            break
        ref = gen4_interval(float(a))[1]
        if np.isclose(val, a, rtol=1e-8):
            problems.append("this is a itself, the trivial solution: look for the root b > 1")
            break
        if val <= 1:
            problems.append("the partner must be larger than 1 (u exp(-u^2/2) peaks at u = 1)")
            break
        if abs(val - ref) > 1e-8 * max(1.0, ref):
            resid = val * np.exp(-val**2 / 2) - a * np.exp(-a**2 / 2)
            problems.append(f"not accurate enough: at one hidden a the equation is off by "
                            f"{abs(resid):.1e}; solve it to 1e-10")
            break
    return _finish("partner of a (chapter 2)", problems, len(alist))


CHECKS["ex-ch2-partner"] = check_gen4_partner


# ---------------------------------------------------------------------------------------
# Chapter 4: the top eigenvector of D_T
# ---------------------------------------------------------------------------------------
def check_top_eigenvector(func: Callable) -> Report:
    r"""Exercise ``ex-ch4-top-eigenvector``: ``func(X, y, T)`` returns the unit top eigenvector
    of :math:`D_T=\frac1n\sum_iT(y_i)x_ix_i^\top` (any sign)."""
    rng = np.random.default_rng()
    problems = []
    cases = 3
    for _ in range(cases):
        d = int(rng.integers(8, 40))
        n = int(rng.integers(3, 6)) * d
        X = rng.standard_normal((n, d))
        y = X[:, 0] ** 2 + 0.1 * rng.standard_normal(n)
        level = float(rng.uniform(2.5, 6.0))

        def T(t, level=level):
            return np.minimum(t, level) - 1.0

        out, err = _call(func, X.copy(), y.copy(), T)
        if err:
            problems.append(err)
            break
        v = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        if v.shape != (d,):
            problems.append(f"expected a vector of shape (d,) = ({d},), got shape {v.shape}")
            break
        if not np.all(np.isfinite(v)) or np.linalg.norm(v) == 0:
            problems.append("the vector has NaN entries or is zero")
            break
        if abs(np.linalg.norm(v) - 1) > 1e-6:
            problems.append("the vector is not normalised to unit length")
            break
        vals, vecs = np.linalg.eigh((X * T(y)[:, None]).T @ X / n)
        if abs(v @ vecs[:, -1]) > 1 - 1e-6:
            continue
        if abs(v @ vecs[:, 0]) > 1 - 1e-6:
            problems.append("this is the eigenvector of the smallest eigenvalue (eigh sorts "
                            "eigenvalues in increasing order)")
        elif abs(v @ np.linalg.eigh(X.T @ X)[1][:, -1]) > 1 - 1e-6:
            problems.append("the labels are not used: weight each x_i x_i^T by T(y_i)")
        else:
            problems.append("on a hidden data set the vector is not the top eigenvector of D_T "
                            f"(its overlap with it is {abs(v @ vecs[:, -1]):.3f})")
        break
    return _finish("top eigenvector of D_T (chapter 4)", problems, cases)


CHECKS["ex-ch4-top-eigenvector"] = check_top_eigenvector


# ---------------------------------------------------------------------------------------
# Chapter 6: one giant step in two matrix products
# ---------------------------------------------------------------------------------------
def _giant_step_variants(W, a, X, y, eta):
    """The reference update and the updates produced by common mistakes (name -> array)."""
    p, n = W.shape[0], X.shape[0]
    Z = X @ W.T
    act, dact = np.maximum(Z, 0.0), (Z > 0).astype(float)
    inv_sqrt_p = 1 / np.sqrt(p)
    f = act @ a * inv_sqrt_p

    def step(residual, deriv=dact, scale=inv_sqrt_p, norm=n):
        M = deriv * (residual / norm)[:, None] * (a * scale)[None, :]
        return W - eta * (M.T @ X)

    return {
        "reference": step(f - y),
        "the residual f - y is replaced by -y: that is the correlation loss; the square loss "
        "keeps the network output f": step(-y),
        "the output f lacks its factor p^(-1/2)": step(act @ a - y),
        "the gradient uses ReLU itself where its derivative (the indicator Z > 0) belongs":
            step(f - y, deriv=act),
        "the sign is reversed: a gradient step goes down the gradient, W - eta * grad":
            2 * W - step(f - y),
        "a factor 1/n is missing: the risk is the mean, not the sum, over samples":
            step(f - y, norm=1),
        "the chain rule misses the factor p^(-1/2) of the output in the gradient":
            step(f - y, scale=1.0),
    }


def _diagnose_step_ratio(ratio: float, p: int, n: int) -> str:
    """Words for an update parallel to the right one but of the wrong size."""
    named = [(2.0, "twice too large: the risk carries a factor 1/2, so its derivative in f is "
                   "f - y, not 2 (f - y)"),
             (0.5, "half the right size: the derivative of (f - y)^2 / 2 in f is f - y"),
             (float(n), "n times too large: the risk is the mean over samples"),
             (1 / n, "n times too small: divide by n once, not twice"),
             (float(p), "p times too large: check the two factors p^(-1/2)"),
             (1 / p, "p times too small: the factor p^(-1/2) appears once in f and once in "
                     "the gradient, not more"),
             (np.sqrt(p), "sqrt(p) times too large: check the factors p^(-1/2)"),
             (1 / np.sqrt(p), "sqrt(p) times too small: check the factors p^(-1/2)")]
    for value, words in named:
        if np.isclose(ratio, value, rtol=1e-4):
            return "the update points the right way but is " + words
    return ("the update points the right way but has the wrong size: check the factors 1/n, "
            "p^(-1/2) and eta")


def check_giant_step(func: Callable) -> Report:
    r"""Exercise ``ex-ch6-giant-step``: ``func(W, a, X, y, eta)`` returns
    :math:`W-\eta\nabla_W\hat R` for :math:`f = p^{-1/2}\mathrm{ReLU}(XW^\top)a` and
    :math:`\hat R = \frac1{2n}\sum_\nu(f(x_\nu)-y_\nu)^2` (shape ``(p, d)``)."""
    rng = np.random.default_rng()
    cases = []
    for _ in range(4):
        d, p, n = (int(v) for v in rng.choice(np.arange(5, 60), size=3, replace=False))
        n += 60  # more samples than the other sizes, and all three sizes differ
        W = rng.standard_normal((p, d)) / np.sqrt(d)
        a = rng.standard_normal(p) / np.sqrt(p)  # not symmetric: f differs from 0
        X = rng.standard_normal((n, d))
        y = X[:, 0] + 0.5 * rng.standard_normal(n)
        cases.append((W, a, X, y, float(rng.uniform(0.5, 3.0)) * p))
    problems = []
    for W, a, X, y, eta in cases:
        args = (W.copy(), a.copy(), X.copy(), y.copy(), eta)
        out, err = _call(func, *args)
        if err:
            problems.append(err)
            break
        arr = None if out is None else np.asarray(out, dtype=float)
        variants = _giant_step_variants(W, a, X, y, eta)
        ref = variants.pop("reference")
        if arr is None or arr.shape != ref.shape:
            shape = None if arr is None else arr.shape
            hint = " (transposed?)" if shape == ref.shape[::-1] else ""
            problems.append(f"expected the updated first layer, an array of shape (p, d) = "
                            f"{ref.shape}, got {shape}{hint}")
            break
        if not np.all(np.isfinite(arr)):
            problems.append("the result contains NaN or infinity")
            break
        if not np.array_equal(args[0], W):
            problems.append("the function modifies its input W in place: return a new array")
            break
        scale = np.abs(ref - W).max()
        if np.allclose(arr, ref, rtol=1e-7, atol=1e-9 * scale):
            continue
        if np.allclose(arr, W, rtol=0, atol=1e-9 * scale):
            problems.append("the weights did not move: return W - eta * gradient")
        elif np.allclose(arr, (W - ref) / eta, rtol=1e-6, atol=1e-9 * scale / eta):
            problems.append("this is the gradient, not the updated weights W - eta * gradient")
        else:
            hint = next((name for name, v in variants.items()
                         if np.allclose(arr, v, rtol=1e-6, atol=1e-9 * np.abs(v - W).max())),
                        None)
            if hint is None:
                step, ref_step = (arr - W).ravel(), (ref - W).ravel()
                ratio = float(step @ ref_step / (ref_step @ ref_step))
                if np.allclose(step, ratio * ref_step, rtol=1e-6, atol=1e-9 * scale):
                    hint = _diagnose_step_ratio(ratio, W.shape[0], X.shape[0])
            problems.append(hint or "the update differs from a gradient step of the square loss "
                            f"by up to {np.abs(arr - ref).max() / scale:.1%} of its size on a "
                            "hidden instance")
        break
    return _finish("one giant step (chapter 6)", problems, len(cases))


CHECKS["ex-ch6-giant-step"] = check_giant_step


# ---------------------------------------------------------------------------------------
# Chapter 5: the matrix-free product with the degree-4 partial trace
# ---------------------------------------------------------------------------------------
def check_partial_trace_matvec(func: Callable) -> Report:
    r"""Exercise ``ex-ch5-partial-trace-matvec``: ``func(X, t, v)`` returns :math:`Mv` for
    :math:`M=\frac1n\sum_it_i\sum_j\mathrm{He}_4(x_i)_{\cdot\cdot jj}`, without forming
    :math:`M` (the last instance has ``d = 2500``: a dense ``d x d`` matrix is detected by its
    memory)."""


    rng = np.random.default_rng()
    problems = []
    cases = [(int(rng.integers(5, 12)), int(rng.integers(15, 40))) for _ in range(3)]
    cases += [(int(rng.integers(30, 80)), int(rng.integers(200, 600))), (2500, 40)]
    for d, n in cases:
        X = rng.standard_normal((n, d)) * rng.uniform(0.8, 1.3)  # norms away from d
        t = rng.standard_normal(n)
        v = rng.standard_normal(d)
        big = d >= 1000
        if big:
            tracemalloc.start()
        try:
            out, err = _call(func, X.copy(), t.copy(), v.copy())
            peak = tracemalloc.get_traced_memory()[1] if big else 0
        finally:
            if big:
                tracemalloc.stop()
        if err:
            problems.append(err)
            break
        Mv = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        if Mv.shape != (d,):
            problems.append(f"expected a vector of shape (d,) = ({d},), got shape {Mv.shape}")
            break
        if not np.all(np.isfinite(Mv)):
            problems.append("the result has NaN or infinite entries")
            break
        ref = he4_partial_trace(X, t, v)
        scale = np.linalg.norm(ref)
        if np.linalg.norm(Mv - ref) <= 1e-8 * scale:
            if big and peak > 2 * d * d:  # bytes; a d x d float array takes 8 d^2
                problems.append(f"the product allocated {peak / 2**20:.0f} MB for d = {d}: it "
                                "seems to form a d x d matrix (or bigger); use two products "
                                "with X instead, O(nd) memory")
                break
            continue
        sq = np.einsum("ij,ij->i", X, X)
        Xv = X @ v

        def cand(hi, lo, X=X, t=t, Xv=Xv, n=n, v=v):
            return X.T @ (t * hi * Xv) / n - np.mean(t * lo) * v

        wrong = [
            (cand(sq - d - 4, 0 * sq), "the identity term -(|x|^2 - d - 2) delta_ab is missing"),
            (cand(sq - d - 2, sq - d - 4), "the constants are swapped: the x x^T term carries "
                                           "|x|^2 - d - 4 and the identity term |x|^2 - d - 2"),
            (cand(sq, 0 * sq), "this is the contraction of the monomial tensor x^(4): the "
                               "Hermite corrections (the terms with deltas) are missing"),
            (cand(sq - d, sq - d), "the constants 4 and 2 are missing: count the pairings of "
                                   "He_4 that involve the traced indices"),
            (n * ref, "the average over the samples is missing: divide by n"),
            (-ref, "the sign is reversed"),
            (ref / np.sqrt(24.0), "off by a factor sqrt(4!) = sqrt(24): use the unnormalised "
                                  "Hermite tensor He_4, not h_4"),
        ]
        hint = next((msg for w, msg in wrong if np.linalg.norm(Mv - w) <= 1e-6 * scale), None)
        problems.append(hint or "on a hidden instance the product is off by "
                        f"{np.linalg.norm(Mv - ref) / scale:.1%} (relative); it must be "
                        "accurate to 1e-8")
        break
    return _finish("partial-trace product (chapter 5)", problems, len(cases))


CHECKS["ex-ch5-partial-trace-matvec"] = check_partial_trace_matvec


# ---------------------------------------------------------------------------------------
# Chapter 7: the own-label part of the pre-activation shift (reused batch)
# ---------------------------------------------------------------------------------------
def _ref_self_term(X, y, W0, a, eta, dsigma):
    sq = np.einsum("ij,ij->i", X, X)
    return eta * dsigma(X @ W0.T) * (y * sq / X.shape[0])[:, None] * a[None, :]


def check_self_term(func: Callable) -> Report:
    r"""Exercise ``ex-ch7-self-term``: ``func(X, y, W0, a, eta, dsigma)`` returns the (n, p)
    matrix :math:`\eta\,a_j\,y_i\,\sigma'(\langle w_j^0,x_i\rangle)\,\|x_i\|^2/n`, the own-label
    part of the pre-activation shift after one correlation-loss step (chapter 7)."""
    rng = np.random.default_rng()
    problems = []
    acts = [("tanh", lambda u: 1.0 - np.tanh(u) ** 2),
            ("relu", lambda u: (u > 0).astype(float)),
            ("sin+cos", lambda u: np.cos(u) - np.sin(u))]
    cases = len(acts)
    for _name, ds in acts:
        n, d, p = (int(rng.integers(6, 30)), int(rng.integers(4, 25)), int(rng.integers(3, 12)))
        while len({n, p}) < 2:  # n != p, so that a transposed answer is detected by its shape
            p += 1
        X = rng.standard_normal((n, d)) * rng.uniform(0.5, 1.5, size=(n, 1))  # unequal norms
        y = rng.standard_normal(n)
        W0 = rng.standard_normal((p, d)) / np.sqrt(d)
        a = rng.choice([-1.0, 1.0], p) * rng.uniform(0.5, 2.0, p) / p
        eta = float(rng.uniform(0.5, 3.0)) * p
        out, err = _call(func, X.copy(), y.copy(), W0.copy(), a.copy(), eta, ds)
        if err:
            problems.append(err)
            break
        M = np.asarray(out, dtype=float) if out is not None else np.zeros(0)
        ref = _ref_self_term(X, y, W0, a, eta, ds)
        if M.shape != ref.shape:
            hint = " (transposed?)" if M.shape == ref.shape[::-1] else ""
            problems.append(f"expected an array of shape (n, p) = {ref.shape}, got {M.shape}"
                            f"{hint}")
            break
        if not np.all(np.isfinite(M)):
            problems.append("the matrix has NaN or infinite entries")
            break
        scale = np.abs(ref).max()
        if np.allclose(M, ref, rtol=1e-8, atol=1e-10 * scale):
            continue
        sq = np.einsum("ij,ij->i", X, X)
        Z = X @ W0.T
        wrong = {
            "the factor sigma'(<w_j, x_i>) is missing: the own-label term is "
            "eta a_j y_i sigma'(z_ij) |x_i|^2 / n (dropping it is the simplification under which "
            "ReLU seems to gain nothing)": eta * (y * sq / n)[:, None] * a[None, :],
            "|x_i|^2 was replaced by d: use the actual squared norm of each sample":
                eta * ds(Z) * (y * d / n)[:, None] * a[None, :],
            "the second-layer weight a_j is missing": eta * ds(Z) * (y * sq / n)[:, None],
            "the 1/n of the empirical risk is missing": ref * n,
            "the sign is reversed: W_1 = W_0 - eta * gradient, and the gradient of the "
            "correlation loss is -(1/n) sum_k a_j y_k sigma'(z_kj) x_k": -ref,
            "this is the whole shift X (W_1 - W_0)^T, including the other samples: keep only "
            "the term k = i": eta * (X @ X.T) @ (ds(Z) * y[:, None]) * a[None, :] / n,
        }
        for message, candidate in wrong.items():
            if np.allclose(M, candidate, rtol=1e-8, atol=1e-10 * scale):
                problems.append(message)
                break
        else:
            rel = np.max(np.abs(M - ref)) / scale
            problems.append(f"on hidden data the entries differ from the own-label term by up to "
                            f"{rel:.1%} of its largest entry")
        break
    return _finish("own-label term (chapter 7)", problems, cases)


CHECKS["ex-ch7-self-term"] = check_self_term
