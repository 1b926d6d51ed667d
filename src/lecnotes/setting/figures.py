r"""Chapter 0, the setting: the chapter's multi-panel figures.

Each function draws one figure of ``lectures/00_setting.ipynb`` from values the notebook has
computed (or, for the Hermite figure, from the links by quadrature) and returns the
``matplotlib`` figure; the notebook shows it. Colours follow the active colour cycle (the
book's palette once :func:`lecnotes.book.plotting.use_style` has run) and error bars are the
mean and standard error over seeds (:func:`lecnotes.core.stats.mean_and_error`), as in
:func:`lecnotes.book.plotting.errorbar_over_seeds`; the module imports no book
infrastructure.
"""

from __future__ import annotations

import numpy as np

from lecnotes.book.plotting import errorbar_over_seeds
from lecnotes.core import validate as V
from lecnotes.core.hermite import gaussian_expectation, hermite_coefficients
from lecnotes.core.targets import LINKS

__all__ = ["hermite_decay_figure", "first_moment_figure"]


def hermite_decay_figure(links=("sign", "relu", "tanh", "he3"), kmax: int = 30):
    r"""Squared Hermite coefficients and the Parseval tail of some links (chapter 0).

    {prf:ref}`def-hermite`, {eq}`eq-ch0-hermite-expansion`: left, :math:`c_k^2` against
    :math:`k` (zeros omitted); right, the energy above degree :math:`k`,
    :math:`\E\varphi(G)^2-\sum_{j\le k}c_j^2`, drawn only where it exceeds the rounding of the
    sum (:math:`10^{-12}` of the energy).

    Parameters
    ----------
    links : sequence of str
        Names of links of :data:`lecnotes.core.targets.LINKS`.
    kmax : int
        Largest degree, at least 1.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    kmax = V.positive_int(kmax, "kmax")
    if isinstance(links, str) or not len(links):
        raise ValueError(f"links must be a non-empty sequence of link names, got {links!r}")
    unknown = [name for name in links if name not in LINKS]
    if unknown:
        raise ValueError(f"links must be names of LINKS ({', '.join(LINKS)}), got {unknown}")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), layout="constrained")
    ks = np.arange(kmax + 1)
    for name in links:
        c = hermite_coefficients(LINKS[name], kmax)
        energy = gaussian_expectation(lambda g, f=LINKS[name]: f(g) ** 2, breakpoints=(0.0,))
        nz = c**2 > 1e-28
        axes[0].semilogy(ks[nz], c[nz] ** 2, "o-", ms=3, label=name)
        tail = energy - np.cumsum(c**2)
        exact = tail > 1e-12 * energy  # below: rounding of the sum, not energy (He_3: zero)
        axes[1].semilogy(ks[exact], tail[exact], label=name)
    axes[0].set(xlabel="degree $k$", ylabel="$c_k^2$", title="squared coefficients")
    axes[1].set(xlabel="degree $k$", ylabel="energy above degree $k$", title="Parseval tail")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center",
               ncol=len(links))
    return fig


def first_moment_figure(deltas, dims, relu, quadratic):
    r"""The first-moment overlap against :math:`\delta` for the ReLU and the quadratic link.

    Chapter 0, {eq}`eq-ch0-first-moment-limit`: left, the ReLU overlaps with the limit
    :math:`\delta/(\delta+2)`; right (log scale), the quadratic link with its noise level
    :math:`5/(d-1)` (dashed, one per dimension).

    Parameters
    ----------
    deltas : array_like (k,)
        Sample ratios :math:`\delta = n/d`, positive.
    dims : sequence of int
        Dimensions, one curve each.
    relu, quadratic : array_like (seeds, len(dims), k)
        Squared overlaps of the raw-label estimator for the two links.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    deltas = V.finite_array(deltas, "deltas", ndim=1)
    if deltas.size < 1 or np.any(deltas <= 0):
        raise ValueError(f"deltas must be a non-empty array of positive ratios, got {deltas}")
    dims = [V.positive_int(d, "dims", minimum=2) for d in dims]
    shape = (len(dims), deltas.size)
    relu, quadratic = (V.finite_array(v, name, ndim=3)
                       for v, name in ((relu, "relu"), (quadratic, "quadratic")))
    for name, runs in (("relu", relu), ("quadratic", quadratic)):
        if runs.shape[1:] != shape or runs.shape[0] < 1:
            raise ValueError(f"{name} must have shape (seeds, {shape[0]}, {shape[1]}), "
                             f"got {runs.shape}")
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), layout="constrained")
    grid = np.geomspace(deltas[0], deltas[-1], 100)
    axes[0].plot(grid, grid / (grid + 2), "k-", lw=1, label=r"theory $\delta/(\delta+2)$")
    for i, d in enumerate(dims):
        c = f"C{i}"
        errorbar_over_seeds(axes[0], deltas, relu[:, i], label=f"d = {d}", color=c, ls="")
        errorbar_over_seeds(axes[1], deltas, quadratic[:, i], color=c, ls="")
        axes[1].axhline(5 / (d - 1), color=c, ls="--", lw=1)
    axes[0].set(xscale="log", xlabel=r"$\delta = n/d$", ylabel=r"$\rho^2$",
                title=r"ReLU: $c_1 = 1/2$")
    axes[1].set(xscale="log", yscale="log", xlabel=r"$\delta = n/d$", ylabel=r"$\rho^2$",
                title=r"$u^2$: $c_1 = 0$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
    return fig
