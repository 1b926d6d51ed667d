"""Kernel benchmarks of lecnotes against the machine's limit (used by benchmarks/run.py).

Every ratio is measured in the same run as its reference (best of several repetitions), so it
does not depend on how fast the machine is, only on how close the kernel gets to the BLAS.
"""

from __future__ import annotations

import time
from math import factorial, pi, sqrt

import numpy as np


def best_time(fn, repeat: int = 3, min_time: float = 0.0) -> float:
    """Best wall time of ``fn()`` over ``repeat`` runs (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return max(best, min_time)


# ---------------------------------------------------------------------------------------
def hermite_accuracy():
    from lecnotes.core.hermite import he, hermite_coefficients
    from lecnotes.core.targets import LINKS

    phi0 = 1 / sqrt(2 * pi)
    kmax = 10
    exact = {
        "quadratic": [1, 0, sqrt(2)] + [0] * (kmax - 2),
        "cubic": [0, 3, 0, sqrt(6)] + [0] * (kmax - 3),
        "he4": [0, 0, 0, 0, sqrt(24)] + [0] * (kmax - 4),
        "relu": [phi0, 0.5] + [float(he(k - 2, 0.0)) * phi0 / sqrt(factorial(k))
                               for k in range(2, kmax + 1)],
        "abs": [2 * phi0, 0] + [2 * float(he(k - 2, 0.0)) * phi0 / sqrt(factorial(k))
                                for k in range(2, kmax + 1)],
        "sign": [0.0] + [(2 * phi0 * float(he(k - 1, 0.0)) / sqrt(factorial(k))) if k % 2 else 0.0
                         for k in range(1, kmax + 1)],
    }
    rows = []
    for name, ex in exact.items():
        c = hermite_coefficients(LINKS[name], kmax)
        t = best_time(lambda n=name: hermite_coefficients(LINKS[n], kmax), repeat=5)
        rows.append({"link": name, "error": float(np.max(np.abs(c - np.array(ex)))),
                     "ms": 1e3 * t})
    return ("Hermite coefficients",
            "`hermite_coefficients(link, 10)`: largest error over the normalised coefficients "
            "c_0..c_10 against their closed forms, and time per call. Target: 1e-8 for "
            "polynomials, 1e-6 for discontinuous links.",
            rows, [("link", "link", ""), ("error", "max error", ".1e"), ("ms", "time (ms)",
                                                                          ".2f")])


# ---------------------------------------------------------------------------------------
def gradient_ratio():
    try:
        from lecnotes.models.networks import first_layer_gradient
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    rows = []
    for d, p, n in [(1000, 1000, 4000), (512, 1024, 2048), (2000, 500, 8000)]:
        X = rng.standard_normal((n, d))
        W = rng.standard_normal((p, d)) / np.sqrt(d)
        a = rng.standard_normal(p) / np.sqrt(p)
        y = rng.standard_normal(n)
        M = rng.standard_normal((n, p))

        def two_products():
            X @ W.T
            X.T @ M

        t_ref = best_time(two_products, repeat=5)
        t_grad = best_time(lambda: first_layer_gradient(W, a, X, y, activation="relu"),
                           repeat=5)
        rows.append({"size": f"d={d}, p={p}, n={n}", "grad_ms": 1e3 * t_grad,
                     "ref_ms": 1e3 * t_ref, "ratio": t_grad / t_ref,
                     "target": "ok" if t_grad / t_ref <= 1.5 else "MISSED"})
    return ("First-layer gradient",
            "`networks.first_layer_gradient` (ReLU, square loss) against the two matrix products "
            "it needs, `X @ W.T` (n x p) and `X.T @ M` (d x p), timed in the same run. Target: "
            "ratio <= 1.5.",
            rows, [("size", "size", ""), ("grad_ms", "gradient (ms)", ".1f"),
                   ("ref_ms", "2 products (ms)", ".1f"), ("ratio", "ratio", ".2f"),
                   ("target", "<= 1.5x", "")])


# ---------------------------------------------------------------------------------------
def spectral_vs_dense():
    try:
        from lecnotes.spectral.estimators import spectral_estimator
    except ImportError:
        return None
    rng = np.random.default_rng(1)
    rows = []
    for d in [100, 300, 1000, 2000, 4000]:
        n = 4 * d
        X = rng.standard_normal((n, d))
        y = X[:, 0] ** 2
        T = lambda t: np.minimum(t, 3.0) - 1.0  # noqa: E731

        def dense():
            D = (X.T * T(y)) @ X / n
            np.linalg.eigh(D)

        t_free = best_time(lambda: spectral_estimator(X, y, T), repeat=2)
        t_dense = best_time(dense, repeat=2) if d <= 2000 else float("nan")
        rows.append({"d": d, "n": n, "free_s": t_free, "dense_s": t_dense,
                     "ratio": t_dense / t_free})
    return ("Spectral estimator: matrix-free vs dense",
            "`spectral.spectral_estimator` (Lanczos on a LinearOperator, O(nd) per product) "
            "against forming D_T = X^T diag(T) X / n and calling `numpy.linalg.eigh`, "
            "for n = 4d (dense skipped beyond d = 2000). Ratio > 1: matrix-free is faster.",
            rows, [("d", "d", "d"), ("n", "n", "d"), ("free_s", "matrix-free (s)", ".3f"),
                   ("dense_s", "dense eigh (s)", ".3f"), ("ratio", "dense / free", ".1f")])


# ---------------------------------------------------------------------------------------
def partial_trace_products():
    from lecnotes.core.hermite_tensors import he4_partial_trace, hermite_tensor

    rng = np.random.default_rng(2)
    rows = []
    for d in [4, 8, 12, 16]:
        n = 2 * d * d
        X = rng.standard_normal((n, d))
        w = rng.standard_normal(n)
        v = rng.standard_normal(d)

        def explicit():
            M = np.zeros((d, d))
            for i in range(n):
                M += w[i] * np.einsum("abjj->ab", hermite_tensor(X[i], 4))
            return M @ v / n

        # best of 3: a single run at d = 4 once took 8x its time (the first call's warm-up),
        # which bent the extrapolation of the row below (d^1.2 instead of d^2.8)
        t_exp = best_time(explicit, repeat=3)
        t_free = best_time(lambda: he4_partial_trace(X, w, v), repeat=5)
        err = np.max(np.abs(explicit() - he4_partial_trace(X, w, v)))
        rows.append({"d": d, "n": n, "explicit_s": t_exp, "free_ms": 1e3 * t_free,
                     "speedup": t_exp / t_free, "err": err})
    from lecnotes.core.stats import loglog_slope

    big = []
    for d in [50, 100, 150, 200]:
        X = rng.standard_normal((2 * d * d, d))
        w = rng.standard_normal(2 * d * d)
        v = rng.standard_normal(d)
        big.append(best_time(lambda X=X, w=w, v=v: he4_partial_trace(X, w, v), repeat=3))

    fits = [("explicit", [r["d"] for r in rows], [r["explicit_s"] for r in rows]),
            ("matrix-free", [50, 100, 150, 200], big)]
    for label, ds, ts in fits:
        slope, icpt, _ = loglog_slope(np.array(ds, dtype=float), np.array(ts))
        d10 = float(np.exp((np.log(10.0) - icpt) / slope))
        rows.append({"d": f"{label}: largest d in 10 s", "n": "2 d^2",
                     "explicit_s": "", "free_ms": "", "speedup": "",
                     "err": f"about {d10:.0f} (time ~ d^{slope:.1f} fitted on d = "
                            f"{ds[0]}..{ds[-1]}, extrapolated)"})
    return ("Degree-4 partial trace: matrix-free vs explicit tensor",
            "One product with the partial trace of (1/n) sum_i T_i He_4(x_i), n = 2 d^2: the "
            "matrix-free identity of chapter 5 (`hermite.he4_partial_trace`, O(nd)) against "
            "forming every d^4 Hermite tensor and contracting it (O(n d^4)). The last two rows "
            "extrapolate the fitted power laws to the largest d each reaches in 10 s.",
            rows, [("d", "d", ""), ("n", "n", ""), ("explicit_s", "explicit (s)", ".3f"),
                   ("free_ms", "matrix-free (ms)", ".3f"), ("speedup", "speed-up", ".0f"),
                   ("err", "max difference", ".1e")])


# ---------------------------------------------------------------------------------------
def scaling():
    from lecnotes.core.hermite_tensors import he4_partial_trace
    from lecnotes.core.stats import loglog_slope
    from lecnotes.first_moment.experiments import first_moment

    rng = np.random.default_rng(3)
    rows = []
    ds = np.array([500, 1000, 2000, 4000])
    times = []
    for d in ds:
        X = rng.standard_normal((4 * d, d))
        y = X[:, 0]
        times.append(best_time(lambda X=X, y=y: first_moment(X, y), repeat=5))
    slope = loglog_slope(ds, np.array(times))[0]
    rows.append({"kernel": "first_moment, n = 4d", "expected": 2.0, "fitted": slope,
                 "largest": f"d = 4000 in {times[-1]:.3f} s"})
    times = []
    for d in ds:
        X = rng.standard_normal((4 * d, d))
        times.append(best_time(lambda X=X: he4_partial_trace(X, X[:, 0], X[0]), repeat=5))
    slope = loglog_slope(ds, np.array(times))[0]
    rows.append({"kernel": "he4_partial_trace product, n = 4d", "expected": 2.0,
                 "fitted": slope, "largest": f"d = 4000 in {times[-1]:.3f} s"})
    try:
        from lecnotes.spectral.estimators import spectral_estimator

        times = []
        for d in ds:
            X = rng.standard_normal((4 * d, d))
            y = X[:, 0] ** 2
            times.append(best_time(
                lambda X=X, y=y: spectral_estimator(X, y, lambda t: np.minimum(t, 3) - 1), 2))
        slope = loglog_slope(ds, np.array(times))[0]
        rows.append({"kernel": "spectral_estimator, n = 4d", "expected": 2.0,
                     "fitted": slope, "largest": f"d = 4000 in {times[-1]:.2f} s"})
    except ImportError:
        pass
    return ("Scaling with the dimension",
            "Time against d at fixed n/d = 4, fitted exponent of a power law (log-log least "
            "squares over d = 500..4000) against the expected one (n d = 4 d^2 work per "
            "product).",
            rows, [("kernel", "kernel", ""), ("expected", "expected exponent", ".1f"),
                   ("fitted", "fitted exponent", ".2f"), ("largest", "largest size", "")])


def all_benchmarks():
    out = []
    for bench in [hermite_accuracy, gradient_ratio, spectral_vs_dense, partial_trace_products,
                  scaling]:
        result = bench()
        if result is not None:
            out.append(result)
    return out
