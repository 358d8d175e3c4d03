"""pipeline.workers: an interrupted render stops exactly its own worker processes, and
SIGTERM becomes an exception so the usual clean-up runs."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from pipeline.workers import InlineExecutor, Terminated, WorkerContext, sigterm_as_interrupt


def gone(p, seconds: float = 10) -> bool:
    """The process has ended. The pool's own thread may reap it first, and then
    Process.is_alive() cannot tell (waitpid fails and it answers True), so ask the OS."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if p.exitcode is not None:
            return True
        try:
            os.kill(p.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_stop_terminates_the_pools_workers_and_no_other_process():
    other = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(30,))
    other.start()
    context = WorkerContext()
    pool = ProcessPoolExecutor(max_workers=2, mp_context=context)
    try:
        for _ in range(2):
            pool.submit(time.sleep, 30)
        deadline = time.monotonic() + 30  # workers start asynchronously on a busy machine
        while time.monotonic() < deadline and not (
                len(context.processes) == 2 and all(p.is_alive() for p in context.processes)):
            time.sleep(0.1)
        assert len(context.processes) == 2 and all(p.is_alive() for p in context.processes)
        context.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        for p in context.processes:
            p.join(timeout=10)
            assert gone(p)
        assert other.is_alive()
    finally:
        other.terminate()
        other.join(timeout=10)


def test_sigterm_inside_the_block_raises_terminated_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler interrupts this at once
    assert signal.getsignal(signal.SIGTERM) is before


def test_outside_the_main_thread_the_block_runs_unchanged():
    seen = []

    def body():
        with sigterm_as_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.getsignal(signal.SIGTERM)]


def test_the_inline_executor_runs_at_once_and_keeps_errors_in_the_future():
    pool = InlineExecutor(max_workers=4)
    assert pool.submit(sum, [1, 2]).result() == 3
    with pytest.raises(ZeroDivisionError):
        pool.submit(divmod, 1, 0).result()


LIGHT_IMPORTS_CHECK = """
import sys
from pipeline.workers import light_imports
light_imports()
import manim
import numpy as np
skipped = "KDTree" not in vars(sys.modules["scipy.spatial"])
turned = manim.Square().rotate(np.pi / 2, axis=np.array([1.0, 0.0, 0.0]))  # scipy's Rotation
assert np.allclose(sorted(turned.points[:, 2]), sorted(manim.Square().points[:, 1]))
import scipy.spatial
assert scipy.spatial.KDTree([[0.0, 0.0], [3.0, 4.0]]).query([3.0, 4.1])[1] == 1
try:
    import IPython
    refused = False
except ImportError:
    refused = True
print(skipped, refused)
"""


def test_light_imports_skip_what_a_worker_does_not_use_and_lose_nothing():
    """In a worker (a fresh interpreter here), `import manim` leaves scipy.spatial's own
    __init__ unrun until one of its names is used, and then it works; IPython is refused."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", LIGHT_IMPORTS_CHECK], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
