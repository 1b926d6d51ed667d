"""The pages as a reader sees them at a desktop width, on a phone and in the dark theme.

Every chapter page (and the ledger) is loaded in one headless Chromium over DevTools, network
off, with every collapsed block opened (hidden code, claim tables, solutions), and measured:

* **desktop, 1400 px:** no line of code is wider than its code block (a cut-off line is
  invisible without scrolling), and every figure is shown large enough that the style's
  smallest text (``plotting.MIN_FONT_PT``, 9 pt) is at least 9 CSS points on the page;
* **phone, 390 px:** no math is clipped (an element whose content is wider than its box and
  which hides the overflow), nothing runs past the text column unless it sits in a box that
  scrolls, the page does not scroll sideways, and every figure is shown through its phone
  variant (``book/_ext/phone_figures.py``) at a scale where 9 pt is at least 9 CSS points;
* **dark theme:** the text of every claim block has a contrast of at least 4.5:1 (WCAG AA)
  against the background it is drawn on, and so has every figure's ink against its paper, as
  the page shows it (measured on a screenshot of each figure).

Uses the book's ``_build/html`` as ``test_pages`` does (built when stale). Skipped only where
no Chromium is installed.
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from _browser import CHROMIUM, SKIP_REASON, DevTools
from test_pages import _pages, built_book  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow

DESKTOP, PHONE = (1400, 1000), (390, 844)
MIN_CONTRAST = 4.5
# Figures are retina PNGs (twice the pixels of their nominal size at the style's dpi, 110): a
# 9 pt text is 9 * 110 / 72 = 13.75 nominal px, and shown at scale s it is 13.75 s CSS px, at
# least 12 px (9 CSS pt) for s >= 0.873. A figure of at most plotting.MAX_WIDTH = 7.5 in is
# shown at 0.92 in the 756 px column; a 10 in figure would be shown at 0.69.
RETINA = 2
MIN_FIGURE_SCALE = 12 / (9 * 110 / 72)

_READY = """(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await new Promise(r => setTimeout(r, 50));
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => r()));
  return document.readyState === 'complete' && !!document.querySelector('article');
})()"""

_CODE_AND_FIGURES = """(() => {
  const longest = t => t.split('\\n').reduce((a, b) => (b.length > a.length ? b : a), '');
  const code = [], figures = [];
  document.querySelectorAll('div.cell_input pre').forEach(p => {
    if (p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
      code.push(longest(p.textContent).slice(0, 100));
  });
  document.querySelectorAll('div.cell_output img').forEach(img => {
    // a <picture> source is declared "2x": its naturalWidth is already the nominal one
    if (img.offsetParent === null) return;
    const phone = img.currentSrc.includes('/_images/phone/');
    if (PHONE && !phone) figures.push(`${(img.getAttribute('alt') || img.src).slice(0, 60)}: `
                                      + 'no phone variant');
    const nominal = phone ? img.naturalWidth : img.naturalWidth / RETINA;
    if (!nominal) figures.push(`${img.src.slice(-70)}: not loaded`);
    const shown = img.getBoundingClientRect().width;
    if (shown < MIN_SCALE * nominal)
      figures.push(`${(img.getAttribute('alt') || img.src).slice(0, 60)}: shown at `
                   + `${(shown / nominal).toFixed(2)} of its nominal size`);
  });
  return {code, figures};
})()""".replace("MIN_SCALE", f"{MIN_FIGURE_SCALE:.4f}").replace("RETINA", str(RETINA))
_CODE_AND_FIGURES_DESKTOP = _CODE_AND_FIGURES.replace("PHONE", "false")
_CODE_AND_FIGURES_PHONE = _CODE_AND_FIGURES.replace("PHONE", "true")

_OVERFLOW = """(() => {
  const scrolls = el => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const o = getComputedStyle(e).overflowX;
      if ((o === 'auto' || o === 'scroll' || o === 'hidden') && e.clientWidth > 0) return true;
    }
    return false;
  };
  const article = document.querySelector('article') || document.body;
  const right = article.getBoundingClientRect().right;
  const bad = [];
  article.querySelectorAll('*').forEach(el => {
    if (el.offsetParent === null || el.closest('mjx-container, .MathJax')) return;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > right + 2 && !scrolls(el))
      bad.push(`${el.tagName.toLowerCase()}.${el.className}: ${Math.round(r.right - right)} `
               + `px past the column: ${(el.textContent || '').trim().slice(0, 40)}`);
  });
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth + 1)
    bad.push(`the page scrolls sideways: ${page.scrollWidth} > ${window.innerWidth} px`);
  return [...new Set(bad)].slice(0, 20);
})()"""

_FIGURES = """[...document.querySelectorAll('div.cell_output img')]
  .filter(img => img.offsetParent !== null).length"""

# Figure i scrolled to the top of the window; its box in page coordinates (the clip of a
# screenshot of the window as it is: a capture "beyond the viewport" lays the page out again).
_FIGURE_BOX = """((i) => {
  const img = [...document.querySelectorAll('div.cell_output img')]
    .filter(img => img.offsetParent !== null)[i];
  img.scrollIntoView({block: 'start'});
  const r = img.getBoundingClientRect();
  return [img.getAttribute('alt') || img.src, r.left + scrollX, r.top + scrollY,
          r.width, Math.min(r.height, innerHeight - r.top)];
})(INDEX)"""

_MATH = """(() => {
  const scrolls = el => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const o = getComputedStyle(e).overflowX;
      if ((o === 'auto' || o === 'scroll') && e.clientWidth > 0) return true;
    }
    return false;
  };
  const article = document.querySelector('article') || document.body;
  const right = article.getBoundingClientRect().right;
  const bad = [];
  document.querySelectorAll('span.math, div.math, mjx-container').forEach(el => {
    if (el.offsetParent === null) return;
    const o = getComputedStyle(el).overflowX;
    const text = (el.textContent || '').trim().slice(0, 50);
    const m = el.querySelector('mjx-container');   // scrollWidth also counts hidden markup
    const width = m ? m.getBoundingClientRect().width : el.scrollWidth;
    if ((o === 'hidden' || o === 'clip') && width > el.clientWidth + 4)
      bad.push(`clipped: ${text}`);
    else if (el.getBoundingClientRect().right > right + 2 && !scrolls(el))
      bad.push(`past the column: ${text}`);
  });
  return [...new Set(bad)];
})()"""

_CLAIM_CONTRAST = """(() => {
  const rgba = s => { const m = (s.match(/[\\d.]+/g) || [0, 0, 0, 0]).map(Number);
                      return m.length === 3 ? [...m, 1] : m; };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]));
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255]);
  };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92
                                      : Math.pow((v + 0.055) / 1.055, 2.4); };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b);
                            return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const out = [];
  document.querySelectorAll('details.lecnotes-claims *').forEach(el => {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.offsetParent === null) return;
    const bg = background(el);
    const fg = over(rgba(getComputedStyle(el).color), bg);
    out.push([ratio(fg, bg), el.tagName + ': ' + el.textContent.trim().slice(0, 40)]);
  });
  return {theme: document.documentElement.dataset.theme, blocks:
          document.querySelectorAll('details.lecnotes-claims').length, texts: out};
})()"""


def _chapter_pages(html_root):
    pages = [p for p in _pages(html_root) if "lectures" in p.parts]
    return pages + [p for p in _pages(html_root) if p.name == "claims-ledger.html"]


def _load(browser: DevTools, page):
    browser.navigate(page.as_uri())
    browser.wait_for(_READY, timeout=60)


@pytest.fixture(scope="module")
def pages(built_book):  # noqa: F811 - the fixture of test_pages
    if CHROMIUM is None:
        pytest.skip(SKIP_REASON)
    found = _chapter_pages(built_book)
    assert len(found) >= 9, f"too few chapter pages: {found}"
    return found


def test_code_fits_its_block_and_figures_are_shown_full_size(pages, tmp_path):
    problems = []
    with DevTools(tmp_path / "profile", size=DESKTOP, loopback=False) as browser:
        for page in pages:
            _load(browser, page)
            found = browser.evaluate(_CODE_AND_FIGURES_DESKTOP)
            problems += [f"{page.name}: code line cut off: {line!r}" for line in found["code"]]
            problems += [f"{page.name}: figure scaled down: {f}" for f in found["figures"]]
    assert not problems, "\n".join(problems)


def test_a_phone_shows_every_math_figure_and_line_within_the_column(pages, tmp_path):
    problems = []
    with DevTools(tmp_path / "profile", size=PHONE, loopback=False) as browser:
        browser.page.send("Emulation.setDeviceMetricsOverride", {
            "width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 3, "mobile": True})
        for page in pages:
            _load(browser, page)
            problems += [f"{page.name}: {m}" for m in browser.evaluate(_MATH)]
            problems += [f"{page.name}: {m}" for m in browser.evaluate(_OVERFLOW)]
            found = browser.evaluate(_CODE_AND_FIGURES_PHONE)
            problems += [f"{page.name}: figure: {f}" for f in found["figures"]]
    assert not problems, "\n".join(problems)


def _contrast(png: bytes) -> float:
    """Contrast ratio (WCAG) of a figure's ink (its darkest 0.5 %) against its paper (median)."""
    import matplotlib.image

    rgb = matplotlib.image.imread(io.BytesIO(png))[..., :3].astype(float)
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lum = (linear @ np.array([0.2126, 0.7152, 0.0722])).ravel()
    paper, ink = np.median(lum), np.quantile(lum, 0.005)
    return (max(paper, ink) + 0.05) / (min(paper, ink) + 0.05)


