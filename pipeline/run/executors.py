"""Where chapter renders run: a local process pool (the default) or any other
`concurrent.futures.Executor`, such as a Dask cluster's (`--scheduler tcp://HOST:PORT`).

Workers on this machine write each clip straight into the cache's scratch folder. A worker
elsewhere shares no filesystem with the client, so it renders into a folder of its own and
sends back the ChapterResult with the clip's bytes (`ShippedChapter`); the client writes
them into the cache and joins the video.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

from attention_video.pipeline.cache import sources
from attention_video.pipeline.cache.paths import cache_dir
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.chapter import ChapterJob
from attention_video.pipeline.run.workers import InlineExecutor

LOCAL_EXECUTORS = (ProcessPoolExecutor, ThreadPoolExecutor, InlineExecutor)
CONNECT_SECONDS = 10  # how long to wait for the scheduler to answer
WORKERS_SECONDS = 30  # how long to wait for its first worker


class SchedulerError(OSError):
    """The Dask scheduler cannot be used: says which one and why, in one line."""


@dataclass
class ShippedChapter:
    """A chapter rendered on another machine: its result and its clip, as bytes."""

    result: ChapterResult
    clip: bytes


def shares_files(executor: Any) -> bool:
    """Whether the executor's workers see this machine's files (a local pool, or any
    executor that says so with `shares_files = True`); others get clips sent back."""
    return isinstance(executor, LOCAL_EXECUTORS) or bool(getattr(executor, "shares_files", False))


_render_lock = threading.Lock()  # Manim's config is one per process: one render at a time


def render_shipped(job: ChapterJob, render: Callable[[ChapterJob], ChapterResult]) -> ShippedChapter:
    """Run on a worker without the client's filesystem: render into a temporary folder of
    this machine, read the clip back and remove the folder. `job.clip` is the client's
    path and is only used for its name. A worker process running several tasks in threads
    renders them one at a time (Manim's config is global to the process). The narrator's
    voice is found again on this machine, its speech kept in this machine's cache folder."""
    work = Path(tempfile.mkdtemp(prefix="attention-chapter-"))
    try:
        clip = work / (job.clip.name if job.clip else f"chapter-{job.chapter}.mp4")
        narrator = job.narrator.elsewhere(cache_dir()) if job.narrator is not None else None
        with _render_lock:
            result = render(replace(job, clip=clip, work_dir=work / "manim", narrator=narrator))
        data = clip.read_bytes()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.clip = None
    return ShippedChapter(result, data)


def cancel(futures: list[Future]) -> None:
    """Cancel the futures not started yet (on Dask: their tasks, on the cluster too)."""
    for fut in futures:
        fut.cancel()


def install_fingerprint() -> str:
    """A hash of the project's source files and the Manim version. A worker must match the
    client: the cache keys clips by the client's code, so a worker with other code would
    put clips drawn by that code under the client's keys."""
    h = hashlib.sha256(f"manim {version('manim')}".encode())
    root = sources.PROJECT_ROOT
    for package in sources.PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


class DaskExecutor:
    """A connection to a Dask scheduler and its `Client.get_executor()`. Checks at
    connection that there is at least one worker and that every worker runs the same code
    as this machine. Use as a context manager: leaving closes the client (never the
    cluster, which belongs to whoever started it)."""

    shares_files = False

    def __init__(self, address: str):
        # Lazy on purpose: Dask's client (~1 s to import) only for --scheduler.
        from distributed import Client

        self.address = address
        probe_scheduler(address)
        try:
            self.client = Client(address, timeout=f"{CONNECT_SECONDS}s",
                                 set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise SchedulerError(f"--scheduler {address}: cannot connect to a Dask "
                                 f"scheduler there ({_reason(e)})") from None
        try:
            self._check_workers()
        except BaseException:
            self.client.close()
            raise
        self.executor: Executor = self.client.get_executor(pure=False)

    def _check_workers(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except (OSError, TimeoutError) as e:
            raise SchedulerError(f"--scheduler {self.address}: no worker joined within "
                                 f"{WORKERS_SECONDS} s ({_reason(e)}); start one with "
                                 f"`dask worker {self.address} --nthreads 1`") from None
        mine = install_fingerprint()
        theirs = self.client.run(install_fingerprint)
        other = sorted(w for w, f in theirs.items() if f != mine)
        if other:
            raise SchedulerError(
                f"--scheduler {self.address}: worker{'s' if len(other) > 1 else ''} "
                f"{', '.join(other)} run{'' if len(other) > 1 else 's'} other code than this "
                "machine (project files or Manim version); install the same version there "
                "(README: Rendering on many machines)")

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    def submit(self, fn, *args, **kwargs) -> Future:
        return self.executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True) -> None:
        self.executor.shutdown(wait=wait)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_HANDSHAKE = 1 << 20  # bytes: a scheduler's first message is a few hundred


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """A SchedulerError unless a Dask scheduler answers at `address` within `timeout` s
    (CONNECT_SECONDS). A Dask server speaks first: on a TCP connection it sends its
    handshake, an 8-byte length then that many bytes of frames, itself a frame count and
    the frames' lengths. Checked before Dask's client is made, whose own wait for that
    handshake has no time limit (a port that accepts and never answers held it 120 s),
    and which, fed another protocol (an HTTP server), ends in tracebacks. Addresses of
    other protocols (tls://, ...) are only checked to accept connections."""
    timeout = CONNECT_SECONDS if timeout is None else timeout
    scheme, _, rest = address.rpartition("://")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except (OSError, ValueError) as e:
        reason = (f"no answer within {timeout:g} s" if isinstance(e, TimeoutError)
                  else getattr(e, "strerror", None) or _reason(e))
        raise SchedulerError(f"--scheduler {address}: cannot connect to a Dask scheduler "
                             f"there ({reason})") from None
    with sock:
        if scheme not in ("", "tcp"):
            return
        try:
            size = struct.unpack("<Q", _read(sock, 8, deadline))[0]
            if not 16 <= size <= MAX_HANDSHAKE:
                raise ValueError(f"a message of {size} bytes")
            frames = _read(sock, size, deadline)
            count = struct.unpack("<Q", frames[:8])[0]
            if not 1 <= count <= (size - 8) // 8:
                raise ValueError(f"{count} frames")
        except TimeoutError:
            raise SchedulerError(
                f"--scheduler {address}: something accepts connections there but did not "
                f"answer as a Dask scheduler within {timeout:g} s; give the address "
                "`dask scheduler` prints") from None
        except (OSError, ValueError, EOFError):
            raise SchedulerError(
                f"--scheduler {address}: what answers there is not a Dask scheduler (it "
                "does not speak Dask's protocol); give the address `dask scheduler` "
                "prints") from None


def _read(sock: socket.socket, n: int, deadline: float) -> bytes:
    """Exactly `n` bytes before `deadline` (TimeoutError), EOFError if the peer closes."""
    data = bytearray()
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError()
        sock.settimeout(left)
        chunk = sock.recv(min(n - len(data), 1 << 16))
        if not chunk:
            raise EOFError()
        data += chunk
    return bytes(data)


def _reason(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
