"""Headless Chromium for the reading tests, with the network off.

:class:`DevTools`: one long-lived Chromium driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: no port, no extra package). A test navigates, evaluates
JavaScript until the page is ready (MathJax typeset, JupyterLab restored), reads the DOM,
changes the emulated theme or viewport and takes screenshots, all in one browser: the book's
pages (``tests/_survey.py``) and JupyterLab (``tests/_jupyterlab.py``).

Network off means: every host name resolves to nothing and every proxied request goes to a closed
port. With ``loopback=True`` the address 127.0.0.1 is still reachable (a server the test started
itself); nothing else is.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--proxy-server=socks5://127.0.0.1:9",
]
NO_HOSTS = "--host-resolver-rules=MAP * ~NOTFOUND"
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable, or ``None`` when there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = chromium()
SKIP_REASON = "Chromium is not installed (Debian package 'chromium'); browser test skipped"


def flags(loopback: bool = False) -> list[str]:
    """Chromium flags with the network off (``loopback=True``: 127.0.0.1 stays reachable)."""
    return [*FLAGS, LOOPBACK_ONLY if loopback else NO_HOSTS]


class DevToolsError(RuntimeError):
    """A DevTools command failed, a page script threw, or the browser went away."""


class Page:
    """One page (tab) of a :class:`DevTools` browser, driven through its own session."""

    def __init__(self, browser: DevTools, target: str, size: tuple[int, int]):
        self.browser = browser
        self.session = browser.send("Target.attachToTarget",
                                    {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def send(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        """Send one DevTools command to this page and return its result."""
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def navigate(self, url: str):
        """Load ``url`` in the page (returns when the navigation is committed)."""
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise DevToolsError(f"navigation to {url} failed: {result['errorText']}")

    def evaluate(self, expression: str, timeout: float = 60):
        """The JSON value of a JavaScript expression in the page (promises are awaited)."""
        result = self.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True,
            "timeout": int(timeout * 1000),
        }, timeout=timeout + 5)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DevToolsError(f"page script failed: {text}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60, poll: float = 0.2):
        """Evaluate ``expression`` until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression, timeout=timeout)
            if value:
                return value
            if time.monotonic() > deadline:
                raise DevToolsError(f"timed out waiting for: {expression[:120]}")
            time.sleep(poll)

    def screenshot(self, target: Path):
        """Save the visible part of the page as a PNG (the same pixels, encoded for speed)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        data = self.send("Page.captureScreenshot", {"format": "png",
                                                    "optimizeForSpeed": True})["data"]
        target.write_bytes(base64.b64decode(data))


class DevTools:
    """A headless Chromium driven over the DevTools protocol on a pipe.

    Parameters
    ----------
    profile : Path
        The browser profile folder (its cache makes a second run faster).
    size : (int, int)
        Window width and height in CSS pixels (also the screenshot size).
    loopback : bool
        Keep 127.0.0.1 reachable (the network stays off otherwise).

    The browser opens with one page, :attr:`page` (``navigate``, ``evaluate``, ``wait_for``
    and ``screenshot`` of the browser act on it). A reader thread hands each reply to the
    caller waiting for it, so commands may come from several threads. Use as a context
    manager; :meth:`close` ends the browser process it started.
    """

    def __init__(self, profile: Path, size: tuple[int, int] = (1280, 1600),
                 loopback: bool = True):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def _child_fds():  # the protocol's fixed descriptors: commands on 3, replies on 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.size = size
        self.proc = subprocess.Popen(
            [CHROMIUM, *flags(loopback), "--remote-debugging-pipe",
             f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=_child_fds,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[int, list] = {}  # id -> [event, reply]
        self._reader = threading.Thread(target=self._read_replies, daemon=True)
        self._reader.start()
        pages = [t for t in self.send("Target.getTargets")["targetInfos"]
                 if t["type"] == "page"]
        target = pages[0]["targetId"] if pages else \
            self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.page = Page(self, target, size)

    # -- protocol -----------------------------------------------------------------------
    def _read_replies(self):
        """Reader thread: hand every reply to the caller waiting for its id."""
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:  # the browser went away: wake every caller
                with self._lock:
                    for slot in self._waiting.values():
                        slot[0].set()
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._lock:
                    slot = self._waiting.get(message.get("id"))
                if slot is not None:
                    slot[1] = message
                    slot[0].set()

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60) -> dict:
        """Send one DevTools command (to a page's ``session``) and return its result."""
        slot = [threading.Event(), None]
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._waiting[ident] = slot
            message = {"id": ident, "method": method, "params": params or {}}
            if session:
                message["sessionId"] = session
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            if not slot[0].wait(timeout):
                raise DevToolsError(f"{method}: no answer from Chromium in {timeout} s")
        finally:
            with self._lock:
                self._waiting.pop(ident, None)
        reply = slot[1]
        if reply is None:
            raise DevToolsError("Chromium closed the DevTools pipe")
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def new_page(self) -> Page:
        """Another page (a tab in a window of its own, so that it is never a hidden
        background tab whose timers and animation frames the browser throttles)."""
        target = self.send("Target.createTarget", {"url": "about:blank",
                                                   "newWindow": True})["targetId"]
        return Page(self, target, self.size)

    # -- the first page -------------------------------------------------------------------
    def navigate(self, url: str):
        """Load ``url`` in the first page."""
        self.page.navigate(url)

    def evaluate(self, expression: str, timeout: float = 60):
        """The JSON value of a JavaScript expression in the first page."""
        return self.page.evaluate(expression, timeout)

    def wait_for(self, expression: str, timeout: float = 60, poll: float = 0.2):
        """Evaluate ``expression`` in the first page until it is truthy."""
        return self.page.wait_for(expression, timeout, poll)

    def screenshot(self, target: Path):
        """Save the visible part of the first page as a PNG."""
        self.page.screenshot(target)

    def close(self):
        """End the browser process (politely first) and close the pipes."""
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except (DevToolsError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
