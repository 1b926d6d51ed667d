"""Kernels that cannot collide at start-up, and executions that cannot hang silently.

Shared by every runner that executes lectures (``execute.py``, ``run_nbval.py``, ``sweep.py``,
``benchmarks/``) and by ``stress_kernels.py``. Only the standard library and jupyter_client /
nbclient: this runs in the reader's virtualenv.

Two guards (issue 62: side by side, 6 of 28 executions stopped with kernel and client both
idle until the cell timeout):

**Start-up.** jupyter_client picks five free TCP ports for a new kernel, closes them and hands
them to the kernel, which binds them a moment later: two kernels starting at once can pick the
same port (jupyter_client issue 487; "Address already in use", "Kernel died before replying to
kernel_info"), and a client connecting to a port nobody has bound yet can even connect a TCP
socket to itself. :class:`IPCKernelManager` uses the ``ipc`` transport instead (Unix sockets in
a private temporary folder per kernel: no port is chosen, so none can be taken twice), and
:func:`startup_lock` serialises the start of kernels across processes (a lock file), until the
kernel answered ``kernel_info``. ``-p kernel_guard`` installs both into nbval.

**Stall.** A kernel that is computing uses CPU; a kernel that waits for a request that never
arrived (or a client that waits for a reply that was never sent) does not. :class:`Watchdog`
samples the time of the last kernel message and the CPU time of the kernel's process tree; no
message for ``LECNOTES_STALL_SECONDS`` (default 60) while the kernel used less than 0.2 CPU
seconds in that window is a stall (a cell tagged ``waits``, one that sleeps or waits on I/O on
purpose, is exempt). :func:`execute` then kills that kernel and executes the notebook once more
in a fresh one, saying so on stderr; a second stall is an error. For runners that execute in
a subprocess they do not control (nbval under pytest), :func:`tree_cpu` lets
``notebooks.run_parallel`` apply the same rule to the whole process tree.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

STALL_SECONDS = float(os.environ.get("LECNOTES_STALL_SECONDS", "60"))
IDLE_CPU = 0.2          # CPU seconds a kernel may use in a stall window and still count as idle
WAITS_TAG = "waits"     # a cell that waits on purpose (sleep, I/O): never a stall
LOCK = Path(tempfile.gettempdir()) / "lecnotes-kernel-start.lock"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class StallError(RuntimeError):
    """An execution made no progress: no kernel message and an idle kernel for too long."""


# -- CPU time of a process tree (Linux /proc; None elsewhere) --------------------------------
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _cpu_of(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime


def tree_cpu(pid: int) -> float | None:
    """CPU seconds used so far by ``pid`` and its living descendants (None without /proc)."""
    if not Path("/proc/self/stat").exists():
        return None
    tree, total, todo = _children(), 0.0, [pid]
    while todo:
        p = todo.pop()
        total += _cpu_of(p)
        todo += tree.get(p, [])
    return total


def kill_tree(proc) -> None:
    """Kill a ``subprocess.Popen`` started with ``start_new_session=True`` and all it started."""
    import signal

    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    proc.wait()


# -- start-up -----------------------------------------------------------------------------
@contextlib.contextmanager
def startup_lock(path: Path = LOCK, timeout: float = 300):
    """Hold the machine-wide kernel start-up lock (a ``flock`` on ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:  # a stuck holder must not stop the book
                    print("kernel_guard: start-up lock not free after "
                          f"{timeout:.0f} s, starting anyway", file=sys.stderr)
                    yield
                    return
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _ipc_manager_class(base):
    class IPCKernelManager(base):
        """A kernel manager on the ``ipc`` transport: Unix sockets in a private folder."""

        def __init__(self, *args, **kwargs):
            folder = tempfile.mkdtemp(prefix="lecnotes-kernel-")
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(folder, "k"))
            super().__init__(*args, **kwargs)
            import shutil
            import weakref

            weakref.finalize(self, shutil.rmtree, folder, True)  # the sockets' folder

    IPCKernelManager.__name__ = IPCKernelManager.__qualname__ = f"IPC{base.__name__}"
    return IPCKernelManager


