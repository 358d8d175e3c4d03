"""Worker processes for chapter renders, and stopping them cleanly on Ctrl-C or SIGTERM.

Workers never see those signals (they are started with both blocked): the command
receives them, even when they are sent to its whole process group, and stops its workers
itself, with SIGKILL, before it removes their scratch folders."""

from __future__ import annotations

import ctypes
import importlib.util
import multiprocessing
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import resource_tracker
from multiprocessing.process import BaseProcess
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # what stops a command: Ctrl-C, `kill`
GRACE_SECONDS = 3.0  # after the first of them, the process ends within this, whatever hangs


class Terminated(BaseException):
    """SIGTERM, turned into an exception so the same clean-up as Ctrl-C runs."""


def exit_status(interruption: BaseException) -> int:
    """The shell's status for a command stopped by a signal: 128 + its number (130 for
    Ctrl-C, 143 for SIGTERM). The signal stop_on_signals received counts first: a library
    that waits on the operating system (watchfiles, under --watch) turns any signal into
    KeyboardInterrupt."""
    if _received.get("signal") == signal.SIGTERM or isinstance(interruption, Terminated):
        return 128 + signal.SIGTERM
    return 128 + signal.SIGINT


_received: dict[str, int] = {}  # the signal the running command's stop_on_signals received


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by a subprocess test
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated (main thread only: elsewhere Python
    cannot receive signals, and the block runs unchanged; under stop_on_signals, which
    already does, it runs unchanged too)."""
    if (threading.current_thread() is not threading.main_thread()
            or isinstance(signal.getsignal(signal.SIGTERM), _StopHandler)):
        yield
        return
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class _StopHandler:
    """The handler stop_on_signals installs for SIGINT and SIGTERM (see there)."""

    def __init__(self, on_deadline: Callable[[int], None], grace: float) -> None:
        self.on_deadline, self.grace = on_deadline, grace
        self.received: int | None = None  # the first signal's number

    def __call__(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return  # the clean-up of the first one is under way: let it finish
        self.received = _received["signal"] = signum
        status = 128 + signum
        signal.signal(signal.SIGALRM, lambda *_: self.on_deadline(status))
        signal.setitimer(signal.ITIMER_REAL, self.grace)
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated()


@contextmanager
def stop_on_signals(on_deadline: Callable[[int], None],
                    grace: float = GRACE_SECONDS) -> Iterator[None]:
    """For a command's whole run (main thread): the first SIGINT raises KeyboardInterrupt,
    the first SIGTERM Terminated, so the usual clean-up runs; any later one is ignored
    while it does. If the process has not ended `grace` seconds after that first signal
    (a clean-up or an exit handler that hangs), `on_deadline(status)` is called, which
    must end the process (os._exit). Once a signal came the handlers stay until the end,
    interpreter exit included; else the old ones come back."""
    handler = _StopHandler(on_deadline, grace)
    _received.clear()
    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        if handler.received is None:
            for s, h in old.items():
                signal.signal(s, h)


@contextmanager
def signals_blocked(signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[None]:
    """Within the block this thread does not receive `signals` (they wait until it ends);
    a process started in it inherits the block (as multiprocessing's resource tracker
    is started)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (if it is not running yet) with its leak
    warning silenced. A worker terminated mid-chapter (Ctrl-C, SIGTERM) leaves the
    semaphore it held registered; the tracker removes it itself at exit, but its warning
    would be the last line the user sees, after "Interrupted: …"."""
    flag = "ignore:resource_tracker:UserWarning"  # the tracker process gets the -W options
    sys.warnoptions.append(flag)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(flag)


def light_imports() -> None:
    """Run first in a worker process: `import manim` takes about 0.15 s less (of 1.0-1.3 s
    here) without two things Manim imports for features a chapter never uses.
    - IPython: Manim registers its Jupyter magic only if `from IPython import ...` works;
      a worker never runs in Jupyter, so the import is refused (ImportError).
    - scipy.spatial: Manim needs only its `transform` subpackage (Rotation); the package's
      own __init__ (k-d trees, Delaunay, distances) runs when a name of it is first used.
    Nothing a worker could use is lost: scipy.spatial works as usual when asked for."""
    sys.modules.setdefault("IPython", None)
    _package_without_init("scipy.spatial")


class _PackageWithoutInit(types.ModuleType):
    """A package whose subpackages import as usual; its __init__ runs, into this same
    module, when a name it defines is first read."""

    def __getattr__(self, name: str):
        sub = sys.modules.get(f"{self.__name__}.{name}")
        if sub is not None:  # a subpackage being imported (`import a.b.c as d` reads a.b)
            return sub
        self.__class__ = types.ModuleType
        self.__spec__.loader.exec_module(self)
        return getattr(self, name)


def _package_without_init(name: str) -> None:
    parent = name.rpartition(".")[0]
    if parent:
        __import__(parent)
    if name in sys.modules or (spec := importlib.util.find_spec(name)) is None:
        return
    module = _PackageWithoutInit(name)
    module.__spec__, module.__path__ = spec, list(spec.submodule_search_locations or [])
    module.__file__, module.__package__ = spec.origin, name
    module.__loader__ = spec.loader
    sys.modules[name] = module
    if parent:
        setattr(sys.modules[parent], name.rpartition(".")[2], module)


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that never receives SIGINT or SIGTERM (blocked from its start:
    sent to the process group, they would make it print a traceback or take the next
    job). The command stops it with SIGKILL."""

    def start(self) -> None:
        with signals_blocked():
            super().start()


