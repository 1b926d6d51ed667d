"""The layout of lecnotes: three tiers with a strict import order (DESIGN.md, issue 15).

Read from the sources with ``ast`` (nothing is imported):

* **foundation** modules import only earlier foundation modules (the order of ``FOUNDATION``);
* a **chapter** module imports only the foundation and the other modules of its own chapter
  (``stem`` and its companions ``stem_*``: ``two_steps`` uses ``two_steps_phase``, which uses
  ``two_steps_theory``), never another chapter's;
* **book** modules (``claims``, ``plotting``, and the ``grading`` and ``widgets`` packages with
  one file per chapter) may import anything, and nothing in the package imports them (within
  each of these packages its files import each other);
* no import cycle; no import inside a function except of the optional heavy packages of
  ``OPTIONAL``; no private name (``_x``) of one module used in another; no module over
  ``MAX_LINES`` lines; every module of the package is in exactly one tier.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHAPTERS = ()  # the layout serves every chapter; make check runs it

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "lecnotes"
MAX_LINES = 600

FOUNDATION = (
    "_validate", "stats", "hermite", "hermite_tensors", "targets", "label_law",
    "conditional_hermite", "activations", "linalg", "rmt", "preprocessing", "overlaps",
    "networks", "capacity", "kernels",
)
CHAPTER_MODULES = (
    "setting", "mean_field_vs_ntk", "mean_field_vs_ntk_theory", "exponents", "exponents_theory",
    "first_moment", "first_moment_theory", "spectral", "spectral_theory",
    "spectral_optimal_theory", "partial_trace", "partial_trace_theory", "giant_steps",
    "giant_steps_theory", "giant_steps_ridge_theory", "two_steps", "two_steps_theory",
    "two_steps_finite", "two_steps_phase", "online_sgd", "online_sgd_theory",
)
# one chapter's modules: the stem and its companions (stem_theory, stem_finite, ...)
CHAPTER_STEMS = ("setting", "mean_field_vs_ntk", "exponents", "first_moment", "spectral",
                 "partial_trace", "giant_steps", "two_steps", "online_sgd")


def _chapter_of(module: str) -> str | None:
    return next((s for s in CHAPTER_STEMS if module == s or module.startswith(s + "_")), None)
BOOK = ("claims", "plotting", "widgets", "grading")
OPTIONAL = ("matplotlib", "ipywidgets", "IPython")  # may be imported inside a function


SUBPACKAGES = ("grading", "widgets")  # book-tier packages: one file per chapter


def _module_name(path: Path) -> str:
    """``spectral`` for lecnotes/spectral.py, ``grading.spectral`` for lecnotes/grading/...;
    a subpackage's ``__init__`` is the subpackage itself."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _paths() -> dict[str, Path]:
    paths = sorted(PACKAGE.rglob("*.py"))
    return {_module_name(p): p for p in paths if p != PACKAGE / "__init__.py"}


PATHS = _paths()
MODULES = {name: ast.parse(p.read_text(), str(p)) for name, p in PATHS.items()}


def _in_book(name: str) -> bool:
    return name in BOOK or name.split(".")[0] in SUBPACKAGES


def _package_imports(tree: ast.Module, importer: str = "") -> dict[str, set[str]]:
    """Modules of the package imported anywhere in ``tree``, with the names taken from each.

    Names are relative to the package root: a ``from .base import x`` in
    ``lecnotes/grading/spectral.py`` is ``grading.base``. ``importer`` is the module's name.
    """
    path = PATHS.get(importer)
    package = importer.split(".") if path is not None and path.name == "__init__.py" else (
        importer.split(".")[:-1] if importer else [])
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").startswith("lecnotes"):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    parts = base + ([node.module] if node.module else [])
                else:
                    parts = [p for p in (node.module or "").split(".")[1:] if p]
                mod = ".".join(parts)
                if not mod:  # from . import x as X
                    for alias in node.names:
                        out.setdefault(alias.name, set())
                elif mod in SUBPACKAGES and all(f"{mod}.{a.name}" in PATHS for a in node.names):
                    for alias in node.names:  # from . import base (inside a subpackage)
                        out.setdefault(f"{mod}.{alias.name}", set())
                else:
                    out.setdefault(mod, set()).update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("lecnotes."):
                    out.setdefault(alias.name.split(".", 1)[1], set())
    return out


