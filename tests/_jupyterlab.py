"""How the notebooks read where students open them: JupyterLab, and plain HTML as Colab shows it.

Helpers of ``tests/test_jupyterlab.py`` (and of one-off measurements):

* :class:`JupyterLabServer` starts a real JupyterLab on 127.0.0.1 (a free port, token auth, no
  browser, a private root folder and private settings), from the interpreter running the tests,
  which has the reader's requirements (``requirements.txt``).
* :func:`read_lab_notebook` opens one notebook in that JupyterLab inside a :class:`DevTools`
  browser, waits until every Markdown cell is rendered and its math typeset, and returns what a
  reader would see go wrong (see :data:`SCAN_JS`).
* :func:`render_plain_html` converts a notebook to HTML with nbconvert and MathJax 3 and no
  extension (what Colab or a plain Jupyter offers: no MyST, no macros but the notebook's own),
  with MathJax served from the local ``django-static-mathjax`` files so it works offline;
  :func:`read_static_page` scans such a page.

A math error is any of: a MathJax ``mjx-merror`` element; an undefined control sequence that
MathJax's ``noundefined`` package (loaded by JupyterLab) shows as red text; a KaTeX error of
jupyterlab-myst (which renders math with KaTeX and marks a failure with a warning icon and a
``title`` holding the message). A raw directive is a MyST fence such as `` ```{prf:theorem} ``
or `` ```{exercise} `` that the renderer showed as a code block (or as text).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _browser import DevTools, DevToolsError, Page

# JupyterLab runs from the reader's virtualenv (requirements.txt alone, with its
# jupyterlab-myst extension), not from .venv-dev; the root conftest.py finds it.
READER_PYTHON = os.environ.get("LECNOTES_READER_PYTHON") or sys.executable

# ---------------------------------------------------------------------------------------
# What the page shows: one scan for JupyterLab (one notebook panel) and for a static page.
SCAN_JS = r"""
(root => {
  const outputs = [...root.querySelectorAll('.jp-MarkdownOutput, .myst')]
    .filter(el => !el.closest('.lm-mod-hidden'));
  const errors = [];
  const note = (kind, el, message) => errors.push({
    kind, tex: (el.textContent || '').trim().slice(0, 80), message: (message || '').slice(0, 160),
  });
  for (const el of root.querySelectorAll('mjx-merror'))
    note('mathjax', el, el.getAttribute('data-mjx-error') || el.textContent);
  for (const el of root.querySelectorAll('mjx-assistive-mml mtext[mathcolor="red"]'))
    if ((el.textContent || '').startsWith('\\'))
      note('undefined', el, 'Undefined control sequence');
  for (const el of root.querySelectorAll('.katex-error')) note('katex', el, el.title);
  // jupyterlab-myst (myst-to-react): inline math errors are span.text-yellow-600[title],
  // display math errors pre[title] holding a span.text-red-500.
  // A cross-reference jupyterlab-myst cannot resolve wears the same mark: not a math error.
  const xrefs = [];
  for (const el of root.querySelectorAll('.myst span.text-yellow-600[title], .myst pre[title]'))
    if (/cross.?reference/i.test(el.title)) xrefs.push((el.textContent || '').trim());
    else note('myst', el, el.title);
  const fences = [];
  const directive = /^(`{3,}|:{3,})\{[\w:-]+\}|^\{(prf:\w+|exercise|solution)\}/m;
  for (const out of outputs) {
    for (const code of out.querySelectorAll('code, pre')) {
      const cls = code.className || '';
      if (cls.includes('language-{') || /^:(label|class|nonumber):/m.test(code.textContent))
        fences.push((cls + ' ' + code.textContent).trim().slice(0, 100));
    }
    const text = out.innerText || '';
    const m = text.match(directive);
    if (m) fences.push(text.slice(Math.max(m.index - 20, 0), m.index + 80));
  }
  // TeX left untypeset: delimiters in the visible text outside code and typeset math
  let raw = 0;
  for (const out of outputs) {
    const copy = out.cloneNode(true);
    copy.querySelectorAll('mjx-container, .katex, code, pre, script, style')
      .forEach(e => e.remove());
    raw += ((copy.textContent || '').match(/\$[^$\s][^$]*\$|\\\(|\\\[/g) || []).length;
  }
  return {
    outputs: outputs.length,
    math: root.querySelectorAll('mjx-container, .katex').length,
    errors, fences, raw, xrefs,
  };
})
"""

# Cheap to evaluate (it is polled): null while a Markdown cell of the open notebook is not yet
# rendered, else what changes while math is still being typeset.
PROGRESS_JS = r"""
(panel => {
  if (!panel || !panel.content || !panel.context || !panel.context.isReady) return null;
  const cells = panel.content.widgets.filter(c => c.model.type === 'markdown');
  const shown = c => c.node.querySelector('.jp-MarkdownOutput, .myst');
  const pending = cells.filter(c => c.model.sharedModel.getSource().trim() &&
      !(c.rendered && shown(c) && shown(c).childElementCount));
  if (!cells.length || pending.length) return null;
  return [cells.length, panel.node.querySelectorAll('mjx-container, .katex').length,
          panel.content.node.textContent.length].join(' ');
})
"""


def _panel(path: str) -> str:
    """JavaScript for the open notebook panel of ``path`` (undefined while there is none)."""
    return (f"[...jupyterapp.shell.widgets('main')].find(w => w.context && "
            f"w.context.path === {json.dumps(path)} && !w.isDisposed)")

# JupyterLab settings of the test's private settings folder: render every cell (no
# windowing, so nothing waits for a scroll), fetch no news, check for no update.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLabServer:
    """A JupyterLab server on 127.0.0.1 serving ``root``, for one test.

    Parameters
    ----------
    root : Path
        The folder the server serves (copies of the notebooks).
    home : Path
        A private folder for the server's configuration, data, runtime, settings and
        workspaces, so that nothing of the user's own Jupyter setup takes part.
    disabled : tuple of str
        Lab extensions to disable (e.g. ``("jupyterlab-myst",)`` to see JupyterLab without it).
    extra_args : tuple of str
        More command-line options of the server.
    settings : dict
        JupyterLab settings files to write, over :data:`LAB_SETTINGS`.

    Use as a context manager; on exit the server is shut down through its API (which also ends
    the kernels it started), or terminated.
    """

    def __init__(self, root: Path, home: Path, disabled: tuple[str, ...] = (),
                 extra_args: tuple[str, ...] = (), settings: dict | None = None):
        self.root, self.home = root, home
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        env.update({name: str(home / sub) for name, sub in [
            ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
            ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")]})
        env.update({k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "MKL_NUM_THREADS")})
        for name, value in {**LAB_SETTINGS, **(settings or {})}.items():
            path = home / "settings" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        # jupytext is a developer requirement, not a reader's: keep it out of the reader's
        # lab. The language-server and terminal extensions play no part in reading and only
        # slow the start down.
        disabled = (*disabled, "jupyterlab-jupytext", "@jupyterlab/lsp-extension")
        page = home / "config" / "labconfig" / "page_config.json"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(json.dumps({"disabledExtensions": {n: True for n in disabled}}))
        off = {"jupyterlab_jupytext": False, "jupyter_lsp": False,
               "jupyter_server_terminals": False}
        (home / "config" / "jupyter_server_config.json").write_text(
            json.dumps({"ServerApp": {"jpserver_extensions": off}}))
        self.log = (home / "server.log").open("w")
        self.proc = subprocess.Popen(
            [READER_PYTHON, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
             f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
             "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--allow-root", *extra_args],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        self._wait_until_up()

    def _wait_until_up(self, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {self.log_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.api("status"), timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"JupyterLab did not start in {timeout} s: {self.log_text()[-3000:]}")

    def api(self, path: str) -> str:
        """The URL of a REST endpoint, with the token."""
        return f"{self.url}/api/{path}?token={self.token}"

    def lab_url(self, workspace: str = "test") -> str:
        """The JupyterLab page in a fresh workspace of that name (no tabs restored)."""
        return f"{self.url}/lab/workspaces/{workspace}?reset&token={self.token}"

    def log_text(self) -> str:
        self.log.flush()
        return (self.home / "server.log").read_text(errors="replace")

    def stop(self):
        """Shut the server (and its kernels) down; terminate it if it does not exit."""
        if self.proc.poll() is None:
            try:
                req = urllib.request.Request(self.api("shutdown"), method="POST")
                urllib.request.urlopen(req, timeout=10).close()
                self.proc.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# Headless Chromium draws a frame only when something asks for one, and runs idle callbacks
# (requestIdleCallback) only in the idle time after a frame. Without frames, a notebook's
# rendering in JupyterLab (jupyterlab-myst) stalled for seconds at a time with the renderer
# idle: 327 s of wall time for 91 CPU s in a CI run, chapter 10 in 87 s (5 s alone); in a probe,
# 319 idle callbacks of one notebook each waited 3.7-5 s, and its last Markdown cells appeared
# one every 5 s. A visible window draws every vsync; an animation-frame loop does the same here
# (the twelve lectures: 79-84 s of wall time against 99-178 s, the same formulas counted). It
# changes when the work runs, not what is rendered.
FRAMES_JS = "(() => { const f = () => requestAnimationFrame(f); f(); return true; })()"


def open_lab(browser: DevTools | Page, server: JupyterLabServer, kernels: bool = False,
             workspace: str = "test", timeout: float = 90):
    """Load JupyterLab in ``browser`` and wait until the application is restored.

    With ``kernels=False`` (the default) a notebook opens without starting a kernel, as when a
    reader picks "No Kernel": rendering does not depend on it, and each kernel would cost a
    second or two of CPU on a two-core machine. (It sets the notebook widget factory's
    ``preferKernel``, a private field of JupyterLab 4.)
    """
    browser.navigate(server.lab_url(workspace))
    browser.wait_for("window.jupyterapp !== undefined", timeout=timeout)
    browser.evaluate(FRAMES_JS)
    browser.evaluate("jupyterapp.restored.then(() => true)", timeout=timeout)
    if not kernels:
        browser.evaluate("(f => { f._preferKernel = false; return true; })"
                         "(jupyterapp.docRegistry.getWidgetFactory('Notebook'))")


def read_lab_notebook(browser: DevTools | Page, path: str, shot: Path | None = None,
                      timeout: float = 150, settle: float = 0.4, raw_grace: float = 2.0) -> dict:
    """Open ``path`` (relative to the server root) in JupyterLab and scan it as rendered.

    Waits until every Markdown cell is rendered and the rendered math has stopped changing for
    ``settle`` seconds (while TeX is left in the text and MathJax is at work, up to
    ``raw_grace`` seconds more), scans the notebook panel (:data:`SCAN_JS`), optionally saves
    a screenshot of its top, then closes the notebook (and shuts its kernel down, if any).

    Returns
    -------
    dict
        ``outputs`` (rendered Markdown cells), ``math`` (typeset formulas), ``errors`` (math
        errors: kind, TeX and message), ``fences`` (raw directives), ``raw`` (TeX delimiters
        left in the text) and ``seconds`` (time to read the notebook).
    """
    start = time.monotonic()
    browser.evaluate(
        f"jupyterapp.commands.execute('docmanager:open', {{path: {json.dumps(path)}}})"
        ".then(w => w.context.ready).then(() => true)", timeout=timeout)
    opened = time.monotonic()
    panel = _panel(path)
    deadline = start + timeout
    last, since, result, first_stable = None, time.monotonic(), None, None
    while True:
        state = browser.evaluate(f"{PROGRESS_JS}({panel})")
        now = time.monotonic()
        if state != last:
            last, since = state, now
        elif state and now - since >= settle:
            result = browser.evaluate(f"{SCAN_JS}({panel}.node)")
            first_stable = first_stable or now
            # TeX still in the text while MathJax is at work: give it a little longer
            mathjax = browser.evaluate("document.querySelector('mjx-container') !== null")
            if result["raw"] == 0 or not mathjax or now - first_stable >= raw_grace:
                break
            since = now
        if now > deadline:
            raise DevToolsError(f"{path}: not rendered after {timeout} s (last state {state})")
        time.sleep(0.1)
    rendered = time.monotonic()
    if shot is not None:
        browser.screenshot(shot)
    browser.evaluate(  # the kernel is shut down in the background
        f"(p => {{ p.sessionContext.shutdown().catch(() => null).then(() => p.dispose());"
        f" return true; }})({panel})")
    end = time.monotonic()
    result["seconds"] = round(end - start, 2)
    result["phases"] = {"open": round(opened - start, 2), "render": round(rendered - opened, 2),
                        "scan+close": round(end - rendered, 2)}
    return result


def read_all_in_lab(server: JupyterLabServer, profile: Path, paths: list[str],
                    shots: Path | None = None, size: tuple[int, int] = (1280, 1600),
                    shoot=lambda path: True) -> dict[str, dict]:
    """Read every notebook of ``paths`` in one JupyterLab, one after the other.

    One headless browser (profile folder ``profile``) loads JupyterLab once and opens each
    notebook in turn (:func:`read_lab_notebook`); a screenshot of each path for which
    ``shoot(path)`` is true goes under ``shots``. (Two browsers at once were slower on two
    cores: 63 s against 53 s for the eight lectures, jupyterlab-myst keeping each busy.)
    Returns the results by path, in the order of ``paths``.
    """
    results = {}
    with DevTools(profile, size=size) as browser:
        open_lab(browser, server)
        for path in paths:
            shot = shots / Path(path).with_suffix(".png") if shots and shoot(path) else None
            results[path] = read_lab_notebook(browser, path, shot=shot)
    return results


# ---------------------------------------------------------------------------------------
# Plain HTML, as Colab shows a notebook: Markdown and MathJax, no MyST, no macros of ours.
def mathjax_script() -> Path:
    """The MathJax 3 ``tex-chtml.js`` shipped by the package ``django-static-mathjax``."""
    import mathjax

    path = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-chtml.js"
    if not path.is_file():
        raise FileNotFoundError(f"MathJax 3 not found at {path}")
    return path


# MathJax 3 with the delimiters Jupyter uses; 'noundefined' removed so that an undefined
# macro is a visible error element (mjx-merror) rather than red text.
_MATHJAX_HEAD = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_mathjax -%}
<script>
window.MathJax = {tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']],
                        displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']],
                        processEscapes: true, processEnvironments: true,
                        packages: {'[-]': ['noundefined']}}};
</script>
<script src="{{ resources.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def render_plain_html(notebook: Path, target: Path) -> Path:
    """Write ``notebook`` as a standalone HTML page with offline MathJax 3 and no extension."""
    import nbformat
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(extra_loaders=[DictLoader({"plain.html.j2": _MATHJAX_HEAD})],
                            template_file="plain.html.j2")
    exporter.mathjax_url = mathjax_script().as_uri()
    body, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body)
    return target


def read_static_page(browser: DevTools | Page, page: Path, shot: Path | None = None,
                     timeout: float = 30, settle: float = 0.2) -> dict:
    """Load a static HTML page, wait until MathJax has typeset it, and scan its Markdown."""
    start = time.monotonic()
    browser.navigate(page.as_uri())
    browser.wait_for("window.MathJax && MathJax.startup && MathJax.startup.promise"
                     " ? MathJax.startup.promise.then(() => true) : false", timeout=timeout)
    last, since = None, time.monotonic()
    while time.monotonic() - since < settle:
        state = browser.evaluate("document.querySelectorAll('mjx-container').length")
        if state != last:
            last, since = state, time.monotonic()
        time.sleep(0.1)
    result = browser.evaluate(f"{SCAN_JS}(document.body)")
    if shot is not None:
        browser.screenshot(shot)
    result["seconds"] = round(time.monotonic() - start, 2)
    return result
