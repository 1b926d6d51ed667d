"""One pass over the built book in one headless Chromium: every measurement of every page.

Helpers of ``tests/test_pages.py``. Each page is loaded and typeset once (3-7 s for a chapter)
and then measured as the reader sees it in turn:

1. **light theme, 1400 px:** the rendered DOM (for the offline checks of ``test_pages``), a
   screenshot, code lines cut off by their block, figures shown below full size, and the
   axe-core accessibility audit (:func:`axe_source`);
2. **dark theme, 1400 px** (the emulated ``prefers-color-scheme``, to which the theme switches
   live): the contrast of every claim block's text and of every figure's ink against its
   paper, on a screenshot of each figure;
3. **light theme, phone (390 px, mobile, 3 device pixels per CSS pixel):** clipped math,
   anything past the text column, sideways scrolling, and figures shown through their phone
   variant large enough.

Switching theme and viewport in place costs a restyle or a relayout, not a reload and a new
typesetting. In this order each page is laid out twice, at the desktop width and at the
phone's (the switch to dark restyles and repaints at the same width, 0.5 s on a chapter page;
the way to the phone and back to light is one relayout, 1-1.5 s), and the next page is loaded
from a blank one, so the last is never laid out again. The order before (phone, then back to
the desktop for the dark theme) laid every page out three times.
Before, each page was loaded five times (one render, four layout tests): 360 s of test time
on the two busy cores of a CI run, without the audit. This pass, the audit included, takes
220-290 s, of which the audit is about half on a chapter page.

Network off: every host name resolves to nothing (``tests/_browser.py``).
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _browser import DevTools, DevToolsError, Page

ROOT = Path(__file__).resolve().parents[1]
DESKTOP, PHONE = (1400, 1000), (390, 844)
TABS = min(2, os.cpu_count() or 1)  # pages surveyed side by side: one tab per core
AXE_VERSION = "4.14.1"
AXE = ROOT / "_build" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
# Figures are retina PNGs (twice the pixels of their nominal size at the style's dpi, 110): a
# 9 pt text is 9 * 110 / 72 = 13.75 nominal px, and shown at scale s it is 13.75 s CSS px, at
# least 12 px (9 CSS pt) for s >= 0.873. A figure of at most plotting.MAX_WIDTH = 7.5 in is
# shown at 0.92 in the 756 px column; a 10 in figure would be shown at 0.69.
RETINA = 2
MIN_FIGURE_SCALE = 12 / (9 * 110 / 72)

_READY = """(async () => {
  if (document.readyState !== 'complete' || !document.querySelector('article, body')) return false;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await new Promise(r => setTimeout(r, 50));
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => r()));
  return true;
})()"""

# every visible image decoded, and (for the phone) the layout settled after the resize
_IMAGES_SETTLED = """(async () => {
  const imgs = [...document.querySelectorAll('img')].filter(i => i.offsetParent !== null);
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => {
    i.addEventListener('load', r, {once: true}); i.addEventListener('error', r, {once: true});
  })));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  return imgs.every(i => i.complete) && THEME_OK;
})()"""

_CODE_AND_FIGURES = """(() => {
  const longest = t => t.split('\\n').reduce((a, b) => (b.length > a.length ? b : a), '');
  const code = [], figures = [];
  let count = 0;
  document.querySelectorAll('div.cell_input pre').forEach(p => {
    if (p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1)
      code.push(longest(p.textContent).slice(0, 100));
  });
  document.querySelectorAll('div.cell_output img').forEach(img => {
    // a <picture> source is declared "2x": its naturalWidth is already the nominal one
    if (img.offsetParent === null) return;
    count += 1;
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
  return {code, figures, count};
})()""".replace("MIN_SCALE", f"{MIN_FIGURE_SCALE:.4f}").replace("RETINA", str(RETINA))

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

_AUDIT = """(async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.map(v => ({impact: v.impact, id: v.id, help: v.help,
    nodes: v.nodes.length, where: v.nodes.slice(0, 3).map(n => n.target.join(' ')),
    detail: (v.nodes[0].any[0] || {}).message || ''}));
})()"""


def axe_source() -> str:
    """The axe-core script, installed with npm into ``_build/axe`` if it is not there yet."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed to install axe-core (Debian package npm)")
        subprocess.run([npm, "install", "--prefix", str(AXE.parents[2]), "--no-audit",
                        "--no-fund", "--silent", f"axe-core@{AXE_VERSION}"],
                       check=True, timeout=300)
    return AXE.read_text()


def contrast(png: bytes) -> float:
    """Contrast ratio (WCAG) of a figure's ink (its darkest 0.5 %) against its paper (median)."""
    import matplotlib.image

    rgb = matplotlib.image.imread(io.BytesIO(png))[..., :3].astype(float)
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lum = (linear @ np.array([0.2126, 0.7152, 0.0722])).ravel()
    paper, ink = np.median(lum), np.quantile(lum, 0.005)
    return (max(paper, ink) + 0.05) / (min(paper, ink) + 0.05)


@dataclass
class PageSurvey:
    """What one page showed. Lists of problems are strings naming what went wrong."""

    dom: str = ""                 # the rendered DOM, light theme, desktop
    seconds: float = 0.0
    redirect: bool = False        # the root index.html only redirects
    code_cut: list = field(default_factory=list)
    figures_desktop: list = field(default_factory=list)
    figures_seen: int = 0
    axe: list = field(default_factory=list)          # every violation (impact, id, ...)
    dark_theme: str = ""
    claim_texts: list = field(default_factory=list)  # [(contrast, what)]
    figure_contrast: list = field(default_factory=list)  # [(contrast, alt)]
    phone_math: list = field(default_factory=list)
    phone_overflow: list = field(default_factory=list)
    phone_figures: list = field(default_factory=list)


