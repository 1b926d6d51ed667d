"""The notebooks read well where students open them: JupyterLab, and Colab-like plain HTML.

A real JupyterLab (the reader's ``requirements.txt``: JupyterLab with jupyterlab-myst) is
started on 127.0.0.1 with a token, serving a temporary folder that holds copies of the lectures
and freshly generated assignment notebooks (``tools/editions.py``). One headless Chromium, with
the network off except for that server, opens every notebook in JupyterLab (one JupyterLab,
one notebook after the other) and checks what is rendered (``tests/_jupyterlab.py``):

* no math error: no MathJax error element, no red undefined control sequence, no KaTeX error of
  jupyterlab-myst (the notation macros come from the notebook's first cell);
* no raw directive: no ```` ```{prf:...} ```` or ```` ```{exercise} ```` fence shown as code;
* math is there at all (the checks are not vacuous), and in the generated assignments no TeX
  is left untypeset.

Then every assignment is rendered as Colab or a plain Jupyter would show it: nbconvert HTML
with MathJax 3 (offline, from ``django-static-mathjax``) and no extension; no math error, no raw
directive, no TeX left.

Screenshots (the top of chapters 0 and 6 and of their assignments) and a JSON report of the
counts per notebook go to ``_build/screenshots-jlab/``. Skipped, with a message, only where no
Chromium is installed.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
import warnings
from pathlib import Path

import pytest
from _browser import CHROMIUM, SKIP_REASON, DevTools
from _jupyterlab import JupyterLabServer, read_all_in_lab, read_static_page, render_plain_html

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "_build" / "screenshots-jlab"
LECTURES = sorted((ROOT / "lectures").glob("*.ipynb"))
# screenshots for review (each costs a little time): chapters 0 and 6 and their assignments
SHOOT = ("00_setting", "06_giant_steps")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]


def _editions():
    spec = importlib.util.spec_from_file_location("editions", ROOT / "tools" / "editions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A folder with copies of the lectures and the generated assignments, and their paths."""
    root = tmp_path_factory.mktemp("jlab-root")
    for path in LECTURES:
        shutil.copy(path, root / path.name)
    assignments = _editions().assignments(root / "assignments")
    return root, [p.name for p in LECTURES], [f"assignments/{p.name}" for p in assignments]


def _problems(name: str, result: dict, generated: bool) -> list[str]:
    found = []
    if result["errors"]:
        tex = "; ".join(f"{e['tex']} ({e['message']})" for e in result["errors"][:3])
        found.append(f"{name}: {len(result['errors'])} math errors, e.g. {tex}")
    if result["fences"]:
        found.append(f"{name}: raw directives shown as code: {result['fences'][:2]}")
    if result["math"] == 0:
        found.append(f"{name}: no typeset math at all (is MathJax/KaTeX running?)")
    if generated and result["raw"]:
        found.append(f"{name}: {result['raw']} TeX formulas left untypeset")
    return found


def _report(name: str, results: dict):
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{name}.json").write_text(json.dumps(results, indent=1))
    counts = {k: (len(r["errors"]), len(r["fences"]), r["raw"], r["math"], r["seconds"])
              for k, r in results.items()}
    print(f"\n{name}: notebook -> (math errors, raw directives, raw TeX, formulas, seconds)")
    for k, v in counts.items():
        print(f"  {k}: {v}")


def test_every_notebook_reads_well_in_jupyterlab(served, tmp_path):
    root, lectures, assignments = served
    start = time.monotonic()
    with JupyterLabServer(root, tmp_path / "home") as server:
        results = read_all_in_lab(server, tmp_path / "profile", lectures + assignments,
                                  shots=SHOTS / "lab",
                                  shoot=lambda path: Path(path).stem.startswith(SHOOT))
    problems = [p for name, result in results.items()
                for p in _problems(name, result, generated=name in assignments)]
    _report("jupyterlab", results)
    untypeset = {k: r["raw"] for k, r in results.items() if r["raw"] and k in lectures}
    if untypeset:  # an authoring matter of the lecture, not of the tools checked here
        warnings.warn(f"TeX left untypeset in JupyterLab (jupyterlab-myst): {untypeset}",
                      stacklevel=1)
    print(f"JupyterLab: {len(results)} notebooks in {time.monotonic() - start:.1f} s")
    assert not problems, "\n".join(problems)


def test_assignments_read_well_as_plain_html(served, tmp_path):
    root, _, assignments = served
    start = time.monotonic()
    results, problems = {}, []
    with DevTools(tmp_path / "profile", size=(1280, 1600), loopback=False) as browser:
        for name in assignments:
            page = render_plain_html(root / name, tmp_path / Path(name).with_suffix(".html"))
            shot = SHOTS / "plain" / Path(name).with_suffix(".png") \
                if Path(name).stem.startswith(SHOOT) else None
            results[name] = result = read_static_page(browser, page, shot=shot)
            problems += _problems(name, result, generated=True)
    _report("plain-html", results)
    print(f"plain HTML: {len(results)} notebooks in {time.monotonic() - start:.1f} s")
    assert not problems, "\n".join(problems)
