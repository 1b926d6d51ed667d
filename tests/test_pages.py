"""The HTML book as a reader sees it: every page opened in headless Chromium, network off.

The test uses the book's ``_build/html`` when it is newer than every source (CI builds the book
first); otherwise it builds the book into ``_build/pagetest`` (its claims recorded separately,
so that it never races with the notebook tests). Every page is loaded in headless Chromium with
all network access refused (every host name resolves to nothing, every proxy is closed). For each
page the test checks that

* math is rendered: MathJax output elements are present when the page has math, and no raw
  TeX delimiter is left in the visible text;
* every image loads (the file exists and decodes) and has alt text;
* no Python traceback, error or stderr output appears;
* internal links resolve (target file exists; a ``#fragment`` names an id of the target).

It saves a screenshot per page under ``_build/screenshots/`` (light theme) and one in the dark
theme, for review. Skipped, with a message, only where no Chromium is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from _browser import CHROMIUM, SKIP_REASON, render, screenshot

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "pagetest"
HTML = OUT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"

pytestmark = pytest.mark.slow


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


def _render(page: Path, shot: Path, profile: Path) -> str:
    """Load ``page`` once: save a screenshot to ``shot`` and return the rendered DOM."""
    return render(page.as_uri(), shot, profile)


# Chromium spends most of a page load waiting (virtual time, fonts, MathJax's queue), so four
# pages load at once; each load has its own profile.
RENDER_WORKERS = 4


def _screenshot(page: Path, target: Path, profile: Path, dark: bool = False):
    screenshot(page.as_uri(), target, profile, dark=dark)


RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\frac|\\mathbb")


def test_every_page_renders_offline(built_book, tmp_path):
    from PIL import Image

    pages = _pages(built_book)
    assert len(pages) >= 5, f"too few pages built: {pages}"
    problems: list[str] = []
    id_cache: dict[Path, set[str]] = {}
    with ThreadPoolExecutor(max_workers=RENDER_WORKERS) as pool:
        doms = dict(zip(pages, pool.map(
            lambda job: _render(job[1], SHOTS / job[1].relative_to(built_book).with_suffix(
                ".png"), tmp_path / f"profile-{job[0]}"), enumerate(pages)), strict=True))

    for page in pages:
        rel = page.relative_to(built_book)
        raw = page.read_text(errors="replace")
        redirect = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', raw, re.I)
        if redirect:  # the root index.html only redirects to the first page
            if not (page.parent / redirect.group(1)).resolve().exists():
                problems.append(f"{rel}: redirects to a missing page {redirect.group(1)}")
            continue
        dom = doms[page]
        scan = _DomScan()
        scan.feed(dom)
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

    lectures = [p for p in pages if "lectures" in p.parts]
    if lectures:
        first = lectures[0]
        _screenshot(first, SHOTS / "dark" / first.relative_to(built_book).with_suffix(".png"),
                    tmp_path / "profile-dark", dark=True)
    assert not problems, "\n".join(problems)


def test_every_chapter_offers_its_executed_notebook(built_book):
    """Each lecture page links to its notebook with outputs, from the same execution."""
    import json

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