def _load(tab: Page, url: str) -> None:
    """Navigate and wait for the page (and MathJax); retry if the page navigates again."""
    for attempt in range(3):
        try:
            tab.navigate(url)
            time.sleep(0.2)
            tab.wait_for(_READY, timeout=90)
            return
        except DevToolsError as err:
            navigation = "navigated" in str(err) or "context" in str(err)
            if not navigation or attempt == 2:
                raise


def _metrics(tab: Page, size: tuple[int, int], phone: bool) -> None:
    tab.send("Emulation.setDeviceMetricsOverride", {
        "width": size[0], "height": size[1], "deviceScaleFactor": 3 if phone else 1,
        "mobile": phone})


def _scheme(tab: Page, dark: bool) -> None:
    tab.send("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def _settle(tab: Page, theme: str) -> None:
    check = f"document.documentElement.dataset.theme === '{theme}'"
    tab.wait_for(_IMAGES_SETTLED.replace("THEME_OK", check), timeout=30)


def _dark(tab: Page, result: PageSurvey) -> None:
    _scheme(tab, dark=True)
    _settle(tab, "dark")
    found = tab.evaluate(_CLAIM_CONTRAST)
    result.dark_theme = found["theme"]
    result.claim_texts = found["texts"]
    for i in range(tab.evaluate(_FIGURES)):
        alt, x, y, w, h = tab.evaluate(_FIGURE_BOX.replace("INDEX", str(i)))
        # optimizeForSpeed: a faster PNG encoding of the same pixels
        shot = tab.send("Page.captureScreenshot", {
            "format": "png", "optimizeForSpeed": True,
            "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}})
        result.figure_contrast.append((contrast(base64.b64decode(shot["data"])), alt[:60]))
    tab.evaluate("window.scrollTo(0, 0); true")


def _phone(tab: Page, result: PageSurvey) -> None:
    _metrics(tab, PHONE, phone=True)  # to the phone and back to light in one relayout
    _scheme(tab, dark=False)
    _settle(tab, "light")
    result.phone_math = tab.evaluate(_MATH)
    result.phone_overflow = tab.evaluate(_OVERFLOW)
    result.phone_figures = tab.evaluate(_CODE_AND_FIGURES.replace("PHONE", "true"))["figures"]


def _survey_page(tab: Page, page: Path, shots: Path | None, html_root: Path | None,
                 axe: str | None, folder: Path | None) -> PageSurvey:
    """Load one page in ``tab`` and measure it: light, dark, phone (the module's docstring)."""
    start = time.monotonic()
    result = PageSurvey()
    head = page.read_text(errors="replace")[:3000].lower()
    if 'http-equiv="refresh"' in head:
        result.redirect = True
        return result
    # a blank page first: the last page, left on the phone, is not laid out again at the
    # desktop width before it goes (that cost a sixth of the survey)
    tab.navigate("about:blank")
    _metrics(tab, DESKTOP, phone=False)
    _scheme(tab, dark=False)
    _load(tab, page.as_uri())
    result.dom = tab.evaluate("document.documentElement.outerHTML")
    if shots is not None and html_root is not None:
        tab.screenshot(shots / page.relative_to(html_root).with_suffix(".png"))
    found = tab.evaluate(_CODE_AND_FIGURES.replace("PHONE", "false"))
    result.code_cut, result.figures_desktop = found["code"], found["figures"]
    result.figures_seen = found["count"]
    if axe is not None:
        if not tab.evaluate("typeof axe !== 'undefined'"):
            tab.evaluate(axe + "; true")
        result.axe = tab.evaluate(_AUDIT, timeout=240)
    _dark(tab, result)  # at the desktop's width: a restyle, not a relayout
    if folder is not None:
        tab.screenshot(folder / "dark.png")
    _phone(tab, result)
    if folder is not None:
        tab.screenshot(folder / "phone.png")
    result.seconds = round(time.monotonic() - start, 1)
    return result


def cost(page: Path) -> int:
    """A page's expected survey cost, for the schedule: its size plus a share per figure."""
    text = page.read_text(errors="replace")
    return len(text) + 200_000 * text.count('class="cell_output')


def survey(pages: list[Path], profile: Path, shots: Path | None = None,
           html_root: Path | None = None, axe: str | None = None,
           extra_shots: dict[Path, Path] | None = None,
           tabs: int = TABS) -> dict[Path, PageSurvey]:
    """Load every page of ``pages`` once and measure it (see the module's docstring).

    One browser; its ``tabs`` tabs (one per core) survey the pages side by side, costliest
    first, each tab taking the next page when it is done. ``axe`` is the axe-core script (no
    audit when ``None``). A screenshot of the top of every page goes under ``shots`` (by its
    path relative to ``html_root``), and for each page of ``extra_shots`` (page: folder) one
    in the dark theme and one on the phone into that folder (``dark.png``, ``phone.png``).
    """
    import threading

    queue = sorted(pages, key=cost, reverse=True)
    lock = threading.Lock()
    results: dict[Path, PageSurvey] = {}
    errors: list[BaseException] = []

    def work(tab: Page) -> None:
        while not errors:
            with lock:
                if not queue:
                    return
                page = queue.pop(0)
            try:
                results[page] = _survey_page(tab, page, shots, html_root, axe,
                                             (extra_shots or {}).get(page))
            except BaseException as err:  # noqa: BLE001 - raised in the caller's thread
                errors.append(err)
                return

    with DevTools(profile, size=DESKTOP, loopback=False) as browser:
        pool = [browser.page] + [browser.new_page() for _ in range(max(tabs, 1) - 1)]
        threads = [threading.Thread(target=work, args=(tab,), daemon=True) for tab in pool]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return {page: results[page] for page in pages}
