"""The layout of lecnotes: a chapter is a folder, over a visible core (DESIGN.md, issue 38).

Read from the sources with ``ast`` (nothing is imported). Four tiers, imports downwards only:

* ``core`` modules import only earlier ``core`` modules (the order of ``CORE``);
* ``models`` modules import ``core`` and earlier ``models`` modules (the order of ``MODELS``);
* a chapter subpackage (``lecnotes.<subject>``) imports ``core``, ``models`` and its own
  modules, never another chapter; only its ``explorer``, ``figures`` (the static multi-panel
  figures) and ``grading`` modules (and its ``__init__``, which exports them) may import the
  ``book`` tier;
* ``book`` modules import ``core`` and each other; nothing in ``core``, ``models`` or a
  chapter's science imports them;
* ``lecnotes.chapters`` (the chapter map) is imported by nothing in the package.

Besides: no import cycle; no import inside a function except of the optional heavy packages
of ``OPTIONAL``; no private name (``_x``) of one module used in another; no module over
``MAX_LINES`` lines, and none within ``MARGIN`` lines of it (split where the ideas split);
every chapter of ``_toc.yml`` has its line in the chapter map, its subpackage and its tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CHAPTERS = ()  # the layout serves every chapter; make check runs it

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "lecnotes"
MAX_LINES = 600
MARGIN = 30  # a module this close to the limit is split, not squeezed

CORE = (
    "core.validate", "core.scale", "core.stats", "core.hermite", "core.hermite_tensors",
    "core.targets", "core.label_law", "core.label_inverse", "core.conditional_hermite",
    "core.exponents",
    "core.activations", "core.linalg", "core.rmt", "core.preprocessing", "core.overlaps",
    "core.first_moment",
)
MODELS = ("models.networks", "models.layerwise", "models.kernels", "models.kernel_methods")
BOOK_FACING = ("explorer", "figures", "grading")  # a chapter's modules that may import book
OPTIONAL = ("matplotlib", "ipywidgets", "IPython")  # may be imported inside a function


def _module_name(path: Path) -> str:
    """``core.hermite`` for lecnotes/core/hermite.py; a package's ``__init__`` is the package;
    the root ``__init__`` is ``""``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


PATHS = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
MODULES = {name: ast.parse(p.read_text(), str(p)) for name, p in PATHS.items()}
SUBJECTS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")
                  if p.parent.name not in ("core", "models", "book"))


def tier(name: str) -> str:
    """``root``, ``map``, ``core``, ``models``, ``book`` or ``chapter``."""
    if name == "":
        return "root"
    if name == "chapters":
        return "map"
    head = name.split(".")[0]
    if head in ("core", "models", "book"):
        return head
    if head in SUBJECTS:
        return "chapter"
    raise AssertionError(f"lecnotes.{name} is in no tier")


def package_imports(tree: ast.Module, importer: str) -> dict[str, set[str]]:
    """Modules of the package imported anywhere in ``tree`` (functions included), each with
    the names taken from it; ``from lecnotes.core import stats`` imports ``core.stats``."""
    is_pkg = importer in PATHS and PATHS[importer].name == "__init__.py"
    here = importer.split(".") if is_pkg else importer.split(".")[:-1]
    here = [p for p in here if p]
    out: dict[str, set[str]] = {}

    def add(mod: str, names):
        for n in names:
            sub = f"{mod}.{n}" if mod else n
            if sub in PATHS:  # a submodule imported by name
                out.setdefault(sub, set())
            else:
                out.setdefault(mod, set()).add(n)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "lecnotes":
                mod = node.module.partition(".")[2]
            else:
                continue
            add(mod, [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "lecnotes":
                    out.setdefault(alias.name.partition(".")[2], set())
    return out


def allowed(importer: str, imported: str) -> bool:
    """May module ``importer`` import module ``imported``?"""
    a, b = tier(importer), tier(imported)
    if b == "root":
        return True  # the version string; the root imports nothing
    if b == "map" or a == "root":
        return False
    if a == "map":
        return True
    if a == "core":
        return b == "core" and CORE.index(imported) < CORE.index(importer)
    if a == "models":
        return b == "core" or (b == "models" and MODELS.index(imported) < MODELS.index(importer))
    if a == "book":
        return b == "core" or (b == "book" and importer != imported)
    # a chapter
    subject, _, leaf = importer.partition(".")
    if b in ("core", "models"):
        return True
    if b == "book":
        return leaf in BOOK_FACING or leaf == ""
    return imported.split(".")[0] == subject and imported != importer


def test_every_module_has_one_tier():
    for name in PATHS:
        tier(name)
    core = {n for n in PATHS if n.startswith("core.")}
    models = {n for n in PATHS if n.startswith("models.")}
    assert core == set(CORE) & set(PATHS) and core == {c for c in CORE if c in PATHS}, (
        f"core modules not in CORE: {sorted(core - set(CORE))}")
    assert models <= set(MODELS), f"models modules not in MODELS: {sorted(models - set(MODELS))}"


@pytest.mark.parametrize("name", sorted(PATHS))
def test_imports_go_downwards(name):
    bad = [m for m in package_imports(MODULES[name], name) if m != name and not allowed(name, m)]
    assert not bad, f"lecnotes.{name} ({tier(name)}) imports {bad}, against the tier order"


def test_no_import_cycle():
    graph = {name: set(package_imports(tree, name)) & set(PATHS) - {name}
             for name, tree in MODULES.items()}
    # a package's __init__ imports its submodules; a submodule importing its own package's
    # names would be a cycle through the __init__: those edges are kept
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


@pytest.mark.parametrize("name", sorted(PATHS))
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
    if name == "chapters":  # the map finds the chapters' graded checks by name, at import
        bad = [b for b in bad if not b.endswith(" importlib")]
    assert not bad, f"lecnotes.{name} imports inside functions: {bad}"


@pytest.mark.parametrize("name", sorted(PATHS))
def test_no_private_name_across_modules(name):
    tree = MODULES[name]
    imports = package_imports(tree, name)
    bad = [f"from {m} import {n}" for m, names in imports.items() for n in names
           if n.startswith("_") and n != "__version__"]
    aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.level or (node.module or "").startswith("lecnotes"))
               for a in node.names}
    bad += [f"{node.value.id}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in aliases and node.attr.startswith("_")
            and not node.attr.startswith("__")]  # a dunder (__all__) is public
    assert not bad, f"lecnotes.{name} uses private names of other modules: {bad}"