def test_claim_blocks_are_legible_in_the_dark_theme(pages, tmp_path):
    problems, measured = [], 0
    with DevTools(tmp_path / "profile", size=DESKTOP, loopback=False) as browser:
        browser.page.send("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        for page in pages:
            _load(browser, page)
            found = browser.evaluate(_CLAIM_CONTRAST)
            assert found["theme"] == "dark", f"{page.name}: the dark theme did not apply"
            measured += len(found["texts"])
            problems += [f"{page.name}: contrast {r:.2f} for {what}"
                         for r, what in found["texts"] if r < MIN_CONTRAST]
    assert measured > 0, "no claim block text was measured"
    assert not problems, json.dumps(problems[:40], indent=1)


def test_figures_are_legible_in_the_dark_theme(pages, tmp_path):
    problems, measured = [], 0
    with DevTools(tmp_path / "profile", size=DESKTOP, loopback=False) as browser:
        browser.page.send("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        for page in pages:
            _load(browser, page)
            for i in range(browser.evaluate(_FIGURES)):
                alt, x, y, w, h = browser.evaluate(_FIGURE_BOX.replace("INDEX", str(i)))
                shot = browser.page.send("Page.captureScreenshot", {
                    "format": "png", "clip": {"x": x, "y": y, "width": w, "height": h,
                                              "scale": 1}})
                ratio = _contrast(base64.b64decode(shot["data"]))
                measured += 1
                if ratio < MIN_CONTRAST:
                    problems.append(f"{page.name}: contrast {ratio:.2f}: {alt[:60]}")
    assert measured >= 40, f"only {measured} figures were measured"
    assert not problems, "\n".join(problems)