def _allowed(importer: str, imported: str) -> bool:
    if imported == "plotting" and importer.split(".")[0] == "widgets":
        return True  # an explorer's figure function draws like the static figure it replaces
    if _in_book(imported):
        # nothing in the package imports the book tier, the book tier included, except the
        # files of one book subpackage (grading) importing each other
        same = importer.split(".")[0] == imported.split(".")[0] in SUBPACKAGES
        return same and importer != imported
    if _in_book(importer):
        return True
    if importer in FOUNDATION:
        return imported in FOUNDATION and FOUNDATION.index(imported) < FOUNDATION.index(importer)
    if importer in CHAPTER_MODULES:
        if imported in FOUNDATION:
            return True
        # within one chapter's modules, in any direction that Python can import (no cycle:
        # test_no_import_cycle), e.g. two_steps -> two_steps_phase -> two_steps_theory
        # (a companion never imports the chapter's stem module itself)
        return (imported in CHAPTER_MODULES and _chapter_of(imported) == _chapter_of(importer)
                and imported != _chapter_of(imported))
    return False


def test_every_module_has_one_tier():
    tiers = FOUNDATION + CHAPTER_MODULES + BOOK
    assert len(set(tiers)) == len(tiers)
    top = sorted({name.split(".")[0] for name in MODULES})
    assert top == sorted(tiers), (
        f"modules without a tier: {sorted(set(top) - set(tiers))}; "
        f"tiers without a module: {sorted(set(tiers) - set(top))}")


def test_one_grading_file_per_chapter():
    files = {name.split(".", 1)[1] for name in MODULES if name.startswith("grading.")}
    assert files == {"base", *CHAPTER_STEMS}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_follow_the_tier_order(name):
    bad = [m for m in _package_imports(MODULES[name], name) if not _allowed(name, m)]
    assert not bad, f"lecnotes.{name} imports {bad}, against the tier order"


def test_no_import_cycle():
    graph = {name: set(_package_imports(tree, name)) & set(MODULES)
             for name, tree in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_function_level_import(name):
    bad = []
    for fn in ast.walk(MODULES[name]):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                roots = ["." if node.level else (node.module or "").split(".")[0]]
            else:
                continue
            bad += [f"{fn.name}:{node.lineno} {r}" for r in roots if r not in OPTIONAL]
    assert not bad, f"lecnotes.{name} imports inside functions: {bad}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_across_modules(name):
    tree = MODULES[name]
    imports = _package_imports(tree, name)
    bad = [f"from {m} import {n}" for m, names in imports.items() for n in names
           if n.startswith("_") and n != "_validate"]
    aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.level or (node.module or "").startswith("lecnotes"))
               for a in node.names}
    bad += [f"{node.value.id}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in aliases and node.attr.startswith("_")
            and not node.attr.startswith("__")]  # a dunder (__all__) is public
    assert not bad, f"lecnotes.{name} uses private names of other modules: {bad}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    lines = len(PATHS[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"lecnotes.{name} has {lines} lines (at most {MAX_LINES})"


def test_the_checks_can_fail():
    """The rules reject what they are meant to reject (a guard against a vacuous walker)."""
    assert not _allowed("hermite", "targets")  # a later foundation module
    assert not _allowed("targets", "spectral")  # a chapter module from the foundation
    assert not _allowed("spectral", "giant_steps")  # a sibling chapter
    assert _allowed("spectral", "spectral_theory") and not _allowed("spectral_theory", "spectral")
    assert not _allowed("networks", "claims") and _allowed("widgets", "spectral_theory")
    tree = ast.parse("from .x import _y\nfrom . import z as Z\ndef f():\n    import scipy\n")
    assert _package_imports(tree) == {"x": {"_y"}, "z": set()}
    assert _allowed("grading.spectral", "grading.base") and _allowed("grading", "grading.setting")
    assert not _allowed("spectral", "grading.spectral") and not _allowed("claims", "grading")
    tree = ast.parse("from .base import Report\nfrom ..spectral import x\nfrom . import base\n")
    assert _package_imports(tree, "grading.spectral") == {
        "grading.base": {"Report"}, "spectral": {"x"}}
