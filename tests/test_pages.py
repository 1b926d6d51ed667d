"""The HTML book as a reader sees it: every page opened in headless Chromium, network off.

The test uses the book's ``_build/html`` when it is newer than every source (CI builds the book
first); otherwise it builds the book into ``_build/pagetest`` (its claims recorded separately,
so that it never races with the notebook tests). Every page is loaded once, in one browser with
all network access refused, and measured in turn in the light theme, the dark theme and at a
phone's width (``tests/_survey.py``). The tests then check that

* math is rendered: MathJax output elements are present when the page has math, and no raw
  TeX delimiter is left in the visible text;
* every image loads (the file exists and decodes) and has alt text;
* no Python traceback, error or stderr output appears;
* internal links resolve (target file exists; a ``#fragment`` names an id of the target);
* **desktop, 1400 px** (every page, every collapsed block open): no line of
  code is wider than its code block, and every figure is shown large enough that the style's
  smallest text (``plotting.MIN_FONT_PT``, 9 pt) is at least 9 CSS points;
* **phone, 390 px:** no math is clipped, nothing runs past the text column unless it sits in
  a box that scrolls, the page does not scroll sideways, and every figure is shown through its
  phone variant (``book/_ext/phone_figures.py``) at a scale where 9 pt is at least 9 CSS points;
* **dark theme:** the text of every claim block has a contrast of at least 4.5:1 (WCAG AA)
  against the background it is drawn on, and so has every figure's ink against its paper, as
  the page shows it (measured on a screenshot of each figure);
* **accessibility:** axe-core (the npm package, installed into ``_build/axe`` on first use)
  finds no violation of impact "critical" or "serious" on any page; no rule is disabled.

Screenshots of every page (light; chapter 6 and the front page also dark and on the phone,
under ``extra/``) and ``survey.json`` (per page:
seconds, figures, axe findings of every impact, the lowest contrasts) go to
``_build/screenshots/``. Skipped, with a message, only where no Chromium is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from _browser import CHROMIUM, SKIP_REASON
from _survey import axe_source, survey
from _tools import load_tool

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "pagetest"
HTML = OUT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"

pytestmark = pytest.mark.slow
BLOCKING = ("critical", "serious")
print_pdf = load_tool("print_pdf")


def _fresh_build() -> Path | None:
    """The book's own ``_build/html`` if it is newer than every source, else ``None``."""
    # objects.inv is written by every build (index.html, the redirect, only by the first)
    stamp = ROOT / "_build" / "html" / "objects.inv"
    if not stamp.exists():
        return None
    built = stamp.stat().st_mtime
    sources = [ROOT / "_config.yml", ROOT / "_toc.yml"]
    for folder, pattern in [("lectures", "*.ipynb"), ("book", "**/*"), ("src", "**/*.py")]:
        sources += [p for p in (ROOT / folder).glob(pattern) if p.is_file()]
    return stamp.parent if all(p.stat().st_mtime < built for p in sources) else None