def ipc_manager(async_: bool = True):
    """The kernel manager class of the guard (``AsyncKernelManager`` for nbclient)."""
    from jupyter_client.manager import AsyncKernelManager, KernelManager

    return _ipc_manager_class(AsyncKernelManager if async_ else KernelManager)


# -- the stall detector -------------------------------------------------------------------
class Watchdog:
    """Watches one kernel: calls ``on_stall`` once when it stalled (see the module's docstring).

    ``touch()`` records a kernel message; ``waiting(True)`` marks a cell that waits on purpose.
    """

    def __init__(self, pid: int, on_stall, seconds: float = STALL_SECONDS, poll: float = 2.0,
                 cpu=tree_cpu):
        self.pid, self.on_stall, self.seconds, self.poll = pid, on_stall, seconds, poll
        self.cpu = cpu
        self.last = time.monotonic()
        self.exempt = False
        self.current = None  # the index of the cell under way (for the message)
        self.stalled_for: float | None = None
        self._cpu = [(self.last, cpu(pid))]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="kernel-watchdog")
        self._thread.start()

    def touch(self):
        self.last = time.monotonic()

    def waiting(self, exempt: bool):
        self.exempt = exempt
        self.touch()

    def _run(self):
        while not self._stop.wait(self.poll):
            now, cpu = time.monotonic(), self.cpu(self.pid)
            self._cpu.append((now, cpu))
            self._cpu = [(t, c) for t, c in self._cpu if t >= now - self.seconds - 2 * self.poll]
            silent = now - self.last
            if self.exempt or silent < self.seconds:
                continue
            then = [c for t, c in self._cpu if t <= now - self.seconds]
            if cpu is not None and then and then[-1] is not None and cpu - then[-1] > IDLE_CPU:
                continue  # silent but computing: a long cell, not a stall
            self.stalled_for = silent
            self.on_stall()
            return

    def stop(self):
        self._stop.set()


POLL_SLICE = 1.0
"""Seconds a client waits on a socket before it checks the socket itself for a message."""


def _bounded_get_msg(channel, slice_s: float = POLL_SLICE) -> None:
    """Make ``channel.get_msg`` wait in slices of ``slice_s`` and look at its socket after each.

    The stalls of issue 62: kernel and client idle, the kernel having executed the cell and
    sent its messages, which sit unread in the client's shell and iopub sockets (seen at the
    stall: ``ZMQ_EVENTS`` says readable, and the kernel's ``In`` holds the cell). The client
    waits in ``socket.poll`` for the edge-triggered notification of the socket's file
    descriptor, and that wake-up was lost (a widget cell's burst of messages: in a four-cell
    notebook at load 2-6, 6 stalls in 111 runs with ipykernel 7.4.0, 3 in 105 with 6.31.0).
    Each new poll looks at the socket's state again, and ``ZMQ_EVENTS`` is read (on the
    loop's thread, which re-arms the socket) if it still finds nothing: a lost wake-up
    costs at most ``slice_s`` instead of the rest of the cell's timeout (old client 3
    stalls in 120 runs, this one 0 in 120, side by side at the same load).
    """
    from queue import Empty

    import zmq

    async def get_msg(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = slice_s if deadline is None else min(slice_s, deadline - time.monotonic())
            ready = await channel.socket.poll(max(0, int(left * 1000)))
            if not ready and channel.socket.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                LOST_WAKEUPS[0] += 1
                ready = True
            if ready:
                return await channel._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty

    channel.get_msg = get_msg


LOST_WAKEUPS = [0]
"""How many messages the bounded waits of this process found that a poll had missed."""


def _guarded_client_class():
    from nbclient import NotebookClient

    class GuardedClient(NotebookClient):
        """nbclient on an ipc kernel started under the lock, watched for stalls."""

        stall_seconds = STALL_SECONDS
        use_lock = True
        watchdog: Watchdog | None = None

        async def async_start_new_kernel(self, **kwargs):
            with startup_lock() if self.use_lock else contextlib.nullcontext():
                await super().async_start_new_kernel(**kwargs)
                # hold the lock until the kernel answers (its sockets are bound by then)
                await self.async_start_new_kernel_client()

        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            for channel in (kc.shell_channel, kc.iopub_channel):
                _bounded_get_msg(channel)
            return kc

        def _kill(self):
            pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
            if pid:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)

        async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                     store_history=True):
            if self.watchdog is None and self.km is not None:
                pid = getattr(self.km.provisioner, "pid", None)
                if pid:
                    self.watchdog = Watchdog(pid, self._kill, self.stall_seconds,
                                             poll=min(2.0, self.stall_seconds / 4))
            if self.watchdog is not None:
                self.watchdog.waiting(WAITS_TAG in cell.get("metadata", {}).get("tags", []))
                self.watchdog.current = cell_index
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)

        def process_message(self, msg, cell, cell_index):
            if self.watchdog is not None:
                self.watchdog.touch()
            return super().process_message(msg, cell, cell_index)

        async def _async_cleanup_kernel(self):
            if self.watchdog is not None:
                self.watchdog.stop()
            await super()._async_cleanup_kernel()

    return GuardedClient