@pytest.mark.parametrize("name", sorted(PATHS))
def test_module_size(name):
    lines = len(PATHS[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"lecnotes.{name} has {lines} lines (at most {MAX_LINES})"
    assert lines <= MAX_LINES - MARGIN, (
        f"lecnotes.{name} has {lines} lines: split it where its ideas split (the limit is "
        f"{MAX_LINES}, and a module within {MARGIN} lines of it is split, not squeezed)")


def _toc_lectures() -> list[str]:
    return re.findall(r"^\s*- file: lectures/(\S+)\s*$", (ROOT / "_toc.yml").read_text(), re.M)


def _chapter_map() -> list[tuple[int, str, str]]:
    """The CHAPTERS table of lecnotes/chapters.py, read from its source."""
    src = PATHS["chapters"].read_text()
    return [(int(n), nb, sub) for n, nb, sub in
            re.findall(r'Chapter\((\d+), "([^"]+)", "([^"]+)"\)', src)]


def test_every_chapter_has_its_map_line_subpackage_and_tests():
    """The pattern of README "Adding a chapter": notebook, subpackage, tests, toc, map."""
    lectures = _toc_lectures()
    table = _chapter_map()
    assert [nb for _, nb, _ in table] == lectures, "chapter map and _toc.yml differ"
    for number, nb, sub in table:
        assert nb.startswith(f"{number:02d}_"), f"{nb}: its number is not {number}"
        assert (ROOT / "lectures" / f"{nb}.ipynb").exists(), f"lectures/{nb}.ipynb is missing"
        assert (PACKAGE / sub / "__init__.py").exists(), f"lecnotes.{sub} is missing"
        tests = sorted((ROOT / "tests" / sub).glob("test_*.py"))
        assert tests, f"tests/{sub}/ has no tests"
    assert sorted(sub for _, _, sub in table) == SUBJECTS, "a subpackage without a chapter"


@pytest.mark.parametrize("subject", SUBJECTS)
def test_a_chapter_exports_what_its_notebook_imports(subject):
    """``__all__`` of the chapter's ``__init__`` holds every name it imports."""
    tree = MODULES[subject]
    names = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
             for a in node.names}
    exported = next(ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign)
                    and any(getattr(t, "id", None) == "__all__" for t in node.targets))
    assert names <= set(exported) | {"annotations"}, sorted(names - set(exported))


@pytest.mark.parametrize("path", sorted((ROOT / "lectures").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_a_notebook_imports_its_own_chapter_only(path):
    """A lecture imports its chapter's subpackage, core, models and the book tier."""
    import json

    own = {nb: sub for _, nb, sub in _chapter_map()}[path.stem]
    src = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                    if c["cell_type"] == "code")
    used = set(re.findall(r"^\s*(?:from|import) lecnotes\.(\w+)", src, re.M))
    used |= {n.strip().split(" ")[0] for line in
             re.findall(r"^\s*from lecnotes import ([^\n(]+)", src, re.M)
             for n in line.split(",")}
    other = used - {own, "core", "models", "book"}
    assert not other, f"{path.name} imports {sorted(other)}: another chapter's code"


def tier_edges() -> dict[tuple[str, str], int]:
    """(importer tier, imported tier) -> number of module-to-module imports (for the note)."""
    out: dict[tuple[str, str], int] = {}
    for name, tree in MODULES.items():
        for m in package_imports(tree, name):
            if m in PATHS and m != name:
                key = (tier(name), tier(m))
                out[key] = out.get(key, 0) + 1
    return out


def test_no_edge_goes_up():
    rank = {"root": 0, "core": 1, "models": 2, "book": 2, "chapter": 3, "map": 4}
    up = {k: v for k, v in tier_edges().items()
          if k[1] != "root" and rank[k[1]] > rank[k[0]] and k != ("chapter", "book")}
    assert not up, f"imports that go up: {up}"


def test_the_checks_can_fail():
    """The rules reject what they are meant to reject (a guard against a vacuous walker)."""
    assert not allowed("core.hermite", "core.targets")  # a later core module
    assert not allowed("core.targets", "spectral.experiments")  # a chapter from core
    assert not allowed("models.networks", "giant_steps.theory")
    assert not allowed("spectral.experiments", "giant_steps.theory")  # a sibling chapter
    assert allowed("spectral.experiments", "spectral.theory")
    assert not allowed("spectral.theory", "book.claims")  # science does not import the book
    assert allowed("spectral.explorer", "book.explorer")
    assert not allowed("book.claims", "spectral.theory")
    assert not allowed("core.stats", "book.claims")
    assert not allowed("spectral.grading", "chapters") and allowed("chapters", "spectral.grading")
    tree = ast.parse("from lecnotes.core import stats\nfrom lecnotes.core.hermite import _y\n"
                     "def f():\n    import scipy\n")
    found = package_imports(tree, "spectral.experiments")
    assert "core.stats" in found and found["core.hermite"] == {"_y"}