@pytest.fixture(scope="module")
def built_book():
    if CHROMIUM is None:
        pytest.skip(SKIP_REASON)
    fresh = _fresh_build()
    if fresh is not None:  # e.g. CI builds the book (-W) before running the tests
        return fresh
    env = {**os.environ, "LECNOTES_CLAIMS_DIR": str(OUT / "claims")}
    proc = subprocess.run(  # jupyter-book of this interpreter, as tools/editions.py does
        [sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; "
         "sys.exit(main())", "build", ".", "--path-output", str(OUT)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return HTML


def _pages(html_root: Path) -> list[Path]:
    skip = {"genindex.html", "search.html"}
    return sorted(
        p for p in html_root.rglob("*.html")
        if p.name not in skip and not any(part.startswith(("_", ".")) or part == "reports"
                                          for part in p.relative_to(html_root).parts)
    )


class _DomScan(HTMLParser):
    """Collect what the checks need from a rendered DOM."""

    SKIP_TEXT = {"script", "style", "pre", "code", "mjx-assistive-mml", "textarea", "noscript"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.images: list[dict] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.mjx = 0
        self.math_spans = 0
        self.bad_outputs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "mjx-container":
            self.mjx += 1
        if "math" in cls and tag in ("span", "div"):
            self.math_spans += 1
        if tag == "img":
            self.images.append(a)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if "traceback" in cls or "stderr" in cls or ("output" in cls and "error" in cls):
            self.bad_outputs.append(" ".join(cls))
        if tag not in ("img", "br", "hr", "meta", "link", "input", "source"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if not any(t in self.SKIP_TEXT for t in self.stack):
            self.text.append(data)


@pytest.fixture(scope="module")
def surveyed(built_book, tmp_path_factory):
    """Every page loaded once and measured (``tests/_survey.py``); a report for review."""
    pages = _pages(built_book)
    assert len(pages) >= 5, f"too few pages built: {pages}"
    # the dark theme and the phone, for review: a chapter with figures and the front page
    extra = {p: SHOTS / "extra" / p.relative_to(built_book).with_suffix("") for p in pages
             if p.name in ("06_giant_steps.html", "intro.html")}
    results = survey(pages, tmp_path_factory.mktemp("survey") / "profile", shots=SHOTS,
                     html_root=built_book, axe=axe_source(), extra_shots=extra)
    report = {str(p.relative_to(built_book)): {
        "seconds": r.seconds, "figures": r.figures_seen,
        "axe": [f"{v['impact']} {v['id']} ({v['nodes']})" for v in r.axe],
        "claim_contrast_min": min((c for c, _ in r.claim_texts), default=None),
        "figure_contrast_min": min((c for c, _ in r.figure_contrast), default=None),
    } for p, r in results.items()}
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "survey.json").write_text(json.dumps(report, indent=1))
    return results


RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\frac|\\mathbb")


def test_every_page_renders_offline(built_book, surveyed):
    from PIL import Image

    problems: list[str] = []
    id_cache: dict[Path, set[str]] = {}
    for page, result in surveyed.items():
        rel = page.relative_to(built_book)
        raw = page.read_text(errors="replace")
        redirect = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', raw, re.I)
        if redirect:  # the root index.html only redirects to the first page
            if not (page.parent / redirect.group(1)).resolve().exists():
                problems.append(f"{rel}: redirects to a missing page {redirect.group(1)}")
            continue
        scan = _DomScan()
        scan.feed(result.dom)
        id_cache[page] = scan.ids
        text = "".join(scan.text)
        # math
        if scan.math_spans and scan.mjx < scan.math_spans:
            problems.append(f"{rel}: {scan.math_spans} math elements, {scan.mjx} rendered")
        m = RAW_TEX.search(text)
        if m:
            start = max(m.start() - 60, 0)
            problems.append(f"{rel}: raw TeX left in the text: ...{text[start:m.end() + 40]!r}")
        # errors
        if "Traceback (most recent call last)" in text or scan.bad_outputs:
            problems.append(f"{rel}: error output in the page: {scan.bad_outputs[:3]}")
        # images
        for img in scan.images:
            src = img.get("src", "")
            if not img.get("alt", "").strip() and "logo" not in img.get("class", ""):
                problems.append(f"{rel}: image without alt text: {src[:80]}")
            if src.startswith("data:"):
                continue
            target = (page.parent / unquote(urlparse(src).path)).resolve()
            try:
                if target.suffix == ".svg":
                    ET.parse(target)
                else:
                    with Image.open(target) as im:
                        im.verify()
            except Exception as err:  # noqa: BLE001 - report any failure to load
                problems.append(f"{rel}: image does not load: {src[:80]} ({err})")
        # internal links
        for href in scan.links:
            u = urlparse(href)
            if u.scheme in ("http", "https", "mailto") or href.startswith("javascript:"):
                continue
            if u.scheme == "file":
                problems.append(f"{rel}: absolute file link {href}")
                continue
            target = page if not u.path else (page.parent / unquote(u.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists() and target.name == "book.pdf":
                print_pdf.wait(ROOT / "_build" / "pdf" / "book.pdf")  # printed meanwhile
            if not target.exists():
                problems.append(f"{rel}: broken link {href}")
                continue
            if u.fragment and target.suffix == ".html":
                if target not in id_cache:
                    s2 = _DomScan()
                    s2.feed(target.read_text(errors="replace"))
                    id_cache[target] = s2.ids
                if unquote(u.fragment) not in id_cache[target]:
                    problems.append(f"{rel}: link to a missing anchor {href}")

    assert not problems, "\n".join(problems)


def test_every_chapter_offers_its_executed_notebook(built_book):
    """Each lecture page links to its notebook with outputs, from the same execution."""
    for src in sorted((ROOT / "lectures").glob("[0-9][0-9]_*.ipynb")):
        page = (built_book / "lectures" / f"{src.stem}.html").read_text()
        assert f"_downloads/executed/{src.stem}.ipynb" in page, src.stem
        executed = built_book / "_downloads" / "executed" / f"{src.stem}.ipynb"
        cells = json.loads(executed.read_text())["cells"]
        code = [c for c in cells if c["cell_type"] == "code"]
        assert sum(bool(c.get("outputs")) for c in code) >= len(code) // 3, src.stem
        def text(c):
            return "".join(c["source"])

        assert [text(c) for c in code] == [
            text(c) for c in json.loads(src.read_text())["cells"] if c["cell_type"] == "code"]


# -- the layout at a desktop width, on a phone, in the dark theme (``tests/_survey.py``) -----
MIN_CONTRAST = 4.5


def _every_page(surveyed: dict) -> dict:
    """Every page but the redirect (the lectures and every other page of the book)."""
    found = {p: r for p, r in surveyed.items() if not r.redirect}
    lectures = [p for p in found if "lectures" in p.parts]
    assert len(lectures) >= 9, f"too few chapter pages: {lectures}"
    return found


def test_code_fits_its_block_and_figures_are_shown_full_size(surveyed):
    problems = []
    for page, r in _every_page(surveyed).items():
        problems += [f"{page.name}: code line cut off: {line!r}" for line in r.code_cut]
        problems += [f"{page.name}: figure scaled down: {f}" for f in r.figures_desktop]
    assert not problems, "\n".join(problems)


def test_a_phone_shows_every_math_figure_and_line_within_the_column(surveyed):
    problems = []
    for page, r in _every_page(surveyed).items():
        problems += [f"{page.name}: {m}" for m in r.phone_math + r.phone_overflow]
        problems += [f"{page.name}: figure: {f}" for f in r.phone_figures]
    assert not problems, "\n".join(problems)


def test_claim_blocks_are_legible_in_the_dark_theme(surveyed):
    problems, measured = [], 0
    for page, r in _every_page(surveyed).items():
        assert r.dark_theme == "dark", f"{page.name}: the dark theme did not apply"
        measured += len(r.claim_texts)
        problems += [f"{page.name}: contrast {c:.2f} for {what}"
                     for c, what in r.claim_texts if c < MIN_CONTRAST]
    assert measured > 0, "no claim block text was measured"
    assert not problems, json.dumps(problems[:40], indent=1)


def test_figures_are_legible_in_the_dark_theme(surveyed):
    pages = _every_page(surveyed)
    measured = [(page, c, alt) for page, r in pages.items() for c, alt in r.figure_contrast]
    shown = sum(r.figures_seen for r in pages.values())
    assert len(measured) == shown >= 40, f"{len(measured)} of {shown} figures were measured"
    problems = [f"{page.name}: contrast {c:.2f}: {alt}" for page, c, alt in measured
                if c < MIN_CONTRAST]
    assert not problems, "\n".join(problems)


def test_no_serious_accessibility_violation(built_book, surveyed):
    """axe-core on every page (light theme, every collapsed block open): nothing critical or
    serious. No rule is disabled: each violation found was fixed in ``book/_static``."""
    audited = [r for r in surveyed.values() if not r.redirect]
    assert audited and all(r.dom for r in audited)
    problems = [
        f"{page.relative_to(built_book)}: {v['impact']} {v['id']} ({v['nodes']} elements, "
        f"e.g. {v['where']}): {v['help']}. {v['detail']}"
        for page, r in surveyed.items() for v in r.axe if v["impact"] in BLOCKING]
    assert not problems, "\n".join(problems)