class WorkerContext:
    """The "spawn" start method, keeping a list of the processes it starts, so that an
    interrupted render stops exactly its own workers (ProcessPoolExecutor has no public
    way to do that before Python 3.14). Pass it as a pool's `mp_context`."""

    def __init__(self) -> None:
        quiet_resource_tracker()
        self._context = multiprocessing.get_context("spawn")
        self.processes: list[BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> BaseProcess:  # noqa: N802 - context API
        process = _WorkerProcess(*args, **kwargs)
        self.processes.append(process)
        return process

    def __getattr__(self, name: str) -> Any:  # queues, locks, start method: as "spawn"
        return getattr(self._context, name)

    def stop(self, timeout: float = 2.0) -> None:
        """Kill every worker still running (an unfinished chapter is thrown away) and
        wait until they have ended, so none writes into scratch folders removed next."""
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process in self.processes:
            process.join(timeout)  # returns once the process has ended (its sentinel)


def start_worker() -> None:
    """A worker's initializer: it dies with the command even when the command is killed
    (Linux), and imports Manim lighter (light_imports)."""
    _die_with_parent()
    light_imports()


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent ends (prctl PR_SET_PDEATHSIG);
    elsewhere nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent ended before that: end now
        os._exit(1)


class LocalPool(ProcessPoolExecutor):
    """A process pool on this machine whose workers can be stopped at once."""

    def __init__(self, workers: int) -> None:
        self.context = WorkerContext()
        super().__init__(max_workers=workers, mp_context=self.context, initializer=start_worker)

    def stop(self, timeout: float = 2.0) -> None:
        """Kill the workers and wait for them to end; the jobs not done fail with
        BrokenProcessPool. They are not cancelled first: the pool's manager thread marks
        every job it still holds as failed, and on a cancelled one (Python 3.11) it dies
        before it closes its queues, and the exit then waits for ever on a pipe to the
        dead workers. Waits (at most `timeout` s) until that thread has closed them."""
        self.context.stop(timeout)
        manager = getattr(self, "_executor_manager_thread", None)
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout)
        self.shutdown(wait=False)


class InlineExecutor:
    """Runs each job at once in this process (a stand-in for the process pool in tests
    and debugging: same interface, no parallelism)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except Exception as e:
            fut.set_exception(e)
        return fut

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass

    def stop(self) -> None:  # as LocalPool's: nothing runs in the background here
        pass
