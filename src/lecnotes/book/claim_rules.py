r"""The static rule on claims' alternatives: an alternative is a competitor, not the tolerance.

A claim's ``alternative`` is the value that the nearest competing explanation predicts
(DESIGN.md, *Sharpness*). A value computed from the claim's own tolerance, Student-t factor,
standard error or margin (``alternative=-t10 * se``, ``bound + t * se``, ``-margin``) is not a
competitor: it is placed just past the bound so that the power check passes by construction,
and it says nothing about what a reader would put in the claim's place.

:func:`degenerate_alternatives` reads the code cells of a notebook and flags every call of
``claim`` or ``claim_mean`` whose ``alternative=`` expression

* calls ``t_factor``, a quantile function (``ppf``, ``isf``: a t-factor written out) or names
  ``margin``;
* uses a variable that the notebook assigns from such an expression (a *tainted* name: the
  taint follows assignments, loop and comprehension targets, and the return values of
  functions the notebook defines, through the whole notebook, so ``t10 =
  stats.t_factor(10)``, ``lo = m - t10 * se``, ``for t in (t_factor(8), t_factor(16))`` and a
  ``def`` that returns ``m - t_factor(n) * se`` all taint);
* shares a variable with the claim's own ``tol=`` expression, other than the reference the
  tolerance is stated relative to;

and every call that passes keywords through ``**`` (the rule cannot read them).

The claims ledger extension warns on each (so the strict build fails and names the claim), and
a unit test runs the rule on every lecture. The rule reads source, so it cannot follow a value
that a library function returns together with its bound, nor a standard error multiplied by
hand (``m - 4 * se``). Those would show as an alternative within a couple of tolerances of the
measurement: the robustness page lists every alternative closer than two tolerances (or, for a
bound, within twice the margin), the numeric counterpart of this rule. The width rule (a
two-sided claim wider than a quarter of its reference must say why) is checked when the claim
is made (:func:`lecnotes.book.claims.claim`).
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finding", "degenerate_alternatives"]

_CLAIM_FUNCTIONS = ("claim", "claim_mean")
_FORBIDDEN = ("t_factor", "margin", "ppf", "isf")
_HARMLESS = {"np", "numpy", "math", "float", "abs", "min", "max", "int", "len"}


@dataclass(frozen=True)
class Finding:
    """One alternative built from its claim's tolerance or margin."""

    notebook: str
    cell: int
    label: str
    expression: str
    reason: str

    def line(self) -> str:
        """The finding as one sentence: where, which claim, why, and what to do instead.

        Returns
        -------
        str
        """
        return (f"{self.notebook} cell {self.cell}: claim {self.label!r} has alternative "
                f"{self.expression!r}, {self.reason}: name the value the nearest competing "
                "explanation predicts, or say why none applies (no_alternative=)")


def _is_reference(node: ast.AST) -> bool:
    """A name, or an attribute or constant-index chain on one (``a.b``, ``x[2][0]``)."""
    while True:
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            node = node.value
        else:
            return False


def _names(node: ast.AST) -> set[str]:
    """The references an expression reads, each as written (``lim.constant``, ``se[-1]`` is
    ``se``: only constant indices are kept), so that ``lim.constant`` and ``lim.limit`` differ."""
    out: set[str] = set()

    def visit(n):
        if _is_reference(n) and not (isinstance(n, ast.Subscript)
                                     and isinstance(n.slice, ast.UnaryOp)):
            out.add(ast.unparse(n))
            return
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return out


def _stem(ref: str) -> str:
    """The variable a reference starts from (``t10`` of ``t10[0]``, ``lim`` of ``lim.a``)."""
    for sep in ".[":
        ref = ref.split(sep, 1)[0]
    return ref


def _leaf(ref: str) -> str:
    """The last attribute of a reference (``t_factor`` of ``stats.t_factor``)."""
    return ref.split("[", 1)[0].rsplit(".", 1)[-1]


def _code_cells(path: Path) -> list[tuple[int, ast.Module]]:
    nb = json.loads(Path(path).read_text())
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        # IPython magics and shell escapes are not Python
        src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                        for line in src.splitlines())
        try:
            out.append((i, ast.parse(src)))
        except SyntaxError:
            continue
    return out


def _assignments(tree):
    """``(value, targets)`` of every binding in a tree: assignments, loop and comprehension
    targets (bound from their iterable), and function definitions (bound from the values
    they return)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            yield node.value, node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            yield node.value, [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            yield node.iter, [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = [node.body] if isinstance(node, ast.Lambda) else [
                r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
            name = getattr(node, "name", None)
            for value in body:
                if name is not None:
                    yield value, [ast.Name(id=name)]


def _tainted(trees) -> set[str]:
    """Names bound (anywhere in the notebook) from a t-factor, a margin, or a tainted name."""
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for _, tree in trees:
            for value, targets in _assignments(tree):
                names = _names(value)
                if any(_stem(r) in tainted or _leaf(r) in _FORBIDDEN for r in names):
                    new = {n.id for t in targets for n in ast.walk(t)
                           if isinstance(n, ast.Name)} - tainted
                    if new:
                        tainted |= new
                        changed = True
    return tainted


def _claim_calls(tree):
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        if name in _CLAIM_FUNCTIONS:
            yield node


def degenerate_alternatives(path: str | os.PathLike) -> list[Finding]:
    """Every claim call of a notebook whose alternative is built from its tolerance or margin.

    Parameters
    ----------
    path : path-like
        A ``.ipynb`` notebook.

    Returns
    -------
    list of Finding
        One per offending ``claim``/``claim_mean`` call, in cell order.
    """
    path = Path(path)
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"path must be an existing .ipynb notebook, got {str(path)!r}")
    trees = _code_cells(path)
    tainted = _tainted(trees)
    out = []
    for cell, tree in trees:
        for call in _claim_calls(tree):
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            alt = kw.get("alternative")
            spread = any(k.arg is None for k in call.keywords)
            if alt is None and not spread:
                continue
            names = _names(alt) if alt is not None else set()
            reasons = []
            if spread:
                reasons.append("passing keywords through **, which the rule cannot read")
            bad = sorted(r for r in names if _leaf(r) in _FORBIDDEN)
            if bad:
                reasons.append(f"computed with {', '.join(bad)}")
            bad = sorted(r for r in names if _stem(r) in tainted and _leaf(r) not in _FORBIDDEN)
            if bad:
                reasons.append(f"computed from {', '.join(bad)}, which the notebook derives "
                               "from a t-factor or a margin")
            if "tol" in kw:
                expected = call.args[3] if len(call.args) > 3 else kw.get("expected")
                shared = names & _names(kw["tol"])
                shared = {r for r in shared if _stem(r) not in _HARMLESS}
                shared -= _names(expected) if expected is not None else set()
                if shared:
                    reasons.append(f"sharing {', '.join(sorted(shared))} with its tolerance")
            if reasons:
                first = call.args[0] if call.args else kw.get("label")
                label = first.value if isinstance(first, ast.Constant) else ast.unparse(first)
                expr = ast.unparse(alt) if alt is not None else "**"
                out.append(Finding(path.name, cell, str(label), expr,
                                   "; ".join(reasons)))
    return out
