"""Worker processes for chapter renders, and stopping them cleanly on Ctrl-C or SIGTERM."""

from __future__ import annotations

import importlib.util
import multiprocessing
import signal
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any


class Terminated(BaseException):
    """SIGTERM, turned into an exception so the same clean-up as Ctrl-C runs."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by a subprocess test
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated (main thread only: elsewhere Python
    cannot receive signals, and the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (if it is not running yet) with its leak
    warning silenced. A worker terminated mid-chapter (Ctrl-C, SIGTERM) leaves the
    semaphore it held registered; the tracker removes it itself at exit, but its warning
    would be the last line the user sees, after "Interrupted: …"."""
    from multiprocessing import resource_tracker

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


class WorkerContext:
    """The "spawn" start method, keeping a list of the processes it starts, so that an
    interrupted render stops exactly its own workers (ProcessPoolExecutor has no public
    way to do that before Python 3.14). Pass it as a pool's `mp_context`."""

    def __init__(self) -> None:
        quiet_resource_tracker()
        self._context = multiprocessing.get_context("spawn")
        self.processes: list[BaseProcess] = []

    def Process(self, *args: Any, **kwargs: Any) -> BaseProcess:  # noqa: N802 - context API
        process = self._context.Process(*args, **kwargs)
        self.processes.append(process)
        return process

    def __getattr__(self, name: str) -> Any:  # queues, locks, start method: as "spawn"
        return getattr(self._context, name)

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate every worker still running (an unfinished chapter is thrown away) and
        wait until they have ended, so none writes into scratch folders removed next."""
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(timeout)  # returns once the process has ended (its sentinel)


class LocalPool(ProcessPoolExecutor):
    """A process pool on this machine whose workers can be stopped at once."""

    def __init__(self, workers: int) -> None:
        self.context = WorkerContext()
        super().__init__(max_workers=workers, mp_context=self.context, initializer=light_imports)

    def stop(self) -> None:
        """Terminate the workers and wait for them to end; drop the jobs not started."""
        self.context.stop()
        self.shutdown(wait=False, cancel_futures=True)


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
