"""pipeline.run.workers: an interrupted render stops exactly its own worker processes, and
SIGTERM becomes an exception so the usual clean-up runs."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pytest
from attention_video.pipeline.run import workers as workers_mod
from attention_video.pipeline.run.workers import (
    InlineExecutor,
    LocalPool,
    Terminated,
    WorkerContext,
    exit_status,
    sigterm_as_interrupt,
    stop_on_signals,
)


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
from attention_video.pipeline.run.workers import light_imports
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


@pytest.mark.slow
def test_light_imports_skip_what_a_worker_does_not_use_and_lose_nothing():
    """In a worker (a fresh interpreter here), `import manim` leaves scipy.spatial's own
    __init__ unrun until one of its names is used, and then it works; IPython is refused."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", LIGHT_IMPORTS_CHECK], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


INTERRUPTED_WITH_CHAPTERS_QUEUED = """
import signal, sys, tempfile, time
from pathlib import Path
from attention_video.attncore import Settings, build_trace
from attention_video.pipeline.cache.keys import chapter_key
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.run.render import ChapterTodo, chapter_pool, render_chapters

def interrupt(signum, frame):
    raise KeyboardInterrupt

s = Settings(sentence="cats drink milk", weights="random", quality="l", chapters=(1, 2, 3))
trace = build_trace(s)
cache = ChapterCache(Path(tempfile.mkdtemp()))
plan = tuple(s.chapters)
todo = [ChapterTodo(c, chapter_key(c, trace, s, plan), trace, s, plan=plan) for c in plan]
signal.signal(signal.SIGALRM, interrupt)
signal.setitimer(signal.ITIMER_REAL, 1.5)  # Ctrl-C while the first of three renders
try:
    with chapter_pool(None, 1) as pool:
        render_chapters(todo, cache, pool)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.slow
def test_a_render_interrupted_with_chapters_queued_lets_the_process_exit():
    """Before, the queued chapters were cancelled before the workers were stopped: the
    pool's manager thread died on them (InvalidStateError: CANCELLED, printed), and with
    bigger jobs the interpreter's exit then waited for ever on the pipe to the dead worker.
    Now they fail as broken, nothing is printed and the process ends."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", INTERRUPTED_WITH_CHAPTERS_QUEUED],
                         capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (0, "interrupted\n", "")


def test_stopping_a_pool_marks_its_jobs_broken_and_ends_its_thread():
    pool = LocalPool(1)
    futures = [pool.submit(time.sleep, 30) for _ in range(4)]  # one runs, three wait
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.is_alive() for p in pool.context.processes):
        time.sleep(0.05)
    manager = pool._executor_manager_thread
    pool.stop()
    assert {type(f.exception(timeout=5)).__name__ for f in futures} == {"BrokenProcessPool"}
    assert not manager.is_alive() and all(gone(p, 1) for p in pool.context.processes)


def _blocked_signals() -> set[int]:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


def test_workers_never_receive_ctrl_c_or_sigterm():
    """A signal sent to the process group reaches the command alone, which stops them."""
    pool = LocalPool(1)
    try:
        blocked = pool.submit(_blocked_signals).result(timeout=120)
    finally:
        pool.stop()
    assert {signal.SIGINT, signal.SIGTERM} <= blocked
    assert signal.SIGINT not in _blocked_signals()  # and here nothing changed


class DeadlineReached(Exception):
    pass


def test_the_first_signal_interrupts_a_second_waits_and_a_hung_clean_up_ends_on_time():
    statuses: list[int] = []

    def give_up(status: int) -> None:
        statuses.append(status)
        raise DeadlineReached()

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(Terminated), stop_on_signals(give_up, grace=0.5):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # interrupted at once
        os.kill(os.getpid(), signal.SIGINT)  # during the clean-up: ignored
        started = time.monotonic()
        with pytest.raises(DeadlineReached):
            time.sleep(5)  # a clean-up that hangs
        assert time.monotonic() - started < 2 and statuses == [143]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
        # the signal this process "received" is remembered for the command's exit status
        # (exit_status): a later test in this process would read it as its own
        workers_mod._received.clear()


def test_without_a_signal_the_handlers_come_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with stop_on_signals(lambda status: None):
        assert signal.getsignal(signal.SIGINT) is not before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_the_exit_status_is_the_shells_for_the_signal():
    assert exit_status(KeyboardInterrupt()) == 130 and exit_status(Terminated()) == 143