def client(nb, *, startup_guard: bool = True, stall_seconds: float = STALL_SECONDS, **kwargs):
    """A guarded ``NotebookClient`` for ``nb`` (ipc kernel, start-up lock, stall watchdog).

    ``startup_guard=False`` keeps jupyter_client's TCP kernel and no lock (the stall watchdog
    stays): the plain set-up, for ``stress_kernels.py`` to compare.
    """
    if startup_guard:
        kwargs.setdefault("kernel_manager_class", ipc_manager())
    c = _guarded_client_class()(nb, **kwargs)
    c.stall_seconds, c.use_lock = stall_seconds, startup_guard
    return c


def execute(nb, *, name: str = "notebook", retries: int = 1, **kwargs):
    """Execute ``nb`` in place with :func:`client`; after a stall, once more in a new kernel.

    Returns the number of stalls retried (0 normally). Raises :class:`StallError` when the
    last attempt stalled too; other errors (a failing cell, a timeout) propagate unchanged.
    """
    import copy

    from nbclient.exceptions import DeadKernelError

    pristine = copy.deepcopy(nb)
    for attempt in range(retries + 1):
        if attempt:
            nb.cells = copy.deepcopy(pristine.cells)
        c = client(nb, **kwargs)
        try:
            c.execute()
            return attempt
        except DeadKernelError:
            dog = c.watchdog
            if dog is None or dog.stalled_for is None:
                raise
            where = f"cell {dog.current}"
            msg = (f"kernel_guard: {name} stalled at {where}: no kernel message for "
                   f"{dog.stalled_for:.0f} s and an idle kernel")
            if attempt == retries:
                raise StallError(msg + "; giving up") from None
            print(msg + "; killed it, executing the notebook again in a new kernel",
                  file=sys.stderr, flush=True)
    raise AssertionError("unreachable")


# -- the nbval plugin (-p kernel_guard) -----------------------------------------------------
def pytest_configure(config):
    """nbval starts its kernels on the ipc transport, one start at a time (the lock)."""
    try:
        import nbval.kernel as nbk
    except ImportError:
        return
    if getattr(nbk, "_lecnotes_guarded", False):
        return
    nbk.KernelManager = ipc_manager(async_=False)
    plain = nbk.start_new_kernel

    def start_new_kernel(*args, **kwargs):
        with startup_lock():
            return plain(*args, **kwargs)  # returns after wait_for_ready

    nbk.start_new_kernel = start_new_kernel
    nbk._lecnotes_guarded = True
